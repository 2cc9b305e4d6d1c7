#pragma once
/// Options of the Transformer stacks (libtorch's TransformerEncoderOptions,
/// TransformerDecoderOptions and TransformerOptions), with PyTorch 1.13's batch_first,
/// norm_first and enable_nested_tensor.

#include "ember/nn/modules/container.h"
#include "ember/nn/modules/transformer_layer.h"
#include "ember/nn/options/transformer_layer.h"

namespace ember::nn {

/// `TransformerEncoderOptions(layer, 6).norm(AnyModule(LayerNorm(...)))`: `num_layers` clones
/// of `encoder_layer`, then `norm` when given. enable_nested_tensor packs away the padded
/// positions of a src_key_padding_mask in the inference fast path (their outputs are zeros).
struct TransformerEncoderOptions {
  TransformerEncoderOptions(const TransformerEncoderLayerOptions& encoder_layer, int64_t num_layers)
      : encoder_layer_(encoder_layer), num_layers_(num_layers) {}
  TransformerEncoderOptions(TransformerEncoderLayer encoder_layer, int64_t num_layers)
      : encoder_layer_(std::move(encoder_layer)), num_layers_(num_layers) {}
  /// The layer that is cloned.
  EMBER_ARG(TransformerEncoderLayer, encoder_layer) = nullptr;
  EMBER_ARG(int64_t, num_layers);
  EMBER_ARG(AnyModule, norm);
  EMBER_ARG(bool, enable_nested_tensor) = true;
};

/// `TransformerDecoderOptions(layer, 6).norm(...)`.
struct TransformerDecoderOptions {
  TransformerDecoderOptions(const TransformerDecoderLayerOptions& decoder_layer, int64_t num_layers)
      : decoder_layer_(decoder_layer), num_layers_(num_layers) {}
  TransformerDecoderOptions(TransformerDecoderLayer decoder_layer, int64_t num_layers)
      : decoder_layer_(std::move(decoder_layer)), num_layers_(num_layers) {}
  /// The layer that is cloned.
  EMBER_ARG(TransformerDecoderLayer, decoder_layer) = nullptr;
  EMBER_ARG(int64_t, num_layers);
  EMBER_ARG(AnyModule, norm);
};

/// `TransformerOptions(512, 8, 6, 6)`; custom_encoder / custom_decoder (a TransformerEncoderImpl
/// / TransformerDecoderImpl or a class derived from one, e.g. `.custom_encoder(enc.ptr())`)
/// replace the default stacks; they are cloned.
struct TransformerOptions {
  TransformerOptions() = default;
  TransformerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  TransformerOptions(int64_t d_model, int64_t nhead, int64_t num_encoder_layers,
                     int64_t num_decoder_layers)
      : d_model_(d_model),
        nhead_(nhead),
        num_encoder_layers_(num_encoder_layers),
        num_decoder_layers_(num_decoder_layers) {}
  EMBER_ARG(int64_t, d_model) = 512;
  EMBER_ARG(int64_t, nhead) = 8;
  EMBER_ARG(int64_t, num_encoder_layers) = 6;
  EMBER_ARG(int64_t, num_decoder_layers) = 6;
  EMBER_ARG(int64_t, dim_feedforward) = 2048;
  EMBER_ARG(double, dropout) = 0.1;
  EMBER_ARG(transformer_activation_t, activation) = enumtype::kReLU{};
  EMBER_ARG(std::shared_ptr<Module>, custom_encoder);
  EMBER_ARG(std::shared_ptr<Module>, custom_decoder);
  EMBER_ARG(double, layer_norm_eps) = 1e-5;
  EMBER_ARG(bool, batch_first) = false;
  EMBER_ARG(bool, norm_first) = false;
};

}  // namespace ember::nn
