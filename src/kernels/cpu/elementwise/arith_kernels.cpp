// Binary and ternary arithmetic: add, sub, mul, the division family (true / trunc / floor,
// remainder, fmod), pow, atan2, hypot, copysign, nextafter, xlogy, lerp, addcmul, addcdiv.
// Semantics follow PyTorch 1.13's CPU kernels (BinaryOpsKernel.cpp, PowKernel.cpp,
// PointwiseOpsKernel.cpp, Lerp.h), including their special values; see the comments per op.
#include <cmath>
#include <cstring>
#include <limits>

#include "ember/error.h"
#include "kernels/common/elementwise_scalar.h"
#include "kernels/cpu/elementwise/loops.h"
#include "kernels/cpu/elementwise/math_functors.h"

namespace ember::cpu::EMBER_CPU_CAP {
namespace {

template <class T>
inline constexpr bool is_cplx = math::kIsComplex<T>;
// Wrapping integer arithmetic and the division rules: Note [Shared scalar rules].
using scalar::wadd;
using scalar::wmul;
using scalar::wsub;

// PyTorch raises RuntimeError("ZeroDivisionError") for integer division by zero. Kept out of
// line so the division loops stay small.
[[noreturn, gnu::cold, gnu::noinline]] void zero_division(const char* op) {
  throw Error(std::string("[") + op + "] ZeroDivisionError: integer division by zero");
}

// Sign-bit copy on vectors (vfloor/vtrunc come from vec.h).
template <class V>
inline V vcopysign(V mag, V sgn) {
  using I = std::conditional_t<std::is_same_v<V, vfloat>, vint32, vint64>;
  using E = std::conditional_t<std::is_same_v<V, vfloat>, int32_t, int64_t>;
  const I m = I{} + std::numeric_limits<E>::min();
  return (V)(((I)mag & ~m) | ((I)sgn & m));
}
template <class V>
inline V vabs(V x) {
  return vcopysign(x, V{});
}

// SLEEF's vector fmod (3.5, as packaged) returns NaN instead of the exact result when |a / b| is
// huge (1e30 fmod 1e-30, anything fmod a subnormal): about 12% of random finite bit patterns.
// Its other results are exact, so lanes with a NaN that cannot be right are redone with std::fmod.
template <class V>
inline V vfmod_exact(V a, V b) {
  using E = std::remove_cvref_t<decltype(a[0])>;
  using I = std::conditional_t<std::is_same_v<V, vfloat>, vint32, vint64>;
  V r = vfmod(a, b);
  I bad = (r != r) & (b == b) & (b != E(0)) & (vabs(a) < std::numeric_limits<E>::infinity());
  const I none{};
  if (__builtin_expect(std::memcmp(&bad, &none, sizeof(I)) != 0, 0)) {
    for (int i = 0; i < kLanes<E>; ++i)
      if (bad[i]) r[i] = std::fmod(a[i], b[i]);
  }
  return r;
}

// PyTorch 1.13 multiplies and divides complex numbers with the textbook formulas (c10::complex
// and Vectorized<complex> do, with no C99 Annex G recovery), so (inf+0j) * (1+0j) is inf+nanj
// and 1/0j is nan+nanj. Matching that also keeps these loops free of libgcc calls.
template <class T>
inline complex<T> cmul(complex<T> x, complex<T> y) {
  T a = x.real(), b = x.imag(), c = y.real(), d = y.imag();
  return complex<T>(a * c - b * d, a * d + b * c);
}
template <class T>
inline complex<T> cdiv(complex<T> x, complex<T> y) {
  T a = x.real(), b = x.imag(), c = y.real(), d = y.imag();
  T den = c * c + d * d;
  return complex<T>((a * c + b * d) / den, (b * c - a * d) / den);
}
template <class C>
inline C mul_any(C a, C b) {
  if constexpr (is_cplx<C>)
    return cmul(a, b);
  else
    return wmul(a, b);
}
template <class C>
inline C div_any(C a, C b) {
  if constexpr (is_cplx<C>)
    return cdiv(a, b);
  else
    return a / b;
}

// ---- add / sub / mul ----

// add/sub: a + alpha * b (params: s[0] = alpha).
template <class C>
struct Add {
  C alpha;
  explicit Add(const OpParams& p) : alpha(p.s[0].to<C>()) {}
  C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>)
      return a || (alpha && b);
    else
      return wadd(a, mul_any(alpha, b));
  }
  Vec<C> vec(Vec<C> a, Vec<C> b) const { return a + alpha * b; }
};
template <class C>
struct Sub {
  C alpha;
  explicit Sub(const OpParams& p) : alpha(p.s[0].to<C>()) {}
  C operator()(C a, C b) const { return wsub(a, mul_any(alpha, b)); }
  Vec<C> vec(Vec<C> a, Vec<C> b) const { return a - alpha * b; }
};
template <class C>
struct Mul {
  explicit Mul(const OpParams&) {}
  C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>)
      return a && b;
    else
      return mul_any(a, b);
  }
  Vec<C> vec(Vec<C> a, Vec<C> b) const { return a * b; }
};

