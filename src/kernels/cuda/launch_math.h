#pragma once
// Launch geometry of the CUDA elementwise kernels in plain C++ (no CUDA headers), so that the
// host-side arithmetic is tested on machines without a GPU (tests/cpp/test_cuda_launch.cpp):
// strided geometry with 64-bit offsets, its split into pieces whose offsets fit in 32 bits, the
// 32-bit offset calculator the kernels use, grid sizes and vector widths.
//
// Note [32-bit elementwise indexing]
// Kernels index with 32-bit integers (64-bit division is several times slower on the GPU). The
// host splits a launch whose element count or largest element offset (of any operand) does not
// fit in int32 into sub-launches along its outermost dims; each piece gets base offsets (added
// to its data pointers on the host) and a geometry whose offsets all fit in 32 bits.

#include <cstdint>
#include <cstdlib>

#if defined(__CUDACC__)
#define EMBER_LAUNCH_HD __host__ __device__
#else
#define EMBER_LAUNCH_HD
#endif

namespace ember::cuda {

/// Most dims a kernel's geometry has after coalescing.
constexpr int kMaxDims = 8;

/// Sizes of the iteration space plus the element strides of N operands (operand 0 = output).
/// Broadcast dims have stride 0. Passed to kernels by value.
template <int N>
struct Geometry {
  int ndim = 0;
  int64_t numel = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[N][kMaxDims] = {};

  /// Element offsets of linear index `i` (row-major over `sizes`) for every operand.
  EMBER_LAUNCH_HD void offsets(int64_t i, int64_t (&off)[N]) const {
    for (int k = 0; k < N; ++k) off[k] = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      int64_t sz = sizes[d];
      int64_t idx = i % sz;
      i /= sz;
      for (int k = 0; k < N; ++k) off[k] += idx * strides[k][d];
    }
  }
};

/// The 32-bit form of a Geometry that fits_32bit(): what the strided kernels receive.
template <int N>
struct Offsets32 {
  int ndim = 0;
  uint32_t sizes[kMaxDims] = {};
  int32_t strides[N][kMaxDims] = {};

  /// Element offsets of linear index `i` for every operand, in 32-bit arithmetic.
  EMBER_LAUNCH_HD void get(uint32_t i, int32_t (&off)[N]) const {
    for (int k = 0; k < N; ++k) off[k] = 0;
    if (ndim == 1) {  // the common broadcast / strided 1-D case: no division
      for (int k = 0; k < N; ++k) off[k] = int32_t(i) * strides[k][0];
      return;
    }
    for (int d = ndim - 1; d >= 0; --d) {
      uint32_t sz = sizes[d];
      uint32_t idx = i % sz;
      i /= sz;
      for (int k = 0; k < N; ++k) off[k] += int32_t(idx) * strides[k][d];
    }
  }
};

