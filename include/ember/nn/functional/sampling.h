#pragma once
/// ember::nn::functional sampling functions (libtorch's F::grid_sample, F::affine_grid,
/// F::fractional_max_pool2d/3d and their _with_indices forms) and their options.

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ember/nn/options.h"
#include "ember/tensor.h"

namespace ember::nn {

/// `GridSampleFuncOptions().mode("nearest").padding_mode("border").align_corners(true)`.
struct GridSampleFuncOptions {
  /// "bilinear", "nearest" or "bicubic" (4-D input only).
  EMBER_ARG(std::string, mode) = "bilinear";
  /// "zeros", "border" or "reflection".
  EMBER_ARG(std::string, padding_mode) = "zeros";
  /// Unset means false (torch warns).
  EMBER_ARG(std::optional<bool>, align_corners) = std::nullopt;
};

/// `FractionalMaxPool2dFuncOptions(3).output_size(5)`: exactly one of output_size and
/// output_ratio; `_random_samples` (N, C, D) in [0, 1), drawn uniformly when undefined.
template <size_t D>
struct FractionalMaxPoolFuncOptions {
  FractionalMaxPoolFuncOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size) {}
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  EMBER_ARG(std::optional<ExpandingArray<D>>, output_size) = std::nullopt;
  EMBER_ARG(std::optional<std::vector<double>>, output_ratio) = std::nullopt;
  EMBER_ARG(Tensor, _random_samples) = Tensor();
};
using FractionalMaxPool2dFuncOptions = FractionalMaxPoolFuncOptions<2>;
using FractionalMaxPool3dFuncOptions = FractionalMaxPoolFuncOptions<3>;

}  // namespace ember::nn

namespace ember::nn::functional {

/// Samples input (N, C, [D,] H, W) at grid (N, [D,] H, W, 2 or 3) in [-1, 1] coordinates.
Tensor grid_sample(const Tensor& input, const Tensor& grid,
                   const GridSampleFuncOptions& options = {});
/// The grid of the affine maps theta (N, 2, 3) or (N, 3, 4) for an output of `size`.
Tensor affine_grid(const Tensor& theta, IntArrayRef size, bool align_corners = false);
/// Fractional max pooling of (N, C, H, W) or (C, H, W): the output.
Tensor fractional_max_pool2d(const Tensor& input, const FractionalMaxPool2dFuncOptions& options);
/// The same with the argmax indices (flat within each input plane).
std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(
    const Tensor& input, const FractionalMaxPool2dFuncOptions& options);
/// Fractional max pooling of (N, C, T, H, W) or (C, T, H, W): the output.
Tensor fractional_max_pool3d(const Tensor& input, const FractionalMaxPool3dFuncOptions& options);
/// The same with the argmax indices (flat within each input volume).
std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(
    const Tensor& input, const FractionalMaxPool3dFuncOptions& options);

}  // namespace ember::nn::functional
