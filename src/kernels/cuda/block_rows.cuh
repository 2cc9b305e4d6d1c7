#pragma once
// One row per block, the row held in registers: the pieces shared by the row kernels of
// softmax.cu and norm.cu. A row of float32 is read once as float4 vectors (K per thread), reduced
// with warp shuffles and one value per warp in shared memory, and written once. The reduction
// order is fixed by the block size, so a result is the same on every run.
#include <cstdint>
#include <initializer_list>
#include <type_traits>

namespace ember {
namespace cuda {

struct SumOp {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};
/// The larger of two values; a NaN `b` is passed over (as the row kernels' own loops do).
struct MaxOp {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return b > a ? b : a;
  }
};

/// Reduces `v` over the block (blockDim.x a multiple of 32, blockDim.y == 1); every thread gets
/// the result. `sh` holds 32 values and may be reused after the call.
template <class T, class Op>
__device__ T block_reduce(T v, Op op, T* sh) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int warp = int(threadIdx.x) >> 5, warps = int(blockDim.x) >> 5;
  if ((threadIdx.x & 31) == 0) sh[warp] = v;
  __syncthreads();
  T r = sh[0];
  for (int i = 1; i < warps; ++i) r = op(r, sh[i]);
  __syncthreads();
  return r;
}

/// The float4 vectors per thread (K) and threads per block for rows of `n4` float4; K == 0 when
/// the row is too long for registers (the caller then uses its generic kernel).
struct VecRows {
  int k;
  unsigned threads;
};
inline VecRows vec_rows(int64_t n4) {
  for (int k : {1, 2, 4, 8}) {
    if (n4 <= int64_t(k) * 512) {
      const int64_t t = (n4 + k - 1) / k;
      return {k, unsigned((t + 31) / 32 * 32)};
    }
  }
  return {0, 0};
}

/// Whether every pointer is 16-byte aligned (null pointers pass).
inline bool aligned16(std::initializer_list<const void*> ps) {
  for (const void* p : ps)
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0) return false;
  return true;
}

/// Calls `f(std::integral_constant<int, K>{})` for K in {1, 2, 4, 8}.
template <class F>
void with_vec_k(int k, const F& f) {
  switch (k) {
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 4:
      return f(std::integral_constant<int, 4>{});
    default:
      return f(std::integral_constant<int, 8>{});
  }
}

}  // namespace cuda
}  // namespace ember
