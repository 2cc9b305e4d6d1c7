#pragma once
// Plain C++ (no CUDA): how a convolution of ember's stub contract maps onto cuDNN's.
//
// Note [Convolutions through cuDNN]
// The stubs describe each spatial dim by (in, out, kernel, stride, pad_l, dilation): output o
// reads x[o * stride - pad_l + j * dilation] for taps j inside [0, in); pad_r only decided
// `out`. cuDNN pads both sides by one `pad` and requires out == (in + 2 pad - extent) / stride
// + 1. So the call runs with pad = pad_l on a geometry (in_c, out_c) that holds the real one:
// either the same input and more outputs (the extra ones are cropped or fed zero gradients), or
// the same outputs and an input extended by zeros (its extra gradient rows are dropped). Both
// leave the bilinear map on the real (in, out) unchanged.

#include <cstdint>

namespace ember::cuda {

/// One spatial dim as cuDNN runs it: the input and output lengths (>= the real ones) and the
/// symmetric padding.
struct CudnnConvDim {
  int64_t in = 0, out = 0, pad = 0;
};

/// The cuDNN geometry of one spatial dim (Note [Convolutions through cuDNN]); in, out, kernel,
/// stride, dilation >= 1, pad_l >= 0.
inline CudnnConvDim cudnn_conv_dim(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                                   int64_t pad_l, int64_t dilation) {
  const int64_t extent = dilation * (kernel - 1) + 1;
  const int64_t span = in + 2 * pad_l - extent;
  const int64_t natural = span < 0 ? 0 : span / stride + 1;
  if (natural >= out) return {in, natural, pad_l};
  return {(out - 1) * stride + extent - 2 * pad_l, out, pad_l};
}

}  // namespace ember::cuda
