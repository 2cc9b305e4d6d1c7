#pragma once
/// ember::nn::functional activations that are not plain ember ops: prelu, glu, rrelu, softmin,
/// multi-head attention, and Options-taking forms (libtorch's torch::nn::functional).

#include <optional>
#include <tuple>

#include "ember/generator.h"
#include "ember/nn/options/activation.h"
#include "ember/tensor.h"

namespace ember::nn::functional {

/// max(0, x) + weight * min(0, x); weight has 1 or C (= input.size(1)) entries.
Tensor prelu(const Tensor& input, const Tensor& weight);
/// a * sigmoid(b) for the two halves of `dim`.
Tensor glu(const Tensor& input, int64_t dim = -1);
/// Randomized leaky ReLU: slope ~ U(lower, upper) per element in training, (lower+upper)/2 in eval.
Tensor rrelu(const Tensor& input, double lower = 1.0 / 8.0, double upper = 1.0 / 3.0,
             bool training = false, bool inplace = false);
/// softmax(-x).
Tensor softmin(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);

Tensor relu(const Tensor& input, const ReLUOptions& options = {});
Tensor relu6(const Tensor& input, const ReLU6Options& options = {});
Tensor leaky_relu(const Tensor& input, const LeakyReLUOptions& options = {});
Tensor elu(const Tensor& input, const ELUOptions& options = {});
Tensor celu(const Tensor& input, const CELUOptions& options = {});
Tensor selu(const Tensor& input, const SELUOptions& options = {});
Tensor gelu(const Tensor& input, const GELUOptions& options = {});
Tensor silu(const Tensor& input);
Tensor mish(const Tensor& input);
Tensor softplus(const Tensor& input, const SoftplusOptions& options = {});
Tensor hardtanh(const Tensor& input, const HardtanhOptions& options = {});
Tensor threshold(const Tensor& input, const ThresholdOptions& options);
Tensor softshrink(const Tensor& input, const SoftshrinkOptions& options = {});
Tensor hardshrink(const Tensor& input, const HardshrinkOptions& options = {});
Tensor hardsigmoid(const Tensor& input);
Tensor hardswish(const Tensor& input);
Tensor softsign(const Tensor& input);
Tensor tanhshrink(const Tensor& input);
Tensor logsigmoid(const Tensor& input);
Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& options);
Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& options);
Tensor softmin(const Tensor& input, const SoftminFuncOptions& options);
Tensor rrelu(const Tensor& input, const RReLUFuncOptions& options);

/// Multi-head scaled dot-product attention with input and output projections (PyTorch 1.13's
/// F.multi_head_attention_forward). query (L, N, E) ((N, L, E) with batch_first) or unbatched
/// (L, E); key / value (S, N, kdim / vdim). attn_mask (L, S) or (N * heads, L, S), bool (true
/// masks) or float (added); key_padding_mask (N, S). Returns (output, attention weights,
/// averaged over the heads when average_attn_weights; undefined without need_weights).
std::tuple<Tensor, Tensor> multi_head_attention_forward(
    const Tensor& query, const Tensor& key, const Tensor& value,
    const MultiheadAttentionForwardFuncOptions& options);

}  // namespace ember::nn::functional
