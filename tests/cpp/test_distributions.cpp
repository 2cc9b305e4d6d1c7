// ember::distributions: log_prob, entropy, mean and variance against closed forms worked out by
// hand in the tests; sample moments with fixed seeds and bounds of at least 6 standard errors;
// rsample gradients; argument validation.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ember/distributions.h"
#include "ember/ember.h"

using namespace ember;
namespace D = ember::distributions;

namespace {

constexpr double kLogSqrt2Pi = 0.91893853320467274178;
constexpr double kLog2Pi = 1.83787706640934548356;

Tensor t64(std::vector<double> v, std::vector<int64_t> shape = {}) {
  if (shape.empty()) shape = {int64_t(v.size())};
  return tensor(v, TensorOptions().dtype(kDouble)).reshape(shape);
}
Tensor s64(double v) { return full({}, Scalar(v), TensorOptions().dtype(kDouble)); }
double at(const Tensor& t, int64_t i = 0) { return t.reshape({-1}).select(0, i).item<double>(); }
Generator seeded(uint64_t s) { return Generator().manual_seed(s); }

}  // namespace

TEST(Distributions, NormalFormulas) {
  D::Normal n(t64({1.0, 0.0}), t64({2.0, 0.5}));
  EXPECT_EQ(IntArrayRef(n.batch_shape()), IntArrayRef({2}));
  EXPECT_TRUE(n.event_shape().empty());
  Tensor lp = n.log_prob(t64({3.0, 0.25}));
  EXPECT_NEAR(at(lp, 0), -0.5 - std::log(2.0) - kLogSqrt2Pi, 1e-14);
  EXPECT_NEAR(at(lp, 1), -0.125 - std::log(0.5) - kLogSqrt2Pi, 1e-14);
  EXPECT_NEAR(at(n.entropy(), 0), 0.5 + kLogSqrt2Pi + std::log(2.0), 1e-14);
  EXPECT_DOUBLE_EQ(at(n.mean(), 0), 1.0);
  EXPECT_DOUBLE_EQ(at(n.variance(), 0), 4.0);
  EXPECT_DOUBLE_EQ(at(n.stddev(), 1), 0.5);
  EXPECT_NEAR(at(n.cdf(t64({1.0, 0.5})), 0), 0.5, 1e-15);
  EXPECT_NEAR(at(n.cdf(t64({1.0, 0.5})), 1), 0.5 * (1 + std::erf(1 / std::sqrt(2.0))), 1e-14);
  EXPECT_NEAR(at(n.icdf(n.cdf(t64({-2.0, 0.7}))), 0), -2.0, 1e-12);
  // Broadcasting a value over the batch.
  EXPECT_EQ(n.log_prob(t64({1.0, 2.0, 3.0}, {3, 1})).sizes(), IntArrayRef({3, 2}));
}

TEST(Distributions, NormalSamplesAndRsampleGradient) {
  Tensor loc = t64({3.0});
  Tensor scale = t64({2.0});
  loc.set_requires_grad(true);
  scale.set_requires_grad(true);
  D::Normal n(loc, scale);
  const int64_t N = 20000;
  Tensor x = n.rsample({N}, seeded(1));
  EXPECT_EQ(x.sizes(), IntArrayRef({N, 1}));
  const double m = x.mean().item<double>(), v = x.var().item<double>();
  EXPECT_LT(std::fabs(m - 3.0), 6 * 2.0 / std::sqrt(double(N)));
  EXPECT_LT(std::fabs(v - 4.0), 6 * 4.0 * std::sqrt(2.0 / double(N)));
  x.sum().backward();
  EXPECT_DOUBLE_EQ(at(loc.grad()), double(N));
  // d/dscale Σ (loc + eps scale) = Σ eps = Σ (x - loc) / scale.
  EXPECT_NEAR(at(scale.grad()), (x.detach().sum().item<double>() - 3.0 * N) / 2.0, 1e-6);
  Tensor s = n.sample({5}, seeded(1));
  EXPECT_FALSE(s.requires_grad());
  EXPECT_TRUE(equal(s, n.sample({5}, seeded(1))));
}

