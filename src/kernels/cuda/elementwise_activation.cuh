#pragma once
// Activations, the parameterised elementwise ops (round(decimals), logit, nan_to_num, elu
// family, gelu, softplus, hardtanh, shrinks, threshold) and the special functions the device has
// in CUDA's math library or in closed form, as __host__ __device__ functors over the compute
// type C with the semantics of the CPU kernels (src/kernels/cpu/elementwise/
// activation_kernels.cpp, special_kernels.cpp, bessel_kernels.cpp). Parameters arrive in
// OpParams::s in the order activation_ops.cpp writes them.

#include "kernels/cuda/elementwise_math.cuh"

namespace ember::cuda::ew {

#define EMBER_EW_CTOR(Name) \
  explicit Name(const OpParams&) {}

template <class C>
struct Relu {
  EMBER_EW_CTOR(Relu)
  EMBER_EW_HD C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>)
      return x;
    else
      return x < C(0) ? C(0) : x;
  }
};

template <class C>
struct Hardtanh {
  C lo, hi;
  explicit Hardtanh(const OpParams& p) : lo(param<C>(p.s[0])), hi(param<C>(p.s[1])) {}
  Hardtanh(C l, C h) : lo(l), hi(h) {}
  EMBER_EW_HD C operator()(C x) const {
    C t = x < lo ? lo : x;
    return t > hi ? hi : t;
  }
};
template <class C>
struct Relu6 : Hardtanh<C> {
  explicit Relu6(const OpParams&) : Hardtanh<C>(C(0), C(6)) {}
};

// elu family (alpha, scale, input_scale): expm1 as the CPU.
template <class C>
struct Elu {
  C negcoef, poscoef, negipt;
  explicit Elu(const OpParams& p) : Elu(param<C>(p.s[0]), param<C>(p.s[1]), param<C>(p.s[2])) {}
  Elu(C alpha, C scale, C input_scale)
      : negcoef(alpha * scale), poscoef(scale), negipt(input_scale) {}
  EMBER_EW_HD C operator()(C x) const {
    return x <= C(0) ? ew::expm1(x * negipt) * negcoef : x * poscoef;
  }
};
template <class C>
struct Selu : Elu<C> {
  explicit Selu(const OpParams&)
      : Elu<C>(C(1.6732632423543772848170429916717), C(1.0507009873554804934193349852946), C(1)) {}
};

template <class C>
struct Silu {
  EMBER_EW_CTOR(Silu)
  EMBER_EW_HD C operator()(C x) const { return x / (C(1) + ew::exp(-x)); }
};
template <class C>
struct Mish {
  EMBER_EW_CTOR(Mish)
  EMBER_EW_HD C operator()(C x) const { return x * ew::tanh(ew::log1p(ew::exp(x))); }
};
template <class C>
struct Softsign {
  EMBER_EW_CTOR(Softsign)
  EMBER_EW_HD C operator()(C x) const {
    if constexpr (is_cplx<C>)
      return x / (typename C::value_type(1) + ew::abs(x));
    else
      return x / (C(1) + ew::abs(x));
  }
};
template <class C>
struct Hardsigmoid {
  EMBER_EW_CTOR(Hardsigmoid)
  EMBER_EW_HD C operator()(C x) const {
    C t = x + C(3);
    t = t < C(0) ? C(0) : t;
    return (t > C(6) ? C(6) : t) / C(6);
  }
};
template <class C>
struct Hardswish {
  EMBER_EW_CTOR(Hardswish)
  EMBER_EW_HD C operator()(C x) const {
    C t = x + C(3);
    t = t < C(0) ? C(0) : t;
    return x * (t > C(6) ? C(6) : t) / C(6);
  }
};
template <class C>
struct Tanhshrink {
  EMBER_EW_CTOR(Tanhshrink)
  EMBER_EW_HD C operator()(C x) const { return x - ew::tanh(x); }
};
template <class C>
struct Logsigmoid {
  EMBER_EW_CTOR(Logsigmoid)
  EMBER_EW_HD C operator()(C x) const {
    return (x < C(0) ? x : C(0)) - ew::log1p(ew::exp(-ew::abs(x)));
  }
};

