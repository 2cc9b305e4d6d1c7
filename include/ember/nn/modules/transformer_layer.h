#pragma once
/// Transformer encoder and decoder layers (libtorch's TransformerEncoderLayer and
/// TransformerDecoderLayer) with PyTorch 1.13's sub-module names (self_attn, linear1, dropout,
/// linear2, norm1, norm2, dropout1, dropout2; multihead_attn, norm3, dropout3 in the decoder),
/// so state_dict keys match PyTorch's.

#include "ember/nn/cloneable.h"
#include "ember/nn/modules/activation.h"
#include "ember/nn/modules/dropout.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/normalization.h"
#include "ember/nn/options/transformer_layer.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

/// Self-attention then feed-forward, each with a residual and layer norm (post-LN, or pre-LN
/// with norm_first). In eval mode with no gradient needed, batch_first, relu / gelu, and no
/// src_mask, forward runs the fused inference path (_transformer_encoder_layer_fwd).
class TransformerEncoderLayerImpl : public Cloneable<TransformerEncoderLayerImpl> {
 public:
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}
  explicit TransformerEncoderLayerImpl(TransformerEncoderLayerOptions options);
  void reset() override;
  void reset_parameters();
  /// src (S, N, E), (N, S, E) with batch_first, or unbatched (S, E); src_mask (S, S) or
  /// (N * nhead, S, S); src_key_padding_mask (N, S) or (S).
  Tensor forward(const Tensor& src, const Tensor& src_mask = {},
                 const Tensor& src_key_padding_mask = {});
  /// Why forward would not take the fast path for these arguments ("" when it would).
  std::string fast_path_blocker(const Tensor& src, const Tensor& src_mask,
                                const Tensor& src_key_padding_mask) const;
  /// The fast path on packed rows (sum L_i, E) of sequences of `seq_lengths` (int64).
  Tensor forward_packed(const Tensor& packed, const Tensor& seq_lengths);

  TransformerEncoderLayerOptions options;
  MultiheadAttention self_attn = nullptr;
  Linear linear1 = nullptr;
  Dropout dropout = nullptr;
  Linear linear2 = nullptr;
  LayerNorm norm1 = nullptr;
  LayerNorm norm2 = nullptr;
  Dropout dropout1 = nullptr;
  Dropout dropout2 = nullptr;

 private:
  Tensor activation(const Tensor& x) const;
  Tensor sa_block(const Tensor& x, const Tensor& mask, const Tensor& key_padding_mask);
  Tensor ff_block(const Tensor& x);
  Tensor fast_forward(const Tensor& src, const Tensor& mask, std::optional<int64_t> mask_type,
                      const Tensor& seq_lengths);
};
EMBER_MODULE(TransformerEncoderLayer);

/// Self-attention, attention over the encoder's memory, then feed-forward, each with a residual
/// and layer norm (post-LN, or pre-LN with norm_first).
class TransformerDecoderLayerImpl : public Cloneable<TransformerDecoderLayerImpl> {
 public:
  TransformerDecoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerDecoderLayerImpl(TransformerDecoderLayerOptions(d_model, nhead)) {}
  explicit TransformerDecoderLayerImpl(TransformerDecoderLayerOptions options);
  void reset() override;
  void reset_parameters();
  /// tgt (T, N, E) and memory (S, N, E) ((N, *, E) with batch_first, or unbatched).
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {}, const Tensor& tgt_key_padding_mask = {},
                 const Tensor& memory_key_padding_mask = {});

  TransformerDecoderLayerOptions options;
  MultiheadAttention self_attn = nullptr;
  MultiheadAttention multihead_attn = nullptr;
  Linear linear1 = nullptr;
  Dropout dropout = nullptr;
  Linear linear2 = nullptr;
  LayerNorm norm1 = nullptr;
  LayerNorm norm2 = nullptr;
  LayerNorm norm3 = nullptr;
  Dropout dropout1 = nullptr;
  Dropout dropout2 = nullptr;
  Dropout dropout3 = nullptr;

 private:
  Tensor activation(const Tensor& x) const;
};
EMBER_MODULE(TransformerDecoderLayer);

}  // namespace ember::nn
