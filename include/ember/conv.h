#pragma once
/// Convolution, pooling and resampling ops (libtorch's ATen names and argument order).
///
/// Inputs are batched (N, C, spatial...) or unbatched (C, spatial...). Size arguments are
/// IntArrayRef: one value applies to every spatial dim. float32 and float64 everywhere;
/// bfloat16 for convolutions and pools. Every op records its vjp/jvp rule (written with these
/// same ops, so higher derivatives work).

#include <optional>
#include <string_view>
#include <tuple>

#include "ember/tensor.h"

namespace ember {

// ---- convolution ----

/// The general convolution: `transposed` selects the transposed (fractionally strided) form,
/// whose weight is (C_in, C_out / groups, kernel...); otherwise the weight is
/// (C_out, C_in / groups, kernel...). `output_padding` is used only when transposed.
Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                   IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                   IntArrayRef output_padding, int64_t groups);

/// 1-d convolution of (N, C, L) or (C, L).
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {},
              IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef dilation = 1,
              int64_t groups = 1);
/// 2-d convolution of (N, C, H, W) or (C, H, W).
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {},
              IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef dilation = 1,
              int64_t groups = 1);
/// 3-d convolution of (N, C, D, H, W) or (C, D, H, W).
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = {},
              IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef dilation = 1,
              int64_t groups = 1);
/// Convolutions with padding "valid" (none) or "same" (output size = input size; stride 1;
/// the odd extra element goes on the right, as PyTorch).
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, std::string_view padding, IntArrayRef dilation = 1,
              int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, std::string_view padding, IntArrayRef dilation = 1,
              int64_t groups = 1);
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, std::string_view padding, IntArrayRef dilation = 1,
              int64_t groups = 1);

/// Transposed convolutions (the adjoint of convN d with the same arguments).
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias = {}, IntArrayRef stride = 1,
                        IntArrayRef padding = 0, IntArrayRef output_padding = 0, int64_t groups = 1,
                        IntArrayRef dilation = 1);
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias = {}, IntArrayRef stride = 1,
                        IntArrayRef padding = 0, IntArrayRef output_padding = 0, int64_t groups = 1,
                        IntArrayRef dilation = 1);
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias = {}, IntArrayRef stride = 1,
                        IntArrayRef padding = 0, IntArrayRef output_padding = 0, int64_t groups = 1,
                        IntArrayRef dilation = 1);

// ---- pooling ----

/// Max pooling; an empty `stride` means the kernel size. Indices (int64) are flat offsets into
/// each input plane (prod of the spatial sizes), as PyTorch's.
Tensor max_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = 0, IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = 0, IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor max_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = 0, IntArrayRef dilation = 1, bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = 0,
                                                   IntArrayRef dilation = 1,
                                                   bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = 0,
                                                   IntArrayRef dilation = 1,
                                                   bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = 0,
                                                   IntArrayRef dilation = 1,
                                                   bool ceil_mode = false);

/// Average pooling (PyTorch's divisor rules: count_include_pad, divisor_override).
Tensor avg_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = 0, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = 0, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor avg_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = 0, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);

/// Adaptive pooling to `output_size` (windows [floor(i*in/out), ceil((i+1)*in/out))).
Tensor adaptive_avg_pool1d(const Tensor& input, IntArrayRef output_size);
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size);
Tensor adaptive_avg_pool3d(const Tensor& input, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& input, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor& input, IntArrayRef output_size);

/// The partial inverse of max pooling: places `input` at `indices` in zeros of `output_size`
/// (the spatial sizes).
Tensor max_unpool1d(const Tensor& input, const Tensor& indices, IntArrayRef output_size);
Tensor max_unpool2d(const Tensor& input, const Tensor& indices, IntArrayRef output_size);
Tensor max_unpool3d(const Tensor& input, const Tensor& indices, IntArrayRef output_size,
                    IntArrayRef stride = 1, IntArrayRef padding = 0);

// ---- sliding blocks (F.unfold / F.fold), 4-d (or unbatched 3-d) only ----

/// (N, C, H, W) -> (N, C * kh * kw, L): every sliding block as a column.
Tensor im2col(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride);
/// (N, C * kh * kw, L) -> (N, C, output_size): sums the columns back (the adjoint of im2col).
Tensor col2im(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size,
              IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride);

// ---- resampling ----

/// Nearest-neighbour upsampling; `scales` (one per spatial dim, optional) replace in/out in
/// the source-index computation, as PyTorch's scale_factor. `exact` selects "nearest-exact".
Tensor upsample_nearest1d(const Tensor& input, IntArrayRef output_size,
                          std::optional<double> scales = std::nullopt, bool exact = false);
Tensor upsample_nearest2d(const Tensor& input, IntArrayRef output_size,
                          std::optional<double> scales_h = std::nullopt,
                          std::optional<double> scales_w = std::nullopt, bool exact = false);
Tensor upsample_nearest3d(const Tensor& input, IntArrayRef output_size,
                          std::optional<double> scales_d = std::nullopt,
                          std::optional<double> scales_h = std::nullopt,
                          std::optional<double> scales_w = std::nullopt, bool exact = false);
/// Linear, bilinear, bicubic (A = -0.75) and trilinear interpolation.
Tensor upsample_linear1d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                         std::optional<double> scales = std::nullopt);
Tensor upsample_bilinear2d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                           std::optional<double> scales_h = std::nullopt,
                           std::optional<double> scales_w = std::nullopt);
Tensor upsample_bicubic2d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                          std::optional<double> scales_h = std::nullopt,
                          std::optional<double> scales_w = std::nullopt);
Tensor upsample_trilinear3d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                            std::optional<double> scales_d = std::nullopt,
                            std::optional<double> scales_h = std::nullopt,
                            std::optional<double> scales_w = std::nullopt);

/// (*, C * r^2, H, W) -> (*, C, H * r, W * r).
Tensor pixel_shuffle(const Tensor& input, int64_t upscale_factor);
/// (*, C, H * r, W * r) -> (*, C * r^2, H, W).
Tensor pixel_unshuffle(const Tensor& input, int64_t downscale_factor);

}  // namespace ember
