#pragma once
// Unary math and predicates (EMBER_UNARY_OPS up to logical_not, EMBER_UNARY_PREDICATE_OPS) as
// __host__ __device__ functors over the compute type C, with the semantics of the CPU kernels
// (src/kernels/cpu/elementwise/unary_kernels.cpp): integer wrap-around, NaN rules, complex
// conventions. Constructed on the host from the op's OpParams.

#include "kernels/cuda/elementwise_math.cuh"

namespace ember::cuda::ew {

template <class C>
using U = std::make_unsigned_t<C>;

#define EMBER_EW_CTOR(Name) \
  explicit Name(const OpParams&) {}

template <class C>
struct Neg {
  EMBER_EW_CTOR(Neg)
  EMBER_EW_HD C operator()(C x) const {
    if constexpr (std::is_integral_v<C>)
      return C(U<C>(0) - U<C>(x));
    else
      return -x;
  }
};

template <class C>
struct Abs {
  EMBER_EW_CTOR(Abs)
  EMBER_EW_HD auto operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>)
      return x;
    else if constexpr (std::is_integral_v<C>)
      return x < 0 ? C(U<C>(0) - U<C>(x)) : x;
    else
      return ew::abs(x);
  }
};

// sign and sgn (z / |z| for complex, 0 at 0); NaN gives 0 as PyTorch 1.13's CPU.
template <class C>
struct Sign {
  EMBER_EW_CTOR(Sign)
  EMBER_EW_HD C operator()(C x) const {
    if constexpr (std::is_same_v<C, bool>) {
      return x;
    } else if constexpr (is_cplx<C>) {
      auto a = ew::abs(x);
      return a == 0 ? C(0) : x / a;
    } else if constexpr (std::is_unsigned_v<C>) {
      return C(x != 0);
    } else {
      return C((C(0) < x) - (x < C(0)));
    }
  }
};

template <class C>
struct Reciprocal {
  EMBER_EW_CTOR(Reciprocal)
  EMBER_EW_HD C operator()(C x) const {
    if constexpr (is_cplx<C>)
      return ew::reciprocal(x);
    else
      return C(1) / x;
  }
};

template <class C>
struct Rsqrt {
  EMBER_EW_CTOR(Rsqrt)
  EMBER_EW_HD C operator()(C x) const {
    if constexpr (is_cplx<C>)
      return ew::reciprocal(ew::sqrt(x));
    else
      return C(1) / ew::sqrt(x);
  }
};

template <class C>
struct Square {
  EMBER_EW_CTOR(Square)
  EMBER_EW_HD C operator()(C x) const {
    if constexpr (std::is_integral_v<C>)
      return C(wide_unsigned<C>(U<C>(x)) * wide_unsigned<C>(U<C>(x)));
    else
      return x * x;
  }
};

#define EMBER_EW_STD_UNARY(Name, fn)                          \
  template <class C>                                          \
  struct Name {                                               \
    EMBER_EW_CTOR(Name)                                       \
    EMBER_EW_HD C operator()(C x) const { return ew::fn(x); } \
  };
EMBER_EW_STD_UNARY(Sqrt, sqrt)
EMBER_EW_STD_UNARY(Exp, exp)
EMBER_EW_STD_UNARY(Exp2, exp2)
EMBER_EW_STD_UNARY(Expm1, expm1)
EMBER_EW_STD_UNARY(Log, log)
EMBER_EW_STD_UNARY(Log10, log10)
EMBER_EW_STD_UNARY(Log1p, log1p)
EMBER_EW_STD_UNARY(Sin, sin)
EMBER_EW_STD_UNARY(Cos, cos)
EMBER_EW_STD_UNARY(Tan, tan)
EMBER_EW_STD_UNARY(Asin, asin)
EMBER_EW_STD_UNARY(Acos, acos)
EMBER_EW_STD_UNARY(Atan, atan)
EMBER_EW_STD_UNARY(Sinh, sinh)
EMBER_EW_STD_UNARY(Cosh, cosh)
EMBER_EW_STD_UNARY(Tanh, tanh)
EMBER_EW_STD_UNARY(Asinh, asinh)
EMBER_EW_STD_UNARY(Acosh, acosh)
EMBER_EW_STD_UNARY(Atanh, atanh)
EMBER_EW_STD_UNARY(Erf, erf)
EMBER_EW_STD_UNARY(Erfc, erfc)
EMBER_EW_STD_UNARY(Erfinv, erfinv)
#undef EMBER_EW_STD_UNARY

