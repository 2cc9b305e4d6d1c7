#pragma once
/// Options of the activation layers and functions (libtorch's names and defaults).

#include <optional>
#include <string>

#include "ember/dtype.h"
#include "ember/nn/options.h"
#include "ember/tensor.h"

namespace ember::nn {

#define EMBER_INPLACE_OPTIONS(Name)                            \
  struct Name##Options {                                       \
    Name##Options(bool inplace = false) : inplace_(inplace) {} \
    EMBER_ARG(bool, inplace);                                  \
  }
EMBER_INPLACE_OPTIONS(ReLU);
EMBER_INPLACE_OPTIONS(ReLU6);
EMBER_INPLACE_OPTIONS(SELU);
EMBER_INPLACE_OPTIONS(SiLU);
EMBER_INPLACE_OPTIONS(Mish);
EMBER_INPLACE_OPTIONS(Hardsigmoid);
EMBER_INPLACE_OPTIONS(Hardswish);
#undef EMBER_INPLACE_OPTIONS

struct LeakyReLUOptions {
  EMBER_ARG(double, negative_slope) = 0.01;
  EMBER_ARG(bool, inplace) = false;
};
struct ELUOptions {
  EMBER_ARG(double, alpha) = 1.0;
  EMBER_ARG(bool, inplace) = false;
};
struct CELUOptions {
  EMBER_ARG(double, alpha) = 1.0;
  EMBER_ARG(bool, inplace) = false;
};
struct GELUOptions {
  EMBER_ARG(std::string, approximate) = "none";
};
struct SoftplusOptions {
  EMBER_ARG(double, beta) = 1.0;
  EMBER_ARG(double, threshold) = 20.0;
};
struct HardtanhOptions {
  EMBER_ARG(double, min_val) = -1.0;
  EMBER_ARG(double, max_val) = 1.0;
  EMBER_ARG(bool, inplace) = false;
};
struct ThresholdOptions {
  ThresholdOptions(double threshold, double value) : threshold_(threshold), value_(value) {}
  EMBER_ARG(double, threshold);
  EMBER_ARG(double, value);
  EMBER_ARG(bool, inplace) = false;
};
struct SoftshrinkOptions {
  SoftshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}
  EMBER_ARG(double, lambda);
};
struct HardshrinkOptions {
  HardshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}
  EMBER_ARG(double, lambda);
};
struct RReLUOptions {
  EMBER_ARG(double, lower) = 1.0 / 8.0;
  EMBER_ARG(double, upper) = 1.0 / 3.0;
  EMBER_ARG(bool, inplace) = false;
};
struct PReLUOptions {
  EMBER_ARG(int64_t, num_parameters) = 1;
  EMBER_ARG(double, init) = 0.25;
};
struct GLUOptions {
  GLUOptions(int64_t dim = -1) : dim_(dim) {}
  EMBER_ARG(int64_t, dim);
};
/// Softmax, LogSoftmax and Softmin take the dim.
struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}
  EMBER_ARG(int64_t, dim);
};
using LogSoftmaxOptions = SoftmaxOptions;
using SoftminOptions = SoftmaxOptions;

/// `MultiheadAttentionOptions(embed_dim, num_heads).dropout(0.1)`; kdim / vdim default to
/// embed_dim. batch_first (PyTorch's, beyond libtorch's options) takes (N, L, E) inputs.
struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads), kdim_(embed_dim), vdim_(embed_dim) {}
  EMBER_ARG(int64_t, embed_dim);
  EMBER_ARG(int64_t, num_heads);
  EMBER_ARG(double, dropout) = 0.0;
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(bool, add_bias_kv) = false;
  EMBER_ARG(bool, add_zero_attn) = false;
  EMBER_ARG(int64_t, kdim);
  EMBER_ARG(int64_t, vdim);
  EMBER_ARG(bool, batch_first) = false;
};

