// Unary math (EMBER_UNARY_OPS up to logical_not) and the unary predicates. One functor per op
// serves every dtype; the dtypes registered are exactly those PyTorch 1.13 supports on CPU
// (a missing registration is the op's "not implemented for dtype" error). Transcendentals are
// vectorized for float/double (and half/bfloat16, computed in float) with SLEEF u10 functions.
#include "kernels/cpu/elementwise/loops.h"
#include "kernels/cpu/elementwise/math_functors.h"

namespace ember::cpu::EMBER_CPU_CAP {
namespace {

using math::kIsComplex;

// Integer neg/abs/square wrap modulo 2^n as PyTorch's do; signed overflow is UB in C++, so go
// through the unsigned type.
template <class C>
using U = std::make_unsigned_t<C>;

template <class C>
struct Neg {
  explicit Neg(const OpParams&) {}
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>)
      return C(U<C>(0) - U<C>(x));
    else
      return -x;
  }
  Vec<C> vec(Vec<C> x) const { return -x; }
};

template <class C>
struct Abs {
  explicit Abs(const OpParams&) {}
  auto operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>)
      return x;
    else if constexpr (std::is_integral_v<C>)
      return x < 0 ? C(U<C>(0) - U<C>(x)) : x;
    else
      return std::abs(x);  // complex: the real modulus (hypot, no overflow)
  }
  Vec<C> vec(Vec<C> x) const { return math::vabs(x); }
};

// sign and sgn (sgn also takes complex: z / |z|, 0 at 0). NaN gives 0, as PyTorch 1.13.
template <class C>
struct Sign {
  explicit Sign(const OpParams&) {}
  C operator()(C x) const {
    if constexpr (std::is_same_v<C, bool>) {
      return x;
    } else if constexpr (kIsComplex<C>) {
      auto a = std::abs(x);
      return a == 0 ? C(0) : x / a;
    } else if constexpr (std::is_unsigned_v<C>) {
      return C(x != 0);
    } else {
      return C((C(0) < x) - (x < C(0)));
    }
  }
  Vec<C> vec(Vec<C> x) const {
    return vselect(x > C(0), splat(C(1)), splat(C(0))) -
           vselect(x < C(0), splat(C(1)), splat(C(0)));
  }
};

template <class C>
struct Reciprocal {
  explicit Reciprocal(const OpParams&) {}
  C operator()(C x) const {
    if constexpr (kIsComplex<C>)
      return math::reciprocal(x);
    else
      return C(1) / x;
  }
  Vec<C> vec(Vec<C> x) const { return C(1) / x; }
};

template <class C>
struct Sqrt {
  explicit Sqrt(const OpParams&) {}
  C operator()(C x) const { return std::sqrt(x); }
  Vec<C> vec(Vec<C> x) const { return math::vsqrt(x); }
};

template <class C>
struct Rsqrt {
  explicit Rsqrt(const OpParams&) {}
  C operator()(C x) const {
    if constexpr (kIsComplex<C>)
      return math::reciprocal(std::sqrt(x));
    else
      return C(1) / std::sqrt(x);
  }
  Vec<C> vec(Vec<C> x) const { return C(1) / math::vsqrt(x); }
};

template <class C>
struct Square {
  explicit Square(const OpParams&) {}
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>)
      return C(U<C>(x) * U<C>(x));
    else
      return x * x;
  }
  Vec<C> vec(Vec<C> x) const { return x * x; }
};

// Functions with a std:: scalar form (complex overloads included) and a SLEEF vector form.
#define EMBER_STD_UNARY(Name, fn, vfn)             \
  template <class C>                               \
  struct Name {                                    \
    explicit Name(const OpParams&) {}              \
    C operator()(C x) const { return std::fn(x); } \
    Vec<C> vec(Vec<C> x) const { return vfn(x); }  \
  };
