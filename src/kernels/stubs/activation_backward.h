#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Fused activation backward kernels (src/ops/elementwise/elementwise_grad.cpp; Note [Kernel
// stubs]). Tensors are contiguous, non-empty, of one floating dtype (float32, float64, bfloat16,
// float16) and of the same number of elements.

#include "core/kernel_stub.h"
#include "ember/tensor.h"

namespace ember {

/// relu's gradient in one pass: grad_input[i] = out[i] > 0 ? grad[i] : 0, with `out` the saved
/// relu output (a NaN output gives 0, and so does any grad where out <= 0: a select, not a
/// product). As PyTorch's threshold_backward(grad, out, 0), without mask or condition tensors.
EMBER_DECLARE_KERNEL(relu_backward_stub,
                     void(const Tensor& grad, const Tensor& out, Tensor& grad_input));

}  // namespace ember
