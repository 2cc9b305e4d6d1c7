#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Scalar and vector math shared by the unary and activation kernel files: the vector helpers
// SLEEF does not provide (sqrt, abs, rounding in the vector unit), float formulas written once
// for scalars and vectors for the hot activations (gelu's erf form, expm1, an inlined exp), and
// erfinv. Like vec.h it lives in the
// per-capability namespace: kernel files are compiled once per ISA, and an inline function with
// one external name in all three would let the linker keep the AVX-512 copy for every caller.

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/cpu/vec.h"
#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace ember::cpu::EMBER_CPU_CAP::math {

template <class T>
constexpr bool kIsComplex = false;
template <class T>
constexpr bool kIsComplex<complex<T>> = true;

/// Correctly rounded vector square root (the hardware instruction; std::sqrt in a loop does not
/// vectorize because of errno). The AVX-512 forms are the zero-masked ones with a full mask:
/// the plain ones trip a false GCC 12 -Wmaybe-uninitialized inside avx512fintrin.h.
inline vfloat vsqrt(vfloat x) {
#if EMBER_VEC_BYTES == 64
  return (vfloat)_mm512_maskz_sqrt_ps(__mmask16(0xFFFF), (__m512)x);
#elif EMBER_VEC_BYTES == 32
  return (vfloat)_mm256_sqrt_ps((__m256)x);
#elif defined(__SSE2__)
  return (vfloat)_mm_sqrt_ps((__m128)x);
#else
  for (int i = 0; i < kLanes<float>; ++i) x[i] = std::sqrt(x[i]);
  return x;
#endif
}
inline vdouble vsqrt(vdouble x) {
#if EMBER_VEC_BYTES == 64
  return (vdouble)_mm512_maskz_sqrt_pd(__mmask8(0xFF), (__m512d)x);
#elif EMBER_VEC_BYTES == 32
  return (vdouble)_mm256_sqrt_pd((__m256d)x);
#elif defined(__SSE2__)
  return (vdouble)_mm_sqrt_pd((__m128d)x);
#else
  for (int i = 0; i < kLanes<double>; ++i) x[i] = std::sqrt(x[i]);
  return x;
#endif
}

// Rounding to integral values in the vector unit (roundps / vrndscaleps); SSE2 has no such
// instruction and uses SLEEF's exact versions. kRoundMode: 0 nearest-even, 1 floor, 2 ceil,
// 3 trunc (the SSE4.1 / AVX-512 immediate encoding).
template <int kRoundMode, class V>
inline V vround_mode(V x) {
#if EMBER_VEC_BYTES == 16
  if constexpr (kRoundMode == 0)
    return vrint(x);
  else if constexpr (kRoundMode == 1)
    return vfloor(x);
  else if constexpr (kRoundMode == 2)
    return vceil(x);
  else
    return vtrunc(x);
#else
  constexpr int imm = kRoundMode | 8;  // | _MM_FROUND_NO_EXC
  if constexpr (std::is_same_v<V, vfloat>) {
#if EMBER_VEC_BYTES == 64
    return (vfloat)_mm512_maskz_roundscale_ps(__mmask16(0xFFFF), (__m512)x, imm);
#else
    return (vfloat)_mm256_round_ps((__m256)x, imm);
#endif
  } else {
#if EMBER_VEC_BYTES == 64
    return (vdouble)_mm512_maskz_roundscale_pd(__mmask8(0xFF), (__m512d)x, imm);
#else
    return (vdouble)_mm256_round_pd((__m256d)x, imm);
#endif
  }
#endif
}
template <class V>
inline V vrint_(V x) {
  return vround_mode<0>(x);
}
template <class V>
inline V vfloor_(V x) {
  return vround_mode<1>(x);
}
template <class V>
inline V vceil_(V x) {
  return vround_mode<2>(x);
}
template <class V>
inline V vtrunc_(V x) {
  return vround_mode<3>(x);
}

