#pragma once
/// Probability distributions with torch.distributions' API: parameters as tensors (broadcast to
/// one batch shape), sample / rsample of shape sample_shape + batch_shape + event_shape,
/// log_prob, entropy, mean, variance and stddev.
///
///   ember::distributions::Normal n(loc, scale);
///   Tensor x = n.rsample({100});           // [100, *batch_shape], differentiable in loc, scale
///   Tensor lp = n.log_prob(x);
///
/// With validate_args (the default, as PyTorch), a parameter outside its constraint raises
/// ValueError in the constructor and log_prob raises ValueError for a value outside the support.

#include <optional>

#include "ember/generator.h"
#include "ember/tensor.h"

namespace ember::distributions {

/// Base class: the shapes and the sampling / density interface.
class Distribution {
 public:
  virtual ~Distribution() = default;
  /// The shape over which parameters are batched (independent distributions).
  const DimVector& batch_shape() const { return batch_shape_; }
  /// The shape of a single draw (empty for scalar distributions).
  const DimVector& event_shape() const { return event_shape_; }
  /// sample_shape + batch_shape + event_shape.
  DimVector extended_shape(IntArrayRef sample_shape = {}) const;
  /// Whether rsample() is implemented (samples differentiable in the parameters).
  virtual bool has_rsample() const { return false; }
  /// A draw of shape extended_shape(sample_shape), outside the autograd graph.
  virtual Tensor sample(IntArrayRef sample_shape = {},
                        std::optional<Generator> gen = std::nullopt) const;
  /// A reparameterised draw; NotImplementedError unless has_rsample().
  virtual Tensor rsample(IntArrayRef sample_shape = {},
                         std::optional<Generator> gen = std::nullopt) const;
  /// Log density (or mass) of `value`, of the broadcast batch shape.
  virtual Tensor log_prob(const Tensor& value) const = 0;
  /// Entropy per batch element; NotImplementedError where undefined here.
  virtual Tensor entropy() const;
  virtual Tensor mean() const = 0;
  virtual Tensor variance() const = 0;
  Tensor stddev() const { return variance().sqrt(); }
  bool validate_args() const { return validate_; }

 protected:
  Distribution(IntArrayRef batch_shape, IntArrayRef event_shape, bool validate_args);
  /// Raises ValueError naming `what` unless every element of the bool tensor `ok` is true.
  void check(const Tensor& ok, const char* what) const;
  /// ValueError unless `value` has a shape broadcastable with batch_shape + event_shape.
  void check_value_shape(const Tensor& value) const;
  virtual const char* name() const = 0;

  DimVector batch_shape_, event_shape_;
  bool validate_ = true;
};

/// Normal(loc, scale), scale > 0.
class Normal : public Distribution {
 public:
  Normal(const Tensor& loc, const Tensor& scale, bool validate_args = true);
  bool has_rsample() const override { return true; }
  Tensor rsample(IntArrayRef sample_shape = {},
                 std::optional<Generator> gen = std::nullopt) const override;
  Tensor log_prob(const Tensor& value) const override;
  Tensor entropy() const override;
  Tensor mean() const override { return loc_; }
  Tensor variance() const override { return scale_.pow(Scalar(2)); }
  /// Cumulative distribution function and its inverse.
  Tensor cdf(const Tensor& value) const;
  Tensor icdf(const Tensor& p) const;
  const Tensor& loc() const { return loc_; }
  const Tensor& scale() const { return scale_; }

 protected:
  const char* name() const override { return "Normal"; }

 private:
  Tensor loc_, scale_;
};

/// Uniform on [low, high), low < high.
class Uniform : public Distribution {
 public:
  Uniform(const Tensor& low, const Tensor& high, bool validate_args = true);
  bool has_rsample() const override { return true; }
  Tensor rsample(IntArrayRef sample_shape = {},
                 std::optional<Generator> gen = std::nullopt) const override;
  Tensor log_prob(const Tensor& value) const override;
  Tensor entropy() const override;
  Tensor mean() const override;
  Tensor variance() const override;
  const Tensor& low() const { return low_; }
  const Tensor& high() const { return high_; }

 protected:
  const char* name() const override { return "Uniform"; }

 private:
  Tensor low_, high_;
};

/// Bernoulli with probs in [0, 1] or logits (exactly one given).
class Bernoulli : public Distribution {
 public:
  Bernoulli(const std::optional<Tensor>& probs, const std::optional<Tensor>& logits = std::nullopt,
            bool validate_args = true);
  static Bernoulli from_logits(const Tensor& logits, bool validate_args = true) {
    return Bernoulli(std::nullopt, logits, validate_args);
  }
  Tensor sample(IntArrayRef sample_shape = {},
                std::optional<Generator> gen = std::nullopt) const override;
  /// value in {0, 1}.
  Tensor log_prob(const Tensor& value) const override;
  Tensor entropy() const override;
  Tensor mean() const override { return probs_; }
  Tensor variance() const override { return probs_.mul(probs_.neg().add(Scalar(1))); }
  const Tensor& probs() const { return probs_; }
  const Tensor& logits() const { return logits_; }

