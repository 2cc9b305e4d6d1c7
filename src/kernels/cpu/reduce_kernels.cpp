// The hot leaf loops of the reduction engine (Note [Reductions] in reduce.cpp), compiled once
// per CPU capability: pairwise float sums, row accumulation for vertical sums, and
// first-occurrence argmax/argmin with NaN propagation.
#include <cmath>

#include "kernels/cpu/kernel_registry.h"
#include "kernels/cpu/reduce.h"
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
// One vector pass keeps, per lane, the best value and the index where it was first seen (a
// strictly better value replaces it, so ties keep the earliest); lanes are merged at the end
// preferring the smaller index on equal values. NaNs are only flagged in the loop and then
// located by a scalar scan (rare in practice).
template <class T, bool Max>
int64_t arg_extreme(const T* p, int64_t n) {
  using V = Vec<T>;
  using IE = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  using I = std::conditional_t<sizeof(T) == 4, vint32, vint64>;
  constexpr int64_t L = kLanes<T>;
  constexpr int kChains = 4;  // independent compare-select chains hide their latency
  if (n <= 0) return 0;
  int64_t i = 0, best_i = 0;
  T best = p[0];
  bool nan = false;
  if (n >= kChains * L && n < (int64_t(1) << 30)) {
    I lane{};
    for (int64_t k = 0; k < L; ++k) lane[k] = IE(k);
    V m[kChains];
    I ix[kChains], bad{};
    for (int c = 0; c < kChains; ++c) {
      m[c] = vload<V>(p + c * L);
      ix[c] = lane + IE(c * L);
      bad |= (m[c] != m[c]);
    }
    I cur = lane + IE(kChains * L);
    for (i = kChains * L; i + kChains * L <= n; i += kChains * L) {
      for (int c = 0; c < kChains; ++c) {
        const V x = vload<V>(p + i + c * L);
        bad |= (x != x);
        const I b = Max ? (x > m[c]) : (x < m[c]);
        m[c] = b ? x : m[c];
        ix[c] = b ? cur + IE(c * L) : ix[c];
      }
      cur += IE(kChains * L);
    }
    for (int64_t k = 0; k < L; ++k) nan |= bad[k] != 0;
    // Merge the chains lane by lane (better value, or equal value at a smaller index), then
    // the lanes, without branches: this runs once per row.
    for (int c = 1; c < kChains; ++c) {
      const I b = (Max ? (m[c] > m[0]) : (m[c] < m[0])) | ((m[c] == m[0]) & (ix[c] < ix[0]));
      m[0] = b ? m[c] : m[0];
      ix[0] = b ? ix[c] : ix[0];
    }
    best = m[0][0];
    for (int64_t k = 1; k < L; ++k) best = (Max ? m[0][k] > best : m[0][k] < best) ? m[0][k] : best;
    best_i = n;
    for (int64_t k = 0; k < L; ++k)
      best_i = (m[0][k] == best && ix[0][k] < best_i) ? int64_t(ix[0][k]) : best_i;
  } else {
    i = 1;
  }
  for (int64_t k = i; k < n; ++k) {
    const T x = p[k];
    if (x != x) nan = true;
    if (Max ? x > best : x < best) {
      best = x;
      best_i = k;
    }
  }
  if (nan) {
    for (int64_t k = 0; k < n; ++k)
      if (p[k] != p[k]) return k;
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
