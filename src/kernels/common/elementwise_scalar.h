#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Note [Shared scalar rules]
// The scalar rules of the binary elementwise ops, written once for the CPU loops (kernels/cpu/
// elementwise/*_kernels.cpp) and the CUDA functors (kernels/cuda/elementwise_binary.cuh): the
// wrapping integer arithmetic, integer powers, the integer and floating division family,
// shifts, NaN-propagating minimum/maximum and clamp.
//
// Linkage: the CPU *_kernels.cpp files are compiled once per ISA (Note [Kernel families]); an
// inline function with one external name in all copies would let the linker keep the AVX-512
// copy for every caller. So these headers have no namespace of their own: they open `scalar`
// inside the namespace of the includer's build, chosen by the preprocessor (scalar_ns.h):
// ember::cpu::<capability>::scalar in an ISA copy, ember::cuda::scalar under nvcc,
// ember::cpu::scalar in the CPU files compiled once. Each copy gets its own names, and code in
// those namespaces calls them as scalar::name.
//
// Math: the floating rules call fmod/floor/copysign through the small overload set below,
// which is std:: on the host (the CPU expressions, bit for bit) and CUDA's math library in
// device code. Integer division by zero is the caller's: the CPU raises and the device cannot,
// so the int_* functions assume b != 0.

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/common/scalar_ns.h"

EMBER_SCALAR_NS_BEGIN

// ---- math dispatch: std:: on the host, CUDA's library in device code ----
#if defined(__CUDACC__)
#define EMBER_SCALAR_MATH2(name, ffn, dfn)                             \
  EMBER_SCALAR_HD float name(float x, float y) { return ::ffn(x, y); } \
  EMBER_SCALAR_HD double name(double x, double y) { return ::dfn(x, y); }
#define EMBER_SCALAR_MATH1(name, ffn, dfn)                 \
  EMBER_SCALAR_HD float name(float x) { return ::ffn(x); } \
  EMBER_SCALAR_HD double name(double x) { return ::dfn(x); }
EMBER_SCALAR_MATH2(fmod, fmodf, fmod)
EMBER_SCALAR_MATH2(copysign, copysignf, copysign)
EMBER_SCALAR_MATH1(floor, floorf, floor)
#undef EMBER_SCALAR_MATH1
#undef EMBER_SCALAR_MATH2
#else
using std::copysign;
using std::floor;
using std::fmod;
#endif

template <class T>
inline constexpr bool is_sint = std::is_integral_v<T>&& std::is_signed_v<T>;

// ---- wrapping integer arithmetic ----
// Two's complement instead of signed-overflow UB; the auto-vectorizer emits the same
// instructions. Small types widen to 32 bits unsigned so that e.g. uint16 * uint16 cannot
// overflow `int` after integer promotion.
template <class T>
using wide_unsigned = std::conditional_t<(sizeof(T) < 8), uint32_t, uint64_t>;
template <class T>
EMBER_SCALAR_HD T wadd(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return T(wide_unsigned<T>(a) + wide_unsigned<T>(b));
  else
    return a + b;
}
template <class T>
EMBER_SCALAR_HD T wsub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return T(wide_unsigned<T>(a) - wide_unsigned<T>(b));
  else
    return a - b;
}
template <class T>
EMBER_SCALAR_HD T wmul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return T(wide_unsigned<T>(a) * wide_unsigned<T>(b));
  else
    return a * b;
}

// ---- integer division family (b != 0) ----

/// trunc(a / b); INT_MIN / -1 wraps instead of trapping.
template <class T>
EMBER_SCALAR_HD T int_div_trunc(T a, T b) {
  if constexpr (is_sint<T>) {
    if (b == T(-1)) return wsub(T(0), a);  // INT_MIN / -1 traps in hardware
  }
  return T(a / b);
}
/// Python's floor division.
template <class T>
EMBER_SCALAR_HD T int_div_floor(T a, T b) {
  if constexpr (is_sint<T>) {
    if (b == T(-1)) return wsub(T(0), a);
    if ((a < 0) != (b < 0)) {
      T q = T(a / b);
      return T(a % b) != 0 ? T(q - 1) : q;
    }
  }
  return T(a / b);
}
/// Python's %: the result has the sign of the divisor.
template <class T>
EMBER_SCALAR_HD T int_remainder(T a, T b) {
  if constexpr (is_sint<T>) {
    if (b == T(-1)) return 0;
  }
  T r = T(a % b);
  if constexpr (is_sint<T>) {
    if (r != 0 && (r < 0) != (b < 0)) r = T(r + b);
  }
  return r;
}
/// C's %: the result has the sign of the dividend.
template <class T>
EMBER_SCALAR_HD T int_fmod(T a, T b) {
  if constexpr (is_sint<T>) {
    if (b == T(-1)) return 0;
  }
  return T(a % b);
}