 protected:
  const char* name() const override { return "Bernoulli"; }

 private:
  Tensor probs_, logits_;
};

/// Categorical over the last dim of probs (non-negative, normalised here) or logits (exactly
/// one given); samples are int64 category indices.
class Categorical : public Distribution {
 public:
  Categorical(const std::optional<Tensor>& probs,
              const std::optional<Tensor>& logits = std::nullopt, bool validate_args = true);
  static Categorical from_logits(const Tensor& logits, bool validate_args = true) {
    return Categorical(std::nullopt, logits, validate_args);
  }
  Tensor sample(IntArrayRef sample_shape = {},
                std::optional<Generator> gen = std::nullopt) const override;
  /// value: integer category indices broadcastable with batch_shape.
  Tensor log_prob(const Tensor& value) const override;
  Tensor entropy() const override;
  /// NaN of batch_shape (the mean of categories is undefined), as PyTorch.
  Tensor mean() const override;
  Tensor variance() const override;
  int64_t num_events() const { return probs_.size(-1); }
  /// Normalised probabilities and logits (logits - logsumexp(logits)).
  const Tensor& probs() const { return probs_; }
  const Tensor& logits() const { return logits_; }

 protected:
  const char* name() const override { return "Categorical"; }

 private:
  Tensor probs_, logits_;
};

/// Poisson(rate), rate >= 0; samples and values are non-negative integers (as floats).
class Poisson : public Distribution {
 public:
  explicit Poisson(const Tensor& rate, bool validate_args = true);
  Tensor sample(IntArrayRef sample_shape = {},
                std::optional<Generator> gen = std::nullopt) const override;
  Tensor log_prob(const Tensor& value) const override;
  Tensor mean() const override { return rate_; }
  Tensor variance() const override { return rate_; }
  const Tensor& rate() const { return rate_; }

 protected:
  const char* name() const override { return "Poisson"; }

 private:
  Tensor rate_;
};

/// Gamma(concentration, rate), both > 0; rsample by implicit reparameterisation.
class Gamma : public Distribution {
 public:
  Gamma(const Tensor& concentration, const Tensor& rate, bool validate_args = true);
  bool has_rsample() const override { return true; }
  Tensor rsample(IntArrayRef sample_shape = {},
                 std::optional<Generator> gen = std::nullopt) const override;
  Tensor log_prob(const Tensor& value) const override;
  Tensor entropy() const override;
  Tensor mean() const override;
  Tensor variance() const override;
  const Tensor& concentration() const { return concentration_; }
  const Tensor& rate() const { return rate_; }

 protected:
  const char* name() const override { return "Gamma"; }

 private:
  Tensor concentration_, rate_;
};

/// Dirichlet over the last dim of concentration (> 0, at least 1-D).
class Dirichlet : public Distribution {
 public:
  explicit Dirichlet(const Tensor& concentration, bool validate_args = true);
  bool has_rsample() const override { return true; }
  Tensor rsample(IntArrayRef sample_shape = {},
                 std::optional<Generator> gen = std::nullopt) const override;
  Tensor log_prob(const Tensor& value) const override;
  Tensor entropy() const override;
  Tensor mean() const override;
  Tensor variance() const override;
  const Tensor& concentration() const { return concentration_; }

 protected:
  const char* name() const override { return "Dirichlet"; }

 private:
  Tensor concentration_;
};

/// Multivariate normal over the last dim of loc, given exactly one of covariance_matrix,
/// precision_matrix (symmetric positive definite) or scale_tril (lower triangular, positive
/// diagonal). Everything is computed from scale_tril (L, with covariance L Lᵀ).
class MultivariateNormal : public Distribution {
 public:
  MultivariateNormal(const Tensor& loc, const std::optional<Tensor>& covariance_matrix,
                     const std::optional<Tensor>& precision_matrix = std::nullopt,
                     const std::optional<Tensor>& scale_tril = std::nullopt,
                     bool validate_args = true);
  bool has_rsample() const override { return true; }
  Tensor rsample(IntArrayRef sample_shape = {},
                 std::optional<Generator> gen = std::nullopt) const override;
  Tensor log_prob(const Tensor& value) const override;
  Tensor entropy() const override;
  Tensor mean() const override { return loc_; }
  /// The diagonal of the covariance, of batch_shape + event_shape.
  Tensor variance() const override;
  const Tensor& loc() const { return loc_; }
  const Tensor& scale_tril() const { return scale_tril_; }
  Tensor covariance_matrix() const;
  Tensor precision_matrix() const;

 protected:
  const char* name() const override { return "MultivariateNormal"; }

 private:
  Tensor loc_, scale_tril_;
};

}  // namespace ember::distributions
