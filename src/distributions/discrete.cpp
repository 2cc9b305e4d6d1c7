// The discrete distributions: Bernoulli, Categorical and Poisson (torch.distributions' formulas).
#include <limits>

#include "ember/autograd.h"
#include "ember/distributions.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/ops.h"
#include "ember/random.h"
#include "ember/reduce.h"
#include "ember/shape_ops.h"
#include "ember/sort.h"

namespace ember::distributions {

namespace {

// Exactly one of probs / logits, as torch's "Either `probs` or `logits` must be specified, but
// not both."
const Tensor& one_of(const std::optional<Tensor>& probs, const std::optional<Tensor>& logits,
                     const char* name) {
  EMBER_CHECK_VALUE(probs.has_value() != logits.has_value(), "[", name,
                    "] either probs or logits must be specified, but not both");
  const Tensor& t = probs ? *probs : *logits;
  EMBER_CHECK_VALUE(t.defined(), "[", name, "] undefined parameter tensor");
  return t;
}

// Machine epsilon of a floating dtype (probabilities are clamped to [eps, 1 - eps] before their
// log, as torch's clamp_probs).
double eps_of(ScalarType t) {
  switch (t) {
    case kDouble:
      return std::numeric_limits<double>::epsilon();
    case kHalf:
      return 0.0009765625;
    case kBFloat16:
      return 0.0078125;
    default:
      return double(std::numeric_limits<float>::epsilon());
  }
}

double lowest_of(ScalarType t) {
  return t == kDouble ? std::numeric_limits<double>::lowest()
                      : double(std::numeric_limits<float>::lowest());
}

DimVector without_last(const Tensor& t, const char* name) {
  EMBER_CHECK_VALUE(t.dim() >= 1, "[", name, "] parameter must be at least one-dimensional, got ",
                    t.sizes());
  return DimVector(IntArrayRef(t.sizes().data(), size_t(t.dim() - 1)));
}

}  // namespace

// ---- Bernoulli ----

Bernoulli::Bernoulli(const std::optional<Tensor>& probs, const std::optional<Tensor>& logits,
                     bool validate_args)
    : Distribution(one_of(probs, logits, "Bernoulli").sizes(), {}, validate_args) {
  if (probs) {
    probs_ = *probs;
    check(probs_.ge(Scalar(0)).logical_and(probs_.le(Scalar(1))),
          "parameter probs to be in [0, 1]");
    const double e = eps_of(probs_.dtype());
    Tensor p = probs_.clamp(Scalar(e), Scalar(1 - e));
    logits_ = p.log().sub(p.neg().log1p());
  } else {
    logits_ = *logits;
    check(logits_.eq(logits_), "parameter logits to be real numbers (not NaN)");
    probs_ = logits_.sigmoid();
  }
}

Tensor Bernoulli::sample(IntArrayRef sample_shape, std::optional<Generator> gen) const {
  NoGradGuard no_grad;
  return bernoulli(probs_.expand(extended_shape(sample_shape)), std::move(gen));
}

Tensor Bernoulli::log_prob(const Tensor& value) const {
  check_value_shape(value);
  check(value.eq(Scalar(0)).logical_or(value.eq(Scalar(1))), "value to be 0 or 1");
  // -BCE(logits, value) = value * logits - softplus(logits).
  return value.mul(logits_).sub(softplus(logits_));
}

Tensor Bernoulli::entropy() const { return softplus(logits_).sub(probs_.mul(logits_)); }

// ---- Categorical ----

Categorical::Categorical(const std::optional<Tensor>& probs, const std::optional<Tensor>& logits,
                         bool validate_args)
    : Distribution(without_last(one_of(probs, logits, "Categorical"), "Categorical"), {},
                   validate_args) {
  if (probs) {
    check(probs->ge(Scalar(0)), "parameter probs to be non-negative");
    probs_ = probs->div(probs->sum(IntArrayRef{-1}, true));
    const double e = eps_of(probs_.dtype());
    logits_ = probs_.clamp(Scalar(e), Scalar(1 - e)).log();
  } else {
    check(logits->eq(*logits).logical_and(
              logits->ne(Scalar(std::numeric_limits<double>::infinity()))),
          "parameter logits to be real numbers below +inf");
    logits_ = logits->sub(logits->logsumexp(IntArrayRef{-1}, true));
    probs_ = softmax(logits_, -1);
  }
}

Tensor Categorical::sample(IntArrayRef sample_shape, std::optional<Generator> gen) const {
  NoGradGuard no_grad;
  int64_t n = 1;
  for (int64_t d : sample_shape) n *= d;
  DimVector shape = extended_shape(sample_shape);
  const int64_t k = num_events();
  if (n == 0 || probs_.numel() == 0) return empty(shape, TensorOptions().dtype(kLong));
  Tensor p2 = probs_.reshape({-1, k});
  Tensor s = multinomial(p2, n, /*replacement=*/true, std::move(gen));  // [batch, n]
  return s.t().contiguous().reshape(shape);
}

Tensor Categorical::log_prob(const Tensor& value) const {
  check_value_shape(value);
  if (validate_) {
    check(value.eq(value.floor())
              .logical_and(value.ge(Scalar(0)))
              .logical_and(value.lt(Scalar(num_events()))),
          "value to be a category index in [0, num_events)");
  }
  std::vector<Tensor> b = broadcast_tensors({value.to(kLong).unsqueeze(-1), logits_});
  Tensor idx = b[0].narrow(-1, 0, 1);
  return gather(b[1], -1, idx).squeeze(-1);
}

Tensor Categorical::entropy() const {
  Tensor l = logits_.clamp(Scalar(lowest_of(logits_.dtype())), std::nullopt);
  return probs_.mul(l).sum(IntArrayRef{-1}).neg();
}

Tensor Categorical::mean() const {
  return full(batch_shape_, Scalar(std::numeric_limits<double>::quiet_NaN()),
              TensorOptions().dtype(probs_.dtype()));
}
Tensor Categorical::variance() const { return mean(); }

// ---- Poisson ----

Poisson::Poisson(const Tensor& rate, bool validate_args)
    : Distribution(rate.sizes(), {}, validate_args), rate_(rate) {
  check(rate_.ge(Scalar(0)), "parameter rate to be non-negative");
}

Tensor Poisson::sample(IntArrayRef sample_shape, std::optional<Generator> gen) const {
  NoGradGuard no_grad;
  return poisson(rate_.expand(extended_shape(sample_shape)), std::move(gen));
}

Tensor Poisson::log_prob(const Tensor& value) const {
  check_value_shape(value);
  check(value.ge(Scalar(0)).logical_and(value.eq(value.floor())),
        "value to be a non-negative integer");
  return xlogy(value, rate_).sub(rate_).sub(value.add(Scalar(1)).lgamma());
}

}  // namespace ember::distributions
