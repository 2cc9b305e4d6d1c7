#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Note [Per-ISA vectors]
// Kernel files are compiled once per capability; this header picks the vector width of the
// translation unit (16, 32 or 64 bytes) and exposes float/double vectors as GCC vector
// extensions, which support + - * / and comparisons directly. Transcendentals map to SLEEF's
// functions for the same ISA (EMBER_SLEEF_F/D), which are accurate to 1.0 ULP (u10) or better.
// Only kernel files include this header.

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <sleef.h>
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#ifndef EMBER_CPU_CAP
#error "vec.h is for kernel files compiled per CPU capability"
#endif

#if defined(__AVX512F__)
#define EMBER_VEC_BYTES 64
#define EMBER_SLEEF_F(name, ulp) Sleef_##name##f16_##ulp##avx512f
#define EMBER_SLEEF_D(name, ulp) Sleef_##name##d8_##ulp##avx512f
#elif defined(__AVX2__)
#define EMBER_VEC_BYTES 32
#define EMBER_SLEEF_F(name, ulp) Sleef_##name##f8_##ulp##avx2
#define EMBER_SLEEF_D(name, ulp) Sleef_##name##d4_##ulp##avx2
#else
#define EMBER_VEC_BYTES 16
#define EMBER_SLEEF_F(name, ulp) Sleef_##name##f4_##ulp##sse2
#define EMBER_SLEEF_D(name, ulp) Sleef_##name##d2_##ulp##sse2
#endif

namespace ember::cpu::EMBER_CPU_CAP {

typedef float vfloat __attribute__((vector_size(EMBER_VEC_BYTES)));
typedef double vdouble __attribute__((vector_size(EMBER_VEC_BYTES)));
typedef int32_t vint32 __attribute__((vector_size(EMBER_VEC_BYTES)));
typedef int64_t vint64 __attribute__((vector_size(EMBER_VEC_BYTES)));

/// The vector of `T` (float or double) for this ISA.
template <class T>
using Vec = std::conditional_t<std::is_same_v<T, float>, vfloat, vdouble>;
template <class T>
constexpr int kLanes = EMBER_VEC_BYTES / int(sizeof(T));

template <class V>
inline V vload(const void* p) {
  V v;
  std::memcpy(&v, p, sizeof(V));
  return v;
}
template <class V>
inline void vstore(void* p, V v) {
  std::memcpy(p, &v, sizeof(V));
}
template <class V, class T>
inline V vbroadcast(T x) {
  return V{} + x;
}
/// A vector of the ISA's width with every lane equal to `v`.
template <class C>
inline Vec<C> splat(C v) {
  return vbroadcast<Vec<C>>(v);
}
/// Lane-wise select: mask lanes are all-ones (true) or zero, as produced by vector compares.
template <class V, class M>
inline V vselect(M mask, V a, V b) {
  return mask ? a : b;
}

// SLEEF wrappers: `vexp(x)` etc. for vfloat and vdouble of this ISA.
#define EMBER_VEC_SLEEF1(fn, name, ulp)                                      \
  inline vfloat fn(vfloat x) { return (vfloat)EMBER_SLEEF_F(name, ulp)(x); } \
  inline vdouble fn(vdouble x) { return (vdouble)EMBER_SLEEF_D(name, ulp)(x); }
#define EMBER_VEC_SLEEF2(fn, name, ulp)                                                   \
  inline vfloat fn(vfloat x, vfloat y) { return (vfloat)EMBER_SLEEF_F(name, ulp)(x, y); } \
  inline vdouble fn(vdouble x, vdouble y) { return (vdouble)EMBER_SLEEF_D(name, ulp)(x, y); }

EMBER_VEC_SLEEF1(vexp, exp, u10)
EMBER_VEC_SLEEF1(vexp2, exp2, u10)
EMBER_VEC_SLEEF1(vexpm1, expm1, u10)
EMBER_VEC_SLEEF1(vlog, log, u10)
EMBER_VEC_SLEEF1(vlog2, log2, u10)
EMBER_VEC_SLEEF1(vlog10, log10, u10)
EMBER_VEC_SLEEF1(vlog1p, log1p, u10)
EMBER_VEC_SLEEF1(vsin, sin, u10)
EMBER_VEC_SLEEF1(vcos, cos, u10)
EMBER_VEC_SLEEF1(vtan, tan, u10)
EMBER_VEC_SLEEF1(vasin, asin, u10)
EMBER_VEC_SLEEF1(vacos, acos, u10)
EMBER_VEC_SLEEF1(vatan, atan, u10)
EMBER_VEC_SLEEF1(vsinh, sinh, u10)
EMBER_VEC_SLEEF1(vcosh, cosh, u10)
EMBER_VEC_SLEEF1(vtanh, tanh, u10)
EMBER_VEC_SLEEF1(vasinh, asinh, u10)
EMBER_VEC_SLEEF1(vacosh, acosh, u10)
EMBER_VEC_SLEEF1(vatanh, atanh, u10)
EMBER_VEC_SLEEF1(verf, erf, u10)
EMBER_VEC_SLEEF1(verfc, erfc, u15)
EMBER_VEC_SLEEF2(vatan2, atan2, u10)
EMBER_VEC_SLEEF2(vpow, pow, u10)
EMBER_VEC_SLEEF2(vhypot, hypot, u05)
EMBER_VEC_SLEEF2(vfmod, fmod, )
EMBER_VEC_SLEEF1(vfloor, floor, )
EMBER_VEC_SLEEF1(vceil, ceil, )
EMBER_VEC_SLEEF1(vtrunc, trunc, )
EMBER_VEC_SLEEF1(vrint, rint, )
#undef EMBER_VEC_SLEEF1
#undef EMBER_VEC_SLEEF2

}  // namespace ember::cpu::EMBER_CPU_CAP
