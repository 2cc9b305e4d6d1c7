#pragma once
/// The inference fast path of a Transformer encoder layer (PyTorch 1.12's BetterTransformer:
/// `torch._transformer_encoder_layer_fwd`), shared by the C++ TransformerEncoderLayer and the
/// Python one, and the packing of a padded batch that lets a TransformerEncoder skip padding.

#include <optional>
#include <tuple>

#include "ember/tensor.h"

namespace ember {

/// One encoder layer on (B, L, E) `src` (batch first), or on the packed rows (sum L_i, E) of a
/// ragged batch when `seq_lengths` (int64, one entry per sequence) is given. The in-projection
/// is one linear with qkv_weight (3E, E); attention runs per sequence; the residual adds and
/// layer norms are fused (`_add_layer_norm`); `use_gelu` picks gelu over relu in the
/// feed-forward block, `norm_first` the pre-LN order. `mask` is an (L, L) attention mask
/// (mask_type 0) or a (B, L) key padding mask (mask_type 1), bool (true = masked out) or
/// additive float. Inference only: it raises when grad mode is on and a tensor requires grad.
Tensor _transformer_encoder_layer_fwd(
    const Tensor& src, int64_t embed_dim, int64_t num_heads, const Tensor& qkv_weight,
    const Tensor& qkv_bias, const Tensor& proj_weight, const Tensor& proj_bias, bool use_gelu,
    bool norm_first, double eps, const Tensor& norm_weight_1, const Tensor& norm_bias_1,
    const Tensor& norm_weight_2, const Tensor& norm_bias_2, const Tensor& ffn_weight_1,
    const Tensor& ffn_bias_1, const Tensor& ffn_weight_2, const Tensor& ffn_bias_2,
    const Tensor& mask = {}, std::optional<int64_t> mask_type = std::nullopt,
    const Tensor& seq_lengths = {});

/// The rows of a padded batch (B, L, E) that `key_padding_mask` (B, L) does not mark as padding
/// (bool true, or a non-zero float, as PyTorch 1.13's encoder reads it), packed in order into
/// (sum L_i, E), with the int64 lengths L_i.
std::tuple<Tensor, Tensor> _transformer_pack_padded(const Tensor& padded,
                                                    const Tensor& key_padding_mask);

/// The inverse of _transformer_pack_padded: (B, L, E) with the packed rows put back and zeros
/// at the padded positions.
Tensor _transformer_unpack_padded(const Tensor& packed, const Tensor& key_padding_mask);

}  // namespace ember
