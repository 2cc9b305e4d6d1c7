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
template <class T>
Vec<T> sum_vec(const T* p, int64_t n) {
  using V = Vec<T>;
  constexpr int64_t L = kLanes<T>;
  constexpr int64_t kBlock = 64 * L;
  if (n > kBlock) {
    const int64_t half = (n / 2 + L - 1) / L * L;
    return sum_vec(p, half) + sum_vec(p + half, n - half);
  }
  V a[8] = {};
  int64_t i = 0;
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

// The summation order depends only on n, never on the address: peeling to a vector boundary
// would make the same values sum differently in a tensor and in its copy.
template <class T>
T sum_pairwise(const T* p, int64_t n) {
  const Vec<T> v = sum_vec(p, n);
  T s = 0;
  for (int64_t k = 0; k < kLanes<T>; ++k) s += v[k];
  return s;
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

template <class T, bool Max>
int64_t arg_extreme(const T* p, int64_t n) {
  using V = Vec<T>;
  using IE = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  using I = std::conditional_t<sizeof(T) == 4, vint32, vint64>;
  constexpr int64_t L = kLanes<T>, B = 4 * L;
  if (n <= 0) return 0;
  if (n < 2 * B || n >= (int64_t(1) << 30)) return arg_extreme_scalar<T, Max>(p, n);
  auto ext = [](V a, V b) { return vselect(Max ? (a > b) : (a < b), a, b); };
  V x0 = vload<V>(p), x1 = vload<V>(p + L), x2 = vload<V>(p + 2 * L), x3 = vload<V>(p + 3 * L);
  V m = ext(ext(x0, x1), ext(x2, x3));
  V acc = (x0 + x1) + (x2 + x3);
  I blk{};
  const int64_t blocks = n / B;
  for (int64_t b = 1; b < blocks; ++b) {
    const T* q = p + b * B;
    x0 = vload<V>(q);
    x1 = vload<V>(q + L);
    x2 = vload<V>(q + 2 * L);
    x3 = vload<V>(q + 3 * L);
    const V bm = ext(ext(x0, x1), ext(x2, x3));
    acc += (x0 + x1) + (x2 + x3);
    const I up = Max ? (bm > m) : (bm < m);
    m = vselect(up, bm, m);
    blk = up ? I{} + IE(b) : blk;
  }
  bool nan = false;
  for (int64_t k = 0; k < L; ++k) nan |= acc[k] != acc[k];
  if (nan) return arg_extreme_scalar<T, Max>(p, n);
  // The extreme over lanes first (branch-free), then the index in the lanes that hold it.
  T best = m[0];
  for (int64_t k = 1; k < L; ++k) best = (Max ? m[k] > best : m[k] < best) ? m[k] : best;
  int64_t best_i = n;
  for (int64_t k = 0; k < L; ++k) {
    if (m[k] != best) continue;
    int64_t at = int64_t(blk[k]) * B + k;  // the lane's first index holding its extreme
    while (p[at] != best) at += L;
    best_i = std::min(best_i, at);
  }
  for (int64_t k = blocks * B; k < n; ++k) {
    const T x = p[k];
    if (x != x) return arg_extreme_scalar<T, Max>(p, n);
    if (Max ? x > best : x < best) {
      best = x;
      best_i = k;
    }
  }
  return best_i;
}

}  // namespace

void register_reduce_kernels(KernelTable&) {
  ReduceKernels& k = reduce_kernel_slot();
  k.sum_f32 = &sum_pairwise<float>;
  k.sum_f64 = &sum_pairwise<double>;
  k.add_rows_f32 = &add_rows<float>;
  k.add_rows_f64 = &add_rows<double>;
  k.argmax_f32 = &arg_extreme<float, true>;
  k.argmin_f32 = &arg_extreme<float, false>;
  k.argmax_f64 = &arg_extreme<double, true>;
  k.argmin_f64 = &arg_extreme<double, false>;
}

}  // namespace ember::cpu::EMBER_CPU_CAP