// round(x, decimals): rint, multiplying first for decimals > 0 and dividing for < 0. For
// bfloat16 (S) the scaled value is rounded to bfloat16 before rint, as PyTorch 1.13.
template <class C, class S = C>
struct RoundDecimalsT {
  C scale{};
  int mode = 0;
  explicit RoundDecimalsT(const OpParams& p) {
    int64_t d = p.s[0].toLong();
    if constexpr (!std::is_integral_v<C>) {
      mode = d == 0 ? 0 : d > 0 ? 1 : -1;
      scale = C(std::pow(10.0, d < 0 ? -double(d) : double(d)));
      if constexpr (!std::is_same_v<S, C>) scale = round_to<S>(scale);
    }
  }
  EMBER_EW_HD C rnd(C v) const {
    if constexpr (std::is_same_v<S, C>)
      return v;
    else
      return round_to<S>(v);
  }
  EMBER_EW_HD C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      return x;
    } else {
      if (mode == 0) return ew::rint(x);
      if (mode > 0) return ew::rint(rnd(x * scale)) / scale;
      return ew::rint(rnd(x / scale)) * scale;
    }
  }
};
template <class C>
using RoundDecimals = RoundDecimalsT<C>;
template <class C>
using RoundDecimalsBf16 = RoundDecimalsT<C, __nv_bfloat16>;

// logit (eps < 0: no clamp); bfloat16 (S) takes its bounds in bfloat16.
template <class C, class S = C>
struct LogitT {
  C lo, hi;
  bool clamp;
  explicit LogitT(const OpParams& p) {
    double eps = p.s[0].toDouble();
    clamp = eps >= 0;
    lo = C(eps);
    hi = C(1) - lo;
    if constexpr (!std::is_same_v<S, C>) {
      lo = round_to<S>(lo);
      hi = round_to<S>(C(1) - lo);
    }
  }
  EMBER_EW_HD C operator()(C x) const {
    if (clamp) x = x < lo ? lo : (x > hi ? hi : x);
    return ew::log(x / (C(1) - x));
  }
};
template <class C>
using Logit = LogitT<C>;
template <class C>
using LogitBf16 = LogitT<C, __nv_bfloat16>;

template <class C>
struct Lgamma {
  EMBER_EW_CTOR(Lgamma)
  EMBER_EW_HD C operator()(C x) const { return ew::lgamma(x); }
};

// nan_to_num (nan, posinf, neginf resolved by the op); the identity on bool and integers.
template <class C>
struct NanToNum {
  C nan{}, posinf{}, neginf{};
  explicit NanToNum(const OpParams& p) {
    if constexpr (!std::is_integral_v<C>) {
      nan = param<C>(p.s[0]);
      posinf = param<C>(p.s[1]);
      neginf = param<C>(p.s[2]);
    }
  }
  EMBER_EW_HD C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      return x;
    } else {
      const C inf = infinity<C>();
      return x != x ? nan : x == inf ? posinf : x == -inf ? neginf : x;
    }
  }
};

template <class C>
struct LeakyRelu {
  C slope;
  explicit LeakyRelu(const OpParams& p) : slope(param<C>(p.s[0])) {}
  EMBER_EW_HD C operator()(C x) const { return x > C(0) ? x : x * slope; }
};

template <class C>
struct Gelu {
  EMBER_EW_CTOR(Gelu)
  EMBER_EW_HD C operator()(C x) const {
    return x * C(0.5) * (C(1) + ew::erf(x * C(0.70710678118654752440)));
  }
};
// x / (1 + exp(-2y)), y = sqrt(2 / pi) (x + 0.044715 x^3): the tanh form without cancellation.
template <class C>
struct GeluTanh {
  EMBER_EW_CTOR(GeluTanh)
  EMBER_EW_HD C operator()(C x) const {
    const C k2b = C(-2 * 0.79788456080286535588), kappa = C(0.044715);
    return x / (C(1) + ew::exp(k2b * (x + kappa * x * x * x)));
  }
};

