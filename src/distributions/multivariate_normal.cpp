// MultivariateNormal: everything from the lower Cholesky factor L of the covariance (L Lᵀ):
// rsample loc + L eps, log_prob through one triangular solve, entropy from log det L.
#include <cmath>

#include "ember/blas.h"
#include "ember/distributions.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/linalg.h"
#include "ember/ops.h"
#include "ember/random.h"
#include "ember/reduce.h"
#include "ember/shape_ops.h"

namespace ember::distributions {

namespace {

constexpr double kLog2Pi = 1.83787706640934548356;

const Tensor& the_matrix(const std::optional<Tensor>& cov, const std::optional<Tensor>& prec,
                         const std::optional<Tensor>& tril) {
  const int given = int(cov.has_value()) + int(prec.has_value()) + int(tril.has_value());
  EMBER_CHECK_VALUE(given == 1,
                    "[MultivariateNormal] exactly one of covariance_matrix, precision_matrix or "
                    "scale_tril may be specified");
  const Tensor& m = cov ? *cov : prec ? *prec : *tril;
  EMBER_CHECK_VALUE(m.defined() && m.dim() >= 2 && m.size(-1) == m.size(-2),
                    "[MultivariateNormal] the matrix argument must be a (batch of) square "
                    "matrices, got shape ",
                    m.defined() ? m.sizes() : IntArrayRef{});
  return m;
}

DimVector batch_of(const Tensor& loc, const Tensor& m) {
  EMBER_CHECK_VALUE(loc.dim() >= 1, "[MultivariateNormal] loc must be at least one-dimensional");
  EMBER_CHECK_VALUE(loc.size(-1) == m.size(-1), "[MultivariateNormal] loc of size ", loc.size(-1),
                    " does not match the matrix of size ", m.size(-1));
  return broadcast_shapes(IntArrayRef(loc.sizes().data(), size_t(loc.dim() - 1)),
                          IntArrayRef(m.sizes().data(), size_t(m.dim() - 2)));
}

DimVector plus(IntArrayRef a, std::initializer_list<int64_t> b) {
  DimVector r(a);
  for (int64_t d : b) r.push_back(d);
  return r;
}

}  // namespace

MultivariateNormal::MultivariateNormal(const Tensor& loc,
                                       const std::optional<Tensor>& covariance_matrix,
                                       const std::optional<Tensor>& precision_matrix,
                                       const std::optional<Tensor>& scale_tril, bool validate_args)
    : Distribution(batch_of(loc, the_matrix(covariance_matrix, precision_matrix, scale_tril)),
                   {loc.size(-1)}, validate_args) {
  const int64_t k = loc.size(-1);
  Tensor L;
  if (scale_tril) {
    L = *scale_tril;
    check(L.triu(1).eq(Scalar(0)).all(), "parameter scale_tril to be lower triangular");
    check(L.diagonal(0, -2, -1).gt(Scalar(0)), "parameter scale_tril to have a positive diagonal");
  } else {
    const Tensor& m = covariance_matrix ? *covariance_matrix : *precision_matrix;
    const char* what = covariance_matrix ? "parameter covariance_matrix to be symmetric positive "
                                           "definite"
                                         : "parameter precision_matrix to be symmetric positive "
                                           "definite";
    auto [F, info] = linalg::cholesky_ex(m);
    if (validate_) {
      check(m.sub(m.transpose(-2, -1)).abs().le(Scalar(1e-6)), what);
      check(info.eq(Scalar(0)), what);
    }
    // The covariance is P⁻¹: its Cholesky factor from P's through cholesky_inverse.
    L = covariance_matrix ? F : linalg::cholesky(cholesky_inverse(F));
  }
  loc_ = loc.expand(extended_shape());
  scale_tril_ = L.expand(plus(batch_shape_, {k, k}));
}

Tensor MultivariateNormal::rsample(IntArrayRef sample_shape, std::optional<Generator> gen) const {
  DimVector shape = extended_shape(sample_shape);
  Tensor eps =
      randn(shape, std::move(gen), TensorOptions().dtype(loc_.dtype()).device(loc_.device()));
  return loc_.add(ember::matmul(scale_tril_, eps.unsqueeze(-1)).squeeze(-1));
}

Tensor MultivariateNormal::log_prob(const Tensor& value) const {
  check_value_shape(value);
  check(value.eq(value), "value to be real numbers (not NaN)");
  const int64_t k = event_shape_[0];
  Tensor diff = value.sub(loc_);
  DimVector bshape(IntArrayRef(diff.sizes().data(), size_t(diff.dim() - 1)));
  Tensor L = scale_tril_.expand(plus(bshape, {k, k}));
  Tensor z = linalg::solve_triangular(L, diff.unsqueeze(-1), /*upper=*/false).squeeze(-1);
  Tensor m = z.mul(z).sum(IntArrayRef{-1});
  Tensor half_log_det = L.diagonal(0, -2, -1).log().sum(IntArrayRef{-1});
  return m.add(Scalar(double(k) * kLog2Pi)).mul(Scalar(-0.5)).sub(half_log_det);
}

Tensor MultivariateNormal::entropy() const {
  const double k = double(event_shape_[0]);
  Tensor half_log_det = scale_tril_.diagonal(0, -2, -1).log().sum(IntArrayRef{-1});
  return half_log_det.add(Scalar(0.5 * k * (1 + kLog2Pi)));
}

Tensor MultivariateNormal::variance() const {
  return scale_tril_.pow(Scalar(2)).sum(IntArrayRef{-1}).expand(extended_shape());
}

Tensor MultivariateNormal::covariance_matrix() const {
  return ember::matmul(scale_tril_, scale_tril_.transpose(-2, -1));
}

Tensor MultivariateNormal::precision_matrix() const { return cholesky_inverse(scale_tril_); }

}  // namespace ember::distributions