template <class C>
struct Log2 {
  EMBER_EW_CTOR(Log2)
  EMBER_EW_HD C operator()(C x) const {
    if constexpr (is_cplx<C>)
      return ew::log(x) / ew::log(typename C::value_type(2));
    else
      return ew::log2(x);
  }
};

template <class C>
struct Sigmoid {
  EMBER_EW_CTOR(Sigmoid)
  EMBER_EW_HD C operator()(C x) const { return C(1) / (C(1) + ew::exp(-x)); }
};

// floor/ceil/trunc are the identity on integers (the dtype is kept).
#define EMBER_EW_ROUNDING(Name, fn)        \
  template <class C>                       \
  struct Name {                            \
    EMBER_EW_CTOR(Name)                    \
    EMBER_EW_HD C operator()(C x) const {  \
      if constexpr (std::is_integral_v<C>) \
        return x;                          \
      else                                 \
        return ew::fn(x);                  \
    }                                      \
  };
EMBER_EW_ROUNDING(Floor, floor)
EMBER_EW_ROUNDING(Ceil, ceil)
EMBER_EW_ROUNDING(Trunc, trunc)
#undef EMBER_EW_ROUNDING

template <class C>
struct Frac {
  EMBER_EW_CTOR(Frac)
  EMBER_EW_HD C operator()(C x) const { return x - ew::trunc(x); }
};

template <class C>
struct BitwiseNot {
  EMBER_EW_CTOR(BitwiseNot)
  EMBER_EW_HD C operator()(C x) const {
    if constexpr (std::is_same_v<C, bool>)
      return !x;
    else
      return C(~x);
  }
};

template <class C>
struct LogicalNot {
  EMBER_EW_CTOR(LogicalNot)
  EMBER_EW_HD bool operator()(C x) const { return x == C(0); }
};

// ---- predicates (bool result) ----
template <class C>
struct IsNan {
  EMBER_EW_CTOR(IsNan)
  EMBER_EW_HD bool operator()(C x) const {
    if constexpr (is_cplx<C>)
      return isnan_(x.real()) || isnan_(x.imag());
    else if constexpr (std::is_integral_v<C>)
      return false;
    else
      return isnan_(x);
  }
};

template <class C>
struct IsInf {
  EMBER_EW_CTOR(IsInf)
  EMBER_EW_HD bool operator()(C x) const {
    if constexpr (is_cplx<C>)
      return isinf_(x.real()) || isinf_(x.imag());
    else if constexpr (std::is_integral_v<C>)
      return false;
    else
      return isinf_(x);
  }
};

template <class C>
struct IsFinite {
  EMBER_EW_CTOR(IsFinite)
  EMBER_EW_HD bool operator()(C x) const {
    if constexpr (is_cplx<C>)
      return isfinite_(x.real()) && isfinite_(x.imag());
    else if constexpr (std::is_integral_v<C>)
      return true;
    else
      return isfinite_(x);
  }
};

template <class C>
struct IsPosInf {
  EMBER_EW_CTOR(IsPosInf)
  EMBER_EW_HD bool operator()(C x) const {
    if constexpr (std::is_integral_v<C>)
      return false;
    else
      return x == infinity<C>();
  }
};

template <class C>
struct IsNegInf {
  EMBER_EW_CTOR(IsNegInf)
  EMBER_EW_HD bool operator()(C x) const {
    if constexpr (std::is_integral_v<C>)
      return false;
    else
      return x == -infinity<C>();
  }
};

template <class C>
struct IsReal {
  EMBER_EW_CTOR(IsReal)
  EMBER_EW_HD bool operator()(C x) const {
    if constexpr (is_cplx<C>)
      return x.imag() == 0;
    else
      return true;
  }
};

template <class C>
struct SignBit {
  EMBER_EW_CTOR(SignBit)
  EMBER_EW_HD bool operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>)
      return false;
    else if constexpr (std::is_integral_v<C>)
      return x < 0;
    else
      return signbit_(x);
  }
};

}  // namespace ember::cuda::ew
