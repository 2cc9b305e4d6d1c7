// softmax / log_softmax: validation and dtype handling; the parallel split and the fused loops
// are behind kernels/stubs/softmax.h (Note [Fused softmax]). float16/bfloat16 are computed in
// float32 and rounded once at the end, as PyTorch (the CPU kernel converts block by block).
#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/sort.h"
#include "kernels/stubs/softmax.h"
#include "ops/call_path.h"

namespace ember {
namespace {

/// The result dtype of softmax(self, dtype) after validation; `dim` is wrapped.
ScalarType softmax_meta(const Tensor& self, int64_t& dim, std::optional<ScalarType> dtype,
                        const char* op) {
  EMBER_CHECK(self.defined(), "[", op, "] input tensor is undefined");
  dim = wrap_dim(dim, self.dim(), op);
  const ScalarType dt = dtype.value_or(self.dtype());
  // PyTorch returns a zero-size result before its dtype check (an empty int64 softmax works).
  EMBER_CHECK(isFloatingType(dt) || self.numel() == 0, "[", op,
              "] \"softmax_kernel_impl\" not implemented for '", dtype_name(dt), "' (input ",
              dtype_name(self.dtype()), ")");
  return dt;
}

/// The dtype the kernel reads and writes for result dtype `dt`: float32 for float16/bfloat16,
/// except on CPU, whose kernel converts blocks of rows itself.
ScalarType kernel_dtype(ScalarType dt, const Tensor& self) {
  if (dt == kDouble) return kDouble;
  if ((dt == kBFloat16 || dt == kHalf) && self.device().type() == kCPU) return dt;
  return kFloat;
}

/// Computes softmax of `self` into `dst`, a contiguous tensor of self's shape and the kernel
/// dtype of `dt`.
void softmax_into(Tensor& dst, const Tensor& self, int64_t dim, ScalarType dt, bool log) {
  if (self.numel() == 0) return;
  const ScalarType ct = dst.dtype();
  // dtype= casts the input first (a float input asked for bfloat16 is rounded to it), then the
  // math runs in float or double.
  Tensor x = self.to(dt).to(ct).resolve_conj().contiguous();
  softmax_stub(x.device().type(), x, dst, dim, log);
}

Tensor softmax_impl(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  const ScalarType dt = softmax_meta(self, dim, dtype, op);
  const ScalarType ct = kernel_dtype(dt, self);
  Tensor y = empty_tensor(self.sizes(), ct, self.device());
  softmax_into(y, self, dim, dt, log);
  return ct == dt ? y : y.to(dt);
}

Tensor& softmax_out_impl(Tensor& out, const Tensor& self, int64_t dim,
                         std::optional<ScalarType> dtype, bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  const ScalarType dt = softmax_meta(self, dim, dtype, op);
  EMBER_CHECK(out.dtype() == dt, "[", op, "] expected out dtype ", dtype_name(dt), ", got ",
              dtype_name(out.dtype()));
  if (out.sizes() != self.sizes()) {
    EMBER_CHECK(out.numel() == 0, "[", op, "] out= tensor has shape ", shape_str(out.sizes()),
                " but the result has shape ", shape_str(self.sizes()));
    resize_output(out, self.sizes());
  }
  const ScalarType ct = kernel_dtype(dt, self);
  // Write straight into a contiguous out that does not alias the input.
  if (out.is_contiguous() && ct == dt && !out.is_alias_of(self)) {
    softmax_into(out, self, dim, dt, log);
    out.unsafeGetTensorImpl()->bump_version();
    return out;
  }
  Tensor y = empty_tensor(self.sizes(), ct, self.device());
  softmax_into(y, self, dim, dt, log);
  return out.copy_(y);
}

}  // namespace

namespace {
// softmax: dx = y * (g - sum(g * y)); log_softmax: dx = g - exp(y) * sum(g) (over `dim`).
// The rules read only the output, so they hold for any dtype= too.
Tensor softmax_rec(const Tensor& self, int64_t dim0, std::optional<ScalarType> dtype, bool log) {
  autograd::OpRecorder rec(log ? "log_softmax" : "softmax", {self});
  Tensor out = softmax_impl(self, dim0, dtype, log);
  if (rec) {
    rec.args(wrap_dim(dim0, self.dim(), log ? "log_softmax" : "softmax"), log);
    rec.record(
        out,
        [](autograd::VjpCtx& c) {
          const int64_t dim = c.args().i(0);
          const Tensor &g = c.grads[0], &y = c.saved[0];
          if (c.args().b(1)) return autograd::variable_list{g - exp(y) * g.sum({dim}, true)};
          return autograd::variable_list{y * (g - (g * y).sum({dim}, true))};
        },
        {out},
        [](autograd::JvpCtx& c) {
          const int64_t dim = c.args().i(0);
          const Tensor& y = c.outputs[0];
          const Tensor t = c.tangent_or_zeros(0).to(y.dtype());
          if (c.args().b(1)) return autograd::variable_list{t - (exp(y) * t).sum({dim}, true)};
          return autograd::variable_list{y * (t - (y * t).sum({dim}, true))};
        });
  }
  return out;
}
}  // namespace

Tensor softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  EMBER_OP_CAST(softmax, softmax, self, dim, dtype);
  return softmax_rec(self, dim, dtype, false);
}
Tensor& softmax_out(Tensor& out, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  EMBER_OP(softmax_out, out, self, dim, dtype);
  autograd::check_out_not_differentiable("softmax", {self});
  return softmax_out_impl(out, self, dim, dtype, false);
}
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  EMBER_OP_CAST(log_softmax, log_softmax, self, dim, dtype);
  return softmax_rec(self, dim, dtype, true);
}
Tensor& log_softmax_out(Tensor& out, const Tensor& self, int64_t dim,
                        std::optional<ScalarType> dtype) {
  EMBER_OP(log_softmax_out, out, self, dim, dtype);
  autograd::check_out_not_differentiable("log_softmax", {self});
  return softmax_out_impl(out, self, dim, dtype, true);
}

Tensor Tensor::softmax(int64_t dim, std::optional<ScalarType> dtype) const {
  return ember::softmax(*this, dim, dtype);
}
Tensor Tensor::log_softmax(int64_t dim, std::optional<ScalarType> dtype) const {
  return ember::log_softmax(*this, dim, dtype);
}

}  // namespace ember
