// Public functions of torch.special's remaining functions (include/ember/special.h: entr,
// xlog1py, zeta, the orthogonal polynomials and the aliases of main-namespace functions) and
// of frexp / ldexp (include/ember/float_bits.h). The elementwise ones take the generic path
// (elementwise_core.h); their kernels live in kernels/cpu/elementwise/special_kernels.cpp.
#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/float_bits.h"
#include "ember/ops.h"
#include "ember/reduce.h"
#include "ember/sort.h"
#include "ember/special.h"
#include "kernels/stubs/special.h"
#include "ops/call_path.h"
#include "ops/elementwise/elementwise_core.h"

namespace ember {

namespace special {

Tensor entr(const Tensor& x) { return elementwise(OpId::special_entr, {x}); }
Tensor& entr_out(Tensor& out, const Tensor& x) {
  elementwise(OpId::special_entr, {x}, {}, OutMode::Out, &out);
  return out;
}

#define EMBER_DEFINE_SPECIAL_BINARY(fn, op)                                             \
  Tensor fn(const Tensor& x, const Tensor& y) { return elementwise(OpId::op, {x, y}); } \
  Tensor fn(const Tensor& x, const Scalar& y) {                                         \
    return elementwise(OpId::op, {x, wrap_scalar(y)});                                  \
  }                                                                                     \
  Tensor fn(const Scalar& x, const Tensor& y) {                                         \
    return elementwise(OpId::op, {wrap_scalar(x), y});                                  \
  }                                                                                     \
  Tensor& fn##_out(Tensor& out, const Tensor& x, const Tensor& y) {                     \
    elementwise(OpId::op, {x, y}, {}, OutMode::Out, &out);                              \
    return out;                                                                         \
  }
EMBER_DEFINE_SPECIAL_BINARY(xlog1py, special_xlog1py)
EMBER_DEFINE_SPECIAL_BINARY(zeta, special_zeta)
EMBER_DEFINE_SPECIAL_BINARY(chebyshev_polynomial_t, special_chebyshev_polynomial_t)
EMBER_DEFINE_SPECIAL_BINARY(chebyshev_polynomial_u, special_chebyshev_polynomial_u)
EMBER_DEFINE_SPECIAL_BINARY(chebyshev_polynomial_v, special_chebyshev_polynomial_v)
EMBER_DEFINE_SPECIAL_BINARY(chebyshev_polynomial_w, special_chebyshev_polynomial_w)
EMBER_DEFINE_SPECIAL_BINARY(shifted_chebyshev_polynomial_t, special_shifted_chebyshev_polynomial_t)
EMBER_DEFINE_SPECIAL_BINARY(shifted_chebyshev_polynomial_u, special_shifted_chebyshev_polynomial_u)
EMBER_DEFINE_SPECIAL_BINARY(shifted_chebyshev_polynomial_v, special_shifted_chebyshev_polynomial_v)
EMBER_DEFINE_SPECIAL_BINARY(shifted_chebyshev_polynomial_w, special_shifted_chebyshev_polynomial_w)
EMBER_DEFINE_SPECIAL_BINARY(hermite_polynomial_h, special_hermite_polynomial_h)
EMBER_DEFINE_SPECIAL_BINARY(hermite_polynomial_he, special_hermite_polynomial_he)
EMBER_DEFINE_SPECIAL_BINARY(laguerre_polynomial_l, special_laguerre_polynomial_l)
EMBER_DEFINE_SPECIAL_BINARY(legendre_polynomial_p, special_legendre_polynomial_p)
#undef EMBER_DEFINE_SPECIAL_BINARY

// ---- aliases, as torch::special (i0 lives with the Bessel family, bessel_ops.cpp) ----
Tensor gammaln(const Tensor& x) { return ember::lgamma(x); }
Tensor psi(const Tensor& x) { return ember::digamma(x); }
Tensor digamma(const Tensor& x) { return ember::digamma(x); }
Tensor polygamma(int64_t n, const Tensor& x) { return ember::polygamma(n, x); }
Tensor multigammaln(const Tensor& x, int64_t p) { return ember::mvlgamma(x, p); }
Tensor gammainc(const Tensor& x, const Tensor& y) { return ember::igamma(x, y); }
Tensor gammaincc(const Tensor& x, const Tensor& y) { return ember::igammac(x, y); }
Tensor sinc(const Tensor& x) { return ember::sinc(x); }
Tensor expit(const Tensor& x) { return ember::sigmoid(x); }
Tensor logit(const Tensor& x, std::optional<double> eps) { return ember::logit(x, eps); }
Tensor erf(const Tensor& x) { return ember::erf(x); }
Tensor erfc(const Tensor& x) { return ember::erfc(x); }
Tensor erfinv(const Tensor& x) { return ember::erfinv(x); }
Tensor exp2(const Tensor& x) { return ember::exp2(x); }
Tensor expm1(const Tensor& x) { return ember::expm1(x); }
Tensor log1p(const Tensor& x) { return ember::log1p(x); }
Tensor xlogy(const Tensor& x, const Tensor& y) { return ember::xlogy(x, y); }
Tensor round(const Tensor& x, int64_t decimals) { return ember::round(x, decimals); }
Tensor logsumexp(const Tensor& x, IntArrayRef dim, bool keepdim) {
  return ember::logsumexp(x, dim, keepdim);
}
Tensor softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  return ember::softmax(x, dim, dtype);
}
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  return ember::log_softmax(x, dim, dtype);
}

}  // namespace special

