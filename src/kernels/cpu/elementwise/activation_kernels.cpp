// Activations (relu ... logsigmoid from EMBER_UNARY_OPS) and the parameterised elementwise ops:
// round(decimals), logit, nan_to_num, leaky_relu, elu/celu/selu, gelu (erf and tanh forms),
// softplus, hardtanh/relu6, hardshrink, softshrink, threshold. Parameters arrive in OpParams::s
// in the order activation_ops.cpp writes them. Formulas and NaN / signed-zero behaviour follow
// PyTorch 1.13's CPU kernels; the vector forms keep the same selects so that both paths agree.
#include "kernels/cpu/elementwise/gamma_math.h"
#include "kernels/cpu/elementwise/loops.h"
#include "kernels/cpu/elementwise/math_functors.h"

namespace ember::cpu::EMBER_CPU_CAP {
namespace {

using math::kIsComplex;

// relu keeps -0.0 and NaN (x < 0 is false for both), as PyTorch's clamp_min.
template <class C>
struct Relu {
  explicit Relu(const OpParams&) {}
  C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>)
      return x;
    else
      return x < C(0) ? C(0) : x;
  }
  Vec<C> vec(Vec<C> x) const { return vselect(x < C(0), splat(C(0)), x); }
};

// hardtanh = clamp(x, lo, hi) with NaN kept: max first, then min, so hi wins when lo > hi.
template <class C>
struct Hardtanh {
  C lo, hi;
  explicit Hardtanh(const OpParams& p) : lo(p.s[0].to<C>()), hi(p.s[1].to<C>()) {}
  Hardtanh(C l, C h) : lo(l), hi(h) {}
  C operator()(C x) const {
    C t = x < lo ? lo : x;
    return t > hi ? hi : t;
  }
  Vec<C> vec(Vec<C> x) const {
    Vec<C> t = vselect(x < lo, splat(lo), x);
    return vselect(t > hi, splat(hi), t);
  }
};

template <class C>
struct Relu6 : Hardtanh<C> {
  explicit Relu6(const OpParams&) : Hardtanh<C>(C(0), C(6)) {}
};

// elu family: x <= 0 ? expm1(x * input_scale) * alpha * scale : x * scale (params: alpha, scale,
// input_scale). expm1 rather than PyTorch 1.13's exp(x) - 1: more accurate near 0.
template <class C>
struct Elu {
  C negcoef, poscoef, negipt;
  explicit Elu(const OpParams& p) : Elu(p.s[0].to<C>(), p.s[1].to<C>(), p.s[2].to<C>()) {}
  Elu(C alpha, C scale, C input_scale)
      : negcoef(alpha * scale), poscoef(scale), negipt(input_scale) {}
  template <class V>
  V f(V x) const {
    if constexpr (std::is_same_v<C, float>)
      return math::expm1_f32(x);
    else if constexpr (std::is_same_v<V, C>)
      return std::expm1(x);
    else
      return vexpm1(x);
  }
  C operator()(C x) const { return x <= C(0) ? f(x * negipt) * negcoef : x * poscoef; }
  Vec<C> vec(Vec<C> x) const { return vselect(x <= C(0), f(x * negipt) * negcoef, x * poscoef); }
};

template <class C>
struct Selu : Elu<C> {
  explicit Selu(const OpParams&)
      : Elu<C>(C(1.6732632423543772848170429916717), C(1.0507009873554804934193349852946), C(1)) {}
};

template <class C>
struct Silu {
  explicit Silu(const OpParams&) {}
  C operator()(C x) const { return x / (C(1) + std::exp(-x)); }
  Vec<C> vec(Vec<C> x) const { return x / (C(1) + vexp(-x)); }
};

template <class C>
struct Mish {
  explicit Mish(const OpParams&) {}
  C operator()(C x) const { return x * std::tanh(std::log1p(std::exp(x))); }
  Vec<C> vec(Vec<C> x) const { return x * vtanh(vlog1p(vexp(x))); }
};

template <class C>
struct Softsign {
  explicit Softsign(const OpParams&) {}
  C operator()(C x) const {
    if constexpr (kIsComplex<C>)
      return x / (typename C::value_type(1) + std::abs(x));
    else
      return x / (C(1) + std::abs(x));
  }
  Vec<C> vec(Vec<C> x) const { return x / (C(1) + math::vabs(x)); }
};

