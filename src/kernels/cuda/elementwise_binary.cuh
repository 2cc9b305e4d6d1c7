#pragma once
// Binary and ternary arithmetic, comparisons, logical/bitwise ops, min/max, clamp and isclose
// as __host__ __device__ functors over the compute type C, with the semantics of the CPU
// kernels (src/kernels/cpu/elementwise/arith_kernels.cpp, compare_kernels.cpp).
//
// Integer division by zero: the CPU raises ZeroDivisionError; a kernel cannot raise without
// synchronising, so the device gives 0 (div, floor division) or the dividend (remainder, fmod)
// there, like other GPU frameworks' unspecified results.

#include "kernels/cuda/elementwise_math.cuh"

namespace ember::cuda::ew {

#define EMBER_EW_CTOR(Name) \
  explicit Name(const OpParams&) {}

// ---- add / sub / mul / division ----
template <class C>
struct Add {
  C alpha;
  explicit Add(const OpParams& p) : alpha(param<C>(p.s[0])) {}
  EMBER_EW_HD C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>)
      return a || (alpha && b);
    else
      return wadd(a, mul_any(alpha, b));
  }
};
template <class C>
struct Sub {
  C alpha;
  explicit Sub(const OpParams& p) : alpha(param<C>(p.s[0])) {}
  EMBER_EW_HD C operator()(C a, C b) const { return wsub(a, mul_any(alpha, b)); }
};
template <class C>
struct Mul {
  EMBER_EW_CTOR(Mul)
  EMBER_EW_HD C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>)
      return a && b;
    else
      return mul_any(a, b);
  }
};
template <class C>
struct TrueDivide {
  EMBER_EW_CTOR(TrueDivide)
  EMBER_EW_HD C operator()(C a, C b) const { return div_any(a, b); }
};

// trunc(a / b); for half/bfloat16 (S) the quotient is rounded to S first, as PyTorch.
template <class C, class S = C>
struct DivTruncT {
  explicit DivTruncT(const OpParams&) {}
  EMBER_EW_HD C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return C(0);
      return scalar::int_div_trunc(a, b);
    } else if constexpr (std::is_same_v<S, C>) {
      return ew::trunc(C(a / b));
    } else {
      return ew::trunc(round_to<S>(a / b));
    }
  }
};
template <class C>
using DivTrunc = DivTruncT<C>;
template <class C>
using DivTruncHalf = DivTruncT<C, __half>;
template <class C>
using DivTruncBF16 = DivTruncT<C, __nv_bfloat16>;

// Python floor division; the float form derives from fmod as PyTorch's.
template <class C>
struct DivFloor {
  EMBER_EW_CTOR(DivFloor)
  EMBER_EW_HD C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return C(0);
      return scalar::int_div_floor(a, b);
    } else {
      return scalar::float_div_floor(a, b);
    }
  }
};

template <class C>
struct Remainder {
  EMBER_EW_CTOR(Remainder)
  EMBER_EW_HD C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return a;
      return scalar::int_remainder(a, b);
    } else {
      return scalar::float_remainder(a, b);
    }
  }
};

template <class C>
struct Fmod {
  EMBER_EW_CTOR(Fmod)
  EMBER_EW_HD C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return a;
      return scalar::int_fmod(a, b);
    } else {
      return ew::fmod(a, b);
    }
  }
};

template <class C>
struct Pow {
  EMBER_EW_CTOR(Pow)
  EMBER_EW_HD C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return scalar::powi(a, b);
    else
      return ew::pow(a, b);
  }
};

#define EMBER_EW_STD_BINARY(Name, fn)                                 \
  template <class C>                                                  \
  struct Name {                                                       \
    EMBER_EW_CTOR(Name)                                               \
    EMBER_EW_HD C operator()(C a, C b) const { return ew::fn(a, b); } \
  };
EMBER_EW_STD_BINARY(Atan2, atan2)
EMBER_EW_STD_BINARY(Hypot, hypot)
EMBER_EW_STD_BINARY(Copysign, copysign)
EMBER_EW_STD_BINARY(Nextafter, nextafter)
#undef EMBER_EW_STD_BINARY

