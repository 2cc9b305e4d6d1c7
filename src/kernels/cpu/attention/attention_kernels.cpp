// Flash-attention tiles (Note [Flash attention tiles]). Compiled once per CPU capability.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/attention/attention.h"
#include "kernels/cpu/vec.h"

namespace ember::cpu::EMBER_CPU_CAP {
namespace {

// Note [Flash attention tiles]
// The scores of a (query block × key block) tile are one GEMM into a small buffer; the softmax
// is folded in online: each query row keeps its running max m and sum l, and the output
// accumulator is rescaled by exp(m_old − m_new) when the max grows. The forward keeps only
// lse = m + log l per query. The backward walks the keys in blocks (each owned by one task),
// recomputes P = exp(scores − lse) tile by tile and accumulates dV += Pᵀ dO, dK += dSᵀ Q and
// dQ += dS K with dS = P ∘ (dO Vᵀ − rowsum(dO ∘ O)). The GEMMs are BLAS calls on the tiles
// (single-threaded inside the caller's parallel region); exp runs on the ISA's vectors.

constexpr double kInf = std::numeric_limits<double>::infinity();

inline void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(m),
              int(n), int(k), alpha, a, int(std::max<int64_t>(lda, 1)), b,
              int(std::max<int64_t>(ldb, 1)), beta, c, int(std::max<int64_t>(ldc, 1)));
}
inline void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                 int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(m),
              int(n), int(k), alpha, a, int(std::max<int64_t>(lda, 1)), b,
              int(std::max<int64_t>(ldb, 1)), beta, c, int(std::max<int64_t>(ldc, 1)));
}

/// Adds the mask and the causal -inf to a rows×cols score tile at (i0, j0) of batch b.
template <class T>
void mask_tile(const FlashParams<T>& p, int64_t b, int64_t i0, int64_t rows, int64_t j0,
               int64_t cols, T* s, int64_t ld) {
  const T ninf = T(-kInf);
  if (p.mask) {
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t base = p.mask_off[b] + (i0 + r) * p.mask_sl + j0 * p.mask_ss;
      T* row = s + r * ld;
      if (p.mask_bool) {
        const bool* m = static_cast<const bool*>(p.mask) + base;
        for (int64_t c = 0; c < cols; ++c)
          if (!m[c * p.mask_ss]) row[c] = ninf;
      } else {
        const T* m = static_cast<const T*>(p.mask) + base;
        for (int64_t c = 0; c < cols; ++c) row[c] += m[c * p.mask_ss];
      }
    }
  }
  // Top-left causal: query i sees keys j <= i.
  if (p.causal && j0 + cols - 1 > i0) {
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t first = std::max<int64_t>(0, i0 + r + 1 - j0);
      T* row = s + r * ld;
      for (int64_t c = first; c < cols; ++c) row[c] = ninf;
    }
  }
}

template <class T>
inline T hmax(Vec<T> v) {
  T m = v[0];
  for (int i = 1; i < kLanes<T>; ++i) m = std::max(m, T(v[i]));
  return m;
}
template <class T>
inline T hsum(Vec<T> v) {
  T s = 0;
  for (int i = 0; i < kLanes<T>; ++i) s += v[i];
  return s;
}

/// row[c] = exp(row[c] - sub) for c < n; returns the sum.
template <class T>
inline T exp_sub_row(T* row, int64_t n, T sub) {
  using V = Vec<T>;
  constexpr int W = kLanes<T>;
  const V vs = splat<T>(sub);
  V acc = splat<T>(T(0));
  int64_t c = 0;
  for (; c + W <= n; c += W) {
    V x = vexp(vload<V>(row + c) - vs);
    vstore(row + c, x);
    acc += x;
  }
  T sum = hsum<T>(acc);
  for (; c < n; ++c) {
    row[c] = std::exp(row[c] - sub);
    sum += row[c];
  }
  return sum;
}

template <class T>
inline T max_row(const T* row, int64_t n) {
  using V = Vec<T>;
  constexpr int W = kLanes<T>;
  T mx = T(-kInf);
  int64_t c = 0;
  if (n >= W) {
    V vm = vload<V>(row);
    for (c = W; c + W <= n; c += W) {
      V x = vload<V>(row + c);
      vm = x > vm ? x : vm;
    }
    mx = hmax<T>(vm);
  }
  for (; c < n; ++c) mx = std::max(mx, row[c]);
  return mx;
}

