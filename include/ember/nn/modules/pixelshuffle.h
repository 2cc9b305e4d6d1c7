#pragma once
/// PixelShuffle, PixelUnshuffle and ChannelShuffle layers.

#include "ember/nn/cloneable.h"
#include "ember/nn/functional/vision.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

/// (*, C * r^2, H, W) -> (*, C, H * r, W * r).
class PixelShuffleImpl : public Cloneable<PixelShuffleImpl> {
 public:
  PixelShuffleImpl(int64_t upscale_factor)
      : PixelShuffleImpl(PixelShuffleOptions(upscale_factor)) {}
  explicit PixelShuffleImpl(const PixelShuffleOptions& options) : options(options) {}
  void reset() override {}
  std::string extra_repr() const override;
  Tensor forward(const Tensor& input);

  PixelShuffleOptions options;
};
EMBER_MODULE(PixelShuffle);

/// (*, C, H * r, W * r) -> (*, C * r^2, H, W).
class PixelUnshuffleImpl : public Cloneable<PixelUnshuffleImpl> {
 public:
  PixelUnshuffleImpl(int64_t downscale_factor)
      : PixelUnshuffleImpl(PixelUnshuffleOptions(downscale_factor)) {}
  explicit PixelUnshuffleImpl(const PixelUnshuffleOptions& options) : options(options) {}
  void reset() override {}
  std::string extra_repr() const override;
  Tensor forward(const Tensor& input);

  PixelUnshuffleOptions options;
};
EMBER_MODULE(PixelUnshuffle);

/// (N, C, *) with C = g * k -> channels of the g groups interleaved.
class ChannelShuffleImpl : public Cloneable<ChannelShuffleImpl> {
 public:
  ChannelShuffleImpl(int64_t groups) : ChannelShuffleImpl(ChannelShuffleOptions(groups)) {}
  explicit ChannelShuffleImpl(const ChannelShuffleOptions& options) : options(options) {}
  void reset() override {}
  std::string extra_repr() const override;
  Tensor forward(const Tensor& input);

  ChannelShuffleOptions options;
};
EMBER_MODULE(ChannelShuffle);

}  // namespace ember::nn