// nextafter in bfloat16's own grid: the operands are floats holding exact bfloat16 values, so
// their bfloat16 bits are the float's upper half.
template <class C>
struct NextafterBF16 {
  EMBER_EW_CTOR(NextafterBF16)
  EMBER_EW_HD float operator()(float from, float to) const {
    if (from != from || to != to) return from + to;
    uint16_t f = uint16_t(bit_cast<uint32_t>(from) >> 16),
             t = uint16_t(bit_cast<uint32_t>(to) >> 16);
    if (f == t) return from;
    constexpr uint16_t kSign = 0x8000;
    uint16_t abs_f = f & ~kSign, abs_t = t & ~kSign;
    auto as_float = [](uint16_t bits) { return bit_cast<float>(uint32_t(bits) << 16); };
    if (abs_f == 0) {
      if (abs_t == 0) return to;
      return as_float(uint16_t((t & kSign) | 1));
    }
    if (abs_f > abs_t || ((f ^ t) & kSign))
      --f;
    else
      ++f;
    return as_float(f);
  }
};

template <class C>
struct Xlogy {
  EMBER_EW_CTOR(Xlogy)
  EMBER_EW_HD C operator()(C x, C y) const {
    if (isnan_(y)) return quiet_nan<C>();
    if (x == 0) return 0;
    return x * ew::log(y);
  }
};

// ---- ternary ----
template <class C>
EMBER_EW_HD C lerp(C s, C e, C w) {
  bool small;
  if constexpr (is_cplx<C>)
    small = ew::abs(w) < 0.5;
  else
    small = w < C(0.5);
  return small ? s + mul_any(w, C(e - s)) : e - mul_any(C(e - s), C(C(1) - w));
}
template <class C>
struct LerpScalar {
  C w;
  explicit LerpScalar(const OpParams& p) : w(param<C>(p.s[0])) {}
  EMBER_EW_HD C operator()(C s, C e) const { return lerp(s, e, w); }
};
template <class C>
struct LerpTensor {
  EMBER_EW_CTOR(LerpTensor)
  EMBER_EW_HD C operator()(C s, C e, C w) const { return lerp(s, e, w); }
};
template <class C>
struct Addcmul {
  C v;
  explicit Addcmul(const OpParams& p) : v(param<C>(p.s[0])) {}
  EMBER_EW_HD C operator()(C s, C a, C b) const { return wadd(s, mul_any(mul_any(v, a), b)); }
};
template <class C>
struct Addcdiv {
  C v;
  explicit Addcdiv(const OpParams& p) : v(param<C>(p.s[0])) {}
  EMBER_EW_HD C operator()(C s, C a, C b) const { return s + div_any(mul_any(v, a), b); }
};

// ---- comparisons and logical ops (bool result) ----
template <class C>
EMBER_EW_HD bool truthy(C v) {
  if constexpr (is_cplx<C>)
    return v.real() != 0 || v.imag() != 0;
  else
    return v != C(0);
}
#define EMBER_EW_CMP(Name, expr)                                 \
  template <class C>                                             \
  struct Name {                                                  \
    EMBER_EW_CTOR(Name)                                          \
    EMBER_EW_HD bool operator()(C a, C b) const { return expr; } \
  };
EMBER_EW_CMP(Eq, a == b)
EMBER_EW_CMP(Ne, a != b)
EMBER_EW_CMP(Lt, a < b)
EMBER_EW_CMP(Le, a <= b)
EMBER_EW_CMP(Gt, a > b)
EMBER_EW_CMP(Ge, a >= b)
EMBER_EW_CMP(LogicalAnd, truthy(a) && truthy(b))
EMBER_EW_CMP(LogicalOr, truthy(a) || truthy(b))
EMBER_EW_CMP(LogicalXor, truthy(a) != truthy(b))
#undef EMBER_EW_CMP

// ---- bitwise ----
template <class C>
struct BitAnd {
  EMBER_EW_CTOR(BitAnd)
  EMBER_EW_HD C operator()(C a, C b) const { return C(a & b); }
};
template <class C>
struct BitOr {
  EMBER_EW_CTOR(BitOr)
  EMBER_EW_HD C operator()(C a, C b) const { return C(a | b); }
};
template <class C>
struct BitXor {
  EMBER_EW_CTOR(BitXor)
  EMBER_EW_HD C operator()(C a, C b) const { return C(a ^ b); }
};
// Out-of-range shift amounts as PyTorch 2 (left: 0; right: the sign fill).
template <class C>
struct LeftShift {
  EMBER_EW_CTOR(LeftShift)
  EMBER_EW_HD C operator()(C a, C b) const { return scalar::left_shift(a, b); }
};
template <class C>
struct RightShift {
  EMBER_EW_CTOR(RightShift)
  EMBER_EW_HD C operator()(C a, C b) const { return scalar::right_shift(a, b); }
};