TEST(Distributions, Uniform) {
  D::Uniform u(s64(-1.0), s64(3.0));
  EXPECT_NEAR(u.log_prob(s64(0.0)).item<double>(), -std::log(4.0), 1e-15);
  EXPECT_NEAR(u.entropy().item<double>(), std::log(4.0), 1e-15);
  EXPECT_DOUBLE_EQ(u.mean().item<double>(), 1.0);
  EXPECT_NEAR(u.variance().item<double>(), 16.0 / 12.0, 1e-15);
  EXPECT_THROW(u.log_prob(s64(3.0)), ValueError);
  D::Uniform lax(s64(-1.0), s64(3.0), /*validate_args=*/false);
  EXPECT_EQ(lax.log_prob(s64(5.0)).item<double>(), -INFINITY);
  Tensor x = u.sample({20000}, seeded(2));
  EXPECT_GE(x.min().item<double>(), -1.0);
  EXPECT_LT(x.max().item<double>(), 3.0);
  EXPECT_LT(std::fabs(x.mean().item<double>() - 1.0), 6 * std::sqrt(16.0 / 12.0 / 20000));
  EXPECT_THROW(D::Uniform(s64(1.0), s64(1.0)), ValueError);
}

TEST(Distributions, Bernoulli) {
  D::Bernoulli b(t64({0.3, 0.9}));
  Tensor lp1 = b.log_prob(t64({1.0, 0.0}));
  EXPECT_NEAR(at(lp1, 0), std::log(0.3), 1e-12);
  EXPECT_NEAR(at(lp1, 1), std::log(0.1), 1e-12);
  EXPECT_NEAR(at(b.entropy(), 0), -(0.3 * std::log(0.3) + 0.7 * std::log(0.7)), 1e-12);
  EXPECT_NEAR(at(b.variance(), 0), 0.21, 1e-15);
  D::Bernoulli bl = D::Bernoulli::from_logits(t64({std::log(0.3 / 0.7)}));
  EXPECT_NEAR(at(bl.probs()), 0.3, 1e-15);
  EXPECT_NEAR(at(bl.log_prob(t64({0.0}))), std::log(0.7), 1e-12);
  Tensor x = b.sample({20000}, seeded(3));
  const double m = x.select(1, 0).mean().item<double>();
  EXPECT_LT(std::fabs(m - 0.3), 6 * std::sqrt(0.21 / 20000));
  EXPECT_THROW(b.log_prob(t64({0.5, 1.0})), ValueError);
  EXPECT_THROW(D::Bernoulli(t64({1.5})), ValueError);
  EXPECT_THROW(D::Bernoulli(std::nullopt, std::nullopt), ValueError);
  EXPECT_THROW(D::Bernoulli(t64({0.5}), t64({0.0})), ValueError);
}

TEST(Distributions, Categorical) {
  D::Categorical c(t64({1, 2, 3, 4, 4, 3, 2, 1}, {2, 4}));  // normalised to / 10
  EXPECT_EQ(IntArrayRef(c.batch_shape()), IntArrayRef({2}));
  EXPECT_EQ(c.num_events(), 4);
  Tensor lp = c.log_prob(tensor(std::vector<int64_t>{2, 0}));
  EXPECT_NEAR(at(lp, 0), std::log(0.3), 1e-12);
  EXPECT_NEAR(at(lp, 1), std::log(0.4), 1e-12);
  double h = 0;
  for (double p : {0.1, 0.2, 0.3, 0.4}) h -= p * std::log(p);
  EXPECT_NEAR(at(c.entropy(), 0), h, 1e-12);
  EXPECT_TRUE(std::isnan(at(c.mean())));
  D::Categorical cl = D::Categorical::from_logits(t64({0.0, std::log(2.0), std::log(3.0)}));
  EXPECT_NEAR(at(cl.probs(), 2), 0.5, 1e-15);
  EXPECT_NEAR(at(cl.log_prob(tensor(std::vector<int64_t>{1}))), std::log(1.0 / 3), 1e-12);
  const int64_t N = 30000;
  Tensor s = c.sample({N}, seeded(4));
  EXPECT_EQ(s.sizes(), IntArrayRef({N, 2}));
  EXPECT_EQ(s.dtype(), kLong);
  for (int64_t k = 0; k < 4; ++k) {
    const double f = s.select(1, 0).eq(Scalar(k)).to(kDouble).mean().item<double>();
    const double p = 0.1 * double(k + 1);
    EXPECT_LT(std::fabs(f - p), 6 * std::sqrt(p * (1 - p) / N)) << k;
  }
  EXPECT_THROW(c.log_prob(tensor(std::vector<int64_t>{4, 0})), ValueError);
  EXPECT_THROW(D::Categorical(t64({-1.0, 2.0})), ValueError);
  EXPECT_THROW(c.rsample(), NotImplementedError);
}

