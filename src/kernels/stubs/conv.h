#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernels of the three bilinear convolution maps (src/ops/nn/conv_ops.cpp, Note [Three bilinear
// convolution maps]; Note [Kernel stubs]). Tensors are contiguous, non-empty and of one dtype
// (float32, float64 or bfloat16), batched, in the plain layouts: x (N, C, in...), weight
// (K, C / groups, kernel...), y (N, K, out...), with 1 to 3 spatial dims.

#include <cstdint>

#include "core/kernel_stub.h"
#include "ember/array_ref.h"
#include "ember/tensor.h"

namespace ember {

/// The spatial parameters of a convolution, one entry per spatial dim: stride, the requested
/// padding before (pad_l) and after (pad_r) the input, dilation; and the number of groups.
struct ConvParams {
  DimVector stride, pad_l, pad_r, dilation;
  int64_t groups = 1;
  int nd() const { return int(stride.size()); }
};

/// y = conv(x, weight) + bias, bias (K elements) optional; y's sizes fix the output shape.
EMBER_DECLARE_KERNEL(conv_forward_stub, void(const Tensor& x, const Tensor& weight,
                                             const Tensor& bias, const ConvParams& p, Tensor& y));

/// grad_input (N, C, in...) = the data gradient of the convolution at `grad` (N, K, out...),
/// which is also the transposed convolution of `grad` by `weight`.
EMBER_DECLARE_KERNEL(conv_backward_data_stub, void(const Tensor& grad, const Tensor& weight,
                                                   const ConvParams& p, Tensor& grad_input));

/// grad_weight (K, C / groups, kernel...) = the weight gradient at `x` and `grad` (N, K, out...),
/// and when defined grad_bias (K elements) = the sum of `grad` over every dim but 1.
EMBER_DECLARE_KERNEL(conv_backward_weight_stub,
                     void(const Tensor& x, const Tensor& grad, const ConvParams& p,
                          Tensor& grad_weight, Tensor& grad_bias));

}  // namespace ember
