#pragma once
// Shared by the CUDA kernel files: error checks, strided geometry passed to kernels by value, the
// grid-stride launcher, and the launcher entry points the backend (cuda_runtime.cu) calls.
//
// Note [CUDA kernel interface]
// Kernel files see no Tensor: the backend turns tensors into plain structs (data pointers,
// dtype, sizes and per-operand element strides) so the .cu files that hold the template
// cross-products stay cheap to compile and independent of the op layer. Geometry is coalesced
// on the host (see coalesce() in cuda_runtime.cu), so at most kMaxDims dims reach a kernel and
// a contiguous tensor of any rank arrives as one dim.

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/cuda_context.h"
#include "ember/dtype.h"
#include "ember/error.h"
#include "kernels/cuda/launch_math.h"

namespace ember::cuda {

constexpr int kBlockSize = 256;

/// A scalar parameter (alpha, fill value) in every form a kernel may want.
struct ScalarArg {
  int64_t i = 0;
  double d = 0;
  double im = 0;
  bool b = false;
};

/// Grid size for a grid-stride loop over n elements.
inline unsigned grid_for(int64_t n) {
  int64_t blocks = (n + kBlockSize - 1) / kBlockSize;
  return static_cast<unsigned>(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

/// Throws if the last kernel launch failed.
inline void check_launch(const char* kernel) {
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    EMBER_THROW(::ember::Error, "[cuda] launching ", kernel, " failed: ", cudaGetErrorString(err));
}

/// Whether every operand walks memory with unit stride in the (coalesced) geometry.
template <int N>
bool is_contiguous(const Geometry<N>& g) {
  if (g.ndim == 0) return true;
  if (g.ndim != 1) return false;
  for (int k = 0; k < N; ++k)
    if (g.strides[k][0] != 1) return false;
  return true;
}

// Grid-stride loop: f(off) gets the element offsets of one index for every operand. The
// contiguous case skips the index arithmetic (64-bit div/mod per dim is the main cost otherwise).
template <int N, bool kContig, class F>
__global__ void elementwise_kernel(Geometry<N> g, F f) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < g.numel; i += step) {
    int64_t off[N];
    if constexpr (kContig) {
      for (int k = 0; k < N; ++k) off[k] = i;
    } else {
      g.offsets(i, off);
    }
    f(off);
  }
}

/// Launches elementwise_kernel on the current stream (Note [CUDA kernels and streams]).
template <int N, class F>
void launch_elementwise(const Geometry<N>& g, const F& f, const char* name) {
  if (g.numel == 0) return;
  if (is_contiguous(g))
    elementwise_kernel<N, true><<<grid_for(g.numel), kBlockSize, 0, current_raw_stream()>>>(g, f);
  else
    elementwise_kernel<N, false><<<grid_for(g.numel), kBlockSize, 0, current_raw_stream()>>>(g, f);
  check_launch(name);
}

// ---- launchers (false = dtype not supported) ----

/// out[i] = value. `value` holds the value already converted to `dt` (its first
/// elementSize(dt) bytes), so every dtype is served by one kernel per element size.
bool launch_fill(ScalarType dt, void* out, const Geometry<1>& g, const unsigned char (&value)[16]);

/// dst[i] = cast<dst_dt>(src[i]) over strided operands (operand 0 = dst, 1 = src).
bool launch_cast(ScalarType dst_dt, void* dst, ScalarType src_dt, const void* src,
                 const Geometry<2>& g);

}  // namespace ember::cuda
