#pragma once
/// Scaled dot-product attention (`torch.nn.functional.scaled_dot_product_attention`, 2.0/2.1)
/// and its building blocks. query (*, L, E), key (*, S, E), value (*, S, Ev) -> (*, L, Ev);
/// the leading dims broadcast. An undefined Tensor stands for None.

#include <optional>
#include <tuple>

#include "ember/tensor.h"

namespace ember {

/// softmax(q kᵀ · scale + mask) v, with dropout on the attention weights in training.
/// `attn_mask` is bool (true = take part) or additive (float, added to the scores) and
/// broadcasts to (*, L, S); `is_causal` masks keys after each query (top-left aligned, as
/// PyTorch); `scale` defaults to 1/sqrt(E). Without dropout (float32, bfloat16, float64) it
/// runs a tiled kernel that never builds the L×S matrix; otherwise the decomposition.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = {}, double dropout_p = 0.0,
                                    bool is_causal = false,
                                    std::optional<double> scale = std::nullopt);

/// PyTorch 1.13's `_scaled_dot_product_attention`: (output, attention weights). As the 1.13
/// release, q and k are each divided by E^(1/4) and the weights are materialised and returned
/// whatever `need_attn_weights` says.
std::tuple<Tensor, Tensor> _scaled_dot_product_attention(const Tensor& query, const Tensor& key,
                                                         const Tensor& value,
                                                         const Tensor& attn_mask = {},
                                                         double dropout_p = 0.0,
                                                         bool need_attn_weights = false,
                                                         bool is_causal = false);

/// The reference decomposition: (output, attention weights), built from ember ops.
/// `dropout_mask`, when given, is multiplied into the weights (scaled by 1/(1-p)) instead of
/// drawing one.
std::tuple<Tensor, Tensor> _scaled_dot_product_attention_math(
    const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask = {},
    double dropout_p = 0.0, bool is_causal = false, const Tensor& dropout_mask = {},
    std::optional<double> scale = std::nullopt);

/// The fused CPU kernel: (output, logsumexp of each query's scores (*, L); float32, or float64
/// for float64 inputs). query/key/value have the same leading dims; no dropout; `attn_mask`
/// (bool or additive, broadcast to (*, L, S)) is read tile by tile.
std::tuple<Tensor, Tensor> _scaled_dot_product_flash_attention_for_cpu(
    const Tensor& query, const Tensor& key, const Tensor& value, double dropout_p = 0.0,
    bool is_causal = false, const Tensor& attn_mask = {},
    std::optional<double> scale = std::nullopt);

/// Its backward: (grad_query, grad_key, grad_value), recomputing the scores tile by tile from
/// the saved logsumexp.
std::tuple<Tensor, Tensor, Tensor> _scaled_dot_product_flash_attention_for_cpu_backward(
    const Tensor& grad_out, const Tensor& query, const Tensor& key, const Tensor& value,
    const Tensor& out, const Tensor& logsumexp, double dropout_p, bool is_causal,
    const Tensor& attn_mask = {}, std::optional<double> scale = std::nullopt);

/// input + residual followed by layer_norm over `normalized_shape`, in one pass (inference: it
/// has no backward rule).
Tensor _add_layer_norm(const Tensor& input, const Tensor& residual, IntArrayRef normalized_shape,
                       const Tensor& weight, const Tensor& bias, double eps);

}  // namespace ember

namespace ember::nn::functional {

/// `F::scaled_dot_product_attention`: ember::scaled_dot_product_attention.
inline Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key,
                                           const Tensor& value, const Tensor& attn_mask = {},
                                           double dropout_p = 0.0, bool is_causal = false,
                                           std::optional<double> scale = std::nullopt) {
  return ember::scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal,
                                             scale);
}

}  // namespace ember::nn::functional
