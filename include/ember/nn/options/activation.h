#pragma once
/// Options of the activation layers and functions (libtorch's names and defaults).

#include <optional>
#include <string>

#include "ember/dtype.h"
#include "ember/nn/options.h"

namespace ember::nn {

#define EMBER_INPLACE_OPTIONS(Name)                            \
  struct Name##Options {                                       \
    Name##Options(bool inplace = false) : inplace_(inplace) {} \
    EMBER_ARG(bool, inplace);                                  \
  }
EMBER_INPLACE_OPTIONS(ReLU);
EMBER_INPLACE_OPTIONS(ReLU6);
EMBER_INPLACE_OPTIONS(SELU);
EMBER_INPLACE_OPTIONS(SiLU);
EMBER_INPLACE_OPTIONS(Mish);
EMBER_INPLACE_OPTIONS(Hardsigmoid);
EMBER_INPLACE_OPTIONS(Hardswish);
#undef EMBER_INPLACE_OPTIONS

struct LeakyReLUOptions {
  EMBER_ARG(double, negative_slope) = 0.01;
  EMBER_ARG(bool, inplace) = false;
};
struct ELUOptions {
  EMBER_ARG(double, alpha) = 1.0;
  EMBER_ARG(bool, inplace) = false;
};
struct CELUOptions {
  EMBER_ARG(double, alpha) = 1.0;
  EMBER_ARG(bool, inplace) = false;
};
struct GELUOptions {
  EMBER_ARG(std::string, approximate) = "none";
};
struct SoftplusOptions {
  EMBER_ARG(double, beta) = 1.0;
  EMBER_ARG(double, threshold) = 20.0;
};
struct HardtanhOptions {
  EMBER_ARG(double, min_val) = -1.0;
  EMBER_ARG(double, max_val) = 1.0;
  EMBER_ARG(bool, inplace) = false;
};
struct ThresholdOptions {
  ThresholdOptions(double threshold, double value) : threshold_(threshold), value_(value) {}
  EMBER_ARG(double, threshold);
  EMBER_ARG(double, value);
  EMBER_ARG(bool, inplace) = false;
};
struct SoftshrinkOptions {
  SoftshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}
  EMBER_ARG(double, lambda);
};
struct HardshrinkOptions {
  HardshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}
  EMBER_ARG(double, lambda);
};
struct RReLUOptions {
  EMBER_ARG(double, lower) = 1.0 / 8.0;
  EMBER_ARG(double, upper) = 1.0 / 3.0;
  EMBER_ARG(bool, inplace) = false;
};
struct PReLUOptions {
  EMBER_ARG(int64_t, num_parameters) = 1;
  EMBER_ARG(double, init) = 0.25;
};
struct GLUOptions {
  GLUOptions(int64_t dim = -1) : dim_(dim) {}
  EMBER_ARG(int64_t, dim);
};
/// Softmax, LogSoftmax and Softmin take the dim.
struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}
  EMBER_ARG(int64_t, dim);
};
using LogSoftmaxOptions = SoftmaxOptions;
using SoftminOptions = SoftmaxOptions;

namespace functional {
/// libtorch's option names for the functional activations (`F::elu(x, F::ELUFuncOptions())`).
using CELUFuncOptions = CELUOptions;
using ELUFuncOptions = ELUOptions;
using GELUFuncOptions = GELUOptions;
using GLUFuncOptions = GLUOptions;
using HardshrinkFuncOptions = HardshrinkOptions;
using HardtanhFuncOptions = HardtanhOptions;
using LeakyReLUFuncOptions = LeakyReLUOptions;
using ReLUFuncOptions = ReLUOptions;
using ReLU6FuncOptions = ReLU6Options;
using SELUFuncOptions = SELUOptions;
using SoftplusFuncOptions = SoftplusOptions;
using SoftshrinkFuncOptions = SoftshrinkOptions;
using ThresholdFuncOptions = ThresholdOptions;
/// F::softmax / F::log_softmax / F::softmin: the dim, and a dtype the input is cast to first.
/// Implicit from the dim and from the layers' SoftmaxOptions.
struct SoftmaxFuncOptions {
  SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}                              // NOLINT
  SoftmaxFuncOptions(const SoftmaxOptions& options) : dim_(options.dim()) {}  // NOLINT
  EMBER_ARG(int64_t, dim);
  EMBER_ARG(std::optional<ScalarType>, dtype) = std::nullopt;
};
using LogSoftmaxFuncOptions = SoftmaxFuncOptions;
using SoftminFuncOptions = SoftmaxFuncOptions;
/// F::rrelu's options; `training` picks random slopes, as the layer does in training mode.
struct RReLUFuncOptions {
  EMBER_ARG(double, lower) = 1.0 / 8.0;
  EMBER_ARG(double, upper) = 1.0 / 3.0;
  EMBER_ARG(bool, training) = false;
  EMBER_ARG(bool, inplace) = false;
};
}  // namespace functional

}  // namespace ember::nn
