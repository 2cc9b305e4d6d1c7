// Derivatives of the bessel family (special_grad.h).

#include "ops/elementwise/special_grad.h"

namespace ember {

GradKind bessel_grad_kind(OpId) { return GradKind::NotImplemented; }
uint8_t bessel_saves(OpId) { return 1; }
Tensor bessel_partial(OpId op, int, const Tensor*, const Tensor&, const OpParams&) {
  EMBER_CHECK(false, "[", op_name(op), "] has no vjp rule");
  return {};
}

}  // namespace ember
