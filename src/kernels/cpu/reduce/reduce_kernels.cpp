// The hot leaf loops of the reduction engine (Note [Reductions] in reduce.cpp), compiled once
// per CPU capability: pairwise float sums, row accumulation for vertical sums, and
// first-occurrence argmax/argmin with NaN propagation.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/kernel_registry.h"
#include "kernels/cpu/reduce/reduce.h"
#include "kernels/cpu/vec.h"

namespace ember::cpu::EMBER_CPU_CAP {
namespace {

// Pairwise sum: blocks of kBlock elements are summed with 8 independent vector accumulators
// (vectorized, each lane adds kBlock/(8*lanes) = 8 elements in order), larger ranges split in
// halves whose vector partials are added (error ~ log2(n)); lanes are added once at the end.
//
// Note [Interleaved pairwise leaves]
// One core reading one sequential stream does not reach the memory bandwidth: the hardware
// prefetchers keep too few lines in flight per stream. The leaves of the pairwise tree are
// independent, so they are evaluated two at a time, one from each half of a range of up to
// kSpan elements (two streams kSpan/2 apart), and their partials are then added up along the
// same tree. Every leaf and every addition is the one of the plain recursion: the result is
// bit-identical and still depends only on n.
template <class T>
constexpr int64_t kBlock = 64 * kLanes<T>;
template <class T>
constexpr int64_t kSpan = 64 * kBlock<T>;  // 64 leaves at most

// Where the pairwise tree of n elements splits.
template <class T>
inline int64_t pairwise_half(int64_t n) {
  constexpr int64_t L = kLanes<T>;
  return (n / 2 + L - 1) / L * L;
}

// Finishes one leaf: its remaining whole groups of 8 vectors from i on, single vectors, the
// accumulators added in a fixed tree, and the zero-padded tail.
template <class T>
inline Vec<T> leaf_finish(Vec<T>* a, const T* p, int64_t i, int64_t n) {
  using V = Vec<T>;
  constexpr int64_t L = kLanes<T>;
  for (; i + 8 * L <= n; i += 8 * L)
    for (int k = 0; k < 8; ++k) a[k] += vload<V>(p + i + k * L);
  for (; i + L <= n; i += L) a[0] += vload<V>(p + i);
  V r = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
  if (i < n) {
    T tail[L] = {};
    for (int64_t k = 0; i + k < n; ++k) tail[k] = p[i + k];
    r += vload<V>(tail);
  }
  return r;
}

// Two leaves (n0, n1 <= kBlock) at once: their common whole groups interleaved, then each alone.
template <class T>
inline void leaf_pair(const T* p0, int64_t n0, const T* p1, int64_t n1, Vec<T>* r0, Vec<T>* r1) {
  using V = Vec<T>;
  constexpr int64_t L = kLanes<T>;
  V a[8] = {}, b[8] = {};
  const int64_t g = std::min(n0, n1) / (8 * L) * (8 * L);
  for (int64_t i = 0; i < g; i += 8 * L)
    for (int k = 0; k < 8; ++k) {
      a[k] += vload<V>(p0 + i + k * L);
      b[k] += vload<V>(p1 + i + k * L);
    }
  *r0 = leaf_finish(a, p0, g, n0);
  *r1 = leaf_finish(b, p1, g, n1);
}

// The leaves of the tree of n elements at p, in order (offset, size).
template <class T>
void collect_leaves(int64_t off, int64_t n, int64_t* lo, int64_t* ln, int& k) {
  if (n > kBlock<T>) {
    const int64_t half = pairwise_half<T>(n);
    collect_leaves<T>(off, half, lo, ln, k);
    collect_leaves<T>(off + half, n - half, lo, ln, k);
    return;
  }
  lo[k] = off;
  ln[k] = n;
  ++k;
}

// Adds the leaf partials `r` (consumed in order) along the tree of n elements.
template <class T>
Vec<T> combine_leaves(const Vec<T>*& r, int64_t n) {
  if (n > kBlock<T>) {
    const int64_t half = pairwise_half<T>(n);
    const Vec<T> a = combine_leaves<T>(r, half);
    return a + combine_leaves<T>(r, n - half);
  }
  return *r++;
}

template <class T>
Vec<T> sum_vec(const T* p, int64_t n) {
  using V = Vec<T>;
  if (n > kSpan<T>) {
    const int64_t half = pairwise_half<T>(n);
    return sum_vec(p, half) + sum_vec(p + half, n - half);
  }
  if (n <= kBlock<T>) {  // one leaf
    V a[8] = {};
    return leaf_finish(a, p, 0, n);
  }
  constexpr int kMaxLeaves = 2 * int(kSpan<T> / kBlock<T>) + 2;
  int64_t lo[kMaxLeaves], ln[kMaxLeaves];
  V part[kMaxLeaves];
  int nl = 0;
  collect_leaves<T>(0, n, lo, ln, nl);
  const int h = (nl + 1) / 2;  // leaf j pairs with leaf j + h
  for (int j = 0; j + h < nl; ++j)
    leaf_pair(p + lo[j], ln[j], p + lo[j + h], ln[j + h], &part[j], &part[j + h]);
  if (nl % 2) {
    V a[8] = {};
    part[h - 1] = leaf_finish(a, p + lo[h - 1], 0, ln[h - 1]);
  }
  const V* r = part;
  return combine_leaves<T>(r, n);
}

// The summation order depends only on n, never on the address: peeling to a vector boundary
// would make the same values sum differently in a tensor and in its copy.
template <class T>
inline T add_lanes(Vec<T> v) {
  T s = 0;
  for (int64_t k = 0; k < kLanes<T>; ++k) s += v[k];
  return s;
}

template <class T>
T sum_pairwise(const T* p, int64_t n) {
  return add_lanes<T>(sum_vec(p, n));
}

// out[r] = sum_pairwise(p + r * rs, n) for `rows` rows. Rows r and r + h (h = half the rows)
// are summed together, leaf by leaf: two long streams instead of two short ones per row, which
// keep the prefetchers trained across rows (Note [Interleaved pairwise leaves]).
template <class T>
void sum_rows(const T* p, int64_t rs, int64_t rows, int64_t n, T* out) {
  using V = Vec<T>;
  if (n > kSpan<T> || rows < 2) {
    for (int64_t r = 0; r < rows; ++r) out[r] = sum_pairwise(p + r * rs, n);
    return;
  }
  constexpr int kMaxLeaves = 2 * int(kSpan<T> / kBlock<T>) + 2;
  int64_t lo[kMaxLeaves], ln[kMaxLeaves];
  V pa[kMaxLeaves], pb[kMaxLeaves];
  int nl = 0;
  collect_leaves<T>(0, n, lo, ln, nl);
  const int64_t h = (rows + 1) / 2;
  for (int64_t r = 0; r + h < rows; ++r) {
    const T* a = p + r * rs;
    const T* b = p + (r + h) * rs;
    for (int j = 0; j < nl; ++j) leaf_pair(a + lo[j], ln[j], b + lo[j], ln[j], &pa[j], &pb[j]);
    const V* ra = pa;
    const V* rb = pb;
    out[r] = add_lanes<T>(combine_leaves<T>(ra, n));
    out[r + h] = add_lanes<T>(combine_leaves<T>(rb, n));
  }
  if (rows % 2) out[h - 1] = sum_pairwise(p + (h - 1) * rs, n);
}

template <class T>
void add_rows(T* __restrict acc, const T* __restrict row, int64_t w) {
  using V = Vec<T>;
  constexpr int64_t L = kLanes<T>;
  int64_t j = 0;
  for (; j + 2 * L <= w; j += 2 * L) {
    vstore(acc + j, vload<V>(acc + j) + vload<V>(row + j));
    vstore(acc + j + L, vload<V>(acc + j + L) + vload<V>(row + j + L));
  }
  for (; j < w; ++j) acc[j] += row[j];
}

// acc[j] += row r [j] for r = 0..R-1 in order, R rows `rs` apart: the additions of R calls of
// add_rows, with the accumulators loaded and stored once and R streams read at a time.
template <class T, int R>
void add_rows_r(T* __restrict acc, const T* __restrict base, int64_t rs, int64_t w) {
  using V = Vec<T>;
  constexpr int64_t L = kLanes<T>;
  int64_t j = 0;
  for (; j + 2 * L <= w; j += 2 * L) {
    V a = vload<V>(acc + j), b = vload<V>(acc + j + L);
    for (int r = 0; r < R; ++r) {
      a += vload<V>(base + r * rs + j);
      b += vload<V>(base + r * rs + j + L);
    }
    vstore(acc + j, a);
    vstore(acc + j + L, b);
  }
  for (; j < w; ++j) {
    T a = acc[j];
    for (int r = 0; r < R; ++r) a += base[r * rs + j];
    acc[j] = a;
  }
}

// `rows` rows into acc, each element in row order (Note [Reductions]: a cascade level).
template <class T>
void add_row_block(T* acc, const T* base, int64_t rs, int64_t rows, int64_t w) {
  int64_t r = 0;
  for (; r + 8 <= rows; r += 8) add_rows_r<T, 8>(acc, base + r * rs, rs, w);
  if (r + 4 <= rows) {
    add_rows_r<T, 4>(acc, base + r * rs, rs, w);
    r += 4;
  }
  for (; r < rows; ++r) add_rows(acc, base + r * rs, w);
}

// First index of the largest (Max) or smallest element; the first NaN when there is one.
// Note [Blocked argmax]: the row is read in blocks of four vectors. Per block only the
// elementwise extreme of the four is formed and compared with a running per-lane extreme, which
// remembers the first block where each lane improved; the exact index is found afterwards by
// looking into that block for each lane. NaN is detected by a running sum (a NaN anywhere, or
// an inf - inf, makes it NaN) and then handled by the exact scalar scan.
template <class T, bool Max>
int64_t arg_extreme_scalar(const T* p, int64_t n) {
  int64_t best_i = 0;
  T best = p[0];
  for (int64_t k = 0; k < n; ++k) {
    const T x = p[k];
    if (x != x) return k;
    if (Max ? x > best : x < best) {
      best = x;
      best_i = k;
    }
  }
  return best_i;
}

// The blocked scan of Note [Blocked argmax] over S segments of equal whole blocks, read side by
// side (S streams, Note [Interleaved pairwise leaves]); the segments' results are merged in
// order keeping the earlier one on ties, so the index is the first occurrence as with S = 1.
template <class T, bool Max, int S>
int64_t arg_extreme_blocked(const T* p, int64_t n) {
  using V = Vec<T>;
  using IE = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  using I = std::conditional_t<sizeof(T) == 4, vint32, vint64>;
  constexpr int64_t L = kLanes<T>, B = 4 * L;
  auto ext = [](V a, V b) { return vselect(Max ? (a > b) : (a < b), a, b); };
  const int64_t per = n / B / S;  // blocks per segment, >= 1
  V m[S], acc[S];
  I blk[S];
  for (int s = 0; s < S; ++s) {
    const T* q = p + s * per * B;
    const V x0 = vload<V>(q), x1 = vload<V>(q + L), x2 = vload<V>(q + 2 * L),
            x3 = vload<V>(q + 3 * L);
    m[s] = ext(ext(x0, x1), ext(x2, x3));
    acc[s] = (x0 + x1) + (x2 + x3);
    blk[s] = I{} + IE(s * per);
  }
  for (int64_t b = 1; b < per; ++b) {
    for (int s = 0; s < S; ++s) {
      const int64_t bb = s * per + b;
      const T* q = p + bb * B;
      const V x0 = vload<V>(q), x1 = vload<V>(q + L), x2 = vload<V>(q + 2 * L),
              x3 = vload<V>(q + 3 * L);
      const V bm = ext(ext(x0, x1), ext(x2, x3));
      acc[s] += (x0 + x1) + (x2 + x3);
      const I up = Max ? (bm > m[s]) : (bm < m[s]);
      m[s] = vselect(up, bm, m[s]);
      blk[s] = up ? I{} + IE(bb) : blk[s];
    }
  }
  bool nan = false;
  for (int s = 0; s < S; ++s)
    for (int64_t k = 0; k < L; ++k) nan |= acc[s][k] != acc[s][k];
  if (nan) return arg_extreme_scalar<T, Max>(p, n);
  T best = m[0][0];
  int64_t best_i = n;
  for (int s = 0; s < S; ++s) {
    // The segment's extreme over lanes first (branch-free), then the index in the lanes that
    // hold it.
    T sb = m[s][0];
    for (int64_t k = 1; k < L; ++k) sb = (Max ? m[s][k] > sb : m[s][k] < sb) ? m[s][k] : sb;
    if (s > 0 && !(Max ? sb > best : sb < best)) continue;
    int64_t si = n;
    for (int64_t k = 0; k < L; ++k) {
      if (m[s][k] != sb) continue;
      int64_t at = int64_t(blk[s][k]) * B + k;  // the lane's first index holding its extreme
      while (p[at] != sb) at += L;
      si = std::min(si, at);
    }
    best = sb;
    best_i = si;
  }
  for (int64_t k = S * per * B; k < n; ++k) {
    const T x = p[k];
    if (x != x) return arg_extreme_scalar<T, Max>(p, n);
    if (Max ? x > best : x < best) {
      best = x;
      best_i = k;
    }
  }
  return best_i;
}

template <class T, bool Max>
int64_t arg_extreme(const T* p, int64_t n) {
  constexpr int64_t B = 4 * kLanes<T>;
  if (n <= 0) return 0;
  if (n < 2 * B || n >= (int64_t(1) << 30)) return arg_extreme_scalar<T, Max>(p, n);
  if (n < 8 * B) return arg_extreme_blocked<T, Max, 1>(p, n);
  return arg_extreme_blocked<T, Max, 4>(p, n);
}

}  // namespace

void register_reduce_kernels(KernelTable&) {
  ReduceKernels& k = reduce_kernel_slot();
  k.sum_f32 = &sum_pairwise<float>;
  k.sum_f64 = &sum_pairwise<double>;
  k.sum_rows_f32 = &sum_rows<float>;
  k.sum_rows_f64 = &sum_rows<double>;
  k.add_rows_f32 = &add_rows<float>;
  k.add_rows_f64 = &add_rows<double>;
  k.add_row_block_f32 = &add_row_block<float>;
  k.add_row_block_f64 = &add_row_block<double>;
  k.argmax_f32 = &arg_extreme<float, true>;
  k.argmin_f32 = &arg_extreme<float, false>;
  k.argmax_f64 = &arg_extreme<double, true>;
  k.argmin_f64 = &arg_extreme<double, false>;
}

}  // namespace ember::cpu::EMBER_CPU_CAP
