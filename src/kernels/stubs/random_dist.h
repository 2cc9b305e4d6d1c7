#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernels of the distribution samplers (src/ops/creation/random_distributions.cpp) and of
// their implicit-reparameterisation gradients. Inputs arrive as contiguous float64 CPU tensors
// of the output's size; `out` is a contiguous CPU tensor of the result dtype.
// Note [Per-element random streams] in src/kernels/cpu/creation/random_dist.cpp says how
// rejection samplers use the Philox stream.

#include "core/kernel_stub.h"
#include "ember/generator.h"
#include "ember/tensor.h"

namespace ember {

/// Gamma(alpha, 1) samples, clamped below to the smallest normal value of out's dtype.
EMBER_DECLARE_KERNEL(standard_gamma_stub, void(Tensor& out, const Tensor& alpha, Generator& gen));
/// d sample / d alpha of Gamma(alpha, 1) at fixed CDF.
EMBER_DECLARE_KERNEL(standard_gamma_grad_stub,
                     void(Tensor& out, const Tensor& alpha, const Tensor& sample));
/// Dirichlet samples over the last dim of `alpha` (rows x k, flattened rows).
EMBER_DECLARE_KERNEL(sample_dirichlet_stub,
                     void(Tensor& out, const Tensor& alpha, int64_t k, Generator& gen));
/// d x / d alpha of the Beta(alpha, total - alpha) marginal at fixed CDF.
EMBER_DECLARE_KERNEL(dirichlet_grad_stub,
                     void(Tensor& out, const Tensor& x, const Tensor& alpha, const Tensor& total));
/// Poisson samples; raises (before drawing) unless every rate is >= 0.
EMBER_DECLARE_KERNEL(poisson_stub, void(Tensor& out, const Tensor& rates, Generator& gen));
/// Binomial samples of `count` trials with probability `prob`.
EMBER_DECLARE_KERNEL(binomial_stub,
                     void(Tensor& out, const Tensor& count, const Tensor& prob, Generator& gen));

}  // namespace ember