EMBER_STD_UNARY(Exp, exp, vexp)
EMBER_STD_UNARY(Exp2, exp2, vexp2)
EMBER_STD_UNARY(Expm1, expm1, vexpm1)
EMBER_STD_UNARY(Log, log, vlog)
EMBER_STD_UNARY(Log10, log10, vlog10)
EMBER_STD_UNARY(Sin, sin, vsin)
EMBER_STD_UNARY(Cos, cos, vcos)
EMBER_STD_UNARY(Tan, tan, vtan)
EMBER_STD_UNARY(Asin, asin, vasin)
EMBER_STD_UNARY(Acos, acos, vacos)
EMBER_STD_UNARY(Atan, atan, vatan)
EMBER_STD_UNARY(Tanh, tanh, vtanh)
EMBER_STD_UNARY(Atanh, atanh, vatanh)
EMBER_STD_UNARY(Erf, erf, verf)
EMBER_STD_UNARY(Erfc, erfc, verfc)
#undef EMBER_STD_UNARY

// SLEEF overflows inside log1p, asinh and acosh for huge arguments (float asinh(2e19) is inf)
// and inside sinh/cosh just below the overflow threshold (float sinh(89) is inf, the answer
// 2.2e38). Those lanes take closed forms: asinh(x) = log(2x), sinh(x) = e * (e / 2) with
// e = exp(x / 2), and a rescaled log1p.
template <class C>
constexpr C kHugeArg = std::is_same_v<C, float> ? 1e18f : 1e150;  // far above 1 / sqrt(eps)
template <class C>
constexpr C kExpMax = std::is_same_v<C, float> ? 88 : 709;  // exp(x) is finite up to here
template <class C>
constexpr C kLn2 = C(0.69314718055994530942);

// log1p of huge x is log1p(x 2^-k) + k ln2 (1 + x 2^-k is still x 2^-k), one SLEEF call.
template <class C>
struct Log1p {
  explicit Log1p(const OpParams&) {}
  static constexpr C kBig = std::is_same_v<C, float> ? 1e30f : 1e300;
  static constexpr C kScale = std::is_same_v<C, float> ? 0x1p-64f : 0x1p-512;
  static constexpr C kShift = std::is_same_v<C, float> ? 64 * kLn2<C> : 512 * kLn2<C>;
  C operator()(C x) const { return std::log1p(x); }
  Vec<C> vec(Vec<C> x) const {
    auto big = x > kBig;
    return vlog1p(vselect(big, x * kScale, x)) + vselect(big, splat(kShift), splat(C(0)));
  }
};

template <class C>
struct Asinh {
  explicit Asinh(const OpParams&) {}
  C operator()(C x) const { return std::asinh(x); }
  Vec<C> vec(Vec<C> x) const {
    Vec<C> a = math::vabs(x);
    Vec<C> big = vlog(a) + kLn2<C>;
    return vselect(a > kHugeArg<C>, vselect(x < C(0), -big, big), vasinh(x));
  }
};

template <class C>
struct Acosh {
  explicit Acosh(const OpParams&) {}
  C operator()(C x) const { return std::acosh(x); }
  Vec<C> vec(Vec<C> x) const { return vselect(x > kHugeArg<C>, vlog(x) + kLn2<C>, vacosh(x)); }
};

template <class C>
struct Sinh {
  explicit Sinh(const OpParams&) {}
  C operator()(C x) const { return std::sinh(x); }
  Vec<C> vec(Vec<C> x) const {
    Vec<C> a = math::vabs(x);
    Vec<C> e = vexp(a * C(0.5));
    Vec<C> big = e * (e * C(0.5));
    return vselect(a > kExpMax<C>, vselect(x < C(0), -big, big), vsinh(x));
  }
};

template <class C>
struct Cosh {
  explicit Cosh(const OpParams&) {}
  C operator()(C x) const { return std::cosh(x); }
  Vec<C> vec(Vec<C> x) const {
    Vec<C> e = vexp(math::vabs(x) * C(0.5));
    return vselect(math::vabs(x) > kExpMax<C>, e * (e * C(0.5)), vcosh(x));
  }
};

template <class C>
struct Log2 {
  explicit Log2(const OpParams&) {}
  C operator()(C x) const {
    if constexpr (kIsComplex<C>)
      return std::log(x) / std::log(typename C::value_type(2));
    else
      return std::log2(x);
  }
  Vec<C> vec(Vec<C> x) const { return vlog2(x); }
};

template <class C>
struct Sigmoid {
  explicit Sigmoid(const OpParams&) {}
  C operator()(C x) const { return C(1) / (C(1) + std::exp(-x)); }
  Vec<C> vec(Vec<C> x) const { return C(1) / (C(1) + vexp(-x)); }
};

