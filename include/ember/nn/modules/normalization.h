#pragma once
/// Normalization layers: BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d, LayerNorm, GroupNorm and
/// LocalResponseNorm, with PyTorch 1.13's parameters, buffers (running_mean, running_var,
/// num_batches_tracked) and train/eval behaviour.

#include "ember/nn/cloneable.h"
#include "ember/nn/functional/normalization.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

/// The shared part of BatchNorm and InstanceNorm (PyTorch's _NormBase): weight (ones) and bias
/// (zeros) when affine; running_mean (zeros), running_var (ones) and num_batches_tracked (a
/// 0-d int64) when track_running_stats.
template <size_t D, typename Derived, typename Options>
class NormImplBase : public Cloneable<Derived> {
 public:
  explicit NormImplBase(const Options& options);
  void reset() override;
  /// Zeros running_mean and num_batches_tracked, fills running_var with ones.
  void reset_running_stats();
  /// reset_running_stats(), then weight = 1 and bias = 0.
  void reset_parameters();
  std::string extra_repr() const override;

  Options options;
  Tensor weight;
  Tensor bias;
  Tensor running_mean;
  Tensor running_var;
  Tensor num_batches_tracked;
};

/// Batch normalization. In training the batch statistics are used and the running statistics
/// updated (momentum, or the cumulative average when momentum is unset); in eval the running
/// statistics are used (when tracked).
template <size_t D, typename Derived>
class BatchNormImplBase : public NormImplBase<D, Derived, BatchNormOptions> {
 public:
  using NormImplBase<D, Derived, BatchNormOptions>::NormImplBase;
  Tensor forward(const Tensor& input);
};

/// Instance normalization; also takes unbatched input (C, *).
template <size_t D, typename Derived>
class InstanceNormImplBase : public NormImplBase<D, Derived, InstanceNormOptions> {
 public:
  using NormImplBase<D, Derived, InstanceNormOptions>::NormImplBase;
  Tensor forward(const Tensor& input);
};

#define EMBER_NORM_MODULE(Name, Base, N, Opt)                                 \
  class Name##Impl : public Base<N, Name##Impl> {                             \
   public:                                                                    \
    Name##Impl(int64_t num_features) : Name##Impl(Opt(num_features)) {}       \
    explicit Name##Impl(const Opt& options) : Base<N, Name##Impl>(options) {} \
  };                                                                          \
  EMBER_MODULE(Name)
EMBER_NORM_MODULE(BatchNorm1d, BatchNormImplBase, 1, BatchNormOptions);
EMBER_NORM_MODULE(BatchNorm2d, BatchNormImplBase, 2, BatchNormOptions);
EMBER_NORM_MODULE(BatchNorm3d, BatchNormImplBase, 3, BatchNormOptions);
EMBER_NORM_MODULE(InstanceNorm1d, InstanceNormImplBase, 1, InstanceNormOptions);
EMBER_NORM_MODULE(InstanceNorm2d, InstanceNormImplBase, 2, InstanceNormOptions);
EMBER_NORM_MODULE(InstanceNorm3d, InstanceNormImplBase, 3, InstanceNormOptions);
#undef EMBER_NORM_MODULE

/// Layer normalization over the trailing normalized_shape dims.
class LayerNormImpl : public Cloneable<LayerNormImpl> {
 public:
  LayerNormImpl(std::vector<int64_t> normalized_shape)
      : LayerNormImpl(LayerNormOptions(std::move(normalized_shape))) {}
  explicit LayerNormImpl(LayerNormOptions options);
  void reset() override;
  void reset_parameters();
  std::string extra_repr() const override;
  Tensor forward(const Tensor& input);

  LayerNormOptions options;
  Tensor weight;  ///< normalized_shape, ones (undefined without elementwise_affine)
  Tensor bias;    ///< normalized_shape, zeros
};
EMBER_MODULE(LayerNorm);

/// Group normalization of (N, C, *) over groups of channels.
class GroupNormImpl : public Cloneable<GroupNormImpl> {
 public:
  GroupNormImpl(int64_t num_groups, int64_t num_channels)
      : GroupNormImpl(GroupNormOptions(num_groups, num_channels)) {}
  explicit GroupNormImpl(const GroupNormOptions& options);
  void reset() override;
  void reset_parameters();
  std::string extra_repr() const override;
  Tensor forward(const Tensor& input);

  GroupNormOptions options;
  Tensor weight;  ///< (C), ones
  Tensor bias;    ///< (C), zeros
};
EMBER_MODULE(GroupNorm);

/// Local response normalization across channels.
class LocalResponseNormImpl : public Cloneable<LocalResponseNormImpl> {
 public:
  LocalResponseNormImpl(int64_t size) : LocalResponseNormImpl(LocalResponseNormOptions(size)) {}
  explicit LocalResponseNormImpl(const LocalResponseNormOptions& options) : options(options) {}
  void reset() override {}
  std::string extra_repr() const override;
  Tensor forward(const Tensor& input);

  LocalResponseNormOptions options;
};
EMBER_MODULE(LocalResponseNorm);

}  // namespace ember::nn
