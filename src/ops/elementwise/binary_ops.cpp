// Binary and ternary ops with extra arguments or special rules: div with rounding modes, clamp,
// lerp, addcmul/addcdiv, where, isclose/allclose/equal. Each validates as PyTorch 1.13 does and
// then runs on the generic elementwise path (ops/elementwise_core.h); where() calls the loop
// engine directly because its condition is bool while its values have the result dtype.
#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ops/call_path.h"
#include "ops/elementwise/elementwise_core.h"

namespace ember {

namespace {

// c10's checked Scalar conversion: PyTorch refuses a scalar argument (clamp bound, lerp weight,
// addcmul value) that does not fit the dtype the kernel computes in.
template <class T>
bool fits_int(const Scalar& s) {
  using L = std::numeric_limits<T>;
  if (s.isFloatingPoint() || s.isComplex()) {
    double v = s.isComplex() ? s.toComplexDouble().real() : s.toDouble();
    return v >= double(L::lowest()) && v <= double(L::max());  // false for NaN
  }
  int64_t v = s.toLong();
  if constexpr (!std::is_signed_v<T>) {
    // Negative values may wrap (uint8: -1 is 255), down to -max, as c10 allows.
    if (v < 0) return uint64_t(0) - uint64_t(v) <= uint64_t(L::max());
    return uint64_t(v) <= uint64_t(L::max());
  } else {
    return v >= int64_t(L::lowest()) && v <= int64_t(L::max());
  }
}

void check_scalar_fits(const Scalar& s, ScalarType t, const char* op) {
  bool ok = true;
  if (s.isComplex() && !isComplexType(t) && s.toComplexDouble().imag() != 0) ok = false;
  // Float targets: only finite values beyond the type's range overflow (inf and NaN fit).
  auto fits_float = [](double v, double max) { return !std::isfinite(v) || std::abs(v) <= max; };
  const double fmax = double(std::numeric_limits<float>::max());
  switch (t) {
    case kByte:
      ok = ok && fits_int<uint8_t>(s);
      break;
    case kChar:
      ok = ok && fits_int<int8_t>(s);
      break;
    case kShort:
      ok = ok && fits_int<int16_t>(s);
      break;
    case kInt:
      ok = ok && fits_int<int32_t>(s);
      break;
    case kLong:
      ok = ok && fits_int<int64_t>(s);
      break;
    case kHalf:
      ok = ok && fits_float(s.toDouble(), 65504.0);
      break;
    case kBFloat16:
    case kFloat:
      ok = ok && fits_float(s.toDouble(), fmax);
      break;
    case kComplexFloat: {
      auto z = s.toComplexDouble();
      ok = ok && fits_float(z.real(), fmax) && fits_float(z.imag(), fmax);
      break;
    }
    default:
      break;
  }
  EMBER_CHECK(ok, "[", op, "] value ", s, " cannot be converted to type ", t, " without overflow");
}

bool scalar_is_nan(const Scalar& s) {
  if (s.isComplex()) {
    auto z = s.toComplexDouble();
    return std::isnan(z.real()) || std::isnan(z.imag());
  }
  return s.isFloatingPoint() && std::isnan(s.toDouble());
}

// Every element of a bool tensor is true.
bool all_true(const Tensor& b) { return (b.is_cpu() ? b : b.cpu()).all().item<bool>(); }

}  // namespace

// ---- div ----

namespace {
OpId div_op(const std::optional<std::string_view>& mode, const char* name) {
  if (!mode) return OpId::true_divide;
  if (*mode == "trunc") return OpId::div_trunc;
  if (*mode == "floor") return OpId::div_floor;
  EMBER_THROW(Error, "[", name,
              "] expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *mode,
              "'");
}
}  // namespace

Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode) {
  return elementwise(div_op(rounding_mode, "div"), {a, b});
}
Tensor div(const Tensor& a, const Scalar& b, std::optional<std::string_view> rounding_mode) {
  return elementwise(div_op(rounding_mode, "div"), {a, wrap_scalar(b)});
}
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b,
                std::optional<std::string_view> rounding_mode) {
  elementwise(div_op(rounding_mode, "div"), {a, b}, {}, OutMode::Out, &out);
  return out;
}
Tensor Tensor::div(const Tensor& other, std::optional<std::string_view> rounding_mode) const {
  return ember::div(*this, other, rounding_mode);
}
Tensor Tensor::div(const Scalar& other, std::optional<std::string_view> rounding_mode) const {
  return ember::div(*this, other, rounding_mode);
}
Tensor& Tensor::div_(const Tensor& other, std::optional<std::string_view> rounding_mode) {
  elementwise(div_op(rounding_mode, "div_"), {*this, other}, {}, OutMode::InPlace);
  return *this;
}
Tensor& Tensor::div_(const Scalar& other, std::optional<std::string_view> rounding_mode) {
  elementwise(div_op(rounding_mode, "div_"), {*this, wrap_scalar(other)}, {}, OutMode::InPlace);
  return *this;
}
Tensor operator/(const Scalar& a, const Tensor& b) {
  return elementwise(OpId::true_divide, {wrap_scalar(a), b});
}

