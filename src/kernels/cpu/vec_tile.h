#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Fused multiply-add, broadcast and 8x8 transposes on the vectors of vec.h, for the
// register-tiled kernels (packed GEMM, direct convolution). Only kernel files compiled per
// capability include this.

#include <immintrin.h>

#include "kernels/cpu/vec.h"

namespace ember::cpu::EMBER_CPU_CAP {

/// The rows of a register tile of MR rows x 2 vectors: 6 on 16-register ISAs (12 accumulators,
/// 2 operand vectors and a broadcast), 8 with AVX-512's 32 registers.
constexpr int kMR = EMBER_VEC_BYTES == 64 ? 8 : 6;

/// a * b + c, one rounding where the ISA has FMA (two on the default set).
inline vfloat vfma(vfloat a, vfloat b, vfloat c) {
#if defined(__AVX512F__)
  return _mm512_fmadd_ps(a, b, c);
#elif defined(__FMA__)
  return _mm256_fmadd_ps(a, b, c);
#else
  return a * b + c;
#endif
}
inline vdouble vfma(vdouble a, vdouble b, vdouble c) {
#if defined(__AVX512F__)
  return _mm512_fmadd_pd(a, b, c);
#elif defined(__FMA__)
  return _mm256_fmadd_pd(a, b, c);
#else
  return a * b + c;
#endif
}

/// Every lane = x. (vbroadcast's 0 + x keeps an add per broadcast: it may not fold, -0 + 0 = +0.)
inline vfloat bcast(float x) {
#if defined(__AVX512F__)
  return _mm512_set1_ps(x);
#elif defined(__AVX__)
  return _mm256_set1_ps(x);
#else
  return _mm_set1_ps(x);
#endif
}
inline vdouble bcast(double x) {
#if defined(__AVX512F__)
  return _mm512_set1_pd(x);
#elif defined(__AVX__)
  return _mm256_set1_pd(x);
#else
  return _mm_set1_pd(x);
#endif
}

/// acc += the outer product of one column of A, a(r) for r < kMR, and one row of B, (b0, b1):
/// kMR broadcasts and 2 kMR FMAs, the step of every register-tiled kernel.
template <class V, class A>
[[gnu::always_inline]] inline void tile_fma(V (&acc)[kMR][2], const A& a, V b0, V b1) {
#pragma GCC unroll 16
  for (int r = 0; r < kMR; ++r) {
    const V ar = bcast(a(r));
    acc[r][0] = vfma(ar, b0, acc[r][0]);
    acc[r][1] = vfma(ar, b1, acc[r][1]);
  }
}

/// acc += the kMR x 2-vector product of A(r, p) = rp[r][p] for p in [p0, p1) and the rows of B
/// at b, `bs` elements apart (two vectors each); returns b advanced past them.
template <class T>
[[gnu::always_inline]] inline const T* tile_steps(Vec<T> (&acc)[kMR][2], const T* const (&rp)[kMR],
                                                  int64_t p0, int64_t p1, const T* b, int64_t bs) {
  using V = Vec<T>;
#pragma GCC unroll 2
  for (int64_t p = p0; p < p1; ++p) {
    tile_fma(
        acc, [&](int r) { return rp[r][p]; }, vload<V>(b), vload<V>(b + kLanes<T>));
    b += bs;
  }
  return b;
}

#if defined(__AVX__)
/// o[p] lane q = r[q] lane p: an 8×8 transpose of floats in registers (three shuffle stages).
inline void transpose8_regs(const __m256 (&r)[8], __m256 (&o)[8]) {
  __m256 t[8], u[8];
  for (int q = 0; q < 8; q += 2) {
    t[q] = _mm256_unpacklo_ps(r[q], r[q + 1]);
    t[q + 1] = _mm256_unpackhi_ps(r[q], r[q + 1]);
  }
  for (int h = 0; h < 8; h += 4) {
    u[h + 0] = _mm256_shuffle_ps(t[h + 0], t[h + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[h + 1] = _mm256_shuffle_ps(t[h + 0], t[h + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[h + 2] = _mm256_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[h + 3] = _mm256_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int p = 0; p < 4; ++p) {
    o[p] = _mm256_permute2f128_ps(u[p], u[p + 4], 0x20);
    o[p + 4] = _mm256_permute2f128_ps(u[p], u[p + 4], 0x31);
  }
}

/// dst[p * ldd + q] = src[q * lds + p] for an 8×8 block of floats.
inline void transpose8x8(const float* src, int64_t lds, float* dst, int64_t ldd) {
  __m256 r[8], o[8];
  for (int q = 0; q < 8; ++q) r[q] = _mm256_loadu_ps(src + q * lds);
  transpose8_regs(r, o);
  for (int p = 0; p < 8; ++p) _mm256_storeu_ps(dst + p * ldd, o[p]);
}
#endif

}  // namespace ember::cpu::EMBER_CPU_CAP