/// |x| by clearing the sign bit (so |-0.0| = +0.0 and NaN payloads survive, as std::fabs).
inline vfloat vabs(vfloat x) { return (vfloat)((vint32)x & 0x7fffffff); }
inline vdouble vabs(vdouble x) { return (vdouble)((vint64)x & 0x7fffffffffffffffLL); }

// Scalar/vector-generic building blocks: one formula (below) then serves a functor's vector
// body and its scalar tail, so both give the same numbers.
inline float gsel(bool m, float a, float b) { return m ? a : b; }
inline vfloat gsel(vint32 m, vfloat a, vfloat b) { return m ? a : b; }
inline float gabs(float x) { return std::fabs(x); }
inline vfloat gabs(vfloat x) { return vabs(x); }
inline float gexp(float x) { return std::exp(x); }
inline vfloat gexp(vfloat x) { return vexp(x); }

inline int32_t gbits(float x) { return std::bit_cast<int32_t>(x); }
inline vint32 gbits(vfloat x) { return (vint32)x; }
inline float gfloat(int32_t b) { return std::bit_cast<float>(b); }
inline vfloat gfloat(vint32 b) { return (vfloat)b; }

/// exp(r) for float r <= 0, inlined (no call, no register spills around it); results below
/// 2^-126 flush to 0. Cody-Waite reduction r = n ln2 + f, |f| <= ln2 / 2, then
/// 1 + f + f^2 Q(f) (degree-4 fit, 0.85 ULP); 2^n is built in the exponent bits. ~1.5 ULP.
template <class V>
inline V exp_nonpos_f32(V r) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  auto in_range = r > -87.33654f;
  V rc = gsel(in_range, r, V{} - 87.33654f);
  V m = rc * 1.44269504088896341f + kMagic;
  V n = m - kMagic;
  V f = rc - n * 0.693145751953125f;  // ln2 split: the high part has 12 bits, n * hi is exact
  f = f - n * 1.42860682030941723e-06f;
  V q = V{} + 1.390128098e-03f;
  q = q * f + 8.363140374e-03f;
  q = q * f + 4.166685339e-02f;
  q = q * f + 1.666657732e-01f;
  q = q * f + 4.999999955e-01f;
  V e = 1.0f + (f + f * f * q);
  V scale = gfloat((gbits(m) - gbits(kMagic) + 127) << 23);
  return gsel(in_range, e * scale, V{});
}

/// expm1 for float: a polynomial for |x| < 0.5, exp(x) - 1 above (no cancellation there);
/// <= 2.5 ULP, a third of SLEEF's expm1 cost.
template <class V>
inline V expm1_f32(V x) {
  V q = V{} + 1.987561985e-04f;
  q = q * x + 1.398199733e-03f;
  q = q * x + 8.333452202e-03f;
  q = q * x + 4.166579594e-02f;
  q = q * x + 1.666666546e-01f;
  q = q * x + 5.000000120e-01f;
  V small = x + x * (x * q);
  return gsel(gabs(x) < 0.5f, small, gexp(x) - 1.0f);
}

/// x * x - hi exactly (hi = x * x rounded), for |x| < 2^60: an FMA where the ISA has one,
/// else Dekker's split product (exact without FMA).
template <class V>
inline V square_err(V x, V hi) {
#if defined(__FMA__)
  if constexpr (std::is_same_v<V, float>) {
    return std::fma(x, x, -hi);
  } else {
#if EMBER_VEC_BYTES == 64
    return (vfloat)_mm512_fmsub_ps((__m512)x, (__m512)x, (__m512)hi);
#else
    return (vfloat)_mm256_fmsub_ps((__m256)x, (__m256)x, (__m256)hi);
#endif
  }
#else
  V c = 4097.0f * x;  // 2^12 + 1 splits a 24-bit significand into two 12-bit halves
  V xh = c - (c - x);
  V xl = x - xh;
  return ((xh * xh - hi) + 2.0f * xh * xl) + xl * xl;
#endif
}

