// Derivatives of the bessel family (special_grad.h). PyTorch 1.13 differentiates i0, i0e, i1,
// i1e and the error-function/normal ops; its Bessel j/y, modified i/k, spherical j0 and Airy
// functions have no derivative formula and record no graph node (the result does not require
// grad), which GradKind::None reproduces.

#include <cmath>

#include "ember/ops.h"
#include "ember/special.h"
#include "ops/elementwise/elementwise_core.h"
#include "ops/elementwise/special_grad.h"

namespace ember {

namespace {

constexpr uint8_t X0 = 1, OUT = 8;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)

Tensor cst(double v) { return wrap_scalar(Scalar(v)); }

}  // namespace

GradKind bessel_grad_kind(OpId op) {
  switch (op) {
    case OpId::i0:
    case OpId::special_i0e:
    case OpId::special_i1:
    case OpId::special_i1e:
    case OpId::special_ndtr:
    case OpId::special_ndtri:
    case OpId::special_log_ndtr:
    case OpId::special_erfcx:
      return GradKind::Partials;
    default:
      return GradKind::None;
  }
}

uint8_t bessel_saves(OpId op) {
  switch (op) {
    case OpId::special_ndtri:
      return OUT;
    case OpId::special_i0e:
    case OpId::special_i1:
    case OpId::special_i1e:
    case OpId::special_log_ndtr:
    case OpId::special_erfcx:
      return X0 | OUT;
    default:
      return X0;
  }
}

Tensor bessel_partial(OpId op, int, const Tensor* x, const Tensor& o, const OpParams&) {
  const Tensor& a = x[0];
  switch (op) {
    case OpId::i0:
      return special::i1(a);
    case OpId::special_i0e:
      return special::i1e(a) - sgn(a) * o;
    case OpId::special_i1:
      // i1'(x) = i0(x) - i1(x) / x, 1/2 at 0.
      return where(eq(a, cst(0)), cst(0.5), i0(a) - o / a).to(o.dtype());
    case OpId::special_i1e:
      return where(eq(a, cst(0)), cst(0.5), special::i0e(a) - o * (sgn(a) + reciprocal(a)))
          .to(o.dtype());
    case OpId::special_ndtr:
      return exp(a * a * cst(-0.5)) * cst(kInvSqrt2Pi);
    case OpId::special_ndtri:
      return exp(o * o * cst(0.5)) * cst(1 / kInvSqrt2Pi);
    case OpId::special_log_ndtr:
      return exp(-(a * a * cst(0.5) + o)) * cst(kInvSqrt2Pi);
    case OpId::special_erfcx:
      return a * o * cst(2) - cst(2 / std::sqrt(M_PI));
    default:
      break;
  }
  EMBER_CHECK(false, "[", op_name(op), "] has no vjp rule");
  return {};
}

}  // namespace ember
