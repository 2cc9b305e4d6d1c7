#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The sliding-block kernels of im2col / col2im (src/ops/nn/resample_ops.cpp; Note [Kernel stubs]).
// The block arguments are pairs (height, width): kernel size, dilation, padding and stride; the
// (oh, ow) grid of blocks follows from them and the image size.

#include "core/kernel_stub.h"
#include "ember/array_ref.h"
#include "ember/tensor.h"

namespace ember {

/// Writes the blocks of the contiguous (N, C, H, W) image `x` into the contiguous
/// (N, C * kh * kw, oh * ow) `cols` of the same dtype (float or double), zero outside the image.
EMBER_DECLARE_KERNEL(im2col_stub,
                     void(const Tensor& x, Tensor& cols, IntArrayRef kernel, IntArrayRef dilation,
                          IntArrayRef padding, IntArrayRef stride));

/// The adjoint of im2col_stub: adds the blocks of the contiguous (N, C * kh * kw, oh * ow) `cols`
/// into the zeroed contiguous (N, C, H, W) `x` of the same dtype (float or double).
EMBER_DECLARE_KERNEL(col2im_stub,
                     void(const Tensor& cols, Tensor& x, IntArrayRef kernel, IntArrayRef dilation,
                          IntArrayRef padding, IntArrayRef stride));

}  // namespace ember
