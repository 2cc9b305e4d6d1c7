// The Distribution base and the continuous scalar distributions: Normal, Uniform, Gamma, and the
// Dirichlet. Formulas follow torch.distributions; samplers are the ops of random.h.
#include <cmath>
#include <string>

#include "ember/autograd.h"
#include "ember/distributions.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/random.h"
#include "ember/reduce.h"
#include "ember/shape_ops.h"

namespace ember::distributions {

namespace {
constexpr double kLogSqrt2Pi = 0.91893853320467274178;  // log(sqrt(2 pi))
}  // namespace

Distribution::Distribution(IntArrayRef batch_shape, IntArrayRef event_shape, bool validate_args)
    : batch_shape_(batch_shape), event_shape_(event_shape), validate_(validate_args) {}

DimVector Distribution::extended_shape(IntArrayRef sample_shape) const {
  DimVector r(sample_shape);
  for (int64_t d : batch_shape_) r.push_back(d);
  for (int64_t d : event_shape_) r.push_back(d);
  return r;
}

Tensor Distribution::sample(IntArrayRef sample_shape, std::optional<Generator> gen) const {
  NoGradGuard no_grad;
  return rsample(sample_shape, std::move(gen));
}

Tensor Distribution::rsample(IntArrayRef, std::optional<Generator>) const {
  EMBER_THROW(NotImplementedError, "[", name(),
              "] rsample is not implemented (the samples are "
              "not reparameterisable); use sample()");
}

Tensor Distribution::entropy() const {
  EMBER_THROW(NotImplementedError, "[", name(), "] entropy is not implemented");
}

void Distribution::check(const Tensor& ok, const char* what) const {
  if (!validate_ || ok.numel() == 0) return;
  EMBER_CHECK_VALUE(ok.all().item<bool>(), "[", name(), "] expected ", what,
                    " (pass validate_args = false to skip this check)");
}

void Distribution::check_value_shape(const Tensor& value) const {
  if (!validate_) return;
  const int64_t ne = int64_t(event_shape_.size());
  EMBER_CHECK_VALUE(value.dim() >= ne, "[", name(), "] the value's shape ", value.sizes(),
                    " does not end with the event shape ", IntArrayRef(event_shape_));
  for (int64_t i = 0; i < ne; ++i) {
    EMBER_CHECK_VALUE(value.size(value.dim() - ne + i) == event_shape_[size_t(i)], "[", name(),
                      "] the value's shape ", value.sizes(), " does not end with the event shape ",
                      IntArrayRef(event_shape_));
  }
  DimVector full = extended_shape();
  const int64_t nv = value.dim(), nf = int64_t(full.size());
  for (int64_t i = 1; i <= std::min(nv, nf); ++i) {
    const int64_t a = value.size(nv - i), b = full[size_t(nf - i)];
    EMBER_CHECK_VALUE(a == b || a == 1 || b == 1, "[", name(), "] the value's shape ",
                      value.sizes(), " does not broadcast with the batch and event shape ",
                      IntArrayRef(full));
  }
}

// ---- Normal ----

Normal::Normal(const Tensor& loc, const Tensor& scale, bool validate_args)
    : Distribution(broadcast_shapes(loc.sizes(), scale.sizes()), {}, validate_args) {
  loc_ = loc.expand(batch_shape_);
  scale_ = scale.expand(batch_shape_);
  check(loc_.eq(loc_), "parameter loc to be a real number (not NaN)");
  check(scale_.gt(Scalar(0)), "parameter scale to be greater than 0");
}

Tensor Normal::rsample(IntArrayRef sample_shape, std::optional<Generator> gen) const {
  Tensor eps = randn(extended_shape(sample_shape), std::move(gen),
                     TensorOptions().dtype(loc_.dtype()).device(loc_.device()));
  return loc_.add(eps.mul(scale_));
}

Tensor Normal::log_prob(const Tensor& value) const {
  check_value_shape(value);
  check(value.eq(value), "value to be within the support (real numbers)");
  Tensor z = value.sub(loc_).div(scale_);
  return z.mul(z).mul(Scalar(-0.5)).sub(scale_.log()).sub(Scalar(kLogSqrt2Pi));
}

Tensor Normal::entropy() const { return scale_.log().add(Scalar(0.5 + kLogSqrt2Pi)); }

Tensor Normal::cdf(const Tensor& value) const {
  check_value_shape(value);
  return value.sub(loc_)
      .div(scale_.mul(Scalar(std::sqrt(2.0))))
      .erf()
      .add(Scalar(1))
      .mul(Scalar(0.5));
}

Tensor Normal::icdf(const Tensor& p) const {
  check(p.ge(Scalar(0)).logical_and(p.le(Scalar(1))), "probabilities in [0, 1]");
  return loc_.add(scale_.mul(p.mul(Scalar(2)).sub(Scalar(1)).erfinv()).mul(Scalar(std::sqrt(2.0))));
}

// ---- Uniform ----

Uniform::Uniform(const Tensor& low, const Tensor& high, bool validate_args)
    : Distribution(broadcast_shapes(low.sizes(), high.sizes()), {}, validate_args) {
  low_ = low.expand(batch_shape_);
  high_ = high.expand(batch_shape_);
  check(low_.lt(high_), "parameter low to be less than high");
}

Tensor Uniform::rsample(IntArrayRef sample_shape, std::optional<Generator> gen) const {
  Tensor u = rand(extended_shape(sample_shape), std::move(gen),
                  TensorOptions().dtype(low_.dtype()).device(low_.device()));
  return low_.add(u.mul(high_.sub(low_)));
}

Tensor Uniform::log_prob(const Tensor& value) const {
  check_value_shape(value);
  Tensor inside = low_.le(value).logical_and(high_.gt(value));
  check(inside, "value to be within the support [low, high)");
  return inside.to(low_.dtype()).log().sub(high_.sub(low_).log());
}

Tensor Uniform::entropy() const { return high_.sub(low_).log(); }
Tensor Uniform::mean() const { return low_.add(high_).mul(Scalar(0.5)); }
Tensor Uniform::variance() const { return high_.sub(low_).pow(Scalar(2)).div(Scalar(12)); }

// ---- Gamma ----

Gamma::Gamma(const Tensor& concentration, const Tensor& rate, bool validate_args)
    : Distribution(broadcast_shapes(concentration.sizes(), rate.sizes()), {}, validate_args) {
  concentration_ = concentration.expand(batch_shape_);
  rate_ = rate.expand(batch_shape_);
  check(concentration_.gt(Scalar(0)), "parameter concentration to be greater than 0");
  check(rate_.gt(Scalar(0)), "parameter rate to be greater than 0");
}

Tensor Gamma::rsample(IntArrayRef sample_shape, std::optional<Generator> gen) const {
  DimVector shape = extended_shape(sample_shape);
  return _standard_gamma(concentration_.expand(shape), std::move(gen)).div(rate_.expand(shape));
}

Tensor Gamma::log_prob(const Tensor& value) const {
  check_value_shape(value);
  check(value.gt(Scalar(0)), "value to be within the support (positive numbers)");
  return xlogy(concentration_, rate_)
      .add(xlogy(concentration_.sub(Scalar(1)), value))
      .sub(rate_.mul(value))
      .sub(concentration_.lgamma());
}

Tensor Gamma::entropy() const {
  const Tensor& c = concentration_;
  return c.sub(rate_.log()).add(c.lgamma()).add(c.neg().add(Scalar(1)).mul(c.digamma()));
}

Tensor Gamma::mean() const { return concentration_.div(rate_); }
Tensor Gamma::variance() const { return concentration_.div(rate_.pow(Scalar(2))); }

// ---- Dirichlet ----

namespace {
DimVector leading(const Tensor& t, int64_t drop) {
  EMBER_CHECK_VALUE(t.dim() >= drop, "expected a tensor of at least ", drop, " dims, got ",
                    t.sizes());
  return DimVector(IntArrayRef(t.sizes().data(), size_t(t.dim() - drop)));
}
}  // namespace

Dirichlet::Dirichlet(const Tensor& concentration, bool validate_args)
    : Distribution(leading(concentration, 1), {concentration.size(-1)}, validate_args),
      concentration_(concentration) {
  check(concentration_.gt(Scalar(0)), "parameter concentration to be greater than 0");
}

Tensor Dirichlet::rsample(IntArrayRef sample_shape, std::optional<Generator> gen) const {
  return _sample_dirichlet(concentration_.expand(extended_shape(sample_shape)), std::move(gen));
}

Tensor Dirichlet::log_prob(const Tensor& value) const {
  check_value_shape(value);
  if (validate_) {
    Tensor simplex = value.ge(Scalar(0)).all(-1).logical_and(
        value.sum(IntArrayRef{-1}).sub(Scalar(1)).abs().lt(Scalar(1e-6)));
    check(simplex, "value to be within the support (the simplex)");
  }
  const Tensor& c = concentration_;
  return xlogy(c.sub(Scalar(1)), value)
      .sum(IntArrayRef{-1})
      .add(c.sum(IntArrayRef{-1}).lgamma())
      .sub(c.lgamma().sum(IntArrayRef{-1}));
}

Tensor Dirichlet::entropy() const {
  const Tensor& c = concentration_;
  const double k = double(c.size(-1));
  Tensor a0 = c.sum(IntArrayRef{-1});
  return c.lgamma()
      .sum(IntArrayRef{-1})
      .sub(a0.lgamma())
      .sub(a0.neg().add(Scalar(k)).mul(a0.digamma()))
      .sub(c.sub(Scalar(1)).mul(c.digamma()).sum(IntArrayRef{-1}));
}

Tensor Dirichlet::mean() const {
  return concentration_.div(concentration_.sum(IntArrayRef{-1}, true));
}

Tensor Dirichlet::variance() const {
  Tensor a0 = concentration_.sum(IntArrayRef{-1}, true);
  return concentration_.mul(a0.sub(concentration_)).div(a0.pow(Scalar(2)).mul(a0.add(Scalar(1))));
}

}  // namespace ember::distributions
