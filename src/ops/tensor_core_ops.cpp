// Copies, dtype/device conversion, fill, conjugation and element access.
#include <cmath>
#include <limits>

#include "autograd/record.h"
#include "core/cuda_hooks.h"
#include "core/memory_check.h"
#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "kernels/stubs/core.h"
#include "ops/call_path.h"
#include "ops/device_backend.h"
#include "ops/elementwise/elementwise_core.h"

namespace ember {

namespace {
// A view of the stored values of a conjugate view, without the conj bit.
Tensor raw_view(const Tensor& t) {
  Tensor v = make_view(t, t.sizes(), t.strides(), t.storage_offset());
  v.unsafeGetTensorImpl()->set_conj(false);
  return v;
}
}  // namespace

namespace {
void copy_into(const Tensor& self, const Tensor& src_in) {
  Tensor src = src_in;
  if (src.sizes() != self.sizes()) {
    DimVector shape = broadcast_shapes(self.sizes(), src.sizes());
    EMBER_CHECK(shape.ref() == self.sizes(), "[copy_] the source of shape ", shape_str(src.sizes()),
                " cannot be broadcast to the destination of shape ", shape_str(self.sizes()));
    src = src.expand(self.sizes());
  }
  if (src.is_alias_of(self)) {
    bool identical = src.unsafeGetTensorImpl()->data() == self.unsafeGetTensorImpl()->data() &&
                     src.strides() == self.strides() && src.dtype() == self.dtype() &&
                     src.is_conj() == self.is_conj();
    if (identical) return;
    src = src.clone();  // overlapping source: read it all before writing
  }
  // Stored values of dst must be the logical values of src, conjugated when dst is a conj view.
  if (src.is_conj() && !self.is_conj())
    src = src.resolve_conj();
  else if (!src.is_conj() && self.is_conj())
    src = src.conj_physical();
  else if (src.is_conj())
    src = raw_view(src);
  Tensor dst = self.is_conj() ? raw_view(self) : self;
  if (self.numel() > 0) {
    if (dst.is_cpu() && src.is_cpu()) {
      copy_stub(kCPU, dst, src);
    } else {
      Device other = dst.is_cpu() ? src.device() : dst.device();
      DeviceBackend* b = device_backend(other.type());
      EMBER_CHECK(b, "[copy_] no backend for device ", other, " in this build");
      EMBER_CHECK(b->copy(dst, src), "[copy_] copy from ", src.device(), " (", src.dtype(), ") to ",
                  dst.device(), " (", dst.dtype(), ") is not supported");
    }
  }
  self.unsafeGetTensorImpl()->bump_version("copy_");
}

}  // namespace

namespace {
/// copy_ recorded as `op`: to(), clone() and contiguous() copy into a fresh tensor and record
/// the node PyTorch records for them (ToCopyBackward0, CloneBackward0: Note [Node names]).
Tensor& copy_recorded(Tensor& self, const Tensor& src_in, const char* op);
}  // namespace

namespace {
thread_local bool t_copy_non_blocking = false;
}  // namespace
bool copy_non_blocking() { return t_copy_non_blocking; }
NonBlockingCopyScope::NonBlockingCopyScope(bool on) : prev_(t_copy_non_blocking) {
  t_copy_non_blocking = on;
}
NonBlockingCopyScope::~NonBlockingCopyScope() { t_copy_non_blocking = prev_; }

Tensor& Tensor::copy_(const Tensor& src_in, bool non_blocking) {
  EMBER_OP(copy_, *this, src_in);
  NonBlockingCopyScope nb(non_blocking);
  return copy_recorded(*this, src_in, "copy_");
}

namespace {
Tensor& copy_recorded(Tensor& self, const Tensor& src_in, const char* op) {
  EMBER_CHECK(self.defined() && src_in.defined(), "[copy_] undefined tensor");
  if (self.is_same(src_in)) return self;
  check_no_internal_overlap(self, "copy_");
  // Autograd: self's old values get no gradient, src gets the gradient (summed to its shape
  // and cast to its dtype by the node). to(), clone() and contiguous() are copies into a fresh
  // tensor and differentiate through this.
  autograd::OpRecorder rec(op, {self, src_in});
  copy_into(self, src_in);
  if (rec) {
    rec.record_inplace(
        self,
        [](autograd::VjpCtx& c) {
          return autograd::variable_list{zeros_like(c.grads[0]), c.grads[0]};
        },
        {},
        [](autograd::JvpCtx& c) {
          Tensor t = c.tangents[1].defined() ? c.tangents[1] : zeros_like(c.inputs[1]);
          const Tensor& o = c.outputs[0];
          if (t.is_complex() && !o.is_complex()) t = t.real();
          return autograd::variable_list{t.to(o.dtype()).expand(o.sizes())};
        });
  }
  return self;
}
}  // namespace

// PyTorch's "value cannot be converted ... without overflow": a fill never wraps silently.
// Unsigned targets accept negatives down to -max (they wrap, as in PyTorch); floating targets
// accept inf and NaN but not finite values beyond their range; bool takes anything.
bool value_fits(const Scalar& v, ScalarType dt) {
  if (dt == kBool || isComplexType(dt)) return true;
  if (v.isComplex() && v.toComplexDouble().imag() != 0) return false;
  const double d = v.isComplex() ? v.toComplexDouble().real() : v.toDouble();
  if (isFloatingType(dt)) {
    const double max = dt == kHalf       ? 65504.0
                       : dt == kBFloat16 ? 3.3895313892515355e+38
                       : dt == kFloat    ? double(std::numeric_limits<float>::max())
                                         : std::numeric_limits<double>::max();
    return !std::isfinite(d) || (d <= max && d >= -max);
  }
  int64_t lo = 0, hi = 0;
  switch (dt) {
    case kByte:
      lo = -255, hi = 255;
      break;
    case kChar:
      lo = INT8_MIN, hi = INT8_MAX;
      break;
    case kShort:
      lo = INT16_MIN, hi = INT16_MAX;
      break;
    case kInt:
      lo = INT32_MIN, hi = INT32_MAX;
      break;
    default:
      lo = INT64_MIN, hi = INT64_MAX;
      break;
  }
  if (v.isIntegral(true)) return v.toLong() >= lo && v.toLong() <= hi;
  return std::isfinite(d) && d >= double(lo) && d <= double(hi);
}

namespace {

void check_fill_value(const Scalar& v, ScalarType dt) {
  EMBER_CHECK(value_fits(v, dt), "[fill_] value ", v, " cannot be converted to type ", dt,
              " without overflow");
}

}  // namespace

namespace {
void fill_into(const Tensor& self, const Scalar& v) {
  const Scalar value = self.is_conj() ? Scalar(std::conj(v.toComplexDouble())) : v;
  if (self.numel() > 0) {
    Tensor dst = self.is_conj() ? raw_view(self) : self;
    if (self.is_cpu()) {
      fill_stub(kCPU, dst, value);
    } else {
      OpParams p;
      p.s[0] = value;
      DeviceBackend* b = device_backend(self.device().type());
      EMBER_CHECK(b && b->elementwise(OpId::fill, dst, {}, p), "[fill_] not supported on ",
                  self.device());
    }
  }
  self.unsafeGetTensorImpl()->bump_version("fill_");
}
}  // namespace

Tensor& Tensor::fill_(const Scalar& v) {
  EMBER_OP(fill_, *this, v);
  EMBER_CHECK(defined(), "[fill_] undefined tensor");
  check_no_internal_overlap(*this, "fill_");
  check_fill_value(v, dtype());
  // Autograd: the old values get a zero gradient.
  autograd::OpRecorder rec("fill_", {*this});
  fill_into(*this, v);
  if (rec) {
    rec.record_inplace(
        *this, [](autograd::VjpCtx& c) { return autograd::variable_list{zeros_like(c.grads[0])}; },
        {}, [](autograd::JvpCtx& c) { return autograd::variable_list{zeros_like(c.outputs[0])}; });
  }
  return *this;
}

Tensor& Tensor::fill_(const Tensor& v) {
  EMBER_OP(fill__1, *this, v);
  EMBER_CHECK(v.defined() && v.dim() == 0,
              "[fill_] only supports 0-dimension value tensor but "
              "got tensor with ",
              v.defined() ? v.dim() : 0, " dimensions");
  return fill_(v.item());
}

Tensor Tensor::to(const TensorOptions& opts, bool non_blocking, bool copy) const {
  EMBER_OP(to, *this, opts, non_blocking, copy);
  ScalarType dt = opts.has_dtype() ? opts.dtype() : dtype();
  Device dev = opts.has_device() ? opts.device() : device();
  // "cuda" is the current device, as in PyTorch.
  if (dev.type() == kCUDA && dev.index() < 0) dev = Device(kCUDA, int8_t(cuda::current_device()));
  if (dt == dtype() && dev == device() && !copy) return *this;
  Tensor out = empty_like_layout(sizes(), dt, dev, {*this});
  NonBlockingCopyScope nb(non_blocking);
  copy_recorded(out, *this, "_to_copy");
  if (opts.requires_grad()) out.set_requires_grad(true);
  return out;
}
Tensor Tensor::to(ScalarType dt, bool nb, bool copy) const {
  return to(TensorOptions().dtype(dt), nb, copy);
}
Tensor Tensor::to(Device dev, bool nb, bool copy) const {
  return to(TensorOptions().device(dev), nb, copy);
}
Tensor Tensor::to(Device dev, ScalarType dt, bool nb, bool copy) const {
  return to(TensorOptions().device(dev).dtype(dt), nb, copy);
}
Tensor Tensor::to(const Tensor& other, bool nb, bool copy) const {
  return to(other.options(), nb, copy);
}

Tensor Tensor::contiguous() const {
  EMBER_OP(contiguous, *this);
  if (is_contiguous()) return *this;
  Tensor out = empty_tensor(sizes(), dtype(), device());
  copy_recorded(out, *this, "clone");
  return out;
}

Tensor Tensor::clone() const {
  EMBER_OP(clone, *this);
  Tensor out = empty_like_layout(sizes(), dtype(), device(), {*this});
  copy_recorded(out, *this, "clone");
  return out;
}
Tensor clone(const Tensor& x) {
  EMBER_OP(clone_1, x);
  return x.clone();
}

namespace {
// conj and conj_physical: vjp conj(g), jvp conj(t) (conj is its own adjoint).
Tensor with_conj_rule(const char* name, const Tensor& self, Tensor out) {
  autograd::OpRecorder rec(name, {self});
  if (rec) {
    rec.record(
        out, [](autograd::VjpCtx& c) { return autograd::variable_list{c.grads[0].conj()}; }, {},
        [](autograd::JvpCtx& c) { return autograd::variable_list{c.tangents[0].conj()}; });
  }
  return out;
}
}  // namespace

Tensor Tensor::conj() const {
  EMBER_OP(conj, *this);
  if (!is_complex()) return *this;
  Tensor v = make_view(*this, sizes(), strides(), storage_offset());
  v.unsafeGetTensorImpl()->set_conj(!is_conj());
  return with_conj_rule("conj", *this, v);
}
Tensor conj(const Tensor& x) {
  EMBER_OP(conj_1, x);
  return x.conj();
}

Tensor Tensor::resolve_conj() const {
  EMBER_OP(resolve_conj, *this);
  if (!is_conj()) return *this;
  // Same values, new memory: the gradient passes through unchanged.
  autograd::OpRecorder rec("resolve_conj", {*this});
  Tensor r = elementwise(OpId::conj_physical, {raw_view(*this)});
  if (rec) {
    rec.record(
        r, [](autograd::VjpCtx& c) { return autograd::variable_list{c.grads[0]}; }, {},
        [](autograd::JvpCtx& c) { return autograd::variable_list{c.tangents[0]}; });
  }
  return r;
}

Tensor Tensor::conj_physical() const {
  EMBER_OP(conj_physical_1, *this);
  if (!is_complex()) return *this;
  if (is_conj()) {
    autograd::OpRecorder rec("conj_physical", {*this});
    Tensor r = raw_view(*this).clone();
    rec.resume();
    return rec ? with_conj_rule("conj_physical", *this, r) : r;
  }
  return elementwise(OpId::conj_physical, {*this});
}

Tensor& Tensor::conj_physical_() {
  if (!is_complex()) return *this;
  if (is_conj()) {
    impl_->set_conj(false);  // the stored values already are the conjugate's values
    return *this;
  }
  elementwise(OpId::conj_physical, {*this}, {}, OutMode::InPlace);
  return *this;
}

Scalar Tensor::item() const {
  EMBER_OP(item, *this);
  EMBER_CHECK(defined(), "[item] undefined tensor");
  EMBER_CHECK(numel() == 1, "[item] a Tensor with ", numel(),
              " elements cannot be converted to Scalar");
  Tensor t = is_cpu() ? *this : to(Device(kCPU));
  // complex32 is read through complex64, which holds every complex32 value exactly.
  if (dtype() == kComplexHalf) return t.resolve_conj().to(kComplexFloat).item();
  return item_stub(t.device().type(), t, is_conj());
}

template <class T>
T* Tensor::data_ptr() const {
  EMBER_CHECK(defined(), "[data_ptr] undefined tensor");
  EMBER_CHECK(dtype() == scalar_type_of<T>, "[data_ptr] expected scalar type ", scalar_type_of<T>,
              " but found ", dtype());
  check_has_memory(*this, "data_ptr");
  return static_cast<T*>(impl_->data());
}
#define EMBER_INSTANTIATE_DATA_PTR(T, N) template T* Tensor::data_ptr<T>() const;
EMBER_FORALL_SCALAR_TYPES(EMBER_INSTANTIATE_DATA_PTR)
#undef EMBER_INSTANTIATE_DATA_PTR

}  // namespace ember