// Note [gelu erf form]
// gelu(x) = x Phi(x), Phi the normal CDF. With a = |x| and the upper tail Q(a) = erfc(a/sqrt 2)/2,
// Phi(x) is 1 - Q(a) for x > 0 and Q(a) otherwise, so one relatively accurate Q serves all x
// (no cancellation for x < 0, where PyTorch's 1 + erf(z) loses everything below x = -5.5).
// Q(a) = e^(-a^2/2) R(a), R the Mills-ratio factor erfcx(a / sqrt 2) / 2, smooth on [0, 15]:
//  - R: a (4,5) rational in a, fitted for relative error (1.1e-8), evaluated in double (positive
//    coefficients: no cancellation) and rounded once to float. In float the two Horner chains
//    alone err by up to 6 ULP, which is why this one step is in double.
//  - e^(-a^2/2): a^2 = h + l exactly (FMA or Dekker), reduced as -h/2 = n ln2 + f, with -l/2
//    folded into f; then e^f = 1 + w, w = f + f^2 q(f), and Q = 2^n (R + R w): one rounding
//    instead of rounding e^f and then the product.
//  - 2^n is built with a bias of 2^64 and removed in the last multiply, so results down to the
//    smallest subnormal (x near -14) are rounded once; a >= 15 gives Q = 0 (gelu(-15) is below
//    the smallest subnormal), and x * 0 keeps -0 and NaN for x = -inf as PyTorch.
// Error budget in units of 2^-24 relative: R 1.2 (fit 0.2, conversion 1), e^f 0.7 (polynomial,
// reduction, the l fold), R + R w 1, x * Q 1, 1 - Q for x > 0 1 (Q <= 1/2 halves its error):
// at most 4.9 units, so <= 4.9 ULP; measured over every float: see GeluErf.AccuracyVsDouble
// (tests/cpp/test_gelu_accuracy.cpp).

/// R(a) = erfcx(a / sqrt 2) / 2 on [0, 15] in double (Note [gelu erf form]).
template <class D>
inline D gelu_mills_d(D a) {
  D n = 4.278142079e-03 * a + 4.167943664e-02;
  n = n * a + 1.862676335e-01;
  n = n * a + 4.422734796e-01;
  n = n * a + 5.000000053e-01;
  D d = 1.072361329e-02 * a + 1.044803513e-01;
  d = d * a + 4.774953793e-01;
  d = d * a + 1.214914989e+00;
  d = d * a + 1.682432181e+00;
  d = d * a + 1.0;
  return n / d;
}
inline float gelu_mills(float a) { return float(gelu_mills_d(double(a))); }
inline vfloat gelu_mills(vfloat a) {
  // Each half of the float lanes in a double vector of the same width.
#if EMBER_VEC_BYTES == 64
  const __m512 v = (__m512)a;
  const __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
  const __m512d hi = _mm512_cvtps_pd((__m256)_mm512_extractf64x4_pd((__m512d)v, 1));
  const __m256 rl = _mm512_cvtpd_ps((__m512d)gelu_mills_d((vdouble)lo));
  const __m256 rh = _mm512_cvtpd_ps((__m512d)gelu_mills_d((vdouble)hi));
  return (vfloat)_mm512_insertf64x4(_mm512_castpd256_pd512((__m256d)rl), (__m256d)rh, 1);
#elif EMBER_VEC_BYTES == 32
  const __m256 v = (__m256)a;
  const __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
  const __m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
  const __m128 rl = _mm256_cvtpd_ps((__m256d)gelu_mills_d((vdouble)lo));
  const __m128 rh = _mm256_cvtpd_ps((__m256d)gelu_mills_d((vdouble)hi));
  return (vfloat)_mm256_insertf128_ps(_mm256_castps128_ps256(rl), rh, 1);
#else
  typedef float vhalf __attribute__((vector_size(EMBER_VEC_BYTES / 2)));
  const vhalf lo = __builtin_shufflevector(a, a, 0, 1), hi = __builtin_shufflevector(a, a, 2, 3);
  const vhalf rl =
      __builtin_convertvector(gelu_mills_d(__builtin_convertvector(lo, vdouble)), vhalf);
  const vhalf rh =
      __builtin_convertvector(gelu_mills_d(__builtin_convertvector(hi, vdouble)), vhalf);
  return __builtin_shufflevector(rl, rh, 0, 1, 2, 3);
#endif
}

