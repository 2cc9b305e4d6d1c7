#pragma once
/// Every activation as a layer (ReLU, GELU, Softmax, PReLU, ...).

#include "ember/nn/cloneable.h"
#include "ember/nn/functional/activation.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

/// A parameterless activation with Options.
#define EMBER_ACTIVATION_MODULE(Name)                                            \
  class Name##Impl : public Cloneable<Name##Impl> {                              \
   public:                                                                       \
    explicit Name##Impl(const Name##Options& options = {}) : options(options) {} \
    void reset() override {}                                                     \
    std::string extra_repr() const override;                                     \
    Tensor forward(const Tensor& input);                                         \
    Name##Options options;                                                       \
  };                                                                             \
  EMBER_MODULE(Name)

/// A parameterless activation without options.
#define EMBER_PLAIN_ACTIVATION_MODULE(Name)         \
  class Name##Impl : public Cloneable<Name##Impl> { \
   public:                                          \
    Name##Impl() = default;                         \
    void reset() override {}                        \
    Tensor forward(const Tensor& input);            \
  };                                                \
  EMBER_MODULE(Name)

EMBER_ACTIVATION_MODULE(ReLU);
EMBER_ACTIVATION_MODULE(ReLU6);
EMBER_ACTIVATION_MODULE(LeakyReLU);
EMBER_ACTIVATION_MODULE(ELU);
EMBER_ACTIVATION_MODULE(CELU);
EMBER_ACTIVATION_MODULE(SELU);
EMBER_ACTIVATION_MODULE(GELU);
EMBER_ACTIVATION_MODULE(SiLU);
EMBER_ACTIVATION_MODULE(Mish);
EMBER_ACTIVATION_MODULE(Softplus);
EMBER_ACTIVATION_MODULE(Hardtanh);
EMBER_ACTIVATION_MODULE(Softshrink);
EMBER_ACTIVATION_MODULE(Hardshrink);
EMBER_ACTIVATION_MODULE(Hardsigmoid);
EMBER_ACTIVATION_MODULE(Hardswish);
EMBER_ACTIVATION_MODULE(RReLU);
EMBER_ACTIVATION_MODULE(GLU);
EMBER_PLAIN_ACTIVATION_MODULE(Sigmoid);
EMBER_PLAIN_ACTIVATION_MODULE(Tanh);
EMBER_PLAIN_ACTIVATION_MODULE(Softsign);
EMBER_PLAIN_ACTIVATION_MODULE(Tanhshrink);
EMBER_PLAIN_ACTIVATION_MODULE(LogSigmoid);

/// Threshold needs its two values.
class ThresholdImpl : public Cloneable<ThresholdImpl> {
 public:
  ThresholdImpl(double threshold, double value)
      : ThresholdImpl(ThresholdOptions(threshold, value)) {}
  explicit ThresholdImpl(const ThresholdOptions& options) : options(options) {}
  void reset() override {}
  std::string extra_repr() const override;
  Tensor forward(const Tensor& input);
  ThresholdOptions options;
};
EMBER_MODULE(Threshold);

/// Softmax, LogSoftmax and Softmin take the dim.
#define EMBER_SOFTMAX_MODULE(Name)                                          \
  class Name##Impl : public Cloneable<Name##Impl> {                         \
   public:                                                                  \
    explicit Name##Impl(int64_t dim) : options(dim) {}                      \
    explicit Name##Impl(const Name##Options& options) : options(options) {} \
    void reset() override {}                                                \
    std::string extra_repr() const override;                                \
    Tensor forward(const Tensor& input);                                    \
    Name##Options options;                                                  \
  };                                                                        \
  EMBER_MODULE(Name)
EMBER_SOFTMAX_MODULE(Softmax);
EMBER_SOFTMAX_MODULE(LogSoftmax);
EMBER_SOFTMAX_MODULE(Softmin);
#undef EMBER_SOFTMAX_MODULE

/// Softmax over the channels (dim -3) of a (N, C, H, W) or (C, H, W) input.
class Softmax2dImpl : public Cloneable<Softmax2dImpl> {
 public:
  Softmax2dImpl() = default;
  void reset() override {}
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(Softmax2d);

/// PReLU with `num_parameters` learnable slopes, initialised to `init`.
class PReLUImpl : public Cloneable<PReLUImpl> {
 public:
  explicit PReLUImpl(const PReLUOptions& options = {});
  void reset() override;
  std::string extra_repr() const override;
  Tensor forward(const Tensor& input);
  PReLUOptions options;
  Tensor weight;
};
EMBER_MODULE(PReLU);

/// Multi-head attention (PyTorch's parameter names: in_proj_weight, or q/k/v_proj_weight when
/// kdim / vdim differ from embed_dim; in_proj_bias, bias_k, bias_v, out_proj).
class MultiheadAttentionImpl : public Cloneable<MultiheadAttentionImpl> {
 public:
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  void reset() override;
  /// Xavier-uniform projections, zero biases, Xavier-normal bias_k / bias_v.
  void _reset_parameters();
  /// (attention output, attention weights or undefined when !need_weights).
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {},
                                     bool need_weights = true, const Tensor& attn_mask = {},
                                     bool average_attn_weights = true);

  MultiheadAttentionOptions options;
  bool _qkv_same_embed_dim = true;
  Tensor in_proj_weight;
  Tensor in_proj_bias;
  Tensor bias_k;
  Tensor bias_v;
  Linear out_proj = nullptr;
  Tensor q_proj_weight;
  Tensor k_proj_weight;
  Tensor v_proj_weight;
  int64_t head_dim = 0;
};
EMBER_MODULE(MultiheadAttention);

#undef EMBER_ACTIVATION_MODULE
#undef EMBER_PLAIN_ACTIVATION_MODULE

}  // namespace ember::nn