// ---- division family ----

template <class C>
struct TrueDivide {
  explicit TrueDivide(const OpParams&) {}
  C operator()(C a, C b) const { return div_any(a, b); }
  Vec<C> vec(Vec<C> a, Vec<C> b) const { return a / b; }
};

// trunc(a / b). PyTorch rounds the quotient to the storage type before truncating, so for
// half/bfloat16 `S` is that type (2.9997 rounds to 3 in half and truncates to 3).
template <class C, class S = C>
struct DivTruncT {
  explicit DivTruncT(const OpParams&) {}
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) zero_division("div");
      return scalar::int_div_trunc(a, b);
    } else {
      return std::trunc(C(S(a / b)));
    }
  }
  Vec<C> vec(Vec<C> a, Vec<C> b) const requires std::is_same_v<S, C> { return vtrunc(a / b); }
};
template <class C>
using DivTrunc = DivTruncT<C>;
template <class C>
using DivTruncHalf = DivTruncT<C, Half>;
template <class C>
using DivTruncBF16 = DivTruncT<C, BFloat16>;

// Floor division (floor_divide and div(rounding_mode="floor")), Python semantics. The float
// form is PyTorch's: derived from fmod so that the result is exact and consistent with
// remainder, and it returns IEEE a / b for b == 0.
template <class C>
struct DivFloor {
  explicit DivFloor(const OpParams&) {}
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) zero_division("div");
      return scalar::int_div_floor(a, b);
    } else {
      return scalar::float_div_floor(a, b);
    }
  }
  Vec<C> vec(Vec<C> a, Vec<C> b) const {
    using V = Vec<C>;
    const V zero{};
    V mod = vfmod_exact(a, b);
    V q = a / b;
    V div = (a - mod) / b;
    div = ((mod != zero) & ((b < zero) ^ (mod < zero))) ? div - C(1) : div;
    V fd = vfloor(div);
    fd = (div - fd > C(0.5)) ? fd + C(1) : fd;
    fd = (div == zero) ? vcopysign(zero, q) : fd;
    return (b == zero) ? q : fd;
  }
};

// Python's %: the result has the sign of the divisor (fmod-based for floats, as PyTorch).
template <class C>
struct Remainder {
  explicit Remainder(const OpParams&) {}
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) zero_division("remainder");
      return scalar::int_remainder(a, b);
    } else {
      return scalar::float_remainder(a, b);
    }
  }
  Vec<C> vec(Vec<C> a, Vec<C> b) const {
    const Vec<C> zero{};
    Vec<C> mod = vfmod_exact(a, b);
    return ((mod != zero) & ((b < zero) ^ (mod < zero))) ? mod + b : mod;
  }
};

// C's fmod: the result has the sign of the dividend.
template <class C>
struct Fmod {
  explicit Fmod(const OpParams&) {}
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) zero_division("fmod");
      return scalar::int_fmod(a, b);
    } else {
      return std::fmod(a, b);
    }
  }
  Vec<C> vec(Vec<C> a, Vec<C> b) const { return vfmod_exact(a, b); }
};

