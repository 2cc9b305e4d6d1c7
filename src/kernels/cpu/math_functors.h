#pragma once
// Scalar and vector math shared by the unary and activation kernel files: type traits, the
// vector helpers SLEEF does not provide (sqrt, abs), and erfinv. Like vec.h it lives in the
// per-capability namespace: kernel files are compiled once per ISA, and an inline function with
// one external name in all three would let the linker keep the AVX-512 copy for every caller.

#include <cmath>
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
  if constexpr (kRoundMode == 0) return vrint(x);
  else if constexpr (kRoundMode == 1) return vfloor(x);
  else if constexpr (kRoundMode == 2) return vceil(x);
  else return vtrunc(x);
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
inline V vrint_(V x) { return vround_mode<0>(x); }
template <class V>
inline V vfloor_(V x) { return vround_mode<1>(x); }
template <class V>
inline V vceil_(V x) { return vround_mode<2>(x); }
template <class V>
inline V vtrunc_(V x) { return vround_mode<3>(x); }

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

/// gelu's erf form for float: 0.5 x (1 + erf(z)), z = x / sqrt(2). erf(z) = z + z P(z^2) for
/// |z| < 1; above, 1 + erf(z) is 2 - erfc(|z|) or erfc(|z|), with erfc(a) = t exp(-a^2 + S(t)),
/// t = 1 / (1 + a / 2) (the form of Numerical Recipes' erfcc, refitted on a >= 1). P and S are
/// least-squares fits to erf/erfc in double (max error 1.3 ULP and 2e-8). The erfc branch
/// keeps relative accuracy for x < 0 where 1 + erf(z) cancels, and costs a third of SLEEF erf.
template <class V>
inline V gelu_erf_f32(V x) {
  V z = x * 0.70710678118654752f;
  V a = gabs(z);
  V u = z * z;
  V p = V{} + 7.964416687e-05f;
  p = p * u - 8.037583385e-04f;
  p = p * u + 5.190598135e-03f;
  p = p * u - 2.685444946e-02f;
  p = p * u + 1.128358324e-01f;
  p = p * u - 3.761262364e-01f;
  p = p * u + 1.283791650e-01f;
  V small = 1.0f + (z + z * p);
  V t = 1.0f / (1.0f + 0.5f * a);
  V s = V{} - 2.512330033e-01f;
  s = s * t + 6.937142009e-01f;
  s = s * t - 5.388132945e-01f;
  s = s * t + 1.834648810e-02f;
  s = s * t - 1.195693948e-01f;
  s = s * t + 8.721561499e-02f;
  s = s * t + 3.747763010e-01f;
  s = s * t + 1.000004956e+00f;
  s = s * t - 1.265512142e+00f;
  V erfc_a = t * gexp(s - u);
  V one_plus_erf = gsel(a < 1.0f, small, gsel(z > 0.0f, 2.0f - erfc_a, erfc_a));
  return 0.5f * x * one_plus_erf;
}

/// Inverse error function in double precision. A published single-precision approximation
/// (M. Giles, "Approximating the erfinv function", GPU Computing Gems, 2011) gives ~1e-7
/// relative accuracy; `newton` Newton steps on erf (|y| <= 0.5) or erfc (above, where 1 - |y|
/// is exact and erf(x) - y would cancel) bring it to full precision.
inline double erfinv(double y, int newton) {
  double a = std::fabs(y);
  if (!(a <= 1.0)) return std::numeric_limits<double>::quiet_NaN();
  if (a == 1.0) return std::copysign(std::numeric_limits<double>::infinity(), y);
  constexpr double kHalfSqrtPi = 0.88622692545275801365;  // sqrt(pi) / 2
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
  if constexpr (std::is_same_v<C, float>) return static_cast<float>(erfinv(double(y), 1));
  else return erfinv(y, 2);
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
