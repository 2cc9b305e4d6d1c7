#pragma once
/// Random tensor factories. All draw from `gen` or the device's default generator; see
/// Note [Reproducible random streams].

#include <optional>

#include "ember/generator.h"
#include "ember/tensor.h"

namespace ember {

/// Uniform on [0, 1) (complex: real and imaginary parts each). Floating or complex dtypes only
/// (RuntimeError otherwise); the default dtype unless `opts` gives one.
Tensor rand(IntArrayRef sizes, std::optional<Generator> gen = std::nullopt,
            const TensorOptions& opts = {});
Tensor rand(IntArrayRef sizes, const TensorOptions& opts);
/// Standard normal (complex: each part has variance 1/2). Floating or complex dtypes only.
Tensor randn(IntArrayRef sizes, std::optional<Generator> gen = std::nullopt,
             const TensorOptions& opts = {});
Tensor randn(IntArrayRef sizes, const TensorOptions& opts);
/// Integers uniform on [low, high); int64 unless `opts` says otherwise. RuntimeError when
/// low >= high or high - 1 does not fit the dtype.
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes,
               std::optional<Generator> gen = std::nullopt, const TensorOptions& opts = {});
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, const TensorOptions& opts);
Tensor randint(int64_t high, IntArrayRef sizes, const TensorOptions& opts = {});
Tensor randint(int64_t high, IntArrayRef sizes, std::optional<Generator> gen,
               const TensorOptions& opts = {});
/// A random permutation of 0..n-1 (int64 by default), by Fisher-Yates on the generator.
Tensor randperm(int64_t n, std::optional<Generator> gen = std::nullopt,
                const TensorOptions& opts = {});
Tensor randperm(int64_t n, const TensorOptions& opts);
/// rand / randn with the shape, dtype, device and layout of `t` unless `opts` says otherwise.
Tensor rand_like(const Tensor& t, const TensorOptions& opts = {});
Tensor randn_like(const Tensor& t, const TensorOptions& opts = {});
/// 1 with probability p (elementwise), as `torch.bernoulli(p)`: p floating, values in [0, 1];
/// the result has p's dtype. The second form draws with a scalar p in x's shape and dtype.
Tensor bernoulli(const Tensor& p, std::optional<Generator> gen = std::nullopt);
Tensor bernoulli(const Tensor& x, double p, std::optional<Generator> gen = std::nullopt);
/// Samples int64 indices from the rows of `probs` (1-D or 2-D, finite non-negative weights, a
/// positive sum per row). Without replacement the samples of a row are distinct and come in
/// draw order; RuntimeError on bad weights, num_samples <= 0, or more samples than categories
/// without replacement (as PyTorch 1.13).
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false,
                   std::optional<Generator> gen = std::nullopt);
/// Normal with tensor or scalar mean/std. With tensors, the shape is the broadcast of mean and
/// std and the dtype is that of the tensor argument (mean's when both are tensors); RuntimeError
/// when an std is negative.
Tensor normal(const Tensor& mean, const Tensor& std, std::optional<Generator> gen = std::nullopt);
Tensor normal(const Tensor& mean, double std, std::optional<Generator> gen = std::nullopt);
Tensor normal(double mean, const Tensor& std, std::optional<Generator> gen = std::nullopt);
Tensor normal(double mean, double std, IntArrayRef sizes,
              std::optional<Generator> gen = std::nullopt, const TensorOptions& opts = {});

/// Samples of Gamma(alpha, 1), elementwise (alpha floating, positive), as torch._standard_gamma.
/// Differentiable in alpha by implicit reparameterisation (d sample / d alpha).
Tensor _standard_gamma(const Tensor& alpha, std::optional<Generator> gen = std::nullopt);
/// d output / d self of Gamma(self, 1) samples `output` at fixed CDF (implicit
/// reparameterisation), as torch._standard_gamma_grad(alpha, sample).
Tensor _standard_gamma_grad(const Tensor& self, const Tensor& output);
/// Dirichlet samples over the last dim of `alpha` (positive), as torch._sample_dirichlet.
Tensor _sample_dirichlet(const Tensor& alpha, std::optional<Generator> gen = std::nullopt);
/// d x / d alpha of Dirichlet samples at fixed marginal CDF, as torch._dirichlet_grad.
Tensor _dirichlet_grad(const Tensor& x, const Tensor& alpha, const Tensor& total);
/// Poisson samples with rates `rates` (non-negative), elementwise, in rates' dtype.
Tensor poisson(const Tensor& rates, std::optional<Generator> gen = std::nullopt);
/// Binomial samples of `count` trials with probability `prob`, elementwise (broadcast).
Tensor binomial(const Tensor& count, const Tensor& prob,
                std::optional<Generator> gen = std::nullopt);

}  // namespace ember