TEST(Distributions, Poisson) {
  D::Poisson p(t64({4.0, 0.5}));
  EXPECT_NEAR(at(p.log_prob(t64({2.0, 0.0})), 0), 2 * std::log(4.0) - 4 - std::log(2.0), 1e-12);
  EXPECT_NEAR(at(p.log_prob(t64({2.0, 0.0})), 1), -0.5, 1e-14);
  EXPECT_DOUBLE_EQ(at(p.variance(), 0), 4.0);
  Tensor x = p.sample({20000}, seeded(5));
  EXPECT_LT(std::fabs(x.select(1, 0).mean().item<double>() - 4.0), 6 * std::sqrt(4.0 / 20000));
  EXPECT_THROW(p.log_prob(t64({1.5, 0.0})), ValueError);
  EXPECT_THROW(p.entropy(), NotImplementedError);
  EXPECT_THROW(D::Poisson(t64({-1.0})), ValueError);
}

TEST(Distributions, Gamma) {
  D::Gamma g(s64(3.0), s64(2.0));
  const double psi3 = 1.5 - 0.57721566490153286061;
  EXPECT_NEAR(g.log_prob(s64(1.5)).item<double>(),
              3 * std::log(2.0) + 2 * std::log(1.5) - 3 - std::lgamma(3.0), 1e-12);
  EXPECT_NEAR(g.entropy().item<double>(), 3 - std::log(2.0) + std::lgamma(3.0) - 2 * psi3, 1e-12);
  EXPECT_DOUBLE_EQ(g.mean().item<double>(), 1.5);
  EXPECT_DOUBLE_EQ(g.variance().item<double>(), 0.75);
  Tensor conc = s64(3.0);
  conc.set_requires_grad(true);
  D::Gamma gg(conc, s64(2.0));
  const int64_t N = 20000;
  Tensor x = gg.rsample({N}, seeded(6));
  EXPECT_LT(std::fabs(x.mean().item<double>() - 1.5), 6 * std::sqrt(0.75 / N));
  // E[d x / d c] = d E[x] / d c = 1 / rate.
  x.mean().backward();
  EXPECT_LT(std::fabs(conc.grad().item<double>() - 0.5), 0.05);
  EXPECT_THROW(g.log_prob(s64(-1.0)), ValueError);
  EXPECT_THROW(D::Gamma(s64(0.0), s64(1.0)), ValueError);
}

TEST(Distributions, Dirichlet) {
  D::Dirichlet d(t64({1.0, 2.0, 3.0}));
  EXPECT_TRUE(d.batch_shape().empty());
  EXPECT_EQ(IntArrayRef(d.event_shape()), IntArrayRef({3}));
  EXPECT_NEAR(d.log_prob(t64({0.2, 0.3, 0.5})).item<double>(), std::log(4.5), 1e-12);
  // H = log B(a) + (a0 - k) psi(a0) - Σ (a_i - 1) psi(a_i), a0 = 6, k = 3.
  const double g = 0.57721566490153286061;
  const double psi2 = 1 - g, psi3 = 1.5 - g, psi6 = 1 + 0.5 + 1.0 / 3 + 0.25 + 0.2 - g;
  const double logB = std::lgamma(1.0) + std::lgamma(2.0) + std::lgamma(3.0) - std::lgamma(6.0);
  EXPECT_NEAR(d.entropy().item<double>(), logB + 3 * psi6 - psi2 - 2 * psi3, 1e-12);
  EXPECT_NEAR(at(d.mean(), 2), 0.5, 1e-15);
  EXPECT_NEAR(at(d.variance(), 0), 1.0 * 5 / (36.0 * 7), 1e-15);
  Tensor x = d.sample({10000}, seeded(7));
  EXPECT_EQ(x.sizes(), IntArrayRef({10000, 3}));
  EXPECT_NEAR(x.sum(IntArrayRef{1}).min().item<double>(), 1.0, 1e-12);
  const double sd = std::sqrt(3.0 * 3 / (36.0 * 7) / 10000);
  EXPECT_LT(std::fabs(x.select(1, 2).mean().item<double>() - 0.5), 6 * sd);
  EXPECT_THROW(d.log_prob(t64({0.2, 0.3, 0.6})), ValueError);
  EXPECT_THROW(d.log_prob(t64({0.5, 0.5})), ValueError);
  EXPECT_THROW(D::Dirichlet(t64({1.0, -1.0})), ValueError);
}