template <class C>
struct Softplus {
  C beta, threshold;
  explicit Softplus(const OpParams& p) : beta(param<C>(p.s[0])), threshold(param<C>(p.s[1])) {}
  EMBER_EW_HD C operator()(C x) const {
    C z = x * beta;
    return z > threshold ? x : ew::log1p(ew::exp(z)) / beta;
  }
};
template <class C>
struct Hardshrink {
  C lambd;
  explicit Hardshrink(const OpParams& p) : lambd(param<C>(p.s[0])) {}
  EMBER_EW_HD C operator()(C x) const { return (x >= -lambd && x <= lambd) ? C(0) : x; }
};
template <class C>
struct Softshrink {
  C lambd;
  explicit Softshrink(const OpParams& p) : lambd(param<C>(p.s[0])) {}
  EMBER_EW_HD C operator()(C x) const {
    return x > lambd ? x - lambd : (x < -lambd ? x + lambd : C(0));
  }
};
template <class C>
struct Threshold {
  C th, value;
  explicit Threshold(const OpParams& p) : th(param<C>(p.s[0])), value(param<C>(p.s[1])) {}
  EMBER_EW_HD C operator()(C x) const { return x <= th ? value : x; }
};

// ---- special functions ----
constexpr double kPi = 3.14159265358979323846;

// sin(πx) / (πx), 1 at 0; real types in double, complex in its own precision.
template <class C>
struct Sinc {
  EMBER_EW_CTOR(Sinc)
  EMBER_EW_HD C operator()(C x) const {
    if constexpr (is_cplx<C>) {
      using V = typename C::value_type;
      if (x == C(0)) return C(1);
      C px = x * V(kPi);
      return ew::sin(px) / px;
    } else {
      double d = double(x);
      if (d == 0) return C(1);
      double px = kPi * d;
      return C(::sin(px) / px);
    }
  }
};
template <class C>
struct Deg2rad {
  EMBER_EW_CTOR(Deg2rad)
  EMBER_EW_HD C operator()(C x) const { return x * C(0.017453292519943295769); }
};
template <class C>
struct Rad2deg {
  EMBER_EW_CTOR(Rad2deg)
  EMBER_EW_HD C operator()(C x) const { return x * C(57.295779513082320877); }
};

// log(e^a + e^b) in double; equal infinities return themselves.
template <class C>
struct Logaddexp {
  EMBER_EW_CTOR(Logaddexp)
  EMBER_EW_HD C operator()(C a, C b) const {
    double x = double(a), y = double(b);
    if (isinf_(x) && x == y) return a;
    double m = x < y ? y : x;
    return C(m + ::log1p(::exp(-::fabs(x - y))));
  }
};
template <class C>
struct Logaddexp2 {
  EMBER_EW_CTOR(Logaddexp2)
  EMBER_EW_HD C operator()(C a, C b) const {
    double x = double(a), y = double(b);
    if (isinf_(x) && x == y) return a;
    double m = x < y ? y : x;
    return C(m + ::log1p(::exp2(-::fabs(x - y))) * 1.4426950408889634074);
  }
};
template <class C>
struct Heaviside {
  EMBER_EW_CTOR(Heaviside)
  EMBER_EW_HD C operator()(C x, C values) const { return x == C(0) ? values : C(x > C(0)); }
};

template <class C>
EMBER_EW_HD C gcd_of(C a, C b) {
  C x, y;
  if constexpr (std::is_unsigned_v<C>) {
    x = a, y = b;
  } else {
    x = C(a < 0 ? C(-a) : a), y = C(b < 0 ? C(-b) : b);
  }
  while (x != 0) {
    C c = x;
    x = C(y % x);
    y = c;
  }
  return y;
}
template <class C>
struct Gcd {
  EMBER_EW_CTOR(Gcd)
  EMBER_EW_HD C operator()(C a, C b) const { return gcd_of(a, b); }
};
template <class C>
struct Lcm {
  EMBER_EW_CTOR(Lcm)
  EMBER_EW_HD C operator()(C a, C b) const {
    C g = gcd_of(a, b);
    if (g == 0) return C(0);
    auto r = a / g * b;
    if constexpr (std::is_unsigned_v<decltype(r)>)
      return C(r);
    else
      return C(r < 0 ? -r : r);
  }
};