// min(max(x + 3, 0), 6) / 6 with NaN propagated.
template <class C>
struct Hardsigmoid {
  explicit Hardsigmoid(const OpParams&) {}
  C operator()(C x) const {
    C t = x + C(3);
    t = t < C(0) ? C(0) : t;
    return (t > C(6) ? C(6) : t) / C(6);
  }
  Vec<C> vec(Vec<C> x) const {
    Vec<C> t = x + C(3);
    t = vselect(t < C(0), splat(C(0)), t);
    return vselect(t > C(6), splat(C(6)), t) / C(6);
  }
};

template <class C>
struct Hardswish {
  explicit Hardswish(const OpParams&) {}
  C operator()(C x) const {
    C t = x + C(3);
    t = t < C(0) ? C(0) : t;
    return x * (t > C(6) ? C(6) : t) / C(6);
  }
  Vec<C> vec(Vec<C> x) const {
    Vec<C> t = x + C(3);
    t = vselect(t < C(0), splat(C(0)), t);
    return x * vselect(t > C(6), splat(C(6)), t) / C(6);
  }
};

template <class C>
struct Tanhshrink {
  explicit Tanhshrink(const OpParams&) {}
  C operator()(C x) const { return x - std::tanh(x); }
  Vec<C> vec(Vec<C> x) const { return x - vtanh(x); }
};

// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable for both signs.
template <class C>
struct Logsigmoid {
  explicit Logsigmoid(const OpParams&) {}
  C operator()(C x) const { return (x < C(0) ? x : C(0)) - std::log1p(std::exp(-std::abs(x))); }
  Vec<C> vec(Vec<C> x) const {
    return vselect(x < C(0), x, splat(C(0))) - vlog1p(vexp(-math::vabs(x)));
  }
};

// round(x, decimals) (params: decimals). Half to even via rint; PyTorch's formula for
// decimals != 0, dividing first when decimals < 0. Integers only come with decimals == 0.
template <class C>
struct RoundDecimals {
  C scale{};
  int mode = 0;  // 0: plain rint, 1: multiply first, -1: divide first
  explicit RoundDecimals(const OpParams& p) {
    int64_t d = p.s[0].toLong();
    if constexpr (!std::is_integral_v<C>) {
      mode = d == 0 ? 0 : d > 0 ? 1 : -1;
      scale = C(std::pow(10.0, d < 0 ? -double(d) : double(d)));
    }
  }
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      return x;
    } else {
      if (mode == 0) return std::nearbyint(x);
      if (mode > 0) return std::nearbyint(x * scale) / scale;
      return std::nearbyint(x / scale) * scale;
    }
  }
  Vec<C> vec(Vec<C> x) const {
    if (mode == 0) return math::vrint_(x);
    if (mode > 0) return math::vrint_(x * scale) / scale;
    return math::vrint_(x / scale) * scale;
  }
};

// PyTorch 1.13 rounds bfloat16 with decimals in bfloat16 arithmetic: x * 10^d is rounded to
// bfloat16 before rint (2.671875 * 100 -> 268, so round(2.675, 2) is 2.6875 there). Matching
// that needs the intermediate rounding, hence a separate scalar functor for bfloat16.
template <class C>
struct RoundDecimalsBf16 {
  RoundDecimals<C> r;
  explicit RoundDecimalsBf16(const OpParams& p) : r(p) { r.scale = bf16(r.scale); }
  static C bf16(C v) { return C(BFloat16(v)); }
  C operator()(C x) const {
    if (r.mode == 0) return std::nearbyint(x);
    if (r.mode > 0) return std::nearbyint(bf16(x * r.scale)) / r.scale;
    return std::nearbyint(bf16(x / r.scale)) * r.scale;
  }
};

// logit (params: eps, negative for none): log(x / (1 - x)) after clamping to [eps, 1 - eps].
template <class C>
struct Logit {
  C lo, hi;
  bool clamp;
  explicit Logit(const OpParams& p) {
    double eps = p.s[0].toDouble();
    clamp = eps >= 0;
    lo = C(eps);
    hi = C(1) - lo;
  }
  C operator()(C x) const {
    if (clamp) x = x < lo ? lo : (x > hi ? hi : x);
    return std::log(x / (C(1) - x));
  }
  Vec<C> vec(Vec<C> x) const {
    if (clamp) x = vselect(x < lo, splat(lo), vselect(x > hi, splat(hi), x));
    return vlog(x / (C(1) - x));
  }
};

// PyTorch 1.13 takes logit's bounds in bfloat16 for bfloat16 tensors: 1 - 1e-6 rounds to 1,
// so eps=1e-6 maps 1 to inf there, not to log(1e6).
template <class C>
struct LogitBf16 : Logit<C> {
  explicit LogitBf16(const OpParams& p) : Logit<C>(p) {
    this->lo = C(BFloat16(this->lo));
    this->hi = C(BFloat16(C(1) - this->lo));
  }
};

