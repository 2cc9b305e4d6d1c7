// Comparisons, logical and bitwise ops, shifts, minimum/maximum/fmin/fmax, clamp and isclose.
// Semantics follow PyTorch 1.13's CPU kernels (BinaryOpsKernel.cpp, TensorCompareKernel.cpp,
// TensorCompare.cpp); see the comments per op.
#include <cmath>
#include <limits>

#include "kernels/common/elementwise_scalar.h"
#include "kernels/cpu/elementwise/loops.h"
#include "kernels/cpu/elementwise/math_functors.h"

namespace ember::cpu::EMBER_CPU_CAP {
namespace {

template <class T>
inline constexpr bool is_cplx = math::kIsComplex<T>;

template <class C>
inline bool truthy(C v) {
  if constexpr (is_cplx<C>)
    return v.real() != 0 || v.imag() != 0;
  else
    return v != C(0);
}

// ---- comparisons (bool output) ----
#define EMBER_CMP_FUNCTOR(Name, expr)                \
  template <class C>                                 \
  struct Name {                                      \
    explicit Name(const OpParams&) {}                \
    bool operator()(C a, C b) const { return expr; } \
  };
EMBER_CMP_FUNCTOR(Eq, a == b)
EMBER_CMP_FUNCTOR(Ne, a != b)
EMBER_CMP_FUNCTOR(Lt, a < b)
EMBER_CMP_FUNCTOR(Le, a <= b)
EMBER_CMP_FUNCTOR(Gt, a > b)
EMBER_CMP_FUNCTOR(Ge, a >= b)
EMBER_CMP_FUNCTOR(LogicalAnd, truthy(a) && truthy(b))
EMBER_CMP_FUNCTOR(LogicalOr, truthy(a) || truthy(b))
EMBER_CMP_FUNCTOR(LogicalXor, truthy(a) != truthy(b))
#undef EMBER_CMP_FUNCTOR

// ---- bitwise ----
template <class C>
struct BitAnd {
  explicit BitAnd(const OpParams&) {}
  C operator()(C a, C b) const { return C(a & b); }
};
template <class C>
struct BitOr {
  explicit BitOr(const OpParams&) {}
  C operator()(C a, C b) const { return C(a | b); }
};
template <class C>
struct BitXor {
  explicit BitXor(const OpParams&) {}
  C operator()(C a, C b) const { return C(a ^ b); }
};

// Shifts by a negative amount or by at least the bit width are defined as PyTorch 2 does
// (1.13 left them to the hardware): a left shift gives 0, a right shift gives the sign fill.
template <class C>
struct LeftShift {
  explicit LeftShift(const OpParams&) {}
  C operator()(C a, C b) const { return scalar::left_shift(a, b); }
};
template <class C>
struct RightShift {
  explicit RightShift(const OpParams&) {}
  C operator()(C a, C b) const { return scalar::right_shift(a, b); }
};

// ---- minimum / maximum (NaN-propagating) and fmin / fmax (NaN-ignoring) ----
template <class C>
inline constexpr C kNaN = std::numeric_limits<C>::quiet_NaN();

template <class C>
struct Minimum {
  explicit Minimum(const OpParams&) {}
  C operator()(C a, C b) const { return scalar::minimum(a, b); }
  Vec<C> vec(Vec<C> a, Vec<C> b) const {
    Vec<C> r = b < a ? b : a;
    return ((a != a) | (b != b)) ? kNaN<C> + Vec<C>{} : r;
  }
};
template <class C>
struct Maximum {
  explicit Maximum(const OpParams&) {}
  C operator()(C a, C b) const { return scalar::maximum(a, b); }
  Vec<C> vec(Vec<C> a, Vec<C> b) const {
    Vec<C> r = a < b ? b : a;
    return ((a != a) | (b != b)) ? kNaN<C> + Vec<C>{} : r;
  }
};
// The vector forms match glibc's fmin/fmax, including which zero is returned.
template <class C>
struct Fmin {
  explicit Fmin(const OpParams&) {}
  C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>)
      return a && b;
    else if constexpr (std::is_integral_v<C>)
      return b < a ? b : a;
    else
      return std::fmin(a, b);
  }
  Vec<C> vec(Vec<C> a, Vec<C> b) const { return (b != b) ? a : (a < b ? a : b); }
};
template <class C>
struct Fmax {
  explicit Fmax(const OpParams&) {}
  C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>)
      return a || b;
    else if constexpr (std::is_integral_v<C>)
      return a < b ? b : a;
    else
      return std::fmax(a, b);
  }
  Vec<C> vec(Vec<C> a, Vec<C> b) const { return (b != b) ? a : (a > b ? a : b); }
};

// ---- clamp ----

// Scalar bounds: params s[0] = min, s[1] = max, s[2] = bit 0: min given, bit 1: max given.
// min(max(x, lo), hi) as std::min/std::max do, so a NaN x stays NaN, a NaN bound alone is
// ignored and lo > hi gives hi. (Both bounds given with one NaN is handled by the op: the
// result is all NaN, as PyTorch.)
template <class C>
struct Clamp {
  C lo, hi;
  explicit Clamp(const OpParams& p) {
    int64_t has = p.s[2].toLong();
    if constexpr (std::numeric_limits<C>::has_infinity) {
      lo = (has & 1) ? p.s[0].to<C>() : -std::numeric_limits<C>::infinity();
      hi = (has & 2) ? p.s[1].to<C>() : std::numeric_limits<C>::infinity();
    } else {
      lo = (has & 1) ? p.s[0].to<C>() : std::numeric_limits<C>::lowest();
      hi = (has & 2) ? p.s[1].to<C>() : std::numeric_limits<C>::max();
    }
  }
  C operator()(C a) const { return scalar::clamp(a, lo, hi); }
  Vec<C> vec(Vec<C> a) const {
    Vec<C> r = a < lo ? lo + Vec<C>{} : a;
    return hi < r ? hi + Vec<C>{} : r;
  }
};