// ---- powers ----

template <class C>
struct Pow {
  explicit Pow(const OpParams&) {}
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return scalar::powi(a, b);
    else
      return std::pow(a, b);
  }
  Vec<C> vec(Vec<C> a, Vec<C> b) const { return vpow(a, b); }
};

// ---- other float-only binary ops ----

template <class C>
struct Atan2 {
  explicit Atan2(const OpParams&) {}
  C operator()(C a, C b) const { return std::atan2(a, b); }
  Vec<C> vec(Vec<C> a, Vec<C> b) const { return vatan2(a, b); }
};

template <class C>
struct Hypot {
  explicit Hypot(const OpParams&) {}
  C operator()(C a, C b) const { return std::hypot(a, b); }
  Vec<C> vec(Vec<C> a, Vec<C> b) const { return vhypot(a, b); }
};

template <class C>
struct Copysign {
  explicit Copysign(const OpParams&) {}
  C operator()(C a, C b) const { return std::copysign(a, b); }
  Vec<C> vec(Vec<C> a, Vec<C> b) const { return vcopysign(a, b); }
};

template <class C>
struct Nextafter {
  explicit Nextafter(const OpParams&) {}
  C operator()(C a, C b) const { return std::nextafter(a, b); }
};

// nextafter in bfloat16's own grid (c10's BFloat16 nextafter, after musl): the values arrive
// as floats that are exact bfloat16 values.
template <class C>
struct NextafterBF16 {
  explicit NextafterBF16(const OpParams&) {}
  float operator()(float from, float to) const {
    if (from != from || to != to) return from + to;
    uint16_t f = BFloat16(from).x, t = BFloat16(to).x;
    if (f == t) return from;
    constexpr uint16_t kSign = 0x8000;
    uint16_t abs_f = f & ~kSign, abs_t = t & ~kSign;
    if (abs_f == 0) {
      if (abs_t == 0) return to;
      return float(BFloat16(uint16_t((t & kSign) | 1), BFloat16::from_bits_t{}));
    }
    if (abs_f > abs_t || ((f ^ t) & kSign))
      --f;
    else
      ++f;
    return float(BFloat16(f, BFloat16::from_bits_t{}));
  }
};

// x * log(y), with xlogy(0, y) = 0 unless y is NaN.
template <class C>
struct Xlogy {
  explicit Xlogy(const OpParams&) {}
  C operator()(C x, C y) const {
    if (std::isnan(y)) return std::numeric_limits<C>::quiet_NaN();
    if (x == 0) return 0;
    return x * std::log(y);
  }
  Vec<C> vec(Vec<C> x, Vec<C> y) const {
    const Vec<C> zero{};
    Vec<C> r = (x == zero) ? zero : x * vlog(y);
    return (y != y) ? y : r;
  }
};

// ---- ternary ----

// PyTorch 1.13's lerp: the two forms keep the result exact at weight 0 and 1. The test is
// weight < 0.5 for real types (so lerp(0.5, inf, -1) is -inf, not NaN) and |weight| < 0.5 for
// complex ones.
template <class C>
inline C lerp(C s, C e, C w) {
  bool small;
  if constexpr (is_cplx<C>)
    small = std::abs(w) < 0.5;
  else
    small = w < C(0.5);
  return small ? s + mul_any(w, C(e - s)) : e - mul_any(C(e - s), C(C(1) - w));
}
template <class V>
inline V vlerp(V s, V e, V w) {
  return w < 0.5 ? s + w * (e - s) : e - (e - s) * (1 - w);
}

// params: s[0] = weight.
template <class C>
struct LerpScalar {
  C w;
  explicit LerpScalar(const OpParams& p) : w(p.s[0].to<C>()) {}
  C operator()(C s, C e) const { return lerp(s, e, w); }
  Vec<C> vec(Vec<C> s, Vec<C> e) const { return vlerp(s, e, w + Vec<C>{}); }
};
template <class C>
struct LerpTensor {
  explicit LerpTensor(const OpParams&) {}
  C operator()(C s, C e, C w) const { return lerp(s, e, w); }
  Vec<C> vec(Vec<C> s, Vec<C> e, Vec<C> w) const { return vlerp(s, e, w); }
};