// The gamma family (gamma_math.h), evaluated in double. polygamma's param is n, mvlgamma's p.
template <class C>
struct Lgamma {
  explicit Lgamma(const OpParams&) {}
  C operator()(C x) const {
    // float: libm's float lgamma (PyTorch's std::lgamma(float)), about twice as fast as double.
    if constexpr (std::is_same_v<C, float>) return gammafn::lgamma_f(x);
    return C(gammafn::lgamma_d(double(x)));
  }
};
template <class C>
struct Digamma {
  explicit Digamma(const OpParams&) {}
  C operator()(C x) const { return C(gammafn::digamma_d(double(x))); }
};
template <class C>
struct Polygamma {
  int64_t n;
  explicit Polygamma(const OpParams& p) : n(p.s[0].toLong()) {}
  C operator()(C x) const { return C(gammafn::polygamma_d(n, double(x))); }
};
template <class C>
struct Mvlgamma {
  int64_t dim;
  explicit Mvlgamma(const OpParams& p) : dim(p.s[0].toLong()) {}
  C operator()(C x) const { return C(gammafn::mvlgamma_d(double(x), dim)); }
};

// nan_to_num (params: nan, posinf, neginf, already resolved to the dtype's limits by the op);
// the identity on bool and integers.
template <class C>
struct NanToNum {
  C nan{}, posinf{}, neginf{};
  explicit NanToNum(const OpParams& p) {
    if constexpr (!std::is_integral_v<C>) {
      nan = p.s[0].to<C>();
      posinf = p.s[1].to<C>();
      neginf = p.s[2].to<C>();
    }
  }
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      return x;
    } else {
      constexpr C inf = std::numeric_limits<C>::infinity();
      return x != x ? nan : x == inf ? posinf : x == -inf ? neginf : x;
    }
  }
  Vec<C> vec(Vec<C> x) const {
    constexpr C inf = std::numeric_limits<C>::infinity();
    auto is_nan = x != x, is_pos = x == inf, is_neg = x == -inf;  // masks of the input
    Vec<C> r = vselect(is_nan, splat(nan), x);
    r = vselect(is_pos, splat(posinf), r);
    return vselect(is_neg, splat(neginf), r);
  }
};

template <class C>
struct LeakyRelu {
  C slope;
  explicit LeakyRelu(const OpParams& p) : slope(p.s[0].to<C>()) {}
  C operator()(C x) const { return x > C(0) ? x : x * slope; }
  Vec<C> vec(Vec<C> x) const { return vselect(x > C(0), x, x * slope); }
};

// gelu, erf form: x / 2 * (1 + erf(x / sqrt(2))); float (and bfloat16) use math::gelu_erf_f32
// (Note [gelu erf form]): one exp, no erf, and relatively accurate where 1 + erf cancels.
template <class C>
struct Gelu {
  explicit Gelu(const OpParams&) {}
  static constexpr C kAlpha = C(0.70710678118654752440);  // 1 / sqrt(2)
  C operator()(C x) const {
    if constexpr (std::is_same_v<C, float>)
      return math::gelu_erf_f32(x);
    else
      return x * C(0.5) * (C(1) + std::erf(x * kAlpha));
  }
  Vec<C> vec(Vec<C> x) const {
    if constexpr (std::is_same_v<C, float>)
      return math::gelu_erf_f32(x);
    else
      return x * C(0.5) * (C(1) + verf(x * kAlpha));
  }
};

// gelu, tanh form: x / 2 * (1 + tanh(y)), y = sqrt(2 / pi) * (x + 0.044715 x^3), computed as
// x / (1 + exp(-2y)) (the same function, since (1 + tanh(y)) / 2 = sigmoid(2y)): one exp
// instead of tanh, and no cancellation for x < 0.
template <class C>
struct GeluTanh {
  explicit GeluTanh(const OpParams&) {}
  static constexpr C kMinus2Beta = C(-2 * 0.79788456080286535588);  // -2 sqrt(2 / pi)
  static constexpr C kKappa = C(0.044715);
  C operator()(C x) const { return x / (C(1) + std::exp(kMinus2Beta * (x + kKappa * x * x * x))); }
  Vec<C> vec(Vec<C> x) const { return x / (C(1) + vexp(kMinus2Beta * (x + kKappa * x * x * x))); }
};

