#pragma once
#include "ops/op_layer.h"  // Note [Layer includes]
// Derivative rules of the special-function ops, one file per family: elementwise_grad.cpp's
// switches hand these ops to the functions below (same contracts as elementwise_grad.h).

#include "ops/elementwise/elementwise_grad.h"

namespace ember {

/// The Bessel, Airy, error-function and normal-distribution family (bessel_grad.cpp).
#define EMBER_BESSEL_FAMILY_OPS(_)                                                           \
  _(i0) _(special_i0e) _(special_i1) _(special_i1e) _(special_ndtr) _(special_ndtri)        \
  _(special_log_ndtr) _(special_erfcx) _(special_bessel_j0) _(special_bessel_j1)            \
  _(special_bessel_y0) _(special_bessel_y1) _(special_modified_bessel_i0)                   \
  _(special_modified_bessel_i1) _(special_modified_bessel_k0) _(special_modified_bessel_k1) \
  _(special_scaled_modified_bessel_k0) _(special_scaled_modified_bessel_k1)                 \
  _(special_spherical_bessel_j0) _(special_airy_ai)

/// The other new elementwise ops: plain math, the incomplete gamma and zeta functions and the
/// orthogonal polynomials (special_grad.cpp).
#define EMBER_SPECIAL_FAMILY_OPS(_)                                                          \
  _(sinc) _(deg2rad) _(rad2deg) _(logaddexp) _(logaddexp2) _(heaviside) _(gcd) _(lcm)       \
  _(igamma) _(igammac) _(special_entr) EMBER_SPECIAL_BINARY_OPS(_)

GradKind bessel_grad_kind(OpId op);
uint8_t bessel_saves(OpId op);
Tensor bessel_partial(OpId op, int k, const Tensor* x, const Tensor& o, const OpParams& p);

GradKind special_grad_kind(OpId op);
uint8_t special_saves(OpId op);
Tensor special_partial(OpId op, int k, const Tensor* x, const Tensor& o, const OpParams& p);

}  // namespace ember