// ---- pow with a scalar exponent ----

// Note [pow with a scalar exponent]
// PyTorch's pow.Tensor_Scalar differs from pow with a tensor exponent: an integral base with a
// negative integral exponent is an error (a tensor exponent gives 0, 1 or -1 instead); exponent
// 0 gives ones (even for NaN), 1 a copy; and for float/double/bfloat16/complex, 0.5, -0.5 and -1
// run sqrt, rsqrt and reciprocal, which differ from pow at -inf and -0 (sqrt(-inf) is NaN,
// pow(-inf, 0.5) is inf). The generated pow(Tensor, Scalar) forms should route here.
Tensor pow_tensor_scalar(const Tensor& base, const Scalar& exp, OutMode mode, Tensor* out) {
  const char* name = mode == OutMode::InPlace ? "pow_" : "pow";
  EMBER_CHECK(base.defined(), "[", name, "] got an undefined tensor");
  EMBER_CHECK(!(isIntegralType(base.dtype(), true) && exp.isIntegral(true) && exp.toLong() < 0),
              "[", name, "] Integers to negative integer powers are not allowed.");
  Tensor w = wrap_scalar(exp);
  const ScalarType rt = result_type({base, w});
  auto equals = [&](double v) {  // c10::Scalar::equal: a bool never equals a number
    if (exp.isComplex()) return exp.toComplexDouble() == complex<double>(v, 0);
    if (exp.isFloatingPoint()) return exp.toDouble() == v;
    return exp.isIntegral(false) && double(exp.toLong()) == v;
  };
  const bool fast = rt == kFloat || rt == kDouble || rt == kBFloat16 || isComplexType(rt);
  if (fast && (mode != OutMode::InPlace || rt == base.dtype())) {
    OpId op = equals(0.5)    ? OpId::sqrt
              : equals(-0.5) ? OpId::rsqrt
              : equals(-1.0) ? OpId::reciprocal
                             : OpId::pow;
    if (op != OpId::pow)
      return elementwise(op, {base.dtype() == rt ? base : base.to(rt)}, {}, mode, out);
  }
  // x**0 and x**1 are fixed up after the kernel. Under autograd the fix-up would overwrite a
  // value pow saved for backward, so there they are built from recorded ops: a filled copy
  // (zero gradient) and a copy (gradient one).
  if (mode != OutMode::Out && (equals(0.0) || equals(1.0)) &&
      autograd::any_needs_recording({base})) {
    if (mode == OutMode::InPlace) return equals(0.0) ? const_cast<Tensor&>(base).fill_(1) : base;
    Tensor r = base.to(rt, false, /*copy=*/true);
    return equals(0.0) ? r.fill_(1) : r;
  }
  Tensor r = elementwise(OpId::pow, {base, w}, {}, mode, out);
  if (equals(0.0))
    r.fill_(1);
  else if (equals(1.0))
    r.copy_(base);
  return r;
}

// ---- clamp ----