// Tensor bounds: a NaN bound makes the element NaN (PyTorch's clamp_stub).
template <class C>
struct ClampTensor {
  explicit ClampTensor(const OpParams&) {}
  C operator()(C a, C lo, C hi) const { return scalar::clamp_nan_bounds(a, lo, hi); }
  Vec<C> vec(Vec<C> a, Vec<C> lo, Vec<C> hi) const {
    Vec<C> r = a < lo ? lo : a;
    r = hi < r ? hi : r;
    return ((lo != lo) | (hi != hi)) ? kNaN<C> + Vec<C>{} : r;
  }
};

// ---- isclose ----

// torch.isclose: a == b, or (equal_nan and both NaN), or |a - b| finite and
// <= atol + |rtol * b|. Params: s[0] = rtol, s[1] = atol, s[2] = equal_nan, s[3] = whether the
// default dtype is float64 (integer and bool inputs are compared in the default float dtype,
// as PyTorch casts them before subtracting). PyTorch composes isclose from tensor ops, so for
// half/bfloat16 (`S`) each intermediate is rounded to that type, as here.
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
  bool within(V a, V b) const {
    if constexpr (!std::is_same_v<S, C>) {
      auto rnd = [](float v) { return float(S(v)); };
      float actual = std::abs(rnd(a - b));
      float allowed = rnd(float(atol) + std::abs(rnd(float(rtol) * b)));
      return std::isfinite(actual) && actual <= allowed;
    } else {
      R actual = R(std::abs(a - b));
      R allowed = R(atol) + R(std::abs(R(rtol) * b));
      return std::isfinite(actual) && actual <= allowed;
    }
  }
  bool operator()(C a, C b) const {
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
      return within<typename real_of<C>::type>(a, b);
    }
  }
};

template <class C>
using IsClose = IsCloseT<C>;
template <class C>
using IsCloseHalf = IsCloseT<C, Half>;
template <class C>
using IsCloseBF16 = IsCloseT<C, BFloat16>;

using RealTypes =
    TypeList<bool, uint8_t, int8_t, int16_t, int32_t, int64_t, Half, BFloat16, float, double>;
using ClampTypes = TypeList<uint8_t, int8_t, int16_t, int32_t, int64_t, BFloat16, float, double>;

}  // namespace

void register_compare_kernels(KernelTable& t) {
  reg<Eq, 2, out_bool>(t, OpId::eq, RealTypes{}, ComplexTypes{});
  reg<Ne, 2, out_bool>(t, OpId::ne, RealTypes{}, ComplexTypes{});
  reg<Lt, 2, out_bool>(t, OpId::lt, RealTypes{});
  reg<Le, 2, out_bool>(t, OpId::le, RealTypes{});
  reg<Gt, 2, out_bool>(t, OpId::gt, RealTypes{});
  reg<Ge, 2, out_bool>(t, OpId::ge, RealTypes{});
  reg<LogicalAnd, 2, out_bool>(t, OpId::logical_and, RealTypes{}, ComplexTypes{});
  reg<LogicalOr, 2, out_bool>(t, OpId::logical_or, RealTypes{}, ComplexTypes{});
  reg<LogicalXor, 2, out_bool>(t, OpId::logical_xor, RealTypes{}, ComplexTypes{});
  reg<IsClose, 2, out_bool>(t, OpId::isclose, IntTypes{}, BoolType{}, TypeList<float, double>{},
                            ComplexTypes{});
  reg<IsCloseHalf, 2, out_bool>(t, OpId::isclose, TypeList<Half>{});
  reg<IsCloseBF16, 2, out_bool>(t, OpId::isclose, TypeList<BFloat16>{});

  reg<BitAnd, 2>(t, OpId::bitwise_and, BoolType{}, IntTypes{});
  reg<BitOr, 2>(t, OpId::bitwise_or, BoolType{}, IntTypes{});
  reg<BitXor, 2>(t, OpId::bitwise_xor, BoolType{}, IntTypes{});
  reg<LeftShift, 2>(t, OpId::bitwise_left_shift, IntTypes{});
  reg<RightShift, 2>(t, OpId::bitwise_right_shift, IntTypes{});

  reg<Minimum, 2>(t, OpId::minimum, RealTypes{});
  reg<Maximum, 2>(t, OpId::maximum, RealTypes{});
  reg<Fmin, 2>(t, OpId::fmin, RealTypes{});
  reg<Fmax, 2>(t, OpId::fmax, RealTypes{});
  reg<Clamp, 1>(t, OpId::clamp, ClampTypes{});
  reg<ClampTensor, 3>(t, OpId::clamp_tensor, ClampTypes{});
}

}  // namespace ember::cpu::EMBER_CPU_CAP