// ---- floating division family ----

/// Floor division, PyTorch's form: derived from fmod so that the result is exact and
/// consistent with remainder; IEEE a / b for b == 0.
template <class T>
EMBER_SCALAR_HD T float_div_floor(T a, T b) {
  if (b == 0) return a / b;
  T mod = scalar::fmod(a, b);
  T div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= T(1);
  if (div == 0) return scalar::copysign(T(0), a / b);
  T fd = scalar::floor(div);
  if (div - fd > T(0.5)) fd += T(1);
  return fd;
}
/// Python's % on floats (fmod-based, as PyTorch).
template <class T>
EMBER_SCALAR_HD T float_remainder(T a, T b) {
  T mod = scalar::fmod(a, b);
  if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
  return mod;
}

// ---- powers ----

/// Exact integer power by squaring, wrapping on overflow. A negative exponent gives
/// 1 / a**-b truncated: 1 for a == 1, ±1 for a == -1, else 0 (PyTorch's powi for tensor
/// exponents).
template <class T>
EMBER_SCALAR_HD T powi(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b < 0) {
      if (a == 1) return 1;
      if (a == -1) return (b & 1) ? T(-1) : T(1);
      return 0;
    }
  }
  using W = wide_unsigned<T>;
  W r = 1, x = W(a);
  auto e = std::make_unsigned_t<T>(b);
  while (e) {
    if (e & 1) r *= x;
    e >>= 1;
    x *= x;
  }
  return T(r);
}

// ---- shifts ----
// Shifts by a negative amount or by at least the bit width are defined as PyTorch 2 does
// (1.13 left them to the hardware): a left shift gives 0, a right shift gives the sign fill.
template <class T>
EMBER_SCALAR_HD T left_shift(T a, T b) {
  using U = std::make_unsigned_t<T>;
  using W = wide_unsigned<T>;
  constexpr T kBits = T(sizeof(T) * 8);
  if (std::make_signed_t<T>(b) < 0 || b >= kBits) return 0;
  return T(W(U(a)) << b);
}
template <class T>
EMBER_SCALAR_HD T right_shift(T a, T b) {
  constexpr T kMax = T(sizeof(T) * 8 - (std::is_signed_v<T> ? 1 : 0));
  if (std::make_signed_t<T>(b) < 0 || b >= kMax) {
    if constexpr (std::is_signed_v<T>)
      return T(a >> kMax);
    else
      return 0;
  }
  return T(a >> b);
}

// ---- minimum / maximum (NaN-propagating), clamp ----
template <class T>
EMBER_SCALAR_HD T minimum(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else if constexpr (std::is_integral_v<T>) {
    return b < a ? b : a;
  } else {
    if (a != a || b != b) return std::numeric_limits<T>::quiet_NaN();
    return b < a ? b : a;
  }
}
template <class T>
EMBER_SCALAR_HD T maximum(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else if constexpr (std::is_integral_v<T>) {
    return a < b ? b : a;
  } else {
    if (a != a || b != b) return std::numeric_limits<T>::quiet_NaN();
    return a < b ? b : a;
  }
}
/// min(max(a, lo), hi) as std::min/std::max do: a NaN `a` stays NaN, a NaN bound is ignored
/// and lo > hi gives hi.
template <class T>
EMBER_SCALAR_HD T clamp(T a, T lo, T hi) {
  T r = a < lo ? lo : a;
  return hi < r ? hi : r;
}
/// Tensor bounds: a NaN bound makes the element NaN (PyTorch's clamp_stub).
template <class T>
EMBER_SCALAR_HD T clamp_nan_bounds(T a, T lo, T hi) {
  if constexpr (!std::is_integral_v<T>) {
    if (lo != lo || hi != hi) return std::numeric_limits<T>::quiet_NaN();
  }
  return clamp(a, lo, hi);
}

EMBER_SCALAR_NS_END
