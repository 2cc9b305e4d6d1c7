#pragma once
// Scalar math of the CUDA elementwise functors: one overload set per function over float,
// double and cuda::std::complex, calling CUDA's math library (the same functions as the host's
// libm for float and double). Everything is __host__ __device__, so a functor evaluates the same
// expression on the host; the few functions CUDA provides only on the device (erfinv, erfcx,
// normcdfinv, cyl_bessel_i0/i1) have a slower host form.

#include <cuda/std/complex>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/op_table.h"
#include "ember/scalar.h"
#include "kernels/common/elementwise_scalar.h"
#include "kernels/cuda/cuda_functors.cuh"

#define EMBER_EW_HD __host__ __device__ __forceinline__

namespace ember::cuda::ew {

template <class T>
inline constexpr bool is_cplx = kernels::is_complex_element_v<T>;
template <class T>
inline constexpr bool is_sint = std::is_integral_v<T>&& std::is_signed_v<T>;

template <class T>
struct RealOf {
  using type = T;
};
template <class V>
struct RealOf<::cuda::std::complex<V>> {
  using type = V;
};
template <class T>
using real_t = typename RealOf<T>::type;

/// A parameter converted to the compute type `C` as Scalar::to<C>() does on the CPU.
template <class C>
C param(const Scalar& s) {
  if constexpr (is_cplx<C>) {
    auto z = s.toComplexDouble();
    using V = typename C::value_type;
    return C(V(z.real()), V(z.imag()));
  } else {
    return s.to<C>();
  }
}

template <class C>
EMBER_EW_HD C quiet_nan() {
  return std::numeric_limits<C>::quiet_NaN();
}
template <class C>
EMBER_EW_HD C infinity() {
  return std::numeric_limits<C>::infinity();
}

/// Bit reinterpretation (memcpy compiles to a register move on both sides).
template <class To, class From>
EMBER_EW_HD To bit_cast(From v) {
  static_assert(sizeof(To) == sizeof(From));
  To r;
  memcpy(&r, &v, sizeof(To));
  return r;
}

// ---- one name per function, for float, double and complex ----
#define EMBER_EW_MATH1(name, ffn, dfn)                                  \
  EMBER_EW_HD float name(float x) { return ::ffn(x); }                  \
  EMBER_EW_HD double name(double x) { return ::dfn(x); }                \
  template <class V>                                                    \
  EMBER_EW_HD ::cuda::std::complex<V> name(::cuda::std::complex<V> z) { \
    return ::cuda::std::name(z);                                        \
  }
EMBER_EW_MATH1(exp, expf, exp)
EMBER_EW_MATH1(log, logf, log)
EMBER_EW_MATH1(log10, log10f, log10)
EMBER_EW_MATH1(sqrt, sqrtf, sqrt)
EMBER_EW_MATH1(sin, sinf, sin)
EMBER_EW_MATH1(cos, cosf, cos)
EMBER_EW_MATH1(tan, tanf, tan)
EMBER_EW_MATH1(asin, asinf, asin)
EMBER_EW_MATH1(acos, acosf, acos)
EMBER_EW_MATH1(atan, atanf, atan)
EMBER_EW_MATH1(sinh, sinhf, sinh)
EMBER_EW_MATH1(cosh, coshf, cosh)
EMBER_EW_MATH1(tanh, tanhf, tanh)
EMBER_EW_MATH1(asinh, asinhf, asinh)
EMBER_EW_MATH1(acosh, acoshf, acosh)
EMBER_EW_MATH1(atanh, atanhf, atanh)
#undef EMBER_EW_MATH1

#define EMBER_EW_MATH1R(name, ffn, dfn)                \
  EMBER_EW_HD float name(float x) { return ::ffn(x); } \
  EMBER_EW_HD double name(double x) { return ::dfn(x); }
EMBER_EW_MATH1R(exp2, exp2f, exp2)
EMBER_EW_MATH1R(expm1, expm1f, expm1)
EMBER_EW_MATH1R(log2, log2f, log2)
EMBER_EW_MATH1R(log1p, log1pf, log1p)
EMBER_EW_MATH1R(erf, erff, erf)
EMBER_EW_MATH1R(erfc, erfcf, erfc)
EMBER_EW_MATH1R(floor, floorf, floor)
EMBER_EW_MATH1R(ceil, ceilf, ceil)
EMBER_EW_MATH1R(trunc, truncf, trunc)
EMBER_EW_MATH1R(rint, rintf, rint)
EMBER_EW_MATH1R(fabs, fabsf, fabs)
EMBER_EW_MATH1R(lgamma, lgammaf, lgamma)
#undef EMBER_EW_MATH1R

#define EMBER_EW_MATH2R(name, ffn, dfn)                            \
  EMBER_EW_HD float name(float x, float y) { return ::ffn(x, y); } \
  EMBER_EW_HD double name(double x, double y) { return ::dfn(x, y); }
EMBER_EW_MATH2R(fmod, fmodf, fmod)
EMBER_EW_MATH2R(atan2, atan2f, atan2)
EMBER_EW_MATH2R(hypot, hypotf, hypot)
EMBER_EW_MATH2R(copysign, copysignf, copysign)
EMBER_EW_MATH2R(nextafter, nextafterf, nextafter)
EMBER_EW_MATH2R(fmin, fminf, fmin)
EMBER_EW_MATH2R(fmax, fmaxf, fmax)
#undef EMBER_EW_MATH2R

EMBER_EW_HD float pow(float x, float y) { return ::powf(x, y); }
EMBER_EW_HD double pow(double x, double y) { return ::pow(x, y); }
template <class V>
EMBER_EW_HD ::cuda::std::complex<V> pow(::cuda::std::complex<V> x, ::cuda::std::complex<V> y) {
  return ::cuda::std::pow(x, y);
}

/// |x| (the real modulus for complex numbers).
EMBER_EW_HD float abs(float x) { return ::fabsf(x); }
EMBER_EW_HD double abs(double x) { return ::fabs(x); }
template <class V>
EMBER_EW_HD V abs(::cuda::std::complex<V> z) {
  return ::cuda::std::abs(z);
}

template <class C>
EMBER_EW_HD bool isnan_(C x) {
  return x != x;
}
template <class C>
EMBER_EW_HD bool isinf_(C x) {
  return x == infinity<C>() || x == -infinity<C>();
}
template <class C>
EMBER_EW_HD bool isfinite_(C x) {
  return !isnan_(x) && !isinf_(x);
}
template <class C>
EMBER_EW_HD bool signbit_(C x) {
  if constexpr (std::is_same_v<C, float>)
    return (bit_cast<uint32_t>(x) >> 31) != 0;
  else
    return (bit_cast<uint64_t>(x) >> 63) != 0;
}

// Device-only CUDA functions, with a host form for host callers.
EMBER_EW_HD double erfinv_host(double y) {
  // Bisection on erf: only for host callers (tests), the device uses CUDA's erfinv.
  if (!(y >= -1 && y <= 1)) return quiet_nan<double>();
  if (y == 1) return infinity<double>();
  if (y == -1) return -infinity<double>();
  double lo = -6, hi = 6;
  for (int i = 0; i < 200; ++i) {
    double mid = 0.5 * (lo + hi);
    (::erf(mid) < y ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}
EMBER_EW_HD float erfinv(float x) {
#if defined(__CUDA_ARCH__)
  return ::erfinvf(x);
#else
  return float(erfinv_host(x));
#endif
}
EMBER_EW_HD double erfinv(double x) {
#if defined(__CUDA_ARCH__)
  return ::erfinv(x);
#else
  return erfinv_host(x);
#endif
}
EMBER_EW_HD float erfcx(float x) {
#if defined(__CUDA_ARCH__)
  return ::erfcxf(x);
#else
  return float(::exp(double(x) * x) * ::erfc(double(x)));
#endif
}
EMBER_EW_HD double erfcx(double x) {
#if defined(__CUDA_ARCH__)
  return ::erfcx(x);
#else
  return ::exp(x * x) * ::erfc(x);
#endif
}
EMBER_EW_HD float ndtri(float x) {
#if defined(__CUDA_ARCH__)
  return ::normcdfinvf(x);
#else
  return float(-1.4142135623730950488 * erfinv_host(1.0 - 2.0 * x));
#endif
}
EMBER_EW_HD double ndtri(double x) {
#if defined(__CUDA_ARCH__)
  return ::normcdfinv(x);
#else
  return -1.4142135623730950488 * erfinv_host(1.0 - 2.0 * x);
#endif
}
EMBER_EW_HD double bessel_i_host(int order, double x) {
  // The power series sum (x/2)^(2k+n) / (k! (k+n)!): host callers only.
  double ax = ::fabs(x), t = order ? 0.5 * ax : 1.0, s = t;
  for (int k = 1; k < 500 && t > s * 1e-17; ++k) {
    t *= 0.25 * ax * ax / (double(k) * double(k + order));
    s += t;
  }
  return order && x < 0 ? -s : s;
}
EMBER_EW_HD float bessel_i0(float x) {
#if defined(__CUDA_ARCH__)
  return ::cyl_bessel_i0f(x);
#else
  return float(bessel_i_host(0, x));
#endif
}
EMBER_EW_HD double bessel_i0(double x) {
#if defined(__CUDA_ARCH__)
  return ::cyl_bessel_i0(x);
#else
  return bessel_i_host(0, x);
#endif
}
EMBER_EW_HD float bessel_i1(float x) {
#if defined(__CUDA_ARCH__)
  return ::cyl_bessel_i1f(x);
#else
  return float(bessel_i_host(1, x));
#endif
}
EMBER_EW_HD double bessel_i1(double x) {
#if defined(__CUDA_ARCH__)
  return ::cyl_bessel_i1(x);
#else
  return bessel_i_host(1, x);
#endif
}

// ---- complex arithmetic as PyTorch 1.13's CPU (textbook formulas, no Annex G recovery) ----
template <class V>
EMBER_EW_HD ::cuda::std::complex<V> cmul(::cuda::std::complex<V> x, ::cuda::std::complex<V> y) {
  V a = x.real(), b = x.imag(), c = y.real(), d = y.imag();
  return ::cuda::std::complex<V>(a * c - b * d, a * d + b * c);
}
template <class V>
EMBER_EW_HD ::cuda::std::complex<V> cdiv(::cuda::std::complex<V> x, ::cuda::std::complex<V> y) {
  V a = x.real(), b = x.imag(), c = y.real(), d = y.imag();
  V den = c * c + d * d;
  return ::cuda::std::complex<V>((a * c + b * d) / den, (b * c - a * d) / den);
}

// Integer arithmetic that wraps (two's complement): Note [Shared scalar rules].
using scalar::wadd;
using scalar::wide_unsigned;
using scalar::wsub;
template <class T>
EMBER_EW_HD T mul_any(T a, T b) {
  if constexpr (is_cplx<T>)
    return cmul(a, b);
  else
    return scalar::wmul(a, b);
}
template <class T>
EMBER_EW_HD T div_any(T a, T b) {
  if constexpr (is_cplx<T>)
    return cdiv(a, b);
  else
    return a / b;
}

/// 1 / z with PyTorch's convention that 1 / 0 is NaN.
template <class Z>
EMBER_EW_HD Z reciprocal(Z z) {
  using R = typename Z::value_type;
  if (z.real() == R(0) && z.imag() == R(0)) return Z(quiet_nan<R>(), quiet_nan<R>());
  return Z(R(1), R(0)) / z;
}

/// A value rounded to the 16-bit float S (__half or __nv_bfloat16) and back to float.
template <class S>
EMBER_EW_HD float round_to(float v) {
  return convert<float>(convert<S>(v));
}

}  // namespace ember::cuda::ew