template <class T>
void fwd_block(const FlashParams<T>& p, int64_t b, int64_t i0, int64_t i1, T* ws) {
  const int64_t rows = i1 - i0, E = p.E, Ev = p.Ev, bk = p.bk;
  T* s = ws;
  T* acc = s + p.bq * bk;
  T* m = acc + p.bq * Ev;
  T* l = m + p.bq;
  std::fill(acc, acc + rows * Ev, T(0));
  std::fill(m, m + rows, T(-kInf));
  std::fill(l, l + rows, T(0));
  const T* Q = p.q + (b * p.L + i0) * E;
  const T* K = p.k + b * p.S * E;
  const T* Vp = p.v + b * p.S * Ev;
  const int64_t jend = p.causal ? std::min(p.S, i1) : p.S;
  for (int64_t j0 = 0; j0 < jend; j0 += bk) {
    const int64_t cols = std::min(bk, jend - j0);
    gemm(false, true, rows, cols, E, p.scale, Q, E, K + j0 * E, E, T(0), s, bk);
    mask_tile(p, b, i0, rows, j0, cols, s, bk);
    for (int64_t r = 0; r < rows; ++r) {
      T* row = s + r * bk;
      const T mnew = std::max(m[r], max_row(row, cols));
      if (mnew == T(-kInf)) {  // every key so far masked out: nothing to add
        std::fill(row, row + cols, T(0));
        continue;
      }
      const T sum = exp_sub_row(row, cols, mnew);
      const T alpha = std::exp(m[r] - mnew);
      if (alpha != T(1)) {
        T* a = acc + r * Ev;
        for (int64_t c = 0; c < Ev; ++c) a[c] *= alpha;
      }
      l[r] = l[r] * alpha + sum;
      m[r] = mnew;
    }
    gemm(false, false, rows, Ev, cols, T(1), s, bk, Vp + j0 * Ev, Ev, T(1), acc, Ev);
  }
  T* O = p.out + (b * p.L + i0) * Ev;
  T* lse = p.out_lse + b * p.L + i0;
  for (int64_t r = 0; r < rows; ++r) {
    const T inv = T(1) / l[r];  // l = 0 (a fully masked row) gives NaN, as the softmax does
    for (int64_t c = 0; c < Ev; ++c) O[r * Ev + c] = acc[r * Ev + c] * inv;
    lse[r] = m[r] + std::log(l[r]);
  }
}

template <class T>
void bwd_block(const FlashParams<T>& p, int64_t b, int64_t j0, int64_t j1, T* dq, T* ws) {
  using V = Vec<T>;
  constexpr int W = kLanes<T>;
  const int64_t cols = j1 - j0, E = p.E, Ev = p.Ev, bq = p.bq, ld = p.bk;
  T* s = ws;
  T* dp = ws + bq * ld;
  const T* K = p.k + (b * p.S + j0) * E;
  const T* Vp = p.v + (b * p.S + j0) * Ev;
  T* gk = p.gk + (b * p.S + j0) * E;
  T* gv = p.gv + (b * p.S + j0) * Ev;
  // Causal: queries before j0 see no key of this block.
  const int64_t istart = p.causal ? (j0 / bq) * bq : 0;
  for (int64_t i0 = istart; i0 < p.L; i0 += bq) {
    const int64_t rows = std::min(bq, p.L - i0);
    const T* Q = p.q + (b * p.L + i0) * E;
    const T* GO = p.go + (b * p.L + i0) * Ev;
    const T* lse = p.lse + b * p.L + i0;
    const T* D = p.delta + b * p.L + i0;
    gemm(false, true, rows, cols, E, p.scale, Q, E, K, E, T(0), s, ld);
    mask_tile(p, b, i0, rows, j0, cols, s, ld);
    for (int64_t r = 0; r < rows; ++r) {
      T* row = s + r * ld;
      if (lse[r] == T(-kInf)) {
        std::fill(row, row + cols, T(0));
        continue;
      }
      exp_sub_row(row, cols, lse[r]);
    }
    gemm(true, false, cols, Ev, rows, T(1), s, ld, GO, Ev, T(1), gv, Ev);
    gemm(false, true, rows, cols, Ev, T(1), GO, Ev, Vp, Ev, T(0), dp, ld);
    for (int64_t r = 0; r < rows; ++r) {
      const T* pr = s + r * ld;
      T* dr = dp + r * ld;
      const V vd = splat<T>(D[r]);
      int64_t c = 0;
      for (; c + W <= cols; c += W) vstore(dr + c, vload<V>(pr + c) * (vload<V>(dr + c) - vd));
      for (; c < cols; ++c) dr[c] = pr[c] * (dr[c] - D[r]);
    }
    gemm(true, false, cols, E, rows, p.scale, dp, ld, Q, E, T(1), gk, E);
    gemm(false, false, rows, E, cols, p.scale, dp, ld, K, E, T(1), dq + (b * p.L + i0) * E, E);
  }
}

}  // namespace

void register_attention_kernels(AttentionKernels& k) {
  k.f.fwd = fwd_block<float>;
  k.f.bwd = bwd_block<float>;
  k.d.fwd = fwd_block<double>;
  k.d.bwd = bwd_block<double>;
}

}  // namespace ember::cpu::EMBER_CPU_CAP
