// ember::nn::functional normalizations: Options unpacked into the ember norm ops, with
// PyTorch's Python-level checks (one value per channel in training is an error).
#include "ember/nn/functional/normalization.h"

#include "ember/nn_ops.h"

namespace ember::nn::functional {

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& o) {
  if (o.training() && input.numel() > 0) {
    EMBER_CHECK(input.dim() >= 2, "[batch_norm] expected an (N, C, *) input, got ", input.sizes());
    int64_t per_channel = input.numel() / std::max<int64_t>(input.size(1), 1);
    EMBER_CHECK_VALUE(per_channel != 1,
                      "[batch_norm] Expected more than 1 value per channel "
                      "when training, got input size ",
                      input.sizes());
  }
  return ember::batch_norm(input, o.weight(), o.bias(), running_mean, running_var, o.training(),
                           o.momentum().value_or(0.0), o.eps());
}

Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& o) {
  if (o.use_input_stats() && input.dim() >= 2) {
    int64_t spatial = 1;
    for (int64_t d = 2; d < input.dim(); ++d) spatial *= input.size(d);
    EMBER_CHECK_VALUE(spatial != 1,
                      "[instance_norm] Expected more than 1 spatial element when "
                      "training, got input size ",
                      input.sizes());
  }
  return ember::instance_norm(input, o.weight(), o.bias(), o.running_mean(), o.running_var(),
                              o.use_input_stats(), o.momentum(), o.eps());
}

Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& o) {
  return ember::layer_norm(input, o.normalized_shape(), o.weight(), o.bias(), o.eps());
}

Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& o) {
  EMBER_CHECK(input.dim() >= 2,
              "[group_norm] Expected at least 2 dimensions for input tensor but received ",
              input.dim());
  // One value per group in training is an error, as batch_norm's one value per channel
  // (a zero group count is left to the op, whose message names it).
  if (o.num_groups() != 0) {
    int64_t values = input.size(0) * input.size(1) / o.num_groups();
    for (int64_t d = 2; d < input.dim(); ++d) values *= input.size(d);
    EMBER_CHECK_VALUE(values != 1,
                      "[group_norm] Expected more than 1 value per channel when training, got "
                      "input size ",
                      input.sizes());
  }
  return ember::group_norm(input, o.num_groups(), o.weight(), o.bias(), o.eps());
}

Tensor local_response_norm(const Tensor& input, const LocalResponseNormFuncOptions& o) {
  EMBER_CHECK_VALUE(input.dim() >= 3,
                    "[local_response_norm] Expected 3D or higher dimensionality input (got ",
                    input.dim(), " dimensions)");
  if (input.numel() == 0) return input;
  return ember::local_response_norm(input, o.size(), o.alpha(), o.beta(), o.k());
}

Tensor normalize(const Tensor& input, const NormalizeFuncOptions& o) {
  return ember::normalize(input, o.p(), o.dim(), o.eps());
}

}  // namespace ember::nn::functional
