#pragma once
/// Transformer stacks (libtorch's TransformerEncoder, TransformerDecoder and Transformer) and
/// the layers they are made of (transformer_layer.h). Sub-module names are PyTorch 1.13's
/// (layers.0.self_attn.in_proj_weight, norm.weight, encoder.layers.0..., decoder.norm...).

#include "ember/nn/functional/transformer.h"
#include "ember/nn/modules/container.h"
#include "ember/nn/modules/transformer_layer.h"
#include "ember/nn/options/transformer.h"

namespace ember::nn {

/// `num_layers` clones of an encoder layer, then an optional norm. In the inference fast path
/// with a src_key_padding_mask (and enable_nested_tensor) the padded positions are packed away
/// once for all layers and come back as zeros, as PyTorch 1.13's encoder does.
class TransformerEncoderImpl : public Cloneable<TransformerEncoderImpl> {
 public:
  TransformerEncoderImpl(TransformerEncoderLayer encoder_layer, int64_t num_layers)
      : TransformerEncoderImpl(TransformerEncoderOptions(std::move(encoder_layer), num_layers)) {}
  explicit TransformerEncoderImpl(TransformerEncoderOptions options);
  void reset() override;
  void reset_parameters();
  Tensor forward(const Tensor& src, const Tensor& src_mask = {},
                 const Tensor& src_key_padding_mask = {});

  TransformerEncoderOptions options;
  ModuleList layers = nullptr;
  AnyModule norm;

 private:
  /// Whether forward packs away the padding (PyTorch 1.13's nested-tensor conditions).
  bool packing_ok(const Tensor& src, const Tensor& src_mask,
                  const Tensor& src_key_padding_mask) const;
};
EMBER_MODULE(TransformerEncoder);

/// `num_layers` clones of a decoder layer, then an optional norm.
class TransformerDecoderImpl : public Cloneable<TransformerDecoderImpl> {
 public:
  TransformerDecoderImpl(TransformerDecoderLayer decoder_layer, int64_t num_layers)
      : TransformerDecoderImpl(TransformerDecoderOptions(std::move(decoder_layer), num_layers)) {}
  explicit TransformerDecoderImpl(TransformerDecoderOptions options);
  void reset() override;
  void reset_parameters();
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {}, const Tensor& tgt_key_padding_mask = {},
                 const Tensor& memory_key_padding_mask = {});

  TransformerDecoderOptions options;
  ModuleList layers = nullptr;
  AnyModule norm;
};
EMBER_MODULE(TransformerDecoder);

/// The encoder-decoder model of "Attention Is All You Need": an encoder (with a final norm) and
/// a decoder (with a final norm); every weight matrix Xavier-uniform.
class TransformerImpl : public Cloneable<TransformerImpl> {
 public:
  explicit TransformerImpl(TransformerOptions options);
  void reset() override;
  void reset_parameters();
  /// src (S, N, E), tgt (T, N, E) ((N, *, E) with batch_first) -> (T, N, E).
  Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask = {},
                 const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                 const Tensor& src_key_padding_mask = {}, const Tensor& tgt_key_padding_mask = {},
                 const Tensor& memory_key_padding_mask = {});
  /// (sz, sz) float: -inf above the diagonal, 0 elsewhere.
  static Tensor generate_square_subsequent_mask(int64_t sz);

  TransformerOptions options;
  TransformerEncoder encoder = nullptr;
  TransformerDecoder decoder = nullptr;
};
EMBER_MODULE(Transformer);

}  // namespace ember::nn
