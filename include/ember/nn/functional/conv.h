#pragma once
/// ember::nn::functional convolutions with Options (libtorch's F::conv1d ... F::conv_transpose3d).

#include "ember/nn/options/conv.h"
#include "ember/tensor.h"

namespace ember::nn::functional {

/// Convolution of (N, C, L) / (C, L); padding may be explicit, kValid or kSame.
Tensor conv1d(const Tensor& input, const Tensor& weight, const Conv1dFuncOptions& options = {});
/// Convolution of (N, C, H, W) / (C, H, W).
Tensor conv2d(const Tensor& input, const Tensor& weight, const Conv2dFuncOptions& options = {});
/// Convolution of (N, C, D, H, W) / (C, D, H, W).
Tensor conv3d(const Tensor& input, const Tensor& weight, const Conv3dFuncOptions& options = {});

/// Transposed convolutions; weight is (C_in, C_out / groups, kernel...).
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight,
                        const ConvTranspose1dFuncOptions& options = {});
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight,
                        const ConvTranspose2dFuncOptions& options = {});
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight,
                        const ConvTranspose3dFuncOptions& options = {});

}  // namespace ember::nn::functional
