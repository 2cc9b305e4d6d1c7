// Public functions of torch.special's Bessel, Airy, error-function and normal-distribution ops
// (ember/special.h): each is one elementwise op on the generic path (elementwise_core.h), its
// dtype rule IntToFloat (integers and bool compute in the default float dtype).
#include "ember/ops.h"
#include "ember/special.h"
#include "ops/elementwise/elementwise_core.h"

namespace ember::special {

#define EMBER_DEFINE_SPECIAL_UNARY(name, op)                          \
  Tensor name(const Tensor& x) { return elementwise(OpId::op, {x}); } \
  Tensor& name##_out(Tensor& out, const Tensor& x) {                  \
    elementwise(OpId::op, {x}, {}, OutMode::Out, &out);               \
    return out;                                                       \
  }
EMBER_DEFINE_SPECIAL_UNARY(i0e, special_i0e)
EMBER_DEFINE_SPECIAL_UNARY(i1, special_i1)
EMBER_DEFINE_SPECIAL_UNARY(i1e, special_i1e)
EMBER_DEFINE_SPECIAL_UNARY(ndtr, special_ndtr)
EMBER_DEFINE_SPECIAL_UNARY(ndtri, special_ndtri)
EMBER_DEFINE_SPECIAL_UNARY(log_ndtr, special_log_ndtr)
EMBER_DEFINE_SPECIAL_UNARY(erfcx, special_erfcx)
EMBER_DEFINE_SPECIAL_UNARY(bessel_j0, special_bessel_j0)
EMBER_DEFINE_SPECIAL_UNARY(bessel_j1, special_bessel_j1)
EMBER_DEFINE_SPECIAL_UNARY(bessel_y0, special_bessel_y0)
EMBER_DEFINE_SPECIAL_UNARY(bessel_y1, special_bessel_y1)
EMBER_DEFINE_SPECIAL_UNARY(modified_bessel_i0, special_modified_bessel_i0)
EMBER_DEFINE_SPECIAL_UNARY(modified_bessel_i1, special_modified_bessel_i1)
EMBER_DEFINE_SPECIAL_UNARY(modified_bessel_k0, special_modified_bessel_k0)
EMBER_DEFINE_SPECIAL_UNARY(modified_bessel_k1, special_modified_bessel_k1)
EMBER_DEFINE_SPECIAL_UNARY(scaled_modified_bessel_k0, special_scaled_modified_bessel_k0)
EMBER_DEFINE_SPECIAL_UNARY(scaled_modified_bessel_k1, special_scaled_modified_bessel_k1)
EMBER_DEFINE_SPECIAL_UNARY(spherical_bessel_j0, special_spherical_bessel_j0)
EMBER_DEFINE_SPECIAL_UNARY(airy_ai, special_airy_ai)
#undef EMBER_DEFINE_SPECIAL_UNARY

/// torch.special.i0 is torch.i0.
Tensor i0(const Tensor& x) { return ember::i0(x); }

}  // namespace ember::special