namespace {
void check_clamp_args(const Tensor& x, bool has_min, bool has_max, const char* name) {
  EMBER_CHECK(x.defined(), "[", name, "] got an undefined tensor");
  EMBER_CHECK(has_min || has_max, "[", name,
              "] torch.clamp: At least one of 'min' or 'max' must not be None");
  EMBER_CHECK(!x.is_complex(), "[", name, "] clamp is not supported for complex types");
}

// clamp with scalar bounds. The result dtype is result_type(x, min, max) for a non-float x
// (clamp(int_tensor, 0.5) is float), x's dtype for a float x.
Tensor clamp_scalar_impl(const Tensor& x, const std::optional<Scalar>& min,
                         const std::optional<Scalar>& max, OutMode mode, Tensor* out) {
  const char* name = mode == OutMode::InPlace ? "clamp_" : "clamp";
  check_clamp_args(x, min.has_value(), max.has_value(), name);
  ScalarType rt = x.dtype();
  if (!isFloatingType(rt)) {
    Tensor ts[3] = {x};
    size_t n = 1;
    if (min) ts[n++] = wrap_scalar(*min);
    if (max) ts[n++] = wrap_scalar(*max);
    rt = result_type(ArrayRef<Tensor>(ts, n));
  }
  EMBER_CHECK(!isComplexType(rt), "[", name, "] clamp is not supported for complex types");
  EMBER_CHECK(mode != OutMode::InPlace || rt == x.dtype(), "[", name, "] result type ", rt,
              " can't be cast to the desired output type ", x.dtype());
  // PyTorch's scalar clamp builds a unary op on x.to(result type): out= must have that dtype.
  EMBER_CHECK(mode != OutMode::Out || !out->defined() || out->dtype() == rt, "[clamp] Found dtype ",
              out->dtype(), " but expected ", rt);
  OpParams p;
  if (min) {
    check_scalar_fits(*min, rt, name);
    p.s[0] = *min;
  }
  if (max) {
    check_scalar_fits(*max, rt, name);
    p.s[1] = *max;
  }
  p.s[2] = int64_t((min ? 1 : 0) | (max ? 2 : 0));
  Tensor in = x.dtype() == rt ? x : x.to(rt);
  Tensor r = elementwise(OpId::clamp, {in}, p, mode, out);
  // PyTorch: with both bounds given, a NaN bound makes the whole result NaN.
  if (min && max && (scalar_is_nan(*min) || scalar_is_nan(*max)))
    r.fill_(std::numeric_limits<double>::quiet_NaN());
  return r;
}

// clamp with tensor bounds: ternary clamp, or maximum/minimum when one bound is absent, with
// ordinary type promotion over all operands (PyTorch's clamp.Tensor).
Tensor clamp_tensor_impl(const Tensor& x, const std::optional<Tensor>& min,
                         const std::optional<Tensor>& max, OutMode mode, Tensor* out) {
  const char* name = mode == OutMode::InPlace ? "clamp_" : "clamp";
  bool has_min = min && min->defined(), has_max = max && max->defined();
  check_clamp_args(x, has_min, has_max, name);
  if (has_min && has_max) return elementwise(OpId::clamp_tensor, {x, *min, *max}, {}, mode, out);
  if (has_min) return elementwise(OpId::maximum, {x, *min}, {}, mode, out);
  return elementwise(OpId::minimum, {x, *max}, {}, mode, out);
}
}  // namespace

Tensor clamp(const Tensor& x, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return clamp_scalar_impl(x, min, max, OutMode::Functional, nullptr);
}
Tensor clamp(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  return clamp_tensor_impl(x, min, max, OutMode::Functional, nullptr);
}
Tensor& clamp_out(Tensor& out, const Tensor& x, const std::optional<Scalar>& min,
                  const std::optional<Scalar>& max) {
  clamp_scalar_impl(x, min, max, OutMode::Out, &out);
  return out;
}
Tensor& clamp_out(Tensor& out, const Tensor& x, const std::optional<Tensor>& min,
                  const std::optional<Tensor>& max) {
  clamp_tensor_impl(x, min, max, OutMode::Out, &out);
  return out;
}
Tensor Tensor::clamp(const std::optional<Scalar>& min, const std::optional<Scalar>& max) const {
  return ember::clamp(*this, min, max);
}
Tensor Tensor::clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const {
  return ember::clamp(*this, min, max);
}
Tensor& Tensor::clamp_(const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  clamp_scalar_impl(*this, min, max, OutMode::InPlace, nullptr);
  return *this;
}
Tensor& Tensor::clamp_(const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  clamp_tensor_impl(*this, min, max, OutMode::InPlace, nullptr);
  return *this;
}

// ---- lerp ----

