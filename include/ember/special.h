#pragma once
/// torch.special as libtorch's torch::special: the special functions of ember (elementwise,
/// through the op table; integer inputs compute in the default float dtype). Functions that also
/// live in the main namespace (i0, sinc, lgamma, ...) have their torch::special aliases here.

#include <cstdint>
#include <optional>

#include "ember/scalar.h"
#include "ember/tensor.h"

namespace ember::special {

// ---- unary: f(x) and f_out(out, x) ----
Tensor i0e(const Tensor& x);
Tensor& i0e_out(Tensor& out, const Tensor& x);
Tensor i1(const Tensor& x);
Tensor& i1_out(Tensor& out, const Tensor& x);
Tensor i1e(const Tensor& x);
Tensor& i1e_out(Tensor& out, const Tensor& x);
Tensor ndtr(const Tensor& x);
Tensor& ndtr_out(Tensor& out, const Tensor& x);
Tensor ndtri(const Tensor& x);
Tensor& ndtri_out(Tensor& out, const Tensor& x);
Tensor log_ndtr(const Tensor& x);
Tensor& log_ndtr_out(Tensor& out, const Tensor& x);
Tensor erfcx(const Tensor& x);
Tensor& erfcx_out(Tensor& out, const Tensor& x);
Tensor bessel_j0(const Tensor& x);
Tensor& bessel_j0_out(Tensor& out, const Tensor& x);
Tensor bessel_j1(const Tensor& x);
Tensor& bessel_j1_out(Tensor& out, const Tensor& x);
Tensor bessel_y0(const Tensor& x);
Tensor& bessel_y0_out(Tensor& out, const Tensor& x);
Tensor bessel_y1(const Tensor& x);
Tensor& bessel_y1_out(Tensor& out, const Tensor& x);
Tensor modified_bessel_i0(const Tensor& x);
Tensor& modified_bessel_i0_out(Tensor& out, const Tensor& x);
Tensor modified_bessel_i1(const Tensor& x);
Tensor& modified_bessel_i1_out(Tensor& out, const Tensor& x);
Tensor modified_bessel_k0(const Tensor& x);
Tensor& modified_bessel_k0_out(Tensor& out, const Tensor& x);
Tensor modified_bessel_k1(const Tensor& x);
Tensor& modified_bessel_k1_out(Tensor& out, const Tensor& x);
Tensor scaled_modified_bessel_k0(const Tensor& x);
Tensor& scaled_modified_bessel_k0_out(Tensor& out, const Tensor& x);
Tensor scaled_modified_bessel_k1(const Tensor& x);
Tensor& scaled_modified_bessel_k1_out(Tensor& out, const Tensor& x);
Tensor spherical_bessel_j0(const Tensor& x);
Tensor& spherical_bessel_j0_out(Tensor& out, const Tensor& x);
Tensor airy_ai(const Tensor& x);
Tensor& airy_ai_out(Tensor& out, const Tensor& x);
Tensor entr(const Tensor& x);
Tensor& entr_out(Tensor& out, const Tensor& x);

// ---- binary: f(x, y) with a tensor or scalar on either side, and f_out(out, x, y) ----
Tensor xlog1py(const Tensor& x, const Tensor& y);
Tensor xlog1py(const Tensor& x, const Scalar& y);
Tensor xlog1py(const Scalar& x, const Tensor& y);
Tensor& xlog1py_out(Tensor& out, const Tensor& x, const Tensor& y);
Tensor zeta(const Tensor& x, const Tensor& y);
Tensor zeta(const Tensor& x, const Scalar& y);
Tensor zeta(const Scalar& x, const Tensor& y);
Tensor& zeta_out(Tensor& out, const Tensor& x, const Tensor& y);
Tensor chebyshev_polynomial_t(const Tensor& x, const Tensor& y);
Tensor chebyshev_polynomial_t(const Tensor& x, const Scalar& y);
Tensor chebyshev_polynomial_t(const Scalar& x, const Tensor& y);
Tensor& chebyshev_polynomial_t_out(Tensor& out, const Tensor& x, const Tensor& y);
Tensor chebyshev_polynomial_u(const Tensor& x, const Tensor& y);
Tensor chebyshev_polynomial_u(const Tensor& x, const Scalar& y);
Tensor chebyshev_polynomial_u(const Scalar& x, const Tensor& y);
Tensor& chebyshev_polynomial_u_out(Tensor& out, const Tensor& x, const Tensor& y);
Tensor chebyshev_polynomial_v(const Tensor& x, const Tensor& y);
Tensor chebyshev_polynomial_v(const Tensor& x, const Scalar& y);
Tensor chebyshev_polynomial_v(const Scalar& x, const Tensor& y);
Tensor& chebyshev_polynomial_v_out(Tensor& out, const Tensor& x, const Tensor& y);
Tensor chebyshev_polynomial_w(const Tensor& x, const Tensor& y);
Tensor chebyshev_polynomial_w(const Tensor& x, const Scalar& y);
Tensor chebyshev_polynomial_w(const Scalar& x, const Tensor& y);
Tensor& chebyshev_polynomial_w_out(Tensor& out, const Tensor& x, const Tensor& y);
Tensor shifted_chebyshev_polynomial_t(const Tensor& x, const Tensor& y);
Tensor shifted_chebyshev_polynomial_t(const Tensor& x, const Scalar& y);
Tensor shifted_chebyshev_polynomial_t(const Scalar& x, const Tensor& y);
Tensor& shifted_chebyshev_polynomial_t_out(Tensor& out, const Tensor& x, const Tensor& y);
Tensor shifted_chebyshev_polynomial_u(const Tensor& x, const Tensor& y);
Tensor shifted_chebyshev_polynomial_u(const Tensor& x, const Scalar& y);
Tensor shifted_chebyshev_polynomial_u(const Scalar& x, const Tensor& y);
Tensor& shifted_chebyshev_polynomial_u_out(Tensor& out, const Tensor& x, const Tensor& y);
Tensor shifted_chebyshev_polynomial_v(const Tensor& x, const Tensor& y);
Tensor shifted_chebyshev_polynomial_v(const Tensor& x, const Scalar& y);
Tensor shifted_chebyshev_polynomial_v(const Scalar& x, const Tensor& y);
Tensor& shifted_chebyshev_polynomial_v_out(Tensor& out, const Tensor& x, const Tensor& y);
Tensor shifted_chebyshev_polynomial_w(const Tensor& x, const Tensor& y);
Tensor shifted_chebyshev_polynomial_w(const Tensor& x, const Scalar& y);
Tensor shifted_chebyshev_polynomial_w(const Scalar& x, const Tensor& y);
Tensor& shifted_chebyshev_polynomial_w_out(Tensor& out, const Tensor& x, const Tensor& y);
Tensor hermite_polynomial_h(const Tensor& x, const Tensor& y);
Tensor hermite_polynomial_h(const Tensor& x, const Scalar& y);
Tensor hermite_polynomial_h(const Scalar& x, const Tensor& y);
Tensor& hermite_polynomial_h_out(Tensor& out, const Tensor& x, const Tensor& y);
Tensor hermite_polynomial_he(const Tensor& x, const Tensor& y);
Tensor hermite_polynomial_he(const Tensor& x, const Scalar& y);
Tensor hermite_polynomial_he(const Scalar& x, const Tensor& y);
Tensor& hermite_polynomial_he_out(Tensor& out, const Tensor& x, const Tensor& y);
Tensor laguerre_polynomial_l(const Tensor& x, const Tensor& y);
Tensor laguerre_polynomial_l(const Tensor& x, const Scalar& y);
Tensor laguerre_polynomial_l(const Scalar& x, const Tensor& y);
Tensor& laguerre_polynomial_l_out(Tensor& out, const Tensor& x, const Tensor& y);
Tensor legendre_polynomial_p(const Tensor& x, const Tensor& y);
Tensor legendre_polynomial_p(const Tensor& x, const Scalar& y);
Tensor legendre_polynomial_p(const Scalar& x, const Tensor& y);
Tensor& legendre_polynomial_p_out(Tensor& out, const Tensor& x, const Tensor& y);

// ---- aliases of main-namespace functions, as torch::special ----
Tensor gammaln(const Tensor& x);
Tensor psi(const Tensor& x);
Tensor digamma(const Tensor& x);
Tensor polygamma(int64_t n, const Tensor& x);
Tensor multigammaln(const Tensor& x, int64_t p);
Tensor gammainc(const Tensor& x, const Tensor& y);
Tensor gammaincc(const Tensor& x, const Tensor& y);
Tensor i0(const Tensor& x);
Tensor sinc(const Tensor& x);
Tensor expit(const Tensor& x);
Tensor logit(const Tensor& x, std::optional<double> eps = std::nullopt);
Tensor erf(const Tensor& x);
Tensor erfc(const Tensor& x);
Tensor erfinv(const Tensor& x);
Tensor exp2(const Tensor& x);
Tensor expm1(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor xlogy(const Tensor& x, const Tensor& y);
Tensor round(const Tensor& x, int64_t decimals = 0);
Tensor logsumexp(const Tensor& x, IntArrayRef dim, bool keepdim = false);
Tensor softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);

}  // namespace ember::special
