#pragma once
/// Options of the normalization layers and functions (libtorch's BatchNormOptions,
/// InstanceNormOptions, LayerNormOptions, GroupNormOptions, LocalResponseNormOptions and the
/// FuncOptions of F::batch_norm, F::instance_norm, F::layer_norm, F::group_norm, F::normalize).

#include <optional>
#include <vector>

#include "ember/nn/options.h"
#include "ember/tensor.h"

namespace ember::nn {

/// `BatchNorm2dOptions(C).momentum(std::nullopt)`: a missing momentum uses the cumulative
/// average of the batch statistics.
struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}
  EMBER_ARG(int64_t, num_features);
  EMBER_ARG(double, eps) = 1e-5;
  EMBER_ARG(std::optional<double>, momentum) = 0.1;
  EMBER_ARG(bool, affine) = true;
  EMBER_ARG(bool, track_running_stats) = true;
};
using BatchNorm1dOptions = BatchNormOptions;
using BatchNorm2dOptions = BatchNormOptions;
using BatchNorm3dOptions = BatchNormOptions;

/// Instance norm: no affine and no running statistics by default.
struct InstanceNormOptions {
  InstanceNormOptions(int64_t num_features) : num_features_(num_features) {}
  EMBER_ARG(int64_t, num_features);
  EMBER_ARG(double, eps) = 1e-5;
  EMBER_ARG(double, momentum) = 0.1;
  EMBER_ARG(bool, affine) = false;
  EMBER_ARG(bool, track_running_stats) = false;
};
using InstanceNorm1dOptions = InstanceNormOptions;
using InstanceNorm2dOptions = InstanceNormOptions;
using InstanceNorm3dOptions = InstanceNormOptions;

/// Normalizes over the trailing `normalized_shape` dims.
struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape)
      : normalized_shape_(std::move(normalized_shape)) {}
  EMBER_ARG(std::vector<int64_t>, normalized_shape);
  EMBER_ARG(double, eps) = 1e-5;
  EMBER_ARG(bool, elementwise_affine) = true;
};

/// num_channels split into num_groups groups.
struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels)
      : num_groups_(num_groups), num_channels_(num_channels) {}
  EMBER_ARG(int64_t, num_groups);
  EMBER_ARG(int64_t, num_channels);
  EMBER_ARG(double, eps) = 1e-5;
  EMBER_ARG(bool, affine) = true;
};

/// Normalization across `size` neighbouring channels.
struct LocalResponseNormOptions {
  LocalResponseNormOptions(int64_t size) : size_(size) {}
  EMBER_ARG(int64_t, size);
  EMBER_ARG(double, alpha) = 1e-4;
  EMBER_ARG(double, beta) = 0.75;
  EMBER_ARG(double, k) = 1.0;
};

namespace functional {

/// `F::batch_norm(x, mean, var, F::BatchNormFuncOptions().weight(w).training(true))`.
struct BatchNormFuncOptions {
  EMBER_ARG(Tensor, weight);
  EMBER_ARG(Tensor, bias);
  EMBER_ARG(bool, training) = false;
  EMBER_ARG(std::optional<double>, momentum) = 0.1;
  EMBER_ARG(double, eps) = 1e-5;
};

struct InstanceNormFuncOptions {
  EMBER_ARG(Tensor, running_mean);
  EMBER_ARG(Tensor, running_var);
  EMBER_ARG(Tensor, weight);
  EMBER_ARG(Tensor, bias);
  EMBER_ARG(bool, use_input_stats) = true;
  EMBER_ARG(double, momentum) = 0.1;
  EMBER_ARG(double, eps) = 1e-5;
};

struct LayerNormFuncOptions {
  LayerNormFuncOptions(std::vector<int64_t> normalized_shape)
      : normalized_shape_(std::move(normalized_shape)) {}
  EMBER_ARG(std::vector<int64_t>, normalized_shape);
  EMBER_ARG(Tensor, weight);
  EMBER_ARG(Tensor, bias);
  EMBER_ARG(double, eps) = 1e-5;
};

struct GroupNormFuncOptions {
  GroupNormFuncOptions(int64_t num_groups) : num_groups_(num_groups) {}
  EMBER_ARG(int64_t, num_groups);
  EMBER_ARG(Tensor, weight);
  EMBER_ARG(Tensor, bias);
  EMBER_ARG(double, eps) = 1e-5;
};

using LocalResponseNormFuncOptions = LocalResponseNormOptions;

/// x / max(||x||_p along dim, eps).
struct NormalizeFuncOptions {
  EMBER_ARG(double, p) = 2.0;
  EMBER_ARG(int64_t, dim) = 1;
  EMBER_ARG(double, eps) = 1e-12;
};

}  // namespace functional
}  // namespace ember::nn