// self + value * t1 * t2 (params: s[0] = value), evaluated left to right as PyTorch.
template <class C>
struct Addcmul {
  C v;
  explicit Addcmul(const OpParams& p) : v(p.s[0].to<C>()) {}
  C operator()(C s, C a, C b) const { return wadd(s, mul_any(mul_any(v, a), b)); }
  Vec<C> vec(Vec<C> s, Vec<C> a, Vec<C> b) const { return s + v * a * b; }
};
// self + value * t1 / t2 (params: s[0] = value).
template <class C>
struct Addcdiv {
  C v;
  explicit Addcdiv(const OpParams& p) : v(p.s[0].to<C>()) {}
  C operator()(C s, C a, C b) const { return s + div_any(mul_any(v, a), b); }
  Vec<C> vec(Vec<C> s, Vec<C> a, Vec<C> b) const { return s + v * a / b; }
};

using Float32Up = TypeList<BFloat16, float, double>;  // PyTorch has no Half kernel for these
using Complex = ComplexTypes;

}  // namespace

void register_arith_kernels(KernelTable& t) {
  reg<Add, 2>(t, OpId::add, BoolType{}, IntTypes{}, FloatTypes{}, ComplexTypes{});
  reg<Sub, 2>(t, OpId::sub, IntTypes{}, FloatTypes{}, ComplexTypes{});
  reg<Mul, 2>(t, OpId::mul, BoolType{}, IntTypes{}, FloatTypes{}, ComplexTypes{});

  // Integer inputs of true_divide, atan2, copysign and xlogy are promoted to float first.
  reg<TrueDivide, 2>(t, OpId::true_divide, FloatTypes{}, ComplexTypes{});
  reg<DivTrunc, 2>(t, OpId::div_trunc, IntTypes{}, TypeList<float, double>{});
  reg<DivTruncHalf, 2>(t, OpId::div_trunc, TypeList<Half>{});
  reg<DivTruncBF16, 2>(t, OpId::div_trunc, TypeList<BFloat16>{});
  reg<DivFloor, 2>(t, OpId::div_floor, IntTypes{}, FloatTypes{});
  reg<DivFloor, 2>(t, OpId::floor_divide, IntTypes{}, FloatTypes{});
  reg<Remainder, 2>(t, OpId::remainder, IntTypes{}, FloatTypes{});
  reg<Fmod, 2>(t, OpId::fmod, IntTypes{}, FloatTypes{});

  reg<Pow, 2>(t, OpId::pow, IntTypes{}, FloatTypes{}, ComplexTypes{});
  // float_power's dtype rule makes the compute dtype float64 or complex128.
  reg<Pow, 2>(t, OpId::float_power, TypeList<double, complex<double>>{});

  reg<Atan2, 2>(t, OpId::atan2, Float32Up{});
  reg<Hypot, 2>(t, OpId::hypot, Float32Up{});
  reg<Copysign, 2>(t, OpId::copysign, FloatTypes{});
  reg<Nextafter, 2>(t, OpId::nextafter, TypeList<float, double>{});
  reg<NextafterBF16, 2>(t, OpId::nextafter, TypeList<BFloat16>{});
  reg<Xlogy, 2>(t, OpId::xlogy, FloatTypes{});

  reg<LerpScalar, 2>(t, OpId::lerp_scalar, Float32Up{}, Complex{});
  reg<LerpTensor, 3>(t, OpId::lerp_tensor, Float32Up{}, Complex{});
  reg<Addcmul, 3>(t, OpId::addcmul, IntTypes{}, Float32Up{}, Complex{});
  reg<Addcdiv, 3>(t, OpId::addcdiv, Float32Up{}, Complex{});
}

}  // namespace ember::cpu::EMBER_CPU_CAP
