#pragma once
/// ember::nn::functional normalizations with Options (libtorch's F::batch_norm, ...).

#include "ember/nn/options/normalization.h"
#include "ember/tensor.h"

namespace ember::nn::functional {

/// Batch norm; in training the running stats (when defined) are updated in place.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& options = {});
Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& options = {});
Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& options);
Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& options);
Tensor local_response_norm(const Tensor& input, const LocalResponseNormFuncOptions& options);
Tensor normalize(const Tensor& input, const NormalizeFuncOptions& options = {});

}  // namespace ember::nn::functional
