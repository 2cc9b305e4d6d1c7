// Derivatives of the elementwise ops (Note [Op table]): one exhaustive switch over OpId gives
// each op's partial derivatives ∂out/∂input_k, written with ember ops. The vjp is
// grad · conj(∂out/∂x_k) (conjugate-Wirtinger convention), the jvp Σ_k t_k · ∂out/∂x_k; both
// live in elementwise_core.cpp's recorder call. The few ops that are not holomorphic on
// complex inputs (abs, conj) have their own vjp/jvp here.

#include <cmath>

#include "autograd/record.h"
#include "core/dispatch_state.h"
#include "core/tensor_util.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/reduce.h"
#include "kernels/stubs/activation_backward.h"
#include "ops/elementwise/elementwise_core.h"
#include "ops/elementwise/elementwise_grad.h"
#include "ops/elementwise/special_grad.h"

namespace ember {

namespace {

constexpr uint8_t X0 = 1, X1 = 2, X2 = 4, OUT = 8;

Tensor cst(double v) { return wrap_scalar(Scalar(v)); }
Tensor as(const Tensor& mask, const Tensor& like) { return mask.to(like.dtype()); }
Tensor half_if_equal(const Tensor& a, const Tensor& b, bool greater) {
  // maximum/minimum: the gradient goes to the larger (smaller) input, split evenly on ties.
  Tensor win = greater ? gt(a, b) : lt(a, b);
  return as(win, a) + as(eq(a, b), a) * cst(0.5);
}

// The id of a non-elementwise op, for the internal error of the switches below (they are only
// called with elementwise ops).
const char* op_id(OpId op) { return op == OpId::kCount ? "kCount" : op_info(op).id; }

}  // namespace

// Case labels for a whole elementwise family, and for every op that is not elementwise: the
// switches over OpId below list every op (no default:, -Werror=switch; Note [Op list]).
#define EMBER_CASE(op) case OpId::op:
// Elementwise ops with no gradient (bool or integer results), and those whose gradient is zero
// wherever it is defined; shared by the switches below.
#define EMBER_NONDIFF_ELEMENTWISE_OPS(_)                                                  \
  EMBER_UNARY_PREDICATE_OPS(_)                                                            \
  EMBER_COMPARISON_OPS(_)                                                                 \
  _(bitwise_not)                                                                          \
  _(logical_not) _(logical_and) _(logical_or) _(logical_xor) _(bitwise_and) _(bitwise_or) \
      _(bitwise_xor) _(bitwise_left_shift) _(bitwise_right_shift) _(isclose) _(fill)
#define EMBER_ZERO_GRAD_ELEMENTWISE_OPS(_) \
  _(sign) _(floor) _(ceil) _(trunc) _(round_decimals) _(floor_divide) _(div_trunc) _(div_floor)
#define EMBER_NOT_ELEMENTWISE(op, schema, traits) case OpId::op:

GradKind elementwise_grad_kind(OpId op) {
  switch (op) {
    EMBER_NONDIFF_ELEMENTWISE_OPS(EMBER_CASE)
    return GradKind::None;
    EMBER_ZERO_GRAD_ELEMENTWISE_OPS(EMBER_CASE)
    return GradKind::Zero;
    case OpId::nextafter:
      return GradKind::NotImplemented;
    // unary
    case OpId::neg:
    case OpId::abs:
    case OpId::sgn:
    case OpId::reciprocal:
    case OpId::sqrt:
    case OpId::rsqrt:
    case OpId::square:
    case OpId::exp:
    case OpId::exp2:
    case OpId::expm1:
    case OpId::log:
    case OpId::log2:
    case OpId::log10:
    case OpId::log1p:
    case OpId::sin:
    case OpId::cos:
    case OpId::tan:
    case OpId::asin:
    case OpId::acos:
    case OpId::atan:
    case OpId::sinh:
    case OpId::cosh:
    case OpId::tanh:
    case OpId::asinh:
    case OpId::acosh:
    case OpId::atanh:
    case OpId::sigmoid:
    case OpId::erf:
    case OpId::erfc:
    case OpId::erfinv:
    case OpId::frac:
    case OpId::relu:
    case OpId::relu6:
    case OpId::selu:
    case OpId::silu:
    case OpId::mish:
    case OpId::softsign:
    case OpId::hardsigmoid:
    case OpId::hardswish:
    case OpId::tanhshrink:
    case OpId::logsigmoid:
    case OpId::lgamma:
    case OpId::digamma:
    // binary
    case OpId::mul:
    case OpId::true_divide:
    case OpId::remainder:
    case OpId::fmod:
    case OpId::pow:
    case OpId::float_power:
    case OpId::atan2:
    case OpId::minimum:
    case OpId::maximum:
    case OpId::fmin:
    case OpId::fmax:
    case OpId::hypot:
    case OpId::copysign:
    case OpId::xlogy:
    // the other elementwise ops
    case OpId::add:
    case OpId::sub:
    case OpId::clamp:
    case OpId::logit:
    case OpId::polygamma:
    case OpId::mvlgamma:
    case OpId::nan_to_num:
    case OpId::leaky_relu:
    case OpId::elu:
    case OpId::celu:
    case OpId::gelu:
    case OpId::gelu_tanh:
    case OpId::softplus:
    case OpId::hardtanh:
    case OpId::hardshrink:
    case OpId::softshrink:
    case OpId::threshold:
    case OpId::lerp_scalar:
    case OpId::lerp_tensor:
    case OpId::addcmul:
    case OpId::addcdiv:
    case OpId::where:
    case OpId::conj_physical:
    case OpId::clamp_tensor:
    case OpId::copy:
      return GradKind::Partials;
      EMBER_BESSEL_FAMILY_OPS(EMBER_CASE)
      return bessel_grad_kind(op);
      EMBER_SPECIAL_FAMILY_OPS(EMBER_CASE)
      return special_grad_kind(op);
      EMBER_NON_ELEMENTWISE_OPS(EMBER_NOT_ELEMENTWISE)
    case OpId::kCount:
      EMBER_INTERNAL_ASSERT(false, "[elementwise_grad_kind] not an elementwise op: ", op_id(op));
      break;
  }
  return GradKind::NotImplemented;
}

uint8_t elementwise_saves(OpId op) {
  switch (op) {
    case OpId::neg:
    case OpId::frac:
    case OpId::add:
    case OpId::sub:
    case OpId::copy:
    case OpId::conj_physical:
    case OpId::lerp_scalar:
      return 0;
    case OpId::reciprocal:
    case OpId::sqrt:
    case OpId::rsqrt:
    case OpId::exp:
    case OpId::exp2:
    case OpId::expm1:
    case OpId::tan:
    case OpId::tanh:
    case OpId::sigmoid:
    case OpId::erfinv:
    case OpId::relu:
      return OUT;
    case OpId::pow:
    case OpId::float_power:
    case OpId::hypot:
    case OpId::copysign:
      return X0 | X1 | OUT;
    case OpId::true_divide:
    case OpId::mul:
    case OpId::atan2:
    case OpId::minimum:
    case OpId::maximum:
    case OpId::fmin:
    case OpId::fmax:
    case OpId::remainder:
    case OpId::fmod:
    case OpId::xlogy:
      return X0 | X1;
    case OpId::lerp_tensor:
    case OpId::addcmul:
    case OpId::addcdiv:
    case OpId::clamp_tensor:
      return X0 | X1 | X2;
    case OpId::sgn:
    case OpId::abs:
    // unary
    case OpId::square:
    case OpId::log:
    case OpId::log2:
    case OpId::log10:
    case OpId::log1p:
    case OpId::sin:
    case OpId::cos:
    case OpId::asin:
    case OpId::acos:
    case OpId::atan:
    case OpId::sinh:
    case OpId::cosh:
    case OpId::asinh:
    case OpId::acosh:
    case OpId::atanh:
    case OpId::erf:
    case OpId::erfc:
    case OpId::relu6:
    case OpId::selu:
    case OpId::silu:
    case OpId::mish:
    case OpId::softsign:
    case OpId::hardsigmoid:
    case OpId::hardswish:
    case OpId::tanhshrink:
    case OpId::logsigmoid:
    case OpId::lgamma:
    case OpId::digamma:
    // binary
    case OpId::nextafter:
    // the other elementwise ops
    case OpId::clamp:
    case OpId::logit:
    case OpId::polygamma:
    case OpId::mvlgamma:
    case OpId::nan_to_num:
    case OpId::leaky_relu:
    case OpId::elu:
    case OpId::celu:
    case OpId::gelu:
    case OpId::gelu_tanh:
    case OpId::softplus:
    case OpId::hardtanh:
    case OpId::hardshrink:
    case OpId::softshrink:
    case OpId::threshold:
    case OpId::where:
      EMBER_NONDIFF_ELEMENTWISE_OPS(EMBER_CASE)
      EMBER_ZERO_GRAD_ELEMENTWISE_OPS(EMBER_CASE)
      return X0;
      EMBER_BESSEL_FAMILY_OPS(EMBER_CASE)
      return bessel_saves(op);
      EMBER_SPECIAL_FAMILY_OPS(EMBER_CASE)
      return special_saves(op);
      EMBER_NON_ELEMENTWISE_OPS(EMBER_NOT_ELEMENTWISE)
    case OpId::kCount:
      EMBER_INTERNAL_ASSERT(false, "[elementwise_saves] not an elementwise op: ", op_id(op));
      break;
  }
  return X0;
}

Tensor elementwise_partial(OpId op, int k, const Tensor* x, const Tensor& o, const OpParams& p) {
  const Tensor& a = x[0];
  const Tensor& b = x[1];
  const Tensor& c = x[2];
  switch (op) {
    // ---- unary ----
    case OpId::neg:
      return cst(-1);
    case OpId::abs:
      return sgn(a);
    case OpId::sgn:
      return zeros_like(a);
    case OpId::reciprocal:
      return -(o * o);
    case OpId::sqrt:
      return reciprocal(o * cst(2));
    case OpId::rsqrt:
      return o * o * o * cst(-0.5);
    case OpId::square:
      return a * cst(2);
    case OpId::exp:
      return o;
    case OpId::exp2:
      return o * cst(std::log(2.0));
    case OpId::expm1:
      return o + cst(1);
    case OpId::log:
      return reciprocal(a);
    case OpId::log2:
      return reciprocal(a * cst(std::log(2.0)));
    case OpId::log10:
      return reciprocal(a * cst(std::log(10.0)));
    case OpId::log1p:
      return reciprocal(a + cst(1));
    case OpId::sin:
      return cos(a);
    case OpId::cos:
      return -sin(a);
    case OpId::tan:
      return o * o + cst(1);
    case OpId::asin:
      return rsqrt(cst(1) - a * a);
    case OpId::acos:
      return -rsqrt(cst(1) - a * a);
    case OpId::atan:
      return reciprocal(a * a + cst(1));
    case OpId::sinh:
      return cosh(a);
    case OpId::cosh:
      return sinh(a);
    case OpId::tanh:
      return cst(1) - o * o;
    case OpId::asinh:
      return rsqrt(a * a + cst(1));
    case OpId::acosh:
      return rsqrt((a - cst(1)) * (a + cst(1)));
    case OpId::atanh:
      return reciprocal(cst(1) - a * a);
    case OpId::sigmoid:
      return o * (cst(1) - o);
    case OpId::erf:
      return exp(-(a * a)) * cst(2 / std::sqrt(M_PI));
    case OpId::erfc:
      return exp(-(a * a)) * cst(-2 / std::sqrt(M_PI));
    case OpId::erfinv:
      return exp(o * o) * cst(std::sqrt(M_PI) / 2);
    case OpId::frac:
      return cst(1);
    case OpId::relu:
      return as(gt(o, cst(0)), o);
    case OpId::relu6:
      return as(logical_and(gt(a, cst(0)), lt(a, cst(6))), a);
    case OpId::selu: {
      const double scale = 1.0507009873554804934193349852946;
      const double alpha = 1.6732632423543772848170429916717;
      return where(gt(a, cst(0)), cst(scale), exp(a) * cst(scale * alpha)).to(a.dtype());
    }
    case OpId::silu: {
      Tensor s = sigmoid(a);
      return s * (cst(1) + a * (cst(1) - s));
    }
    case OpId::mish: {
      Tensor t = tanh(softplus(a));
      return t + a * sigmoid(a) * (cst(1) - t * t);
    }
    case OpId::softsign: {
      Tensor d = abs(a) + cst(1);
      return reciprocal(d * d);
    }
    case OpId::hardsigmoid:
      return as(logical_and(gt(a, cst(-3)), lt(a, cst(3))), a) * cst(1.0 / 6);
    case OpId::hardswish:
      return where(lt(a, cst(-3)), cst(0), where(le(a, cst(3)), a / cst(3) + cst(0.5), cst(1)))
          .to(a.dtype());
    case OpId::tanhshrink: {
      Tensor t = tanh(a);
      return t * t;
    }
    case OpId::logsigmoid:
      return sigmoid(-a);
    case OpId::lgamma:
      return digamma(a);
    case OpId::digamma:
      return polygamma(1, a);
    // ---- binary ----
    case OpId::mul:
      return k == 0 ? b : a;
    case OpId::true_divide:
      // From the operands, not the output (PyTorch's rule; the output is not saved).
      return k == 0 ? reciprocal(b) : -((a / b) / b);
    case OpId::remainder:
      return k == 0 ? cst(1) : -floor(a / b);
    case OpId::fmod:
      return k == 0 ? cst(1) : -trunc(a / b);
    case OpId::pow:
    case OpId::float_power: {
      if (k == 0) return where(eq(b, cst(0)), zeros_like(o), b * pow(a, b - cst(1)));
      Tensor br = b.is_complex() ? real(b) : b;
      Tensor cond = logical_and(eq(a, cst(0)), ge(br, cst(0)));
      return where(cond, zeros_like(o), o * log(a.to(o.dtype())));
    }
    case OpId::atan2: {
      Tensor d = a * a + b * b;
      return k == 0 ? b / d : -a / d;
    }
    case OpId::maximum:
      return k == 0 ? half_if_equal(a, b, true) : half_if_equal(b, a, true);
    case OpId::minimum:
      return k == 0 ? half_if_equal(a, b, false) : half_if_equal(b, a, false);
    case OpId::fmax: {
      Tensor m = logical_or(ge(a, b), isnan(b));
      return as(k == 0 ? m : logical_not(m), a);
    }
    case OpId::fmin: {
      Tensor m = logical_or(le(a, b), isnan(b));
      return as(k == 0 ? m : logical_not(m), a);
    }
    case OpId::hypot:
      return (k == 0 ? a : b) / o;
    case OpId::copysign:
      if (k == 1) return zeros_like(o);
      return where(eq(a, cst(0)), zeros_like(o), o / a);
    case OpId::xlogy:
      if (k == 1) return a / b;
      return where(logical_and(eq(a, cst(0)), le(b, cst(0))), zeros_like(b), log(b));
    case OpId::add:
      return k == 0 ? cst(1) : wrap_scalar(p.s[0]);
    case OpId::sub:
      return k == 0 ? cst(1) : -wrap_scalar(p.s[0]);
    case OpId::copy:
      return cst(1);
    // ---- parameterised unary ----
    case OpId::clamp: {
      int64_t flags = p.s[2].toLong();
      Tensor m = ones_like(a, TensorOptions().dtype(kBool));
      if (flags & 1) m = logical_and(m, ge(a, wrap_scalar(p.s[0])));
      if (flags & 2) m = logical_and(m, le(a, wrap_scalar(p.s[1])));
      return as(m, a);
    }
    case OpId::clamp_tensor:
      if (k == 0) return as(logical_and(ge(a, b), le(a, c)), a);
      // As PyTorch: with min > max the result is max, and only max gets the gradient.
      if (k == 1) return as(logical_and(lt(a, b), lt(b, c)), a);
      return as(logical_or(gt(a, c), lt(c, b)), a);
    case OpId::logit: {
      double eps = p.s[0].toDouble();
      Tensor d = reciprocal(a * (cst(1) - a));
      if (eps < 0)
        return where(logical_or(lt(a, cst(0)), gt(a, cst(1))), cst(NAN), d).to(a.dtype());
      return where(logical_or(lt(a, cst(eps)), gt(a, cst(1 - eps))), zeros_like(d), d);
    }
    case OpId::polygamma:
      return polygamma(p.s[0].toLong() + 1, a);
    case OpId::mvlgamma: {
      // d/dx log Γ_p(x) = Σ_{i<p} ψ(x - i/2).
      int64_t dim = p.s[0].toLong();
      Tensor d = digamma(a);
      for (int64_t i = 1; i < dim; ++i) d = d + digamma(a - cst(0.5 * double(i)));
      return d;
    }
    case OpId::nan_to_num:
      return as(isfinite(a), a);
    case OpId::leaky_relu:
      return where(gt(a, cst(0)), cst(1), wrap_scalar(p.s[0])).to(a.dtype());
    case OpId::elu:
    case OpId::celu: {
      double alpha = p.s[0].toDouble(), scale = p.s[1].toDouble(), in = p.s[2].toDouble();
      return where(gt(a, cst(0)), cst(scale), exp(a * cst(in)) * cst(alpha * scale * in))
          .to(a.dtype());
    }
    case OpId::gelu: {
      Tensor cdf = (erf(a * cst(M_SQRT1_2)) + cst(1)) * cst(0.5);
      Tensor pdf = exp(a * a * cst(-0.5)) * cst(1 / std::sqrt(2 * M_PI));
      return cdf + a * pdf;
    }
    case OpId::gelu_tanh: {
      const double k0 = std::sqrt(2 / M_PI), k1 = 0.044715;
      Tensor u = (a + a * a * a * cst(k1)) * cst(k0);
      Tensor t = tanh(u);
      return (t + cst(1)) * cst(0.5) +
             a * cst(0.5) * (cst(1) - t * t) * (a * a * cst(3 * k1) + cst(1)) * cst(k0);
    }
    case OpId::softplus: {
      double beta = p.s[0].toDouble(), th = p.s[1].toDouble();
      return where(gt(a * cst(beta), cst(th)), ones_like(a), sigmoid(a * cst(beta)));
    }
    case OpId::hardtanh:
      return as(logical_and(gt(a, wrap_scalar(p.s[0])), lt(a, wrap_scalar(p.s[1]))), a);
    case OpId::hardshrink:
    case OpId::softshrink: {
      double l = p.s[0].toDouble();
      return as(logical_or(lt(a, cst(-l)), gt(a, cst(l))), a);
    }
    case OpId::threshold:
      return as(gt(a, wrap_scalar(p.s[0])), a);
    // ---- ternary ----
    case OpId::lerp_scalar:
      return k == 0 ? cst(1) - wrap_scalar(p.s[0]) : wrap_scalar(p.s[0]);
    case OpId::lerp_tensor:
      return k == 0 ? cst(1) - c : k == 1 ? c : b - a;
    case OpId::addcmul: {
      Tensor v = wrap_scalar(p.s[0]);
      return k == 0 ? cst(1) : k == 1 ? c * v : b * v;
    }
    case OpId::addcdiv: {
      Tensor v = wrap_scalar(p.s[0]);
      return k == 0 ? cst(1) : k == 1 ? v / c : -(v * b) / (c * c);
    }
    // ---- no partials: not differentiable, zero gradient or a rule of their own ----
    case OpId::nextafter:
    case OpId::where:
    case OpId::conj_physical:
      EMBER_NONDIFF_ELEMENTWISE_OPS(EMBER_CASE)
      EMBER_ZERO_GRAD_ELEMENTWISE_OPS(EMBER_CASE)
      break;
      EMBER_BESSEL_FAMILY_OPS(EMBER_CASE)
      return bessel_partial(op, k, x, o, p);
      EMBER_SPECIAL_FAMILY_OPS(EMBER_CASE)
      return special_partial(op, k, x, o, p);
      EMBER_NON_ELEMENTWISE_OPS(EMBER_NOT_ELEMENTWISE)
    case OpId::kCount:
      EMBER_INTERNAL_ASSERT(false, "[elementwise_partial] not an elementwise op: ", op_id(op));
      break;
  }
  EMBER_CHECK(false, "[", op_name(op), "] has no vjp rule");
  return {};
}

Tensor relu_backward(const Tensor& g, const Tensor& y, bool through_y) {
  // One pass when nothing watches the result (no graph to build through it, no tracer, vmap or
  // coverage layer that must see its ops) and the operands are plain buffers of one layout.
  const bool plain =
      !through_y && !(GradMode::is_enabled() && g.requires_grad()) &&
      autograd::tls().fw_levels == 0 &&
      !(dispatch::active_layers() & (dispatch::kTracer | dispatch::kVmap | dispatch::kCoverage));
  const ScalarType dt = g.dtype();
  if (plain && relu_backward_stub.get(g.device().type()) && y.dtype() == dt &&
      (dt == kFloat || dt == kDouble || dt == kBFloat16 || dt == kHalf) &&
      g.device() == y.device() && g.sizes() == y.sizes() && g.is_contiguous() &&
      y.is_contiguous() && !g.is_conj() && !y.is_conj()) {
    Tensor r = empty_tensor(g.sizes(), dt, g.device());
    if (r.numel() > 0) relu_backward_stub(g.device().type(), g, y, r);
    return r;
  }
  // y * 0 keeps the result in y's graph (a zero derivative, as PyTorch's threshold_backward); it
  // is only read where y <= 0, i.e. y == 0.
  return where(gt(y, wrap_scalar(0.0)), g, through_y ? y * 0.0 : wrap_scalar(0.0));
}

#undef EMBER_CASE
#undef EMBER_NONDIFF_ELEMENTWISE_OPS
#undef EMBER_ZERO_GRAD_ELEMENTWISE_OPS
#undef EMBER_NOT_ELEMENTWISE

}  // namespace ember
