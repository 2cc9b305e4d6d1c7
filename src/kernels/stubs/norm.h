#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernels of batch, layer and group normalization (src/ops/nn/norm_ops.cpp), forward and
// backward (Note [Kernel stubs]). Every tensor is contiguous; `x`, `y`, `grad` and the layer /
// group statistics have one compute dtype (float32 or float64), the per-channel batch-norm
// statistics are float64. An optional tensor (weight, bias, a gradient not asked for) is
// undefined.

#include <cstdint>

#include "core/kernel_stub.h"
#include "ember/tensor.h"

namespace ember {

/// Training statistics of `x` (N, C, *), per channel, into float64 tensors of C elements: the
/// `mean`, `invstd` = 1 / sqrt(biased variance + eps) and the unbiased variance `var`.
EMBER_DECLARE_KERNEL(batch_norm_stats_stub,
                     void(const Tensor& x, double eps, Tensor& mean, Tensor& invstd, Tensor& var));

/// Evaluation statistics from the float64 running statistics (C elements each): `mean` =
/// running_mean and `invstd` = 1 / sqrt(running_var + eps), float64 tensors of C elements.
EMBER_DECLARE_KERNEL(batch_norm_eval_stats_stub,
                     void(const Tensor& running_mean, const Tensor& running_var, double eps,
                          Tensor& mean, Tensor& invstd));

/// y = (x - mean[c]) * invstd[c] * weight[c] + bias[c] for `x` (N, C, *), with `y` of x's shape
/// and dtype; weight and bias (optional) and the statistics are float64 tensors of C elements.
EMBER_DECLARE_KERNEL(batch_norm_apply_stub,
                     void(const Tensor& x, const Tensor& weight, const Tensor& bias,
                          const Tensor& mean, const Tensor& invstd, Tensor& y));

/// Batch-norm backward of `grad` at `x` (N, C, *) with the float64 `weight` (optional), `mean`
/// and `invstd` of the forward; `training` says whether the statistics were the batch's. Writes
/// `grad_input` (x's shape and dtype; skipped when undefined) and the float64 per-channel
/// `grad_weight` and `grad_bias` (C elements each).
EMBER_DECLARE_KERNEL(batch_norm_backward_stub,
                     void(const Tensor& grad, const Tensor& x, const Tensor& weight,
                          const Tensor& mean, const Tensor& invstd, bool training,
                          Tensor& grad_input, Tensor& grad_weight, Tensor& grad_bias));

/// Layer norm of `x` as M rows of D elements: y = (x - mean) * rstd * weight + bias (weight and
/// bias optional, D elements each); writes `y` (x's shape) and `mean` / `rstd` (M elements).
EMBER_DECLARE_KERNEL(layer_norm_stub,
                     void(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t M,
                          int64_t D, double eps, Tensor& y, Tensor& mean, Tensor& rstd));

/// Layer-norm backward (M rows of D elements) from the forward's `mean` and `rstd`: writes each
/// of `grad_input` (x's shape), `grad_weight` and `grad_bias` (D elements) that is defined.
EMBER_DECLARE_KERNEL(layer_norm_backward_stub,
                     void(const Tensor& grad, const Tensor& x, const Tensor& mean,
                          const Tensor& rstd, const Tensor& weight, int64_t M, int64_t D,
                          Tensor& grad_input, Tensor& grad_weight, Tensor& grad_bias));

/// Group norm of `x` (N, C, *) with `groups` groups (C divisible by it), weight and bias
/// optional (C elements): writes `y` (x's shape) and `mean` / `rstd` ((N, groups) elements).
EMBER_DECLARE_KERNEL(group_norm_stub,
                     void(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t groups,
                          double eps, Tensor& y, Tensor& mean, Tensor& rstd));

/// Group-norm backward from the forward's `mean` and `rstd`: writes each of `grad_input` (x's
/// shape), `grad_weight` and `grad_bias` (C elements) that is defined.
EMBER_DECLARE_KERNEL(group_norm_backward_stub,
                     void(const Tensor& grad, const Tensor& x, const Tensor& mean,
                          const Tensor& rstd, const Tensor& weight, int64_t groups,
                          Tensor& grad_input, Tensor& grad_weight, Tensor& grad_bias));

}  // namespace ember
