// Public functions of the parameterised elementwise ops (ops.h): round with decimals, logit,
// nan_to_num and the nn.functional activations that take arguments. Each checks its arguments
// as PyTorch does, packs them into OpParams::s (the order the functors in
// kernels/cpu/activation_kernels.cpp read) and takes the generic elementwise path.
#include <limits>

#include "ember/ops.h"
#include "ops/elementwise_core.h"

namespace ember {

namespace {

OpParams pack(const Scalar& a, const Scalar& b = 0, const Scalar& c = 0) {
  OpParams p;
  p.s[0] = a;
  p.s[1] = b;
  p.s[2] = c;
  return p;
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

OpParams logit_params(std::optional<double> eps) { return pack(eps ? *eps : -1.0); }

// nan_to_num's defaults are the limits of the input's own dtype (65504 for float16...).
OpParams nan_to_num_params(const Tensor& x, std::optional<double> nan,
                           std::optional<double> posinf, std::optional<double> neginf) {
  double hi = std::numeric_limits<double>::max();
  if (x.defined()) {
    switch (x.dtype()) {
      case kHalf: hi = float(std::numeric_limits<Half>::max()); break;
      case kBFloat16: hi = float(std::numeric_limits<BFloat16>::max()); break;
      case kFloat: hi = std::numeric_limits<float>::max(); break;
      default: break;
    }
  }
  return pack(nan.value_or(0.0), posinf.value_or(hi), neginf.value_or(-hi));
}

OpParams celu_params(const Scalar& alpha) {
  EMBER_CHECK(alpha.toDouble() != 0, "[celu] ZeroDivisionError: alpha cannot be 0 for CELU");
  // celu(x, a) = elu(x, alpha=a, scale=1, input_scale=1/a), the inverse taken in double.
  return pack(alpha, 1.0, 1.0 / alpha.toDouble());
}

OpId gelu_op(std::string_view approximate, const char* name) {
  if (approximate == "none") return OpId::gelu;
  if (approximate == "tanh") return OpId::gelu_tanh;
  EMBER_THROW(ValueError, "[", name, "] approximate argument must be either 'none' or 'tanh', got '",
              approximate, "'");
}

OpParams hardtanh_params(const Tensor& x, const Scalar& min_val, const Scalar& max_val,
                         const char* name) {
  EMBER_CHECK(!(x.defined() && x.dtype() == kByte &&
                (min_val.toDouble() < 0 || max_val.toDouble() < 0)),
              "[", name, "] cannot do hardtanh on an unsigned type with negative limits (min_val=",
              min_val, ", max_val=", max_val, ")");
  return pack(min_val, max_val);
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
  return run(OpId::logit, x, logit_params(eps));
}
Tensor Tensor::logit(std::optional<double> eps) const { return ember::logit(*this, eps); }
Tensor& Tensor::logit_(std::optional<double> eps) {
  return run_(OpId::logit, *this, logit_params(eps));
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
  return run_(OpId::nan_to_num, *this, nan_to_num_params(*this, nan, posinf, neginf));
}

// ---- activations ----
Tensor leaky_relu(const Tensor& x, const Scalar& negative_slope) {
  return run(OpId::leaky_relu, x, pack(negative_slope));
}
Tensor& leaky_relu_(Tensor& x, const Scalar& negative_slope) {
  return run_(OpId::leaky_relu, x, pack(negative_slope));
}

Tensor elu(const Tensor& x, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  return run(OpId::elu, x, pack(alpha, scale, input_scale));
}
Tensor& elu_(Tensor& x, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  return run_(OpId::elu, x, pack(alpha, scale, input_scale));
}

Tensor celu(const Tensor& x, const Scalar& alpha) { return run(OpId::celu, x, celu_params(alpha)); }
Tensor& celu_(Tensor& x, const Scalar& alpha) { return run_(OpId::celu, x, celu_params(alpha)); }

Tensor gelu(const Tensor& x, std::string_view approximate) {
  return run(gelu_op(approximate, "gelu"), x, {});
}
Tensor& gelu_(Tensor& x, std::string_view approximate) {
  return run_(gelu_op(approximate, "gelu_"), x, {});
}

Tensor softplus(const Tensor& x, const Scalar& beta, const Scalar& threshold) {
  return run(OpId::softplus, x, pack(beta, threshold));
}

Tensor hardtanh(const Tensor& x, const Scalar& min_val, const Scalar& max_val) {
  return run(OpId::hardtanh, x, hardtanh_params(x, min_val, max_val, "hardtanh"));
}
Tensor& hardtanh_(Tensor& x, const Scalar& min_val, const Scalar& max_val) {
  return run_(OpId::hardtanh, x, hardtanh_params(x, min_val, max_val, "hardtanh_"));
}

Tensor hardshrink(const Tensor& x, const Scalar& lambd) {
  return run(OpId::hardshrink, x, pack(lambd));
}

Tensor softshrink(const Tensor& x, const Scalar& lambd) {
  EMBER_CHECK(lambd.toDouble() >= 0, "[softshrink] lambda must be greater or equal to 0, but found "
              "to be ", lambd, ".");
  return run(OpId::softshrink, x, pack(lambd));
}

Tensor threshold(const Tensor& x, const Scalar& threshold, const Scalar& value) {
  return run(OpId::threshold, x, pack(threshold, value));
}
Tensor& threshold_(Tensor& x, const Scalar& threshold, const Scalar& value) {
  return run_(OpId::threshold, x, pack(threshold, value));
}

}  // namespace ember