TEST(Distributions, MultivariateNormal) {
  Tensor loc = t64({1.0, -1.0});
  Tensor cov = t64({2.0, 0.5, 0.5, 1.0}, {2, 2});
  const double det = 1.75;
  // d = x - loc = (-1, 1): dᵀ Σ⁻¹ d = (1 + 1 + 2) / det.
  const double expect_lp = -0.5 * (2 * kLog2Pi + std::log(det) + 4 / det);
  const double expect_h = 0.5 * 2 * (1 + kLog2Pi) + 0.5 * std::log(det);
  Tensor prec = linalg::inv(cov);
  Tensor tril = linalg::cholesky(cov);
  std::vector<D::MultivariateNormal> forms = {
      D::MultivariateNormal(loc, cov), D::MultivariateNormal(loc, std::nullopt, prec),
      D::MultivariateNormal(loc, std::nullopt, std::nullopt, tril)};
  for (const auto& m : forms) {
    EXPECT_EQ(IntArrayRef(m.event_shape()), IntArrayRef({2}));
    EXPECT_NEAR(m.log_prob(t64({0.0, 0.0})).item<double>(), expect_lp, 1e-12);
    EXPECT_NEAR(m.entropy().item<double>(), expect_h, 1e-12);
    EXPECT_NEAR(at(m.variance(), 0), 2.0, 1e-12);
    EXPECT_NEAR(at(m.variance(), 1), 1.0, 1e-12);
    EXPECT_NEAR(at(m.covariance_matrix(), 1), 0.5, 1e-12);
    EXPECT_NEAR(at(m.precision_matrix(), 0), 1.0 / det, 1e-12);
  }
  const int64_t N = 20000;
  Tensor x = forms[0].sample({N}, seeded(8));
  EXPECT_EQ(x.sizes(), IntArrayRef({N, 2}));
  Tensor c = x.sub(x.mean(IntArrayRef{0}, true));
  const double cov01 = c.select(1, 0).mul(c.select(1, 1)).mean().item<double>();
  // Var of the product of two jointly normal centred values: s00 s11 + s01^2 = 2.25.
  EXPECT_LT(std::fabs(cov01 - 0.5), 6 * std::sqrt(2.25 / N));
  EXPECT_LT(std::fabs(x.select(1, 0).mean().item<double>() - 1.0), 6 * std::sqrt(2.0 / N));
  // Batches broadcast between loc and the matrix.
  D::MultivariateNormal b(t64({0.0, 0.0, 1.0, 1.0, 2.0, 2.0}, {3, 2}), cov);
  EXPECT_EQ(IntArrayRef(b.batch_shape()), IntArrayRef({3}));
  EXPECT_EQ(b.log_prob(t64({0.0, 0.0})).sizes(), IntArrayRef({3}));
  EXPECT_THROW(D::MultivariateNormal(loc, cov, prec), ValueError);
  EXPECT_THROW(D::MultivariateNormal(loc, t64({1.0, 2.0, 2.0, 1.0}, {2, 2})), ValueError);
  EXPECT_THROW(
      D::MultivariateNormal(loc, std::nullopt, std::nullopt, t64({1.0, 1.0, 0.0, 1.0}, {2, 2})),
      ValueError);
  EXPECT_THROW(forms[0].log_prob(t64({0.0, 0.0, 0.0})), ValueError);
}