namespace {
// PyTorch's lerp does not promote: end (and a tensor weight) must have start's dtype.
void check_lerp_dtype(const Tensor& start, const Tensor& t, const char* what, const char* name) {
  EMBER_CHECK(start.defined() && t.defined(), "[", name, "] got an undefined tensor");
  EMBER_CHECK(start.dtype() == t.dtype(), "[", name, "] expected dtype ", start.dtype(), " for `",
              what, "` but got dtype ", t.dtype());
}
Tensor lerp_impl(const Tensor& start, const Tensor& end, const Scalar& weight, OutMode mode) {
  const char* name = mode == OutMode::InPlace ? "lerp_" : "lerp";
  check_lerp_dtype(start, end, "end", name);
  check_scalar_fits(weight, start.dtype(), name);
  OpParams p;
  p.s[0] = weight;
  return elementwise(OpId::lerp_scalar, {start, end}, p, mode);
}
Tensor lerp_impl(const Tensor& start, const Tensor& end, const Tensor& weight, OutMode mode) {
  const char* name = mode == OutMode::InPlace ? "lerp_" : "lerp";
  check_lerp_dtype(start, end, "end", name);
  check_lerp_dtype(start, weight, "weight", name);
  return elementwise(OpId::lerp_tensor, {start, end, weight}, {}, mode);
}
}  // namespace

Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight) {
  return lerp_impl(start, end, weight, OutMode::Functional);
}
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  return lerp_impl(start, end, weight, OutMode::Functional);
}
Tensor Tensor::lerp(const Tensor& end, const Scalar& weight) const {
  return ember::lerp(*this, end, weight);
}
Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const {
  return ember::lerp(*this, end, weight);
}
Tensor& Tensor::lerp_(const Tensor& end, const Scalar& weight) {
  lerp_impl(*this, end, weight, OutMode::InPlace);
  return *this;
}
Tensor& Tensor::lerp_(const Tensor& end, const Tensor& weight) {
  lerp_impl(*this, end, weight, OutMode::InPlace);
  return *this;
}

// ---- addcmul / addcdiv ----

namespace {
Tensor addc_impl(OpId op, const Tensor& self, const Tensor& t1, const Tensor& t2,
                 const Scalar& value, OutMode mode) {
  const bool is_div = op == OpId::addcdiv;
  std::string name =
      std::string(is_div ? "addcdiv" : "addcmul") + (mode == OutMode::InPlace ? "_" : "");
  EMBER_CHECK(self.defined() && t1.defined() && t2.defined(), "[", name,
              "] got an undefined tensor");
  if (is_div) {
    EMBER_CHECK(!(isIntegralType(t1.dtype(), true) && isIntegralType(t2.dtype(), true)), "[", name,
                "] Integer division with addcdiv is no longer supported, and in a future release "
                "addcdiv will perform a true division of tensor1 and tensor2. The historic "
                "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
                "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
                "tensor2) for float inputs. The future addcdiv behavior is just the latter "
                "implementation: (input + value * tensor1 / tensor2), for all dtypes.");
  }
  check_scalar_fits(value, result_type({self, t1, t2}), name.c_str());
  OpParams p;
  p.s[0] = value;
  return elementwise(op, {self, t1, t2}, p, mode);
}
}  // namespace

Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return addc_impl(OpId::addcmul, self, t1, t2, value, OutMode::Functional);
}
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return addc_impl(OpId::addcdiv, self, t1, t2, value, OutMode::Functional);
}
Tensor Tensor::addcmul(const Tensor& t1, const Tensor& t2, const Scalar& value) const {
  return ember::addcmul(*this, t1, t2, value);
}
Tensor& Tensor::addcmul_(const Tensor& t1, const Tensor& t2, const Scalar& value) {
  addc_impl(OpId::addcmul, *this, t1, t2, value, OutMode::InPlace);
  return *this;
}
Tensor Tensor::addcdiv(const Tensor& t1, const Tensor& t2, const Scalar& value) const {
  return ember::addcdiv(*this, t1, t2, value);
}
Tensor& Tensor::addcdiv_(const Tensor& t1, const Tensor& t2, const Scalar& value) {
  addc_impl(OpId::addcdiv, *this, t1, t2, value, OutMode::InPlace);
  return *this;
}

// ---- where ----