template <class C>
struct Erfinv {
  explicit Erfinv(const OpParams&) {}
  C operator()(C x) const { return math::erfinv(x); }
};

// floor/ceil/trunc are the identity on integers (PyTorch keeps the dtype).
#define EMBER_ROUNDING_UNARY(Name, fn, vfn)       \
  template <class C>                              \
  struct Name {                                   \
    explicit Name(const OpParams&) {}             \
    C operator()(C x) const {                     \
      if constexpr (std::is_integral_v<C>)        \
        return x;                                 \
      else                                        \
        return std::fn(x);                        \
    }                                             \
    Vec<C> vec(Vec<C> x) const { return vfn(x); } \
  };
EMBER_ROUNDING_UNARY(Floor, floor, math::vfloor_)
EMBER_ROUNDING_UNARY(Ceil, ceil, math::vceil_)
EMBER_ROUNDING_UNARY(Trunc, trunc, math::vtrunc_)
#undef EMBER_ROUNDING_UNARY

// x - trunc(x): NaN for infinities, as PyTorch.
template <class C>
struct Frac {
  explicit Frac(const OpParams&) {}
  C operator()(C x) const { return x - std::trunc(x); }
  Vec<C> vec(Vec<C> x) const { return x - math::vtrunc_(x); }
};

template <class C>
struct BitwiseNot {
  explicit BitwiseNot(const OpParams&) {}
  C operator()(C x) const {
    if constexpr (std::is_same_v<C, bool>)
      return !x;
    else
      return C(~x);
  }
};

template <class C>
struct LogicalNot {
  explicit LogicalNot(const OpParams&) {}
  bool operator()(C x) const { return x == C(0); }
};

// ---- predicates (bool result) ----
template <class C>
struct IsNan {
  explicit IsNan(const OpParams&) {}
  bool operator()(C x) const {
    if constexpr (kIsComplex<C>)
      return std::isnan(x.real()) || std::isnan(x.imag());
    else if constexpr (std::is_integral_v<C>)
      return false;
    else
      return std::isnan(x);
  }
};

template <class C>
struct IsInf {
  explicit IsInf(const OpParams&) {}
  bool operator()(C x) const {
    if constexpr (kIsComplex<C>)
      return std::isinf(x.real()) || std::isinf(x.imag());
    else if constexpr (std::is_integral_v<C>)
      return false;
    else
      return std::isinf(x);
  }
};

template <class C>
struct IsFinite {
  explicit IsFinite(const OpParams&) {}
  bool operator()(C x) const {
    if constexpr (kIsComplex<C>)
      return std::isfinite(x.real()) && std::isfinite(x.imag());
    else if constexpr (std::is_integral_v<C>)
      return true;
    else
      return std::isfinite(x);
  }
};

template <class C>
struct IsPosInf {
  explicit IsPosInf(const OpParams&) {}
  bool operator()(C x) const {
    if constexpr (std::is_integral_v<C>)
      return false;
    else
      return x == std::numeric_limits<C>::infinity();
  }
};

template <class C>
struct IsNegInf {
  explicit IsNegInf(const OpParams&) {}
  bool operator()(C x) const {
    if constexpr (std::is_integral_v<C>)
      return false;
    else
      return x == -std::numeric_limits<C>::infinity();
  }
};

template <class C>
struct IsReal {
  explicit IsReal(const OpParams&) {}
  bool operator()(C x) const {
    if constexpr (kIsComplex<C>)
      return x.imag() == 0;
    else
      return true;
  }
};

template <class C>
struct SignBit {
  explicit SignBit(const OpParams&) {}
  bool operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>)
      return false;  // bool and uint8 included
    else if constexpr (std::is_integral_v<C>)
      return x < 0;
    else
      return std::signbit(x);
  }
};

// Dtype lists beyond loops.h's, named after what PyTorch 1.13 dispatches on CPU.
using BF16Float = TypeList<BFloat16, float, double>;  // most floating ops: no float16 on CPU
using ComplexT = ComplexTypes;
using AllTypes = TypeList<bool, uint8_t, int8_t, int16_t, int32_t, int64_t, Half, BFloat16, float,
                          double, complex<float>, complex<double>>;

}  // namespace

