#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Max-pooling kernels over planes of contiguous (planes, in...) data. Each spatial dim (1..3,
// padded to 3 with leading size-1 dims) gives, per output index, the first valid input index,
// the number of valid taps and the step between taps: regular pools (padding, dilation,
// ceil_mode) and adaptive pools alike. dtypes: float32, float64, bfloat16.

#include <cstdint>
#include <vector>

#include "ember/dtype.h"

namespace ember::cpu {

/// Per-dim window tables of one pooling geometry (3 dims, leading dims of size 1).
struct PoolWindows {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, step[3] = {1, 1, 1};
  std::vector<int64_t> first[3], count[3];  ///< per output index, in [0, in) / >= 0
};

/// y, idx (planes, out...) = max over each window of x (planes, in...); idx is the flat index
/// into the input plane (NaN wins, the first maximum wins ties, as PyTorch). A window with no
/// tap inside the input gives -inf and PyTorch's index for it, which lies past the plane.
void max_pool_forward(ScalarType dt, const void* x, void* y, int64_t* idx, int64_t planes,
                      const PoolWindows& w);
/// gx (planes, in_plane) = 0, then gx[p, idx[p, o]] += gy[p, o]; indices outside the plane
/// (windows of padding only) add nothing.
void max_pool_backward(ScalarType dt, const void* gy, const int64_t* idx, void* gx, int64_t planes,
                       int64_t in_plane, int64_t out_plane);

// Note [Compact pooling indices]
// Autograd needs only where each maximum lies within its window, not a flat int64 index: the
// tap t = (i * K1 + j) * K2 + k of taps i, j, k along the dims (K = the kernel's sizes) fits a
// byte when the kernel has at most 256 taps. A max pool recorded for backward saves these bytes
// (an eighth of the memory traffic and of the saved bytes); the flat index is
// base(o) + tap_offset(t), base(o) the window's first tap (PyTorch's index for a window of
// padding only, whose t is 0). The public indices (return_indices) stay int64 flat indices.

/// The taps of a pooling geometry: the kernel's sizes (3 entries, leading 1s); `w` its windows.
struct PoolTaps {
  int64_t k[3] = {1, 1, 1};
  /// True when the kernel has at most 256 taps.
  bool fits() const { return k[0] * k[1] * k[2] <= 256; }
};

/// max_pool_forward writing taps (Note [Compact pooling indices]) instead of flat indices.
void max_pool_forward_taps(ScalarType dt, const void* x, void* y, uint8_t* taps, int64_t planes,
                           const PoolWindows& w, const PoolTaps& k);
/// max_pool_backward from taps.
void max_pool_backward_taps(ScalarType dt, const void* gy, const uint8_t* taps, void* gx,
                            int64_t planes, const PoolWindows& w, const PoolTaps& k);
/// The flat int64 indices of `taps`.
void max_pool_taps_to_indices(const uint8_t* taps, int64_t* idx, int64_t planes,
                              const PoolWindows& w, const PoolTaps& k);

/// A 2-d pool whose every window is a full kh x kw block at strides (sh, sw): no padding
/// reached, no dilation. Planes of H x W (H * W < 2^31) pooled to OH x OW.
struct Pool2d {
  int64_t H, W, OH, OW, kh, kw, sh, sw;
};

// The loops of Pool2d pools, compiled once per CPU capability (pool_kernels.cpp, Note
// [Vectorized max pooling]); pool_cpu.cpp picks cpu_capability()'s set. dtypes: float32,
// float64, bfloat16.
#define EMBER_POOL_KERNELS_DECLARE(cap)                                                            \
  namespace cap {                                                                                  \
  /** y (planes, OH, OW) = the max over each window of x (planes, H, W), with at most one of       \
      `taps` (Note [Compact pooling indices], taps i * kw + j) and `idx` (flat indices into the    \
      plane) written; the max_pool_forward rules for NaN and ties. */                              \
  void max_pool2d_full(ScalarType dt, const void* x, void* y, uint8_t* taps, int64_t* idx,         \
                       int64_t planes, const Pool2d& g);                                           \
  /** gx (planes, H, W) from gy (planes, OH, OW) and the taps of a 2x2 stride-2 pool: each         \
      gradient at its window's tap, zero elsewhere. */                                             \
  void max_pool2d_k2s2_backward_taps(ScalarType dt, const void* gy, const uint8_t* taps, void* gx, \
                                     int64_t planes, const Pool2d& g);                             \
  }
EMBER_POOL_KERNELS_DECLARE(cap_default)
EMBER_POOL_KERNELS_DECLARE(cap_avx2)
EMBER_POOL_KERNELS_DECLARE(cap_avx512)
#undef EMBER_POOL_KERNELS_DECLARE

}  // namespace ember::cpu