namespace launch {

constexpr int64_t kInt32Max = 2147483647;

/// Whether every element index and every operand's element offset of `g` fits in int32.
template <int N>
bool fits_32bit(const Geometry<N>& g) {
  if (g.numel > kInt32Max) return false;
  for (int k = 0; k < N; ++k) {
    int64_t span = 0;
    for (int d = 0; d < g.ndim; ++d) {
      int64_t s = g.strides[k][d] < 0 ? -g.strides[k][d] : g.strides[k][d];
      if (g.sizes[d] > 1 && s > kInt32Max) return false;
      span += (g.sizes[d] - 1) * s;
      if (span > kInt32Max) return false;
    }
  }
  return true;
}

/// The 32-bit offset calculator of `g` (fits_32bit(g) must hold).
template <int N>
Offsets32<N> to_offsets32(const Geometry<N>& g) {
  Offsets32<N> o;
  o.ndim = g.ndim;
  for (int d = 0; d < g.ndim; ++d) {
    o.sizes[d] = uint32_t(g.sizes[d]);
    for (int k = 0; k < N; ++k) o.strides[k][d] = int32_t(g.strides[k][d]);
  }
  return o;
}

namespace detail {
template <int N, class F>
void split_rec(const Geometry<N>& g, const int64_t (&base)[N], F& f) {
  if (g.numel == 0) return;
  if (fits_32bit(g)) {
    f(base, g);
    return;
  }
  // The outermost dim goes: a size-1 dim is dropped, a larger one is halved.
  if (g.sizes[0] == 1) {
    Geometry<N> sub;
    sub.ndim = g.ndim - 1;
    sub.numel = g.numel;
    for (int d = 1; d < g.ndim; ++d) {
      sub.sizes[d - 1] = g.sizes[d];
      for (int k = 0; k < N; ++k) sub.strides[k][d - 1] = g.strides[k][d];
    }
    split_rec(sub, base, f);
    return;
  }
  const int64_t half = g.sizes[0] / 2;
  const int64_t inner = g.numel / g.sizes[0];
  Geometry<N> lo = g, hi = g;
  lo.sizes[0] = half;
  lo.numel = half * inner;
  hi.sizes[0] = g.sizes[0] - half;
  hi.numel = hi.sizes[0] * inner;
  int64_t hi_base[N];
  for (int k = 0; k < N; ++k) hi_base[k] = base[k] + half * g.strides[k][0];
  split_rec(lo, base, f);
  split_rec(hi, hi_base, f);
}
}  // namespace detail

/// Calls f(base, sub) for pieces of `g` that cover it in order: `base[k]` is the element offset
/// of operand k's first element of the piece and `sub` fits_32bit (Note [32-bit elementwise
/// indexing]). One call with zero bases when `g` fits already; none when it is empty. Needs
/// g.ndim >= 1 when g does not fit (a 0-dim geometry always does).
template <int N, class F>
void split_32bit(const Geometry<N>& g, F&& f) {
  int64_t base[N] = {};
  detail::split_rec(g, base, f);
}

/// Whether `g` walks every operand linearly: at most one dim, where the output has stride 1 and
/// every input stride 1 or 0 (a broadcast scalar). Bit k of `bcast` is set for operands of
/// stride 0.
template <int N>
bool is_flat(const Geometry<N>& g, uint32_t& bcast) {
  bcast = 0;
  if (g.ndim == 0) {
    for (int k = 1; k < N; ++k) bcast |= 1u << k;
    return true;
  }
  if (g.ndim != 1 || g.strides[0][0] != 1) return false;
  for (int k = 1; k < N; ++k) {
    if (g.strides[k][0] == 0)
      bcast |= 1u << k;
    else if (g.strides[k][0] != 1)
      return false;
  }
  return true;
}

/// The widest vector (elements per load) the kernels use for an element of `max_elem_size`
/// bytes: 16-byte loads (4 x 32-bit, 8 x 16-bit, 2 x 64-bit), at most 8 elements.
constexpr int max_vector_width(int max_elem_size) {
  int w = max_elem_size > 0 ? 16 / max_elem_size : 1;
  if (w > 8) w = 8;
  return w < 1 ? 1 : w;
}

/// The widest power of two <= `max_vec` such that every operand k not in `bcast` (a bit mask)
/// has its pointer aligned to width * elem_sizes[k] bytes.
inline int vector_width(int max_vec, const void* const* ptrs, const int* elem_sizes, int n,
                        uint32_t bcast) {
  int w = 1;
  while (w * 2 <= max_vec) w *= 2;
  for (; w > 1; w /= 2) {
    bool ok = true;
    for (int k = 0; k < n && ok; ++k) {
      if (bcast & (1u << k)) continue;
      ok = reinterpret_cast<uintptr_t>(ptrs[k]) % uintptr_t(w * elem_sizes[k]) == 0;
    }
    if (ok) break;
  }
  return w;
}

/// Blocks for a grid-stride loop over `work` items with `block` threads per block: one item
/// per thread, capped at `sm_count * blocks_per_sm` (more blocks only add scheduling overhead
/// to a memory-bound loop); at least 1.
inline unsigned grid_size(int64_t work, int block, int sm_count, int blocks_per_sm) {
  int64_t blocks = (work + block - 1) / block;
  int64_t cap = int64_t(sm_count > 0 ? sm_count : 1) * blocks_per_sm;
  if (blocks > cap) blocks = cap;
  if (blocks > 2147483647) blocks = 2147483647;
  return unsigned(blocks < 1 ? 1 : blocks);
}

}  // namespace launch
}  // namespace ember::cuda