void register_unary_kernels(KernelTable& t) {
  using O = OpId;
  reg<Neg, 1>(t, O::neg, IntTypes{}, FloatTypes{}, ComplexT{});
  reg<Abs, 1>(t, O::abs, IntTypes{}, FloatTypes{});
  reg<Abs, 1, out_real>(t, O::abs, ComplexT{});
  reg<Sign, 1>(t, O::sign, BoolType{}, IntTypes{}, FloatTypes{});
  reg<Sign, 1>(t, O::sgn, BoolType{}, IntTypes{}, FloatTypes{}, ComplexT{});
  reg<Reciprocal, 1>(t, O::reciprocal, FloatTypes{}, ComplexT{});
  reg<Sqrt, 1>(t, O::sqrt, BF16Float{}, ComplexT{});
  reg<Rsqrt, 1>(t, O::rsqrt, BF16Float{}, ComplexT{});
  // Bool is left out: PyTorch's square of bool is pow(x, 2), an int64 result.
  reg<Square, 1>(t, O::square, IntTypes{}, FloatTypes{}, ComplexT{});
  reg<Exp, 1>(t, O::exp, BF16Float{}, ComplexT{});
  reg<Exp2, 1>(t, O::exp2, FloatTypes{});
  reg<Expm1, 1>(t, O::expm1, BF16Float{});
  reg<Log, 1>(t, O::log, BF16Float{}, ComplexT{});
  reg<Log2, 1>(t, O::log2, BF16Float{}, ComplexT{});
  reg<Log10, 1>(t, O::log10, BF16Float{}, ComplexT{});
  reg<Log1p, 1>(t, O::log1p, BF16Float{});
  reg<Sin, 1>(t, O::sin, BF16Float{}, ComplexT{});
  reg<Cos, 1>(t, O::cos, BF16Float{}, ComplexT{});
  reg<Tan, 1>(t, O::tan, BF16Float{}, ComplexT{});
  reg<Asin, 1>(t, O::asin, BF16Float{}, ComplexT{});
  reg<Acos, 1>(t, O::acos, BF16Float{}, ComplexT{});
  reg<Atan, 1>(t, O::atan, BF16Float{}, ComplexT{});
  reg<Sinh, 1>(t, O::sinh, BF16Float{}, ComplexT{});
  reg<Cosh, 1>(t, O::cosh, BF16Float{}, ComplexT{});
  reg<Tanh, 1>(t, O::tanh, BF16Float{}, ComplexT{});
  reg<Asinh, 1>(t, O::asinh, BF16Float{}, ComplexT{});
  reg<Acosh, 1>(t, O::acosh, BF16Float{}, ComplexT{});
  reg<Atanh, 1>(t, O::atanh, BF16Float{}, ComplexT{});
  reg<Sigmoid, 1>(t, O::sigmoid, BF16Float{}, ComplexT{});
  reg<Erf, 1>(t, O::erf, BF16Float{});
  reg<Erfc, 1>(t, O::erfc, BF16Float{});
  reg<Erfinv, 1>(t, O::erfinv, BF16Float{});
  reg<Floor, 1>(t, O::floor, IntTypes{}, BF16Float{});
  reg<Ceil, 1>(t, O::ceil, IntTypes{}, BF16Float{});
  reg<Trunc, 1>(t, O::trunc, IntTypes{}, BF16Float{});
  reg<Frac, 1>(t, O::frac, FloatTypes{});
  reg<BitwiseNot, 1>(t, O::bitwise_not, BoolType{}, IntTypes{});
  reg<LogicalNot, 1, out_bool>(t, O::logical_not, AllTypes{});

  reg<IsNan, 1, out_bool>(t, O::isnan, AllTypes{});
  reg<IsInf, 1, out_bool>(t, O::isinf, AllTypes{});
  reg<IsFinite, 1, out_bool>(t, O::isfinite, AllTypes{});
  reg<IsPosInf, 1, out_bool>(t, O::isposinf, BoolType{}, IntTypes{}, FloatTypes{});
  reg<IsNegInf, 1, out_bool>(t, O::isneginf, BoolType{}, IntTypes{}, FloatTypes{});
  reg<IsReal, 1, out_bool>(t, O::isreal, AllTypes{});
  reg<SignBit, 1, out_bool>(t, O::signbit, BoolType{}, IntTypes{}, FloatTypes{});
}

}  // namespace ember::cpu::EMBER_CPU_CAP