// softplus (params: beta, threshold): x where x * beta > threshold, else log1p(exp(x beta)) / beta.
template <class C>
struct Softplus {
  C beta, threshold;
  explicit Softplus(const OpParams& p) : beta(p.s[0].to<C>()), threshold(p.s[1].to<C>()) {}
  C operator()(C x) const {
    C z = x * beta;
    return z > threshold ? x : std::log1p(std::exp(z)) / beta;
  }
  Vec<C> vec(Vec<C> x) const {
    Vec<C> z = x * beta;
    return vselect(z > threshold, x, vlog1p(vexp(z)) / beta);
  }
};

template <class C>
struct Hardshrink {
  C lambd;
  explicit Hardshrink(const OpParams& p) : lambd(p.s[0].to<C>()) {}
  C operator()(C x) const { return (x >= -lambd && x <= lambd) ? C(0) : x; }
  Vec<C> vec(Vec<C> x) const { return vselect((x >= -lambd) & (x <= lambd), splat(C(0)), x); }
};

// NaN maps to 0 (neither comparison holds), as PyTorch 1.13.
template <class C>
struct Softshrink {
  C lambd;
  explicit Softshrink(const OpParams& p) : lambd(p.s[0].to<C>()) {}
  C operator()(C x) const { return x > lambd ? x - lambd : (x < -lambd ? x + lambd : C(0)); }
  Vec<C> vec(Vec<C> x) const {
    return vselect(x > lambd, x - lambd, vselect(x < -lambd, x + lambd, splat(C(0))));
  }
};

// threshold (params: threshold, value): x <= threshold ? value : x. Both are cast to the
// dtype first (threshold(int_tensor, 0.5, ...) compares with 0), as PyTorch.
template <class C>
struct Threshold {
  C th, value;
  explicit Threshold(const OpParams& p) : th(p.s[0].to<C>()), value(p.s[1].to<C>()) {}
  C operator()(C x) const { return x <= th ? value : x; }
  Vec<C> vec(Vec<C> x) const { return vselect(x <= th, splat(value), x); }
};

using BF16Float = TypeList<BFloat16, float, double>;  // PyTorch 1.13 has no float16 CPU kernels
using FloatOnly = TypeList<float, double>;

}  // namespace

void register_activation_kernels(KernelTable& t) {
  using O = OpId;
  reg<Relu, 1>(t, O::relu, IntTypes{}, BF16Float{});
  reg<Relu6, 1>(t, O::relu6, IntTypes{}, BF16Float{});
  reg<Selu, 1>(t, O::selu, BF16Float{});
  reg<Silu, 1>(t, O::silu, BF16Float{}, ComplexTypes{});
  reg<Mish, 1>(t, O::mish, FloatOnly{});
  reg<Softsign, 1>(t, O::softsign, FloatTypes{}, ComplexTypes{});
  reg<Hardsigmoid, 1>(t, O::hardsigmoid, BF16Float{});
  reg<Hardswish, 1>(t, O::hardswish, BF16Float{});
  reg<Tanhshrink, 1>(t, O::tanhshrink, BF16Float{}, ComplexTypes{});
  reg<Logsigmoid, 1>(t, O::logsigmoid, BF16Float{});

  reg<RoundDecimals, 1>(t, O::round_decimals, IntTypes{}, FloatOnly{});
  reg<RoundDecimalsBf16, 1>(t, O::round_decimals, TypeList<BFloat16>{});
  reg<Logit, 1>(t, O::logit, FloatOnly{});
  reg<LogitBf16, 1>(t, O::logit, TypeList<BFloat16>{});
  reg<Lgamma, 1>(t, O::lgamma, BF16Float{});
  reg<Digamma, 1>(t, O::digamma, BF16Float{});
  reg<Polygamma, 1>(t, O::polygamma, BF16Float{});
  reg<Mvlgamma, 1>(t, O::mvlgamma, BF16Float{});
  reg<NanToNum, 1>(t, O::nan_to_num, BoolType{}, IntTypes{}, FloatTypes{});
  reg<LeakyRelu, 1>(t, O::leaky_relu, BF16Float{});
  reg<Elu, 1>(t, O::elu, BF16Float{});
  reg<Elu, 1>(t, O::celu, BF16Float{});
  reg<Gelu, 1>(t, O::gelu, BF16Float{});
  reg<GeluTanh, 1>(t, O::gelu_tanh, BF16Float{});
  reg<Softplus, 1>(t, O::softplus, BF16Float{});
  reg<Hardtanh, 1>(t, O::hardtanh, IntTypes{}, BF16Float{});
  reg<Hardshrink, 1>(t, O::hardshrink, BF16Float{});
  reg<Softshrink, 1>(t, O::softshrink, BF16Float{});
  reg<Threshold, 1>(t, O::threshold, IntTypes{}, BF16Float{});
}

}  // namespace ember::cpu::EMBER_CPU_CAP
