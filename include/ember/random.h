#pragma once
/// Random tensor factories. All draw from `gen` or the device's default generator; see
/// Note [Reproducible random streams].

#include <optional>

#include "ember/generator.h"
#include "ember/tensor.h"

namespace ember {

/// Uniform on [0, 1).
Tensor rand(IntArrayRef sizes, std::optional<Generator> gen = std::nullopt,
            const TensorOptions& opts = {});
Tensor rand(IntArrayRef sizes, const TensorOptions& opts);
/// Standard normal.
Tensor randn(IntArrayRef sizes, std::optional<Generator> gen = std::nullopt,
             const TensorOptions& opts = {});
Tensor randn(IntArrayRef sizes, const TensorOptions& opts);
/// Integers uniform on [low, high); int64 unless `opts` says otherwise.
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes,
               std::optional<Generator> gen = std::nullopt, const TensorOptions& opts = {});
Tensor randint(int64_t high, IntArrayRef sizes, const TensorOptions& opts = {});
/// A random permutation of 0..n-1 (int64 by default).
Tensor randperm(int64_t n, std::optional<Generator> gen = std::nullopt,
                const TensorOptions& opts = {});
Tensor rand_like(const Tensor& t, const TensorOptions& opts = {});
Tensor randn_like(const Tensor& t, const TensorOptions& opts = {});
/// 1 with probability p (elementwise), as `torch.bernoulli(p)`.
Tensor bernoulli(const Tensor& p, std::optional<Generator> gen = std::nullopt);
Tensor bernoulli(const Tensor& x, double p, std::optional<Generator> gen = std::nullopt);
/// Samples indices from the rows of `probs` (1-D or 2-D, non-negative weights).
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

}  // namespace ember