// ---- frexp ----
namespace {

void check_frexp_input(const Tensor& self) {
  EMBER_CHECK(self.defined(), "[frexp] got an undefined tensor");
  EMBER_CHECK(isFloatingType(self.dtype()),
              "[frexp] torch.frexp() only supports floating-point dtypes, got ", self.dtype());
}

// The kernel's mantissa is not differentiable; where a gradient or tangent may flow it is
// rebuilt as self * 2^-e (exact: two power-of-two factors of at most half the exponent range
// each, so neither overflows for subnormal inputs), whose derivative 2^-e is PyTorch's.
Tensor differentiable_mantissa(const Tensor& self, const Tensor& mantissa, const Tensor& e) {
  const bool grad = GradMode::is_enabled() && self.requires_grad();
  if (!grad && autograd::tls().fw_levels == 0) return mantissa;
  Tensor hi = div(e, Scalar(int64_t(2)), std::string_view("trunc"));
  Tensor lo = e - hi;
  return self * exp2(-hi.to(self.dtype())) * exp2(-lo.to(self.dtype()));
}

}  // namespace

std::tuple<Tensor, Tensor> frexp(const Tensor& self) {
  EMBER_OP(frexp, self);
  check_frexp_input(self);
  Tensor x = self.contiguous();
  Tensor mantissa = empty(self.sizes(), TensorOptions().dtype(self.dtype()).device(self.device()));
  Tensor exponent = empty(self.sizes(), TensorOptions().dtype(kInt).device(self.device()));
  frexp_stub(self.device(), x, mantissa, exponent);
  return {differentiable_mantissa(self, mantissa, exponent), exponent};
}

std::tuple<Tensor&, Tensor&> frexp_out(Tensor& mantissa, Tensor& exponent, const Tensor& self) {
  check_frexp_input(self);
  EMBER_CHECK(mantissa.defined() && exponent.defined(), "[frexp] out= tensors are undefined");
  EMBER_CHECK(mantissa.dtype() == self.dtype(), "[frexp] torch.frexp() expects mantissa to have ",
              "dtype ", self.dtype(), " but got ", mantissa.dtype());
  EMBER_CHECK(exponent.dtype() == kInt,
              "[frexp] torch.frexp() expects exponent to have int dtype but got ",
              exponent.dtype());
  autograd::check_out_not_differentiable("frexp", {self});
  auto [m, e] = frexp(self);
  for (Tensor* t : {&mantissa, &exponent}) {
    if (t->sizes() != self.sizes()) {
      EMBER_CHECK(t->numel() == 0, "[frexp] out= tensor has shape ", shape_str(t->sizes()),
                  " but the result has shape ", shape_str(self.sizes()),
                  "; pass an empty tensor or one of the result's shape");
      resize_output(*t, self.sizes());
    }
  }
  mantissa.copy_(m);
  exponent.copy_(e);
  return {mantissa, exponent};
}

std::tuple<Tensor, Tensor> Tensor::frexp() const { return ember::frexp(*this); }

// ---- ldexp: self * pow(2.0, other), PyTorch's composite ----
Tensor ldexp(const Tensor& self, const Tensor& other) {
  EMBER_OP(ldexp, self, other);
  return mul(self, pow(Scalar(2.0), other));
}
Tensor& ldexp_out(Tensor& out, const Tensor& self, const Tensor& other) {
  return mul_out(out, self, pow(Scalar(2.0), other));
}
Tensor Tensor::ldexp(const Tensor& other) const { return ember::ldexp(*this, other); }
Tensor& Tensor::ldexp_(const Tensor& other) { return mul_(ember::pow(Scalar(2.0), other)); }

}  // namespace ember
