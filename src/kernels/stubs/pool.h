#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The max-pooling kernels (src/ops/nn/pool_ops.cpp; Note [Kernel stubs]). Average pooling is made
// of other ops (Note [Separable average pooling]). Tensors are contiguous, batched
// (N, C, spatial...) with 1 to 3 spatial dims, and float32, float64 or bfloat16; indices are
// int64 flat offsets into an input plane, as PyTorch's.

#include "core/kernel_stub.h"
#include "ember/array_ref.h"
#include "ember/tensor.h"

namespace ember {

/// Max pooling of `x` over regular windows (one validated entry per spatial dim in each list) to
/// the non-empty `y` and `indices` (N, C, out...); NaN wins and the first maximum wins ties.
EMBER_DECLARE_KERNEL(max_pool_stub,
                     void(const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride,
                          IntArrayRef padding, IntArrayRef dilation, Tensor& y, Tensor& indices));

/// Adaptive max pooling of `x` to the non-empty `y` and `indices` (N, C, out...): output o of a
/// dim of size `in` covers [floor(o * in / out), ceil((o + 1) * in / out)).
EMBER_DECLARE_KERNEL(adaptive_max_pool_stub, void(const Tensor& x, Tensor& y, Tensor& indices));

/// The max-pool gradient: grad_input (N, C, in...) = 0, then grad_input[n, c, indices[n, c, o]]
/// += grad[n, c, o] per plane; indices outside the plane (windows of padding only) add nothing.
/// `grad` and `indices` (N, C, out...) are non-empty and grad_input is of grad's dtype.
EMBER_DECLARE_KERNEL(max_pool_backward_stub,
                     void(const Tensor& grad, const Tensor& indices, Tensor& grad_input));

}  // namespace ember