namespace {
Tensor where_impl(const Tensor& condition, const Tensor& a, const Tensor& b) {
  EMBER_CHECK(condition.defined() && a.defined() && b.defined(), "[where] got an undefined tensor");
  // PyTorch 1.13 still accepts uint8 conditions (deprecated, with a warning).
  EMBER_CHECK(condition.dtype() == kBool || condition.dtype() == kByte,
              "[where] where expected condition to be a boolean tensor, but got a tensor with "
              "dtype ",
              condition.dtype());
  const Tensor ins[3] = {condition, a, b};
  // The device: that of the first operand that is not a 0-dim CPU tensor (those mix freely).
  Device device(kCPU);
  for (const Tensor& t : ins) {
    if (!(t.dim() == 0 && t.is_cpu())) {
      device = t.device();
      break;
    }
  }
  for (const Tensor& t : ins) {
    EMBER_CHECK(t.device() == device || (t.dim() == 0 && t.is_cpu()),
                "[where] Expected all tensors to be on the same device, but found at least two "
                "devices, ",
                device, " and ", t.device(), "!");
  }
  const ScalarType rt = result_type({a, b});
  DimVector shape = broadcast_all(ArrayRef<Tensor>(ins, 3), "where");
  auto tidy = [&](const Tensor& t, ScalarType dt) {
    Tensor r = t.dtype() == dt ? t : t.to(dt);
    if (r.is_conj()) r = r.resolve_conj();
    return r.device() == device ? r : operand_on_device(r, device);
  };
  Tensor c = tidy(condition, kBool);
  Tensor x = tidy(a, rt), y = tidy(b, rt);
  Tensor out = empty_like_layout(shape, rt, device, {a, b});
  if (out.numel() == 0) return out;
  const Tensor* in_ptrs[3] = {&c, &x, &y};
  ArrayRef<const Tensor*> in_ref(in_ptrs, 3);
  run_elementwise_kernel(OpId::where, rt, out, in_ref, {}, "where");
  return out;
}
}  // namespace

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  EMBER_OP_CAST(where_1, where, condition, a, b);
  // Gradient: routed to a where the condition holds, to b elsewhere.
  autograd::OpRecorder rec("where", {a, b});
  Tensor out = where_impl(condition, a, b);
  if (rec) {
    rec.record(
        out,
        [](autograd::VjpCtx& c) {
          const Tensor& g = c.grads[0];
          const Tensor& cond = c.saved[0];
          Tensor z = zeros_like(g);
          return autograd::variable_list{c.needs(0) ? where(cond, g, z) : Tensor(),
                                         c.needs(1) ? where(cond, z, g) : Tensor()};
        },
        {condition},
        [](autograd::JvpCtx& c) {
          const Tensor& o = c.outputs[0];
          Tensor ta = c.tangents[0].defined() ? c.tangents[0] : zeros_like(o);
          Tensor tb = c.tangents[1].defined() ? c.tangents[1] : zeros_like(o);
          return autograd::variable_list{where(c.saved[0], ta, tb)};
        });
  }
  return out;
}
Tensor where(const Tensor& condition, const Scalar& a, const Tensor& b) {
  EMBER_OP_CAST(where_2, where, condition, a, b);
  return where(condition, wrap_scalar(a), b);
}
Tensor where(const Tensor& condition, const Tensor& a, const Scalar& b) {
  EMBER_OP_CAST(where_3, where, condition, a, b);
  return where(condition, a, wrap_scalar(b));
}
Tensor where(const Tensor& condition, const Scalar& a, const Scalar& b) {
  EMBER_OP_CAST(where_4, where, condition, a, b);
  return where(condition, wrap_scalar(a), wrap_scalar(b));
}
Tensor Tensor::where(const Tensor& condition, const Tensor& other) const {
  return ember::where(condition, *this, other);
}

// ---- isclose / allclose / equal ----

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  EMBER_CHECK(a.defined() && b.defined(), "[isclose] got an undefined tensor");
  EMBER_CHECK(a.dtype() == b.dtype(), "[isclose] ", a.dtype(), " did not match ", b.dtype());
  EMBER_CHECK(rtol >= 0, "[isclose] rtol must be greater than or equal to zero, but got ", rtol);
  EMBER_CHECK(atol >= 0, "[isclose] atol must be greater than or equal to zero, but got ", atol);
  OpParams p;
  p.s[0] = rtol;
  p.s[1] = atol;
  p.s[2] = equal_nan;
  p.s[3] = get_default_dtype() == kDouble;
  return elementwise(OpId::isclose, {a, b}, p);
}
bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  EMBER_OP(allclose, a, b, rtol, atol, equal_nan);
  return all_true(isclose(a, b, rtol, atol, equal_nan));
}
bool equal(const Tensor& a, const Tensor& b) {
  EMBER_OP(equal, a, b);
  EMBER_CHECK(a.defined() && b.defined(), "[equal] got an undefined tensor");
  EMBER_CHECK(a.device() == b.device(),
              "[equal] Expected all tensors to be on the same device, "
              "but found at least two devices, ",
              a.device(), " and ", b.device(), "!");
  if (a.sizes() != b.sizes()) return false;
  return all_true(eq(a, b));
}
Tensor Tensor::isclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return ember::isclose(*this, other, rtol, atol, equal_nan);
}
bool Tensor::allclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return ember::allclose(*this, other, rtol, atol, equal_nan);
}
bool Tensor::equal(const Tensor& other) const { return ember::equal(*this, other); }

}  // namespace ember
