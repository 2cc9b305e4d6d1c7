#pragma once
/// Pooling layers: AvgPool, MaxPool, AdaptiveAvgPool, AdaptiveMaxPool, MaxUnpool and LPPool in
/// 1, 2 and 3 dims (reprs as PyTorch's).

#include <optional>
#include <tuple>
#include <vector>

#include "ember/nn/cloneable.h"
#include "ember/nn/functional/pooling.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

/// Average pooling over the trailing D dims.
template <size_t D, typename Derived>
class AvgPoolImpl : public Cloneable<Derived> {
 public:
  AvgPoolImpl(ExpandingArray<D> kernel_size) : AvgPoolImpl(AvgPoolOptions<D>(kernel_size)) {}
  explicit AvgPoolImpl(const AvgPoolOptions<D>& options) : options(options) {}
  void reset() override {}
  std::string extra_repr() const override;
  AvgPoolOptions<D> options;
};

/// Max pooling over the trailing D dims; forward_with_indices also returns the argmax indices.
template <size_t D, typename Derived>
class MaxPoolImpl : public Cloneable<Derived> {
 public:
  MaxPoolImpl(ExpandingArray<D> kernel_size) : MaxPoolImpl(MaxPoolOptions<D>(kernel_size)) {}
  explicit MaxPoolImpl(const MaxPoolOptions<D>& options) : options(options) {}
  void reset() override {}
  std::string extra_repr() const override;
  MaxPoolOptions<D> options;
};

/// Adaptive pooling to a fixed output size.
template <size_t D, typename output_size_t, typename Derived>
class AdaptivePoolImpl : public Cloneable<Derived> {
 public:
  AdaptivePoolImpl(output_size_t output_size)
      : AdaptivePoolImpl(AdaptivePoolOptions<output_size_t>(output_size)) {}
  AdaptivePoolImpl(int64_t output_size)
      : AdaptivePoolImpl(AdaptivePoolOptions<output_size_t>(output_size)) {}
  explicit AdaptivePoolImpl(const AdaptivePoolOptions<output_size_t>& options) : options(options) {}
  void reset() override {}
  std::string extra_repr() const override;
  AdaptivePoolOptions<output_size_t> options;
};

/// The partial inverse of MaxPool.
template <size_t D, typename Derived>
class MaxUnpoolImpl : public Cloneable<Derived> {
 public:
  MaxUnpoolImpl(ExpandingArray<D> kernel_size) : MaxUnpoolImpl(MaxUnpoolOptions<D>(kernel_size)) {}
  explicit MaxUnpoolImpl(const MaxUnpoolOptions<D>& options) : options(options) {}
  void reset() override {}
  std::string extra_repr() const override;
  MaxUnpoolOptions<D> options;
};

/// Power-average pooling.
template <size_t D, typename Derived>
class LPPoolImpl : public Cloneable<Derived> {
 public:
  LPPoolImpl(double norm_type, ExpandingArray<D> kernel_size)
      : LPPoolImpl(LPPoolOptions<D>(norm_type, kernel_size)) {}
  explicit LPPoolImpl(const LPPoolOptions<D>& options) : options(options) {}
  void reset() override {}
  std::string extra_repr() const override;
  LPPoolOptions<D> options;
};

#define EMBER_POOL_MODULES(N)                                                                \
  class AvgPool##N##dImpl : public AvgPoolImpl<N, AvgPool##N##dImpl> {                       \
   public:                                                                                   \
    using AvgPoolImpl<N, AvgPool##N##dImpl>::AvgPoolImpl;                                    \
    Tensor forward(const Tensor& input);                                                     \
  };                                                                                         \
  EMBER_MODULE(AvgPool##N##d);                                                               \
  class MaxPool##N##dImpl : public MaxPoolImpl<N, MaxPool##N##dImpl> {                       \
   public:                                                                                   \
    using MaxPoolImpl<N, MaxPool##N##dImpl>::MaxPoolImpl;                                    \
    Tensor forward(const Tensor& input);                                                     \
    /** (output, indices) */                                                                 \
    std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);                    \
  };                                                                                         \
  EMBER_MODULE(MaxPool##N##d);                                                               \
  class AdaptiveAvgPool##N##dImpl                                                            \
      : public AdaptivePoolImpl<N, AdaptiveAvgPool##N##dOptions::output_size_t_,             \
                                AdaptiveAvgPool##N##dImpl> {                                 \
   public:                                                                                   \
    using AdaptivePoolImpl::AdaptivePoolImpl;                                                \
    Tensor forward(const Tensor& input);                                                     \
  };                                                                                         \
  EMBER_MODULE(AdaptiveAvgPool##N##d);                                                       \
  class AdaptiveMaxPool##N##dImpl                                                            \
      : public AdaptivePoolImpl<N, AdaptiveMaxPool##N##dOptions::output_size_t_,             \
                                AdaptiveMaxPool##N##dImpl> {                                 \
   public:                                                                                   \
    using AdaptivePoolImpl::AdaptivePoolImpl;                                                \
    Tensor forward(const Tensor& input);                                                     \
    std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);                    \
  };                                                                                         \
  EMBER_MODULE(AdaptiveMaxPool##N##d);                                                       \
  class MaxUnpool##N##dImpl : public MaxUnpoolImpl<N, MaxUnpool##N##dImpl> {                 \
   public:                                                                                   \
    using MaxUnpoolImpl<N, MaxUnpool##N##dImpl>::MaxUnpoolImpl;                              \
    /** output_size: spatial sizes or the full shape; default from kernel/stride/padding. */ \
    Tensor forward(const Tensor& input, const Tensor& indices,                               \
                   const std::optional<std::vector<int64_t>>& output_size = std::nullopt);   \
  };                                                                                         \
  EMBER_MODULE(MaxUnpool##N##d);                                                             \
  class LPPool##N##dImpl : public LPPoolImpl<N, LPPool##N##dImpl> {                          \
   public:                                                                                   \
    using LPPoolImpl<N, LPPool##N##dImpl>::LPPoolImpl;                                       \
    Tensor forward(const Tensor& input);                                                     \
  };                                                                                         \
  EMBER_MODULE(LPPool##N##d)

EMBER_POOL_MODULES(1);
EMBER_POOL_MODULES(2);
EMBER_POOL_MODULES(3);
#undef EMBER_POOL_MODULES

}  // namespace ember::nn
