// Derivatives of the special family (special_grad.h), as PyTorch 1.13's derivatives.yaml:
// igamma, igammac and zeta differentiate only in their second argument (the first raises
// NotImplementedError when it needs a gradient), heaviside's backward raises, and the
// orthogonal polynomials, gcd and lcm record nothing.
#include <cmath>

#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/special.h"
#include "ops/elementwise/elementwise_core.h"
#include "ops/elementwise/special_grad.h"

namespace ember {

namespace {

constexpr uint8_t X0 = 1, X1 = 2;
constexpr double kPi = 3.14159265358979323846;

Tensor cst(double v) { return wrap_scalar(Scalar(v)); }

[[noreturn]] void no_derivative(const char* what) {
  EMBER_THROW(NotImplementedError, "[", what, "] the derivative for '", what,
              "' is not implemented.");
}

}  // namespace

#define EMBER_CASE(op) case OpId::op:
// The polynomials: float results without a derivative in PyTorch 1.13 (no grad_fn).
// clang-format off
#define EMBER_POLYNOMIAL_OPS(_)                                                          \
  _(special_chebyshev_polynomial_t) _(special_chebyshev_polynomial_u)                    \
  _(special_chebyshev_polynomial_v) _(special_chebyshev_polynomial_w)                    \
  _(special_shifted_chebyshev_polynomial_t) _(special_shifted_chebyshev_polynomial_u)    \
  _(special_shifted_chebyshev_polynomial_v) _(special_shifted_chebyshev_polynomial_w)    \
  _(special_hermite_polynomial_h) _(special_hermite_polynomial_he)                       \
  _(special_laguerre_polynomial_l) _(special_legendre_polynomial_p)
// clang-format on

GradKind special_grad_kind(OpId op) {
  switch (op) {
    case OpId::gcd:
    case OpId::lcm:
      EMBER_POLYNOMIAL_OPS(EMBER_CASE)
      return GradKind::None;
    case OpId::heaviside:
      return GradKind::NotImplemented;
    case OpId::sinc:
    case OpId::deg2rad:
    case OpId::rad2deg:
    case OpId::logaddexp:
    case OpId::logaddexp2:
    case OpId::igamma:
    case OpId::igammac:
    case OpId::special_entr:
    case OpId::special_xlog1py:
    case OpId::special_zeta:
      return GradKind::Partials;
    default:
      break;
  }
  return GradKind::NotImplemented;
}

uint8_t special_saves(OpId op) {
  switch (op) {
    case OpId::deg2rad:
    case OpId::rad2deg:
      return 0;
    case OpId::logaddexp:
    case OpId::logaddexp2:
    case OpId::igamma:
    case OpId::igammac:
    case OpId::special_xlog1py:
    case OpId::special_zeta:
      return X0 | X1;
    default:
      break;
  }
  return X0;
}

Tensor special_partial(OpId op, int k, const Tensor* x, const Tensor& o, const OpParams& p) {
  (void)o;
  (void)p;
  const Tensor& a = x[0];
  const Tensor& b = x[1];
  switch (op) {
    case OpId::sinc: {
      // (cos(πx) πx - sin(πx)) / (πx²), 0 at x = 0 (evaluated at x = 1 there, so that no
      // NaN reaches the second derivative through the select).
      Tensor zero = eq(a, cst(0));
      Tensor safe = where(zero, ones_like(a), a);
      Tensor px = safe * cst(kPi);
      Tensor d = (px * cos(px) - sin(px)) / (px * safe);
      return where(zero, zeros_like(d), d);
    }
    case OpId::deg2rad:
      return cst(kPi / 180);
    case OpId::rad2deg:
      return cst(180 / kPi);
    case OpId::logaddexp:
      return reciprocal(exp(k == 0 ? b - a : a - b) + cst(1));
    case OpId::logaddexp2:
      return reciprocal(pow(cst(2.0), k == 0 ? b - a : a - b) + cst(1));
    case OpId::igamma:
    case OpId::igammac: {
      if (k == 0) no_derivative(op == OpId::igamma ? "igamma: input" : "igammac: input");
      // ∂P/∂x = x^(a-1) e^-x / Γ(a); Q = 1 - P.
      Tensor d = exp((a - cst(1)) * log(b) - b - lgamma(a));
      return op == OpId::igamma ? d : -d;
    }
    case OpId::special_entr:
      return -(log(a) + cst(1));
    case OpId::special_xlog1py:
      if (k == 1) return a / (b + cst(1));
      return where(logical_and(eq(a, cst(0)), le(b, cst(-1))), zeros_like(b), log1p(b));
    case OpId::special_zeta:
      // ∂ζ(s, q)/∂q = -s ζ(s + 1, q).
      if (k == 0) no_derivative("zeta");
      return -a * special::zeta(a + cst(1), b);
    default:
      break;
  }
  EMBER_CHECK(false, "[", op_name(op), "] has no vjp rule");
  return {};
}

#undef EMBER_CASE
#undef EMBER_POLYNOMIAL_OPS

}  // namespace ember
