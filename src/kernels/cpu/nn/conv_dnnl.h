#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Convolution kernels: oneDNN primitives (float32, bfloat16) and an im2col + BLAS reference
// (float32, float64) used where oneDNN cannot run. Callers (src/kernels/cpu/nn/conv.cpp) pass
// contiguous buffers in the plain layouts: x (N, C, in...), w (K, C/groups, kernel...),
// y (N, K, out...); 1-d and 2-d problems use the leading entries of the spatial arrays.

#include <cstdint>

#include "ember/dtype.h"

namespace ember::cpu {

/// The geometry of one convolution, spatial arrays of length `nd` (1..3).
struct ConvGeom {
  int nd = 2;
  int64_t n = 0, c = 0, k = 0, groups = 1;  ///< batch, input channels, output channels
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, pad_l[3] = {0, 0, 0}, pad_r[3] = {0, 0, 0};
  int64_t dilation[3] = {1, 1, 1};
};

/// The three bilinear maps of a convolution. Forward: (x, w) -> y (+ bias). BackwardData:
/// (gy, w) -> gx (also the transposed convolution). BackwardWeights: (x, gy) -> gw (+ gbias).
enum class ConvPass : uint8_t { Forward, BackwardData, BackwardWeights };

/// Runs one pass with oneDNN; `a`, `b` are the pass's inputs in the order above, `out` its
/// output (overwritten), `bias` the bias (Forward, may be null) or the bias gradient
/// (BackwardWeights, may be null). Returns false when oneDNN has no implementation.
bool dnnl_conv(ConvPass pass, const ConvGeom& g, ScalarType dt, const void* a, const void* b,
               void* out, void* bias);

/// float32 convolutions with few input channels (groups 1, C < 8, C * prod(kernel) <= 64), per
/// image on its im2col matrix (Note [Small-channel convolutions]); arguments as dnnl_conv.
/// Returns false, doing nothing, outside that range or on the default kernel set.
bool small_channel_conv(ConvPass pass, const ConvGeom& g, const float* a, const float* b,
                        float* out, float* bias);

// float32 convolutions on channels-last copies of each image (Note [Direct convolutions],
// conv_direct_kernels.cpp), compiled once per CPU capability; arguments as dnnl_conv. Each
// returns false, doing nothing, where it has no implementation: groups > 1 or 3-d.
#define EMBER_CONV_DIRECT_DECLARE(cap)                                                           \
  namespace cap {                                                                                \
  bool direct_conv(ConvPass pass, const ConvGeom& g, const float* a, const float* b, float* out, \
                   float* bias);                                                                 \
  }
EMBER_CONV_DIRECT_DECLARE(cap_default)
EMBER_CONV_DIRECT_DECLARE(cap_avx2)
EMBER_CONV_DIRECT_DECLARE(cap_avx512)
#undef EMBER_CONV_DIRECT_DECLARE

/// The same with im2col/col2im and BLAS gemm; dtype float or double.
void ref_conv(ConvPass pass, const ConvGeom& g, ScalarType dt, const void* a, const void* b,
              void* out, void* bias);

/// im2col of one image (C, in...) into (C * prod(kernel), prod(out)), zero outside the input.
template <class T>
void im2col(const T* x, T* col, int64_t channels, const ConvGeom& g);
/// The adjoint of im2col: adds the columns back into x (C, in...), which the caller zeroes.
template <class T>
void col2im(const T* col, T* x, int64_t channels, const ConvGeom& g);

}  // namespace ember::cpu