template <class C>
struct Entr {
  EMBER_EW_CTOR(Entr)
  EMBER_EW_HD C operator()(C x) const {
    double d = double(x);
    if (d != d) return x;
    if (d > 0) return C(-d * ::log(d));
    if (d == 0) return C(0);
    return C(-infinity<double>());
  }
};
template <class C>
struct Xlog1py {
  EMBER_EW_CTOR(Xlog1py)
  EMBER_EW_HD C operator()(C x, C y) const {
    double dx = double(x), dy = double(y);
    if (dy != dy) return C(quiet_nan<double>());
    if (dx == 0) return C(0);
    return C(dx * ::log1p(dy));
  }
};

// Standard normal CDF and its log, inverse and the scaled complementary error function.
template <class C>
struct Ndtr {
  EMBER_EW_CTOR(Ndtr)
  EMBER_EW_HD C operator()(C x) const { return C(0.5) * ew::erfc(-x * C(0.70710678118654752440)); }
};
template <class C>
struct Ndtri {
  EMBER_EW_CTOR(Ndtri)
  EMBER_EW_HD C operator()(C x) const { return ew::ndtri(x); }
};
// log(ndtr(x)): log1p(-ndtr(-x)) above -1, and through erfcx below (no underflow of ndtr).
template <class C>
struct LogNdtr {
  EMBER_EW_CTOR(LogNdtr)
  EMBER_EW_HD C operator()(C x) const {
    const C r = C(0.70710678118654752440);
    if (x < C(-1)) {
      C t = -x * r;
      return ew::log(C(0.5) * ew::erfcx(t)) - t * t;
    }
    return ew::log1p(C(-0.5) * ew::erfc(x * r));
  }
};
template <class C>
struct Erfcx {
  EMBER_EW_CTOR(Erfcx)
  EMBER_EW_HD C operator()(C x) const { return ew::erfcx(x); }
};
template <class C>
struct I0 {
  EMBER_EW_CTOR(I0)
  EMBER_EW_HD C operator()(C x) const { return ew::bessel_i0(x); }
};
template <class C>
struct I1 {
  EMBER_EW_CTOR(I1)
  EMBER_EW_HD C operator()(C x) const { return ew::bessel_i1(x); }
};
#define EMBER_EW_BESSEL(Name, ffn, dfn)       \
  template <class C>                          \
  struct Name {                               \
    EMBER_EW_CTOR(Name)                       \
    EMBER_EW_HD C operator()(C x) const {     \
      if constexpr (std::is_same_v<C, float>) \
        return ::ffn(x);                      \
      else                                    \
        return ::dfn(x);                      \
    }                                         \
  };
EMBER_EW_BESSEL(J0, j0f, j0)
EMBER_EW_BESSEL(J1, j1f, j1)
EMBER_EW_BESSEL(Y0, y0f, y0)
EMBER_EW_BESSEL(Y1, y1f, y1)
#undef EMBER_EW_BESSEL
// sin(x) / x, 1 at 0 (and 0 at ±inf).
template <class C>
struct SphericalJ0 {
  EMBER_EW_CTOR(SphericalJ0)
  EMBER_EW_HD C operator()(C x) const {
    if (isinf_(x)) return C(0);
    if (ew::abs(x) < C(0.5)) {
      C x2 = x * x;  // the Taylor series to x^10: exact to rounding below 0.5
      return C(1) +
             x2 * (C(-1.0 / 6) +
                   x2 * (C(1.0 / 120) +
                         x2 * (C(-1.0 / 5040) + x2 * (C(1.0 / 362880) + x2 * C(-1.0 / 39916800)))));
    }
    return ew::sin(x) / x;
  }
};

}  // namespace ember::cuda::ew
