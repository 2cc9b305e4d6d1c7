#pragma once
/// Options of the resampling and block layers and functions: Upsample / F::interpolate,
/// PixelShuffle / PixelUnshuffle, Fold / Unfold (libtorch's names).

#include <optional>
#include <variant>
#include <vector>

#include "ember/nn/enum.h"
#include "ember/nn/options.h"

namespace ember::nn {

/// `UpsampleOptions().scale_factor(std::vector<double>{2}).mode(ember::kBilinear)`; exactly one
/// of size and scale_factor (one value, or one per spatial dim).
struct UpsampleOptions {
  using mode_t = std::variant<enumtype::kNearest, enumtype::kLinear, enumtype::kBilinear,
                              enumtype::kBicubic, enumtype::kTrilinear>;
  EMBER_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  EMBER_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  EMBER_ARG(mode_t, mode) = enumtype::kNearest{};
  /// Only for the interpolating modes (linear, bilinear, bicubic, trilinear).
  EMBER_ARG(std::optional<bool>, align_corners) = std::nullopt;
};

/// `PixelShuffleOptions(r)`.
struct PixelShuffleOptions {
  PixelShuffleOptions(int64_t upscale_factor) : upscale_factor_(upscale_factor) {}
  EMBER_ARG(int64_t, upscale_factor);
};
/// `PixelUnshuffleOptions(r)`.
struct PixelUnshuffleOptions {
  PixelUnshuffleOptions(int64_t downscale_factor) : downscale_factor_(downscale_factor) {}
  EMBER_ARG(int64_t, downscale_factor);
};

/// `ChannelShuffleOptions(g)`: the channels split into g groups, then interleaved.
struct ChannelShuffleOptions {
  ChannelShuffleOptions(int64_t groups) : groups_(groups) {}
  EMBER_ARG(int64_t, groups);
};

/// `FoldOptions(output_size, kernel_size).stride(2)`.
struct FoldOptions {
  FoldOptions(ExpandingArray<2> output_size, ExpandingArray<2> kernel_size)
      : output_size_(output_size), kernel_size_(kernel_size) {}
  EMBER_ARG(ExpandingArray<2>, output_size);
  EMBER_ARG(ExpandingArray<2>, kernel_size);
  EMBER_ARG(ExpandingArray<2>, dilation) = 1;
  EMBER_ARG(ExpandingArray<2>, padding) = 0;
  EMBER_ARG(ExpandingArray<2>, stride) = 1;
};
/// `UnfoldOptions(kernel_size).padding(1)`.
struct UnfoldOptions {
  UnfoldOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size) {}
  EMBER_ARG(ExpandingArray<2>, kernel_size);
  EMBER_ARG(ExpandingArray<2>, dilation) = 1;
  EMBER_ARG(ExpandingArray<2>, padding) = 0;
  EMBER_ARG(ExpandingArray<2>, stride) = 1;
};

namespace functional {
/// `F::interpolate(x, F::InterpolateFuncOptions().size(std::vector<int64_t>{8, 8}))`.
struct InterpolateFuncOptions {
  using mode_t =
      std::variant<enumtype::kNearest, enumtype::kLinear, enumtype::kBilinear, enumtype::kBicubic,
                   enumtype::kTrilinear, enumtype::kArea, enumtype::kNearestExact>;
  EMBER_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  EMBER_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  EMBER_ARG(mode_t, mode) = enumtype::kNearest{};
  EMBER_ARG(std::optional<bool>, align_corners) = std::nullopt;
  /// When true, the output size computed from scale_factor is used and the factor dropped.
  EMBER_ARG(std::optional<bool>, recompute_scale_factor) = std::nullopt;
  /// Must stay false (anti-aliased resampling is not implemented).
  EMBER_ARG(bool, antialias) = false;
};
using PixelShuffleFuncOptions = PixelShuffleOptions;
using PixelUnshuffleFuncOptions = PixelUnshuffleOptions;
using ChannelShuffleFuncOptions = ChannelShuffleOptions;
using FoldFuncOptions = FoldOptions;
using UnfoldFuncOptions = UnfoldOptions;
}  // namespace functional

}  // namespace ember::nn
