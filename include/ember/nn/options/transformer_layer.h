#pragma once
/// Options of the Transformer layers (libtorch's TransformerEncoderLayerOptions and
/// TransformerDecoderLayerOptions), with PyTorch 1.13's batch_first and norm_first.

#include <functional>
#include <variant>

#include "ember/nn/enum.h"
#include "ember/nn/options.h"
#include "ember/tensor.h"

namespace ember::nn {

/// The feed-forward activation: relu, gelu or any Tensor -> Tensor function.
using transformer_activation_t =
    std::variant<enumtype::kReLU, enumtype::kGELU, std::function<Tensor(const Tensor&)>>;

/// `TransformerEncoderLayerOptions(512, 8).dim_feedforward(1024).activation(ember::kGELU)`.
struct TransformerEncoderLayerOptions {
  TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead)
      : d_model_(d_model), nhead_(nhead) {}
  EMBER_ARG(int64_t, d_model);
  EMBER_ARG(int64_t, nhead);
  EMBER_ARG(int64_t, dim_feedforward) = 2048;
  EMBER_ARG(double, dropout) = 0.1;
  EMBER_ARG(transformer_activation_t, activation) = enumtype::kReLU{};
  EMBER_ARG(double, layer_norm_eps) = 1e-5;
  /// Inputs and outputs are (batch, seq, feature).
  EMBER_ARG(bool, batch_first) = false;
  /// Layer norm before attention and feed-forward (pre-LN) instead of after.
  EMBER_ARG(bool, norm_first) = false;
};

/// `TransformerDecoderLayerOptions(512, 8)`: as the encoder layer's options.
struct TransformerDecoderLayerOptions {
  TransformerDecoderLayerOptions(int64_t d_model, int64_t nhead)
      : d_model_(d_model), nhead_(nhead) {}
  EMBER_ARG(int64_t, d_model);
  EMBER_ARG(int64_t, nhead);
  EMBER_ARG(int64_t, dim_feedforward) = 2048;
  EMBER_ARG(double, dropout) = 0.1;
  EMBER_ARG(transformer_activation_t, activation) = enumtype::kReLU{};
  EMBER_ARG(double, layer_norm_eps) = 1e-5;
  EMBER_ARG(bool, batch_first) = false;
  EMBER_ARG(bool, norm_first) = false;
};

}  // namespace ember::nn