/// gelu's erf form for float, x Phi(x), to <= 4.9 ULP over all floats, subnormal results
/// included (Note [gelu erf form]). One formula for scalars and vectors: same bits in both.
template <class V>
inline V gelu_erf_f32(V x) {
  V a = gabs(x);
  const auto in_range = a < 15.0f;  // false for NaN too
  a = gsel(in_range, a, V{} + 15.0f);
  const V h = a * a;
  const V l = square_err(a, h);  // a^2 = h + l
  const V r = -0.5f * h;
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const V m = r * 1.44269504088896341f + kMagic;
  const V n = m - kMagic;
  V f = r - n * 0.693145751953125f;  // ln2 split: the high part has 12 bits, n * hi is exact
  f = f - n * 1.42860682030941723e-06f;
  f = f - 0.5f * l;
  V q = V{} + 1.390128098e-03f;
  q = q * f + 8.363140374e-03f;
  q = q * f + 4.166685339e-02f;
  q = q * f + 1.666657732e-01f;
  q = q * f + 4.999999955e-01f;
  const V w = f + f * f * q;  // e^f - 1
  const V rr = gelu_mills(a);
  const V scale = gfloat((gbits(m) - gbits(kMagic) + (127 + 64)) << 23);  // 2^(n + 64)
  const V qs = gsel(in_range, (rr + rr * w) * scale, V{});                // Q(a) 2^64
  constexpr float kUnbias = 5.421010862427522e-20f;                       // 2^-64
  return gsel(x > 0.0f, x * (1.0f - qs * kUnbias), (x * qs) * kUnbias);
}

/// Inverse error function in double precision. A published single-precision approximation
/// (M. Giles, "Approximating the erfinv function", GPU Computing Gems, 2011) gives ~1e-7
/// relative accuracy; `newton` Newton steps on erf (|y| <= 0.5) or erfc (above, where 1 - |y|
/// is exact and erf(x) - y would cancel) bring it to full precision.
inline double erfinv(double y, int newton) {
  double a = std::fabs(y);
  if (!(a <= 1.0)) return std::numeric_limits<double>::quiet_NaN();
  if (a == 1.0) return std::copysign(std::numeric_limits<double>::infinity(), y);
  constexpr double kHalfSqrtPi = 0.88622692545275801365;                          // sqrt(pi) / 2
  if (a < 1e-9) return y * kHalfSqrtPi * (1.0 + 0.26179938779914943654 * y * y);  // pi/12
  const double w0 = -std::log((1.0 - a) * (1.0 + a));
  double w = w0, p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  double x = p * a;
  if (a <= 0.5) {
    for (int i = 0; i < newton; ++i) x -= (std::erf(x) - a) * kHalfSqrtPi / std::exp(-x * x);
  } else {
    // Newton on log(erfc(x) / r), nearly quadratic in x, so it also converges from the poor
    // guesses the approximation gives beyond float's range (w > 16, 1 - |y| < 1e-7).
    double r = 1.0 - a;
    int steps = newton + (w0 > 16.0 ? 3 : 0);
    for (int i = 0; i < steps; ++i) {
      double e = std::erfc(x);
      x += std::log(e / r) * kHalfSqrtPi * e / std::exp(-x * x);
    }
  }
  return std::copysign(x, y);
}

/// erfinv for the compute type `C` (float or double); float goes through double so that the
/// result is correctly rounded up to double rounding.
template <class C>
inline C erfinv(C y) {
  if constexpr (std::is_same_v<C, float>)
    return static_cast<float>(erfinv(double(y), 1));
  else
    return erfinv(y, 2);
}

/// 1 / z with PyTorch's convention that 1 / 0 is NaN (not C's complex infinity).
template <class Z>
inline Z reciprocal(Z z) {
  using R = typename Z::value_type;
  if (z.real() == R(0) && z.imag() == R(0))
    return Z(std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN());
  return Z(R(1), R(0)) / z;
}

}  // namespace ember::cpu::EMBER_CPU_CAP::math
