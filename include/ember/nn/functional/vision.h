#pragma once
/// ember::nn::functional resampling and block functions (libtorch's F::interpolate,
/// F::pixel_shuffle, F::pixel_unshuffle, F::channel_shuffle, F::fold, F::unfold).

#include "ember/nn/options/vision.h"
#include "ember/tensor.h"

namespace ember::nn::functional {

/// Resizes the spatial dims of (N, C, *) by size or scale_factor (PyTorch 1.13's rules: the
/// mode must fit the rank, align_corners only for the interpolating modes).
Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options = {});
Tensor pixel_shuffle(const Tensor& input, const PixelShuffleFuncOptions& options);
Tensor pixel_unshuffle(const Tensor& input, const PixelUnshuffleFuncOptions& options);
/// (N, g * k, *) -> (N, k * g, *): channel c of group i moves to position c * g + i.
Tensor channel_shuffle(const Tensor& input, const ChannelShuffleFuncOptions& options);
/// Sums columns (N, C * kh * kw, L) back into (N, C, output_size).
Tensor fold(const Tensor& input, const FoldFuncOptions& options);
/// Extracts sliding blocks of (N, C, H, W) as columns (N, C * kh * kw, L).
Tensor unfold(const Tensor& input, const UnfoldFuncOptions& options);

}  // namespace ember::nn::functional
