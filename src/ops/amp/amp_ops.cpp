// The ops of gradient scaling (GradScaler's unscale_ and update): argument checks as PyTorch's,
// then the kernels of src/kernels/cpu/amp/. The scale and the inf flag stay tensors on the
// gradients' device, so a step needs no host synchronisation until the caller reads them.
#include "ember/amp.h"
#include "ops/call_path.h"

#include "ember/error.h"
#include "ember/tensor_impl.h"
#include "kernels/stubs/amp.h"

namespace ember {

namespace {

constexpr const char* kUnscale = "_amp_foreach_non_finite_check_and_unscale_";
constexpr const char* kUpdate = "_amp_update_scale_";

void check_one_element(const Tensor& t, const char* op, const char* name, ScalarType dtype) {
  EMBER_CHECK(t.defined(), "[", op, "] ", name, " is an undefined tensor");
  EMBER_CHECK(t.numel() == 1, "[", op, "] ", name, " must be a 1-element tensor, got shape ",
              t.sizes());
  EMBER_CHECK(t.dtype() == dtype, "[", op, "] ", name, " must be a ",
              dtype == kFloat ? "float" : "int", " tensor, got ", dtype_name(t.dtype()));
}

void check_same_device(const Tensor& t, const Tensor& ref, const char* op, const char* name,
                       const char* ref_name) {
  EMBER_CHECK(t.device() == ref.device(), "[", op, "] ", name, " is on ", t.device(), " but ",
              ref_name, " is on ", ref.device(), "; they must be on the same device");
}

}  // namespace

void _amp_foreach_non_finite_check_and_unscale_(ArrayRef<Tensor> self, Tensor& found_inf,
                                                const Tensor& inv_scale) {
  // EMBER_OP for an op that returns nothing: a call redirected by vmap has no result to return.
  dispatch::OpScope ember_op_scope_(OpId::_amp_foreach_non_finite_check_and_unscale_);
  if (EMBER_OP_UNLIKELY(dispatch::slow_path()) && ember_op_scope_.enter(self, found_inf, inv_scale))
    return;
  check_one_element(inv_scale, kUnscale, "inv_scale", kFloat);
  check_one_element(found_inf, kUnscale, "found_inf", kFloat);
  check_same_device(found_inf, inv_scale, kUnscale, "found_inf", "inv_scale");
  for (const Tensor& t : self) {
    EMBER_CHECK(t.defined(), "[", kUnscale, "] one of the tensors is undefined");
    EMBER_CHECK(isFloatingType(t.dtype()), "[", kUnscale,
                "] expects floating tensors (gradients), got one of dtype ", dtype_name(t.dtype()));
    check_same_device(t, inv_scale, kUnscale, "one of the tensors", "inv_scale");
  }
  bool any = false;
  for (const Tensor& t : self) {
    if (t.numel() == 0) continue;
    // The kernel reads and writes a contiguous block; a strided gradient goes through a copy.
    Tensor work = t.is_contiguous() ? t : t.contiguous();
    amp_non_finite_check_and_unscale_stub(t.device().type(), work, found_inf, inv_scale);
    if (!work.is_same(t)) {
      Tensor dst = t;
      dst.copy_(work);
    } else {
      t.unsafeGetTensorImpl()->bump_version(kUnscale);
    }
    any = true;
  }
  if (any) found_inf.unsafeGetTensorImpl()->bump_version(kUnscale);
}

Tensor& _amp_update_scale_(Tensor& self, Tensor& growth_tracker, const Tensor& found_inf,
                           double scale_growth_factor, double scale_backoff_factor,
                           int64_t growth_interval) {
  EMBER_OP(_amp_update_scale_, self, growth_tracker, found_inf, scale_growth_factor,
           scale_backoff_factor, growth_interval);
  check_one_element(self, kUpdate, "current_scale", kFloat);
  check_one_element(growth_tracker, kUpdate, "growth_tracker", kInt);
  check_one_element(found_inf, kUpdate, "found_inf", kFloat);
  check_same_device(growth_tracker, self, kUpdate, "growth_tracker", "current_scale");
  check_same_device(found_inf, self, kUpdate, "found_inf", "current_scale");
  amp_update_scale_stub(self.device().type(), self, growth_tracker, found_inf, scale_growth_factor,
                        scale_backoff_factor, growth_interval);
  self.unsafeGetTensorImpl()->bump_version(kUpdate);
  growth_tracker.unsafeGetTensorImpl()->bump_version(kUpdate);
  return self;
}

}  // namespace ember
