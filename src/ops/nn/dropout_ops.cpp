// dropout, feature (channel) dropout and their alpha variants. The mask is a bernoulli draw and
// the result a product with recorded ops, so the gradient (the same mask) comes free.
#include <cmath>

#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/nn_ops.h"
#include "ember/ops.h"
#include "ops/call_path.h"

namespace ember {

namespace {

void check_p(double p, const char* op) {
  EMBER_CHECK_VALUE(p >= 0 && p <= 1, "[", op,
                    "] dropout probability has to be between 0 and 1, but got ", p);
}

/// The noise shape: the input's, or (N, C, 1, ...) for feature dropout.
DimVector noise_shape(const Tensor& input, bool feature, const char* op) {
  if (!feature) return DimVector(input.sizes());
  EMBER_CHECK(input.dim() >= 2, "[", op,
              "] Feature dropout requires at least 2 dimensions in the input, got ",
              shape_str(input.sizes()));
  DimVector s(size_t(input.dim()), 1);
  s[0] = input.size(0);
  s[1] = input.size(1);
  return s;
}

// Mirrors ATen's _dropout_impl: for alpha dropout the kept elements are scaled by a and every
// element shifted by b so that a SELU activation keeps zero mean and unit variance.
Tensor dropout_impl(Tensor& input, double p, bool train, bool feature, bool alpha, bool inplace,
                    const char* op) {
  EMBER_CHECK(input.defined(), "[", op, "] input must be defined");
  check_p(p, op);
  if (p == 0 || !train || input.numel() == 0) return input;
  EMBER_CHECK(input.is_floating_point(), "[", op, "] expected a floating input, got ",
              dtype_name(input.dtype()));
  if (p == 1) {
    Tensor z = zeros_like(input);
    return inplace ? input.mul_(z) : input * z;
  }
  Tensor noise = empty(noise_shape(input, feature, op), input.options());
  noise.bernoulli_(1 - p);
  if (alpha) {
    constexpr double kAlpha = 1.7580993408473766;
    const double a = 1. / std::sqrt((kAlpha * kAlpha * p + 1) * (1 - p));
    Tensor b = (noise - 1) * (kAlpha * a) + kAlpha * a * p;
    noise.mul_(a);
    if (inplace) return input.mul_(noise).add_(b);
    return input * noise + b;
  }
  noise.div_(1 - p);
  return inplace ? input.mul_(noise) : input * noise;
}

}  // namespace

Tensor dropout(const Tensor& input, double p, bool train) {
  EMBER_OP(dropout, input, p, train);
  Tensor x = input;
  return dropout_impl(x, p, train, false, false, false, "dropout");
}
Tensor& dropout_(Tensor& input, double p, bool train) {
  EMBER_OP(dropout_, input, p, train);
  dropout_impl(input, p, train, false, false, true, "dropout_");
  return input;
}
Tensor feature_dropout(const Tensor& input, double p, bool train) {
  EMBER_OP(feature_dropout, input, p, train);
  Tensor x = input;
  return dropout_impl(x, p, train, true, false, false, "feature_dropout");
}
Tensor& feature_dropout_(Tensor& input, double p, bool train) {
  EMBER_OP(feature_dropout_, input, p, train);
  dropout_impl(input, p, train, true, false, true, "feature_dropout_");
  return input;
}
Tensor alpha_dropout(const Tensor& input, double p, bool train) {
  EMBER_OP(alpha_dropout, input, p, train);
  Tensor x = input;
  return dropout_impl(x, p, train, false, true, false, "alpha_dropout");
}
Tensor& alpha_dropout_(Tensor& input, double p, bool train) {
  EMBER_OP(alpha_dropout_, input, p, train);
  dropout_impl(input, p, train, false, true, true, "alpha_dropout_");
  return input;
}
Tensor feature_alpha_dropout(const Tensor& input, double p, bool train) {
  EMBER_OP(feature_alpha_dropout, input, p, train);
  Tensor x = input;
  return dropout_impl(x, p, train, true, true, false, "feature_alpha_dropout");
}
Tensor& feature_alpha_dropout_(Tensor& input, double p, bool train) {
  EMBER_OP(feature_alpha_dropout_, input, p, train);
  dropout_impl(input, p, train, true, true, true, "feature_alpha_dropout_");
  return input;
}

}  // namespace ember
