#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Max pooling with compact indices for autograd (src/ops/nn/pool_ops.cpp; Note [Compact pooling
// indices] in src/kernels/cpu/nn/pool_cpu.h; Note [Kernel stubs]). Tensors as in
// kernels/stubs/pool.h; `taps` (N, C, out...) are uint8: each maximum's tap within its window,
// (i * k1 + j) * k2 + k over the kernel's sizes. Callers keep the kernel at <= 256 taps.

#include "core/kernel_stub.h"
#include "ember/array_ref.h"
#include "ember/tensor.h"

namespace ember {

/// max_pool_stub writing taps instead of flat indices.
EMBER_DECLARE_KERNEL(max_pool_taps_stub,
                     void(const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride,
                          IntArrayRef padding, IntArrayRef dilation, Tensor& y, Tensor& taps));

/// max_pool_backward_stub from taps: grad_input (N, C, in...) = 0, then each grad element adds
/// at its window's tap (windows of padding only add nothing).
EMBER_DECLARE_KERNEL(max_pool_taps_backward_stub,
                     void(const Tensor& grad, const Tensor& taps, IntArrayRef kernel_size,
                          IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                          Tensor& grad_input));

/// The flat int64 indices (PyTorch's) of `taps` for an input of `in_sizes` (N, C, in...).
EMBER_DECLARE_KERNEL(max_pool_taps_to_indices_stub,
                     void(const Tensor& taps, IntArrayRef kernel_size, IntArrayRef stride,
                          IntArrayRef padding, IntArrayRef dilation, IntArrayRef in_sizes,
                          Tensor& indices));

}  // namespace ember