namespace functional {
/// libtorch's option names for the functional activations (`F::elu(x, F::ELUFuncOptions())`).
using CELUFuncOptions = CELUOptions;
using ELUFuncOptions = ELUOptions;
using GELUFuncOptions = GELUOptions;
using GLUFuncOptions = GLUOptions;
using HardshrinkFuncOptions = HardshrinkOptions;
using HardtanhFuncOptions = HardtanhOptions;
using LeakyReLUFuncOptions = LeakyReLUOptions;
using ReLUFuncOptions = ReLUOptions;
using ReLU6FuncOptions = ReLU6Options;
using SELUFuncOptions = SELUOptions;
using SoftplusFuncOptions = SoftplusOptions;
using SoftshrinkFuncOptions = SoftshrinkOptions;
using ThresholdFuncOptions = ThresholdOptions;
/// F::softmax / F::log_softmax / F::softmin: the dim, and a dtype the input is cast to first.
/// Implicit from the dim and from the layers' SoftmaxOptions.
struct SoftmaxFuncOptions {
  SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}                              // NOLINT
  SoftmaxFuncOptions(const SoftmaxOptions& options) : dim_(options.dim()) {}  // NOLINT
  EMBER_ARG(int64_t, dim);
  EMBER_ARG(std::optional<ScalarType>, dtype) = std::nullopt;
};
using LogSoftmaxFuncOptions = SoftmaxFuncOptions;
using SoftminFuncOptions = SoftmaxFuncOptions;
/// F::rrelu's options; `training` picks random slopes, as the layer does in training mode.
struct RReLUFuncOptions {
  EMBER_ARG(double, lower) = 1.0 / 8.0;
  EMBER_ARG(double, upper) = 1.0 / 3.0;
  EMBER_ARG(bool, training) = false;
  EMBER_ARG(bool, inplace) = false;
};

/// F::multi_head_attention_forward's weights and flags (libtorch's names; batch_first is
/// PyTorch's module option, applied here so both front ends share it). Undefined tensors are
/// absent: in_proj_weight when use_separate_proj_weight, the biases without bias.
struct MultiheadAttentionForwardFuncOptions {
  MultiheadAttentionForwardFuncOptions(int64_t embed_dim_to_check, int64_t num_heads,
                                       Tensor in_proj_weight, Tensor in_proj_bias, Tensor bias_k,
                                       Tensor bias_v, bool add_zero_attn, double dropout_p,
                                       Tensor out_proj_weight, Tensor out_proj_bias)
      : embed_dim_to_check_(embed_dim_to_check),
        num_heads_(num_heads),
        in_proj_weight_(std::move(in_proj_weight)),
        in_proj_bias_(std::move(in_proj_bias)),
        bias_k_(std::move(bias_k)),
        bias_v_(std::move(bias_v)),
        add_zero_attn_(add_zero_attn),
        dropout_p_(dropout_p),
        out_proj_weight_(std::move(out_proj_weight)),
        out_proj_bias_(std::move(out_proj_bias)) {}
  EMBER_ARG(int64_t, embed_dim_to_check);
  EMBER_ARG(int64_t, num_heads);
  EMBER_ARG(Tensor, in_proj_weight);
  EMBER_ARG(Tensor, in_proj_bias);
  EMBER_ARG(Tensor, bias_k);
  EMBER_ARG(Tensor, bias_v);
  EMBER_ARG(bool, add_zero_attn);
  EMBER_ARG(double, dropout_p);
  EMBER_ARG(Tensor, out_proj_weight);
  EMBER_ARG(Tensor, out_proj_bias);
  EMBER_ARG(bool, training) = false;
  EMBER_ARG(Tensor, key_padding_mask) = {};
  EMBER_ARG(bool, need_weights) = true;
  EMBER_ARG(Tensor, attn_mask) = {};
  EMBER_ARG(bool, use_separate_proj_weight) = false;
  EMBER_ARG(Tensor, q_proj_weight) = {};
  EMBER_ARG(Tensor, k_proj_weight) = {};
  EMBER_ARG(Tensor, v_proj_weight) = {};
  EMBER_ARG(Tensor, static_k) = {};
  EMBER_ARG(Tensor, static_v) = {};
  EMBER_ARG(bool, average_attn_weights) = true;
  EMBER_ARG(bool, batch_first) = false;
};
}  // namespace functional

}  // namespace ember::nn
