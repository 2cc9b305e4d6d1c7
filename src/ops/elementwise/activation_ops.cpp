// Public functions of the parameterised elementwise ops (ops.h): round with decimals, logit,
// nan_to_num and the nn.functional activations that take arguments. Each checks its arguments
// as PyTorch does, packs them into OpParams::s (the order the functors in
// kernels/cpu/activation_kernels.cpp read) and takes the generic elementwise path.
#include <cmath>
#include <initializer_list>
#include <limits>

#include "ember/ops.h"
#include "ops/elementwise/elementwise_core.h"

namespace ember {

namespace {

OpParams pack(const Scalar& a, const Scalar& b = 0, const Scalar& c = 0) {
  OpParams p;
  p.s[0] = a;
  p.s[1] = b;
  p.s[2] = c;
  return p;
}

// Note [Checked parameter conversion]
// PyTorch converts an activation's Scalar parameters to the kernel's type with
// c10::checked_convert: a value out of the type's range is a RuntimeError ("value cannot be
// converted to type float without overflow"); infinities and NaN pass into floating types,
// negative integers wrap into unsigned ones. threshold converts to the tensor's dtype, the
// float activations to their math type (float for bfloat16), hardtanh to int64 and then to the
// dtype for integer tensors.
const char* c10_type_name(ScalarType t) {
  switch (t) {
    case kByte:
      return "uint8_t";
    case kChar:
      return "int8_t";
    case kShort:
      return "int16_t";
    case kInt:
      return "int";
    case kLong:
      return "int64_t";
    case kHalf:
      return "at::Half";
    case kBFloat16:
      return "at::BFloat16";
    case kFloat:
      return "float";
    default:
      return "double";
  }
}

bool overflows(const Scalar& s, ScalarType t) {
  if (s.isBoolean() || s.isComplex() || t == kDouble || t == kBool || isComplexType(t))
    return false;
  double lo, hi;
  switch (t) {
    case kByte:
      lo = 0, hi = 255;
      break;
    case kChar:
      lo = -128, hi = 127;
      break;
    case kShort:
      lo = -32768, hi = 32767;
      break;
    case kInt:
      lo = -2147483648.0, hi = 2147483647.0;
      break;
    case kLong:
      lo = -9223372036854775808.0, hi = 9223372036854775807.0;
      break;
    case kHalf:
      hi = 65504, lo = -hi;
      break;
    case kBFloat16:
      hi = double(float(std::numeric_limits<BFloat16>::max())), lo = -hi;
      break;
    default:
      hi = std::numeric_limits<float>::max(), lo = -hi;
      break;
  }
  if (s.isIntegral(false)) {
    int64_t v = s.toLong();
    if (t == kLong) return false;
    if (t == kByte && v < 0) return -double(v) > hi;  // negative integers wrap into uint8
    return double(v) < lo || double(v) > hi;
  }
  double v = s.toDouble();
  if (isFloatingType(t) && (std::isinf(v) || std::isnan(v))) return false;
  return !(v >= lo && v <= hi);  // NaN overflows an integer type
}

void check_fits(const Scalar& s, ScalarType t, const char* op) {
  EMBER_CHECK(!overflows(s, t), "[", op, "] value cannot be converted to type ", c10_type_name(t),
              " without overflow (value ", s, ")");
}

// The float activations check their parameters against their math type, and only once the
// dtype has a kernel (PyTorch dispatches on the dtype first).
void check_float_params(const Tensor& x, const char* op, std::initializer_list<Scalar> ps) {
  if (!x.defined() || !isFloatingType(x.dtype())) return;
  ScalarType t = x.dtype() == kDouble ? kDouble : kFloat;
  for (const Scalar& s : ps) check_fits(s, t, op);
}

Tensor run(OpId op, const Tensor& x, const OpParams& p) { return elementwise(op, {x}, p); }
Tensor& run_(OpId op, Tensor& x, const OpParams& p) {
  elementwise(op, {x}, p, OutMode::InPlace);
  return x;
}

// One kernel serves round with and without decimals; PyTorch has no integer kernel for the
// decimals form ("round_cpu" not implemented for 'Long').
OpParams round_params(const Tensor& x, int64_t decimals) {
  EMBER_CHECK(!(x.defined() && decimals != 0 && isIntegralType(x.dtype(), true)),
              "[round] not implemented for dtype ", x.dtype(), " with decimals=", decimals,
              " (integer tensors only round with decimals=0)");
  return pack(decimals);
}

OpParams logit_params(const Tensor& x, std::optional<double> eps, const char* op) {
  if (eps) check_float_params(x, op, {*eps});
  return pack(eps ? *eps : -1.0);
}

// nan_to_num's defaults are the limits of the input's own dtype (65504 for float16...).
OpParams nan_to_num_params(const Tensor& x, std::optional<double> nan, std::optional<double> posinf,
                           std::optional<double> neginf) {
  double hi = std::numeric_limits<double>::max();
  if (x.defined()) {
    switch (x.dtype()) {
      case kHalf:
        hi = float(std::numeric_limits<Half>::max());
        break;
      case kBFloat16:
        hi = float(std::numeric_limits<BFloat16>::max());
        break;
      case kFloat:
        hi = std::numeric_limits<float>::max();
        break;
      default:
        break;
    }
  }
  return pack(nan.value_or(0.0), posinf.value_or(hi), neginf.value_or(-hi));
}

OpParams elu_params(const Tensor& x, const Scalar& alpha, const Scalar& scale,
                    const Scalar& input_scale, const char* op) {
  check_float_params(x, op, {alpha, scale, input_scale});
  return pack(alpha, scale, input_scale);
}

OpParams celu_params(const Tensor& x, const Scalar& alpha, const char* op) {
  EMBER_CHECK(alpha.toDouble() != 0, "[", op, "] ZeroDivisionError: alpha cannot be 0 for CELU");
  // celu(x, a) = elu(x, alpha=a, scale=1, input_scale=1/a), the inverse taken in double.
  return elu_params(x, alpha, 1.0, 1.0 / alpha.toDouble(), op);
}

OpId gelu_op(std::string_view approximate, const char* name) {
  if (approximate == "none") return OpId::gelu;
  if (approximate == "tanh") return OpId::gelu_tanh;
  EMBER_THROW(Error, "[", name, "] approximate argument must be either 'none' or 'tanh', got '",
              approximate, "'");
}

// hardtanh is clamp(x, min_val, max_val); integer tensors take the bounds through int64 first
// (truncating: -0.5 is a valid bound for uint8, -1 is not).
OpParams hardtanh_params(const Tensor& x, const Scalar& min_val, const Scalar& max_val,
                         const char* name) {
  if (!x.defined() || !isIntegralType(x.dtype(), false)) {
    if (x.defined() && isFloatingType(x.dtype())) {
      check_fits(min_val, x.dtype(), name);
      check_fits(max_val, x.dtype(), name);
    }
    return pack(min_val, max_val);
  }
  check_fits(min_val, kLong, name);
  check_fits(max_val, kLong, name);
  Scalar lo = min_val.toLong(), hi = max_val.toLong();
  EMBER_CHECK(x.dtype() != kByte || (lo.toLong() >= 0 && hi.toLong() >= 0), "[", name,
              "] cannot do hardtanh on an unsigned type with negative limits (min_val=", min_val,
              ", max_val=", max_val, ")");
  check_fits(lo, x.dtype(), name);
  check_fits(hi, x.dtype(), name);
  return pack(lo, hi);
}

OpParams threshold_params(const Tensor& x, const Scalar& th, const Scalar& value,
                          const char* name) {
  if (x.defined() && x.dtype() != kBool) {
    check_fits(th, x.dtype(), name);
    check_fits(value, x.dtype(), name);
  }
  return pack(th, value);
}

}  // namespace

// ---- round, logit, nan_to_num ----
Tensor round(const Tensor& x, int64_t decimals) {
  return run(OpId::round_decimals, x, round_params(x, decimals));
}
Tensor& round_out(Tensor& out, const Tensor& x, int64_t decimals) {
  elementwise(OpId::round_decimals, {x}, round_params(x, decimals), OutMode::Out, &out);
  return out;
}
Tensor Tensor::round(int64_t decimals) const { return ember::round(*this, decimals); }
Tensor& Tensor::round_(int64_t decimals) {
  return run_(OpId::round_decimals, *this, round_params(*this, decimals));
}

Tensor logit(const Tensor& x, std::optional<double> eps) {
  return run(OpId::logit, x, logit_params(x, eps, "logit"));
}
Tensor Tensor::logit(std::optional<double> eps) const { return ember::logit(*this, eps); }
Tensor& Tensor::logit_(std::optional<double> eps) {
  return run_(OpId::logit, *this, logit_params(*this, eps, "logit_"));
}

// ---- polygamma, mvlgamma ----
namespace {
OpParams polygamma_params(int64_t n) {
  EMBER_CHECK(n >= 0, "[polygamma] n must be non-negative, got ", n);
  return pack(n);
}
OpParams mvlgamma_params(int64_t p, const char* op) {
  // PyTorch 1.13 checks only p; elements at or below (p - 1) / 2 give lgamma's values there.
  EMBER_CHECK(p >= 1, "[", op, "] p has to be greater than or equal to 1, got ", p);
  // The sum has p terms per element (PyTorch materialises all p of them): bound the work.
  EMBER_CHECK(p <= (int64_t(1) << 20), "[", op, "] p = ", p,
              " is too large: the multivariate log-gamma sums p terms per element (at most 2^20)");
  return pack(p);
}
}  // namespace

Tensor polygamma(int64_t n, const Tensor& x) {
  return run(OpId::polygamma, x, polygamma_params(n));
}
Tensor Tensor::polygamma(int64_t n) const { return ember::polygamma(n, *this); }
Tensor& Tensor::polygamma_(int64_t n) { return run_(OpId::polygamma, *this, polygamma_params(n)); }
Tensor mvlgamma(const Tensor& x, int64_t p) {
  return run(OpId::mvlgamma, x, mvlgamma_params(p, "mvlgamma"));
}
Tensor Tensor::mvlgamma(int64_t p) const { return ember::mvlgamma(*this, p); }
Tensor& Tensor::mvlgamma_(int64_t p) {
  return run_(OpId::mvlgamma, *this, mvlgamma_params(p, "mvlgamma_"));
}

Tensor nan_to_num(const Tensor& x, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  return run(OpId::nan_to_num, x, nan_to_num_params(x, nan, posinf, neginf));
}
Tensor Tensor::nan_to_num(std::optional<double> nan, std::optional<double> posinf,
                          std::optional<double> neginf) const {
  return ember::nan_to_num(*this, nan, posinf, neginf);
}
Tensor& Tensor::nan_to_num_(std::optional<double> nan, std::optional<double> posinf,
                            std::optional<double> neginf) {
  // Integers have nothing to replace; PyTorch copies self onto itself, which also accepts
  // expanded (self-overlapping) tensors.
  if (defined() && isIntegralType(dtype(), true)) return *this;
  return run_(OpId::nan_to_num, *this, nan_to_num_params(*this, nan, posinf, neginf));
}

// ---- activations ----
Tensor leaky_relu(const Tensor& x, const Scalar& negative_slope) {
  check_float_params(x, "leaky_relu", {negative_slope});
  return run(OpId::leaky_relu, x, pack(negative_slope));
}
Tensor& leaky_relu_(Tensor& x, const Scalar& negative_slope) {
  check_float_params(x, "leaky_relu_", {negative_slope});
  return run_(OpId::leaky_relu, x, pack(negative_slope));
}

Tensor elu(const Tensor& x, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  return run(OpId::elu, x, elu_params(x, alpha, scale, input_scale, "elu"));
}
Tensor& elu_(Tensor& x, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  return run_(OpId::elu, x, elu_params(x, alpha, scale, input_scale, "elu_"));
}

Tensor celu(const Tensor& x, const Scalar& alpha) {
  return run(OpId::celu, x, celu_params(x, alpha, "celu"));
}
Tensor& celu_(Tensor& x, const Scalar& alpha) {
  return run_(OpId::celu, x, celu_params(x, alpha, "celu_"));
}

Tensor gelu(const Tensor& x, std::string_view approximate) {
  return run(gelu_op(approximate, "gelu"), x, {});
}
Tensor& gelu_(Tensor& x, std::string_view approximate) {
  return run_(gelu_op(approximate, "gelu_"), x, {});
}

Tensor softplus(const Tensor& x, const Scalar& beta, const Scalar& threshold) {
  check_float_params(x, "softplus", {beta, threshold});
  return run(OpId::softplus, x, pack(beta, threshold));
}

Tensor hardtanh(const Tensor& x, const Scalar& min_val, const Scalar& max_val) {
  return run(OpId::hardtanh, x, hardtanh_params(x, min_val, max_val, "hardtanh"));
}
Tensor& hardtanh_(Tensor& x, const Scalar& min_val, const Scalar& max_val) {
  return run_(OpId::hardtanh, x, hardtanh_params(x, min_val, max_val, "hardtanh_"));
}

Tensor hardshrink(const Tensor& x, const Scalar& lambd) {
  check_float_params(x, "hardshrink", {lambd});
  return run(OpId::hardshrink, x, pack(lambd));
}

Tensor softshrink(const Tensor& x, const Scalar& lambd) {
  EMBER_CHECK(lambd.toDouble() >= 0,
              "[softshrink] lambda must be greater or equal to 0, but found "
              "to be ",
              lambd, ".");
  check_float_params(x, "softshrink", {lambd});
  return run(OpId::softshrink, x, pack(lambd));
}

Tensor threshold(const Tensor& x, const Scalar& threshold, const Scalar& value) {
  return run(OpId::threshold, x, threshold_params(x, threshold, value, "threshold"));
}
Tensor& threshold_(Tensor& x, const Scalar& threshold, const Scalar& value) {
  return run_(OpId::threshold, x, threshold_params(x, threshold, value, "threshold_"));
}

}  // namespace ember
