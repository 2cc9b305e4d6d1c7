// Complex constructors and views (torch.view_as_real, view_as_complex, complex, polar, angle)
// and Tensor::chalf. The two views are primitives with their own rules; the rest are
// composites of ember ops, so their derivatives come from the parts. Semantics and error
// messages follow PyTorch 1.13.

#include "ember/complex_ops.h"

#include <cmath>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/shape_ops.h"
#include "func/batching.h"
#include "ops/call_path.h"

namespace ember {
namespace {

using autograd::JvpCtx;
using autograd::variable_list;
using autograd::VjpCtx;

/// Whether view_as_complex accepts `t`'s layout (last stride 1, other strides and the offset
/// even); a tangent or gradient that does not is made contiguous first.
bool complex_viewable(const Tensor& t) {
  if (t.dim() == 0 || t.sizes().back() != 2 || t.strides().back() != 1) return false;
  for (int64_t d = 0; d + 1 < t.dim(); ++d)
    if (t.stride(d) % 2 != 0) return false;
  return t.storage_offset() % 2 == 0;
}

Tensor as_complex_view(const Tensor& t) {
  return view_as_complex(complex_viewable(t) ? t : t.contiguous());
}

/// PyTorch's complex_check_dtype: both inputs float16/float32/float64 of one dtype.
void check_parts(const Tensor& a, const Tensor& b, const char* op) {
  auto ok = [](ScalarType t) { return t == kHalf || t == kFloat || t == kDouble; };
  EMBER_CHECK(ok(a.dtype()) && ok(b.dtype()), "[", op,
              "] Expected both inputs to be Half, Float or Double tensors but got ", a.dtype(),
              " and ", b.dtype());
  EMBER_CHECK(a.dtype() == b.dtype(), "[", op, "] Expected object of scalar type ", a.dtype(),
              " but got scalar type ", b.dtype(), " for second argument");
}

/// Writes `r` into the out= of a complex constructor: its dtype must be r's exactly.
Tensor& assign_complex_out(Tensor& out, const Tensor& r, const char* op,
                           std::initializer_list<Tensor> inputs) {
  autograd::check_out_not_differentiable(op, inputs);
  EMBER_CHECK(out.dtype() == r.dtype(), "[", op, "] Expected object of scalar type ", r.dtype(),
              " but got scalar type ", out.dtype(), " for argument 'out'");
  if (out.sizes() != r.sizes()) {
    EMBER_CHECK(out.numel() == 0, "[", op, "] out= tensor has shape ", shape_str(out.sizes()),
                " but the result has shape ", shape_str(r.sizes()),
                "; pass an empty tensor or one of the result's shape");
    resize_output(out, r.sizes());
  }
  return out.copy_(r);
}

/// Both tensors expanded to their broadcast shape (RuntimeError naming `op` otherwise).
std::pair<Tensor, Tensor> broadcast_pair(const Tensor& a, const Tensor& b, const char* op) {
  const size_t n = std::max(a.sizes().size(), b.sizes().size());
  std::vector<int64_t> shape(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.sizes().size() ? 1 : a.sizes()[i - (n - a.sizes().size())];
    const int64_t db = i < n - b.sizes().size() ? 1 : b.sizes()[i - (n - b.sizes().size())];
    EMBER_CHECK(da == db || da == 1 || db == 1, "[", op, "] The size of tensor a (", da,
                ") must match the size of tensor b (", db, ") at non-singleton dimension ", i);
    shape[i] = da == 1 ? db : da;
  }
  return {a.expand(shape), b.expand(shape)};
}

// Batching rules (Note [Batching rules]): the views act on the trailing dims only, so they
// apply to the batch-first physical tensor as they are.
std::vector<Tensor> batch_view_as_real(const dispatch::BoxedCall& c,
                                       const func::TransformLevel& lvl) {
  return {func::wrap0(view_as_real(func::front(func::arg_tensor(c, 0), lvl).v), lvl)};
}
std::vector<Tensor> batch_view_as_complex(const dispatch::BoxedCall& c,
                                          const func::TransformLevel& lvl) {
  return {func::wrap0(view_as_complex(func::front(func::arg_tensor(c, 0), lvl).v), lvl)};
}
[[maybe_unused]] const bool kBatchRules = [] {
  func::register_batch_rule(OpId::view_as_real, &batch_view_as_real);
  func::register_batch_rule(OpId::view_as_complex, &batch_view_as_complex);
  return true;
}();

}  // namespace

// ---- views ----

Tensor view_as_real(const Tensor& self) {
  EMBER_OP(view_as_real, self);
  EMBER_CHECK(!self.is_conj(),
              "[view_as_real] view_as_real doesn't work on unresolved conjugated tensors.  To "
              "resolve the conjugate tensor so you can view it as real, use "
              "self.resolve_conj(); however, be warned that the resulting tensor will NOT alias "
              "the original.");
  EMBER_CHECK(self.is_complex(),
              "[view_as_real] view_as_real is only supported for complex "
              "tensors, got ",
              dtype_name(self.dtype()));
  // A complex element is two real slots: strides and offset double, a trailing dim of 2.
  DimVector sizes(self.sizes()), strides(self.strides());
  for (auto& s : strides) s *= 2;
  sizes.push_back(2);
  strides.push_back(1);
  Tensor out = make_view_with_dtype(self, toRealValueType(self.dtype()), sizes, strides,
                                    self.storage_offset() * 2);
  autograd::OpRecorder rec("view_as_real", {self});
  if (rec) {
    rec.record(
        out, [](VjpCtx& c) { return variable_list{as_complex_view(c.grads[0])}; }, {},
        [](JvpCtx& c) { return variable_list{view_as_real(c.tangents[0].resolve_conj())}; });
  }
  return out;
}

Tensor view_as_complex(const Tensor& self) {
  EMBER_OP_CAST(view_as_complex, view_as_complex, self);
  const ScalarType dt = self.dtype();
  EMBER_CHECK(dt == kHalf || dt == kFloat || dt == kDouble,
              "[view_as_complex] view_as_complex is only supported for half, float and double "
              "tensors, but got a tensor of scalar type: ",
              dt);
  EMBER_CHECK(self.dim() != 0, "[view_as_complex] Input tensor must have one or more dimensions");
  EMBER_CHECK(self.sizes().back() == 2,
              "[view_as_complex] Tensor must have a last dimension of "
              "size 2, got shape ",
              shape_str(self.sizes()));
  EMBER_CHECK(self.strides().back() == 1,
              "[view_as_complex] Tensor must have a last dimension "
              "with stride 1, got strides ",
              shape_str(self.strides()));
  DimVector sizes(self.sizes()), strides(self.strides());
  sizes.pop_back();
  strides.pop_back();
  for (auto& s : strides) {
    EMBER_CHECK(s % 2 == 0,
                "[view_as_complex] Tensor must have a stride divisible by 2 for all "
                "but last dimension, got strides ",
                shape_str(self.strides()));
    s /= 2;
  }
  EMBER_CHECK(self.storage_offset() % 2 == 0,
              "[view_as_complex] Tensor must have a "
              "storage_offset divisible by 2, got ",
              self.storage_offset());
  Tensor out =
      make_view_with_dtype(self, toComplexType(dt), sizes, strides, self.storage_offset() / 2);
  autograd::OpRecorder rec("view_as_complex", {self});
  if (rec) {
    rec.record(
        out,
        [](VjpCtx& c) {
          return variable_list{view_as_real(c.grads[0].contiguous().resolve_conj())};
        },
        {}, [](JvpCtx& c) { return variable_list{as_complex_view(c.tangents[0])}; });
  }
  return out;
}

// ---- constructors ----
// Each op's body is a *_impl so that its out= form runs under the same op entry (out's resize
// then happens inside the op).

namespace {

Tensor complex_impl(const Tensor& real, const Tensor& imag) {
  check_parts(real, imag, "complex");
  // Stacking the parts on a new last dim gives (re, im) pairs: view them as complex. Unlike
  // real + imag * 1j this keeps inf/NaN parts exact.
  auto [re, im] = broadcast_pair(real, imag, "complex");
  return view_as_complex(stack({re, im}, -1));
}

Tensor polar_impl(const Tensor& r, const Tensor& theta) {
  check_parts(r, theta, "polar");
  EMBER_CHECK(r.dtype() != kHalf, "[polar] \"polar_cpu\" not implemented for 'Half'");
  // Note: PyTorch's reverse-mode rule for abs multiplies by sgn(result), which differs from the
  // derivative of this expression only where abs <= 0 (outside polar's domain).
  return complex_impl(r * cos(theta), r * sin(theta));
}

Tensor angle_impl(const Tensor& self) {
  EMBER_CHECK(self.defined(), "[angle] undefined tensor");
  const bool track = autograd::recording_possible();
  if (self.is_complex()) {
    EMBER_CHECK(self.dtype() != kComplexHalf,
                "[angle] \"angle_cpu\" not implemented for 'ComplexHalf'");
    if (!track) return atan2(self.imag(), self.real());
    // PyTorch's derivative is 0 at 0, where atan2's is 0/0: differentiate atan2 at a stand-in
    // point there and take the value (signed zeros included) from the exact expression.
    Tensor zero = eq(self, Scalar(0.0));
    Tensor safe = where(zero, Scalar(1.0), self);
    return where(zero, atan2(self.imag(), self.real()).detach(), atan2(safe.imag(), safe.real()));
  }
  const Tensor x =
      isIntegralType(self.dtype(), /*include_bool=*/true) ? self.to(get_default_dtype()) : self;
  // 0 for x >= 0, pi for x < 0, NaN kept; the derivative is 0 everywhere (PyTorch's).
  Tensor xd = x.detach();
  Tensor v = where(isnan(xd), xd, where(lt(xd, Scalar(0)), full_like(xd, M_PI), zeros_like(xd)));
  if (!track) return v;
  // An always-false select ties the result to x with a zero derivative.
  return where(zeros_like(x, TensorOptions().dtype(kBool)), x, v);
}

}  // namespace

Tensor make_complex(const Tensor& real, const Tensor& imag) {
  EMBER_OP(complex, real, imag);
  return complex_impl(real, imag);
}

Tensor& make_complex_out(Tensor& out, const Tensor& real, const Tensor& imag) {
  EMBER_OP(complex, real, imag);
  return assign_complex_out(out, complex_impl(real, imag), "complex", {real, imag});
}

Tensor polar(const Tensor& r, const Tensor& theta) {
  EMBER_OP_CAST(polar, polar, r, theta);
  return polar_impl(r, theta);
}

Tensor& polar_out(Tensor& out, const Tensor& r, const Tensor& theta) {
  EMBER_OP(polar, r, theta);
  return assign_complex_out(out, polar_impl(r, theta), "polar", {r, theta});
}

Tensor angle(const Tensor& self) {
  EMBER_OP(angle, self);
  return angle_impl(self);
}

Tensor& angle_out(Tensor& out, const Tensor& self) {
  EMBER_OP(angle, self);
  autograd::check_out_not_differentiable("angle", {self});
  Tensor r = angle_impl(self);
  EMBER_CHECK(canCast(r.dtype(), out.dtype()), "[angle] result type ", r.dtype(),
              " can't be cast to the desired output type ", out.dtype());
  if (out.sizes() != r.sizes()) {
    EMBER_CHECK(out.numel() == 0, "[angle] out= tensor has shape ", shape_str(out.sizes()),
                " but the result has shape ", shape_str(r.sizes()),
                "; pass an empty tensor or one of the result's shape");
    resize_output(out, r.sizes());
  }
  return out.copy_(r);
}

Tensor Tensor::angle() const { return ember::angle(*this); }

Tensor Tensor::chalf() const { return to(kComplexHalf); }

}  // namespace ember