// ---- minimum / maximum (NaN-propagating), fmin / fmax (NaN-ignoring) ----
template <class C>
struct Minimum {
  EMBER_EW_CTOR(Minimum)
  EMBER_EW_HD C operator()(C a, C b) const { return scalar::minimum(a, b); }
};
template <class C>
struct Maximum {
  EMBER_EW_CTOR(Maximum)
  EMBER_EW_HD C operator()(C a, C b) const { return scalar::maximum(a, b); }
};
template <class C>
struct Fmin {
  EMBER_EW_CTOR(Fmin)
  EMBER_EW_HD C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>)
      return a && b;
    else if constexpr (std::is_integral_v<C>)
      return b < a ? b : a;
    else
      return ew::fmin(a, b);
  }
};
template <class C>
struct Fmax {
  EMBER_EW_CTOR(Fmax)
  EMBER_EW_HD C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>)
      return a || b;
    else if constexpr (std::is_integral_v<C>)
      return a < b ? b : a;
    else
      return ew::fmax(a, b);
  }
};

// ---- clamp ----
// Scalar bounds (s[0] = min, s[1] = max, s[2] bit 0: min given, bit 1: max given).
template <class C>
struct Clamp {
  C lo, hi;
  explicit Clamp(const OpParams& p) {
    int64_t has = p.s[2].toLong();
    if constexpr (std::numeric_limits<C>::has_infinity) {
      lo = (has & 1) ? param<C>(p.s[0]) : -std::numeric_limits<C>::infinity();
      hi = (has & 2) ? param<C>(p.s[1]) : std::numeric_limits<C>::infinity();
    } else {
      lo = (has & 1) ? param<C>(p.s[0]) : std::numeric_limits<C>::lowest();
      hi = (has & 2) ? param<C>(p.s[1]) : std::numeric_limits<C>::max();
    }
  }
  EMBER_EW_HD C operator()(C a) const { return scalar::clamp(a, lo, hi); }
};
// Tensor bounds: a NaN bound makes the element NaN.
template <class C>
struct ClampTensor {
  EMBER_EW_CTOR(ClampTensor)
  EMBER_EW_HD C operator()(C a, C lo, C hi) const { return scalar::clamp_nan_bounds(a, lo, hi); }
};

// ---- isclose (s[0] rtol, s[1] atol, s[2] equal_nan, s[3] default dtype is float64) ----
template <class C, class S = C>
struct IsCloseT {
  double rtol, atol;
  bool equal_nan, in_double;
  explicit IsCloseT(const OpParams& p)
      : rtol(p.s[0].toDouble()),
        atol(p.s[1].toDouble()),
        equal_nan(p.s[2].toBool()),
        in_double(p.s[3].toBool()) {}

  template <class R, class V>
  EMBER_EW_HD bool within(V a, V b) const {
    if constexpr (!std::is_same_v<S, C>) {
      float actual = ew::abs(round_to<S>(a - b));
      float allowed = round_to<S>(float(atol) + ew::abs(round_to<S>(float(rtol) * b)));
      return isfinite_(actual) && actual <= allowed;
    } else {
      R actual = R(ew::abs(a - b));
      R allowed = R(atol) + R(ew::abs(R(rtol) * b));
      return isfinite_(actual) && actual <= allowed;
    }
  }
  EMBER_EW_HD bool operator()(C a, C b) const {
    if (a == b) return true;
    if constexpr (is_cplx<C>) {
      auto isnan_c = [](C v) { return v.real() != v.real() || v.imag() != v.imag(); };
      if (equal_nan && isnan_c(a) && isnan_c(b)) return true;
    } else if constexpr (!std::is_integral_v<C>) {
      if (equal_nan && a != a && b != b) return true;
    }
    if (rtol == 0 && atol == 0) return false;
    if constexpr (std::is_integral_v<C>) {
      if (in_double) return within<double>(double(a), double(b));
      return within<float>(float(a), float(b));
    } else {
      return within<real_t<C>>(a, b);
    }
  }
};
template <class C>
using IsClose = IsCloseT<C>;
template <class C>
using IsCloseHalf = IsCloseT<C, __half>;
template <class C>
using IsCloseBF16 = IsCloseT<C, __nv_bfloat16>;

// ---- copies ----
template <class C>
struct Identity {
  EMBER_EW_CTOR(Identity)
  EMBER_EW_HD C operator()(C x) const { return x; }
};
template <class C>
struct ConjPhysical {
  EMBER_EW_CTOR(ConjPhysical)
  EMBER_EW_HD C operator()(C x) const {
    if constexpr (is_cplx<C>)
      return ::cuda::std::conj(x);
    else
      return x;
  }
};

}  // namespace ember::cuda::ew
