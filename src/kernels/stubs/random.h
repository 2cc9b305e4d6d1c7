#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernels of random sampling (src/ops/creation/random.cpp) on the counter-based Philox stream:
// Note [Reproducible random streams] in ember/generator.h says how elements map to counters.

#include <cstdint>

#include "core/kernel_stub.h"
#include "ember/generator.h"
#include "ember/tensor.h"

namespace ember {

/// Fills the contiguous floating or complex `self` (complex: as a real buffer of twice the
/// elements) with uniform values on [from, to).
EMBER_DECLARE_KERNEL(uniform_stub, void(Tensor& self, double from, double to, Generator& gen));
/// Fills the contiguous floating or complex `self` (complex: as a real buffer of twice the
/// elements) with normal values of mean `mean` and standard deviation `std`.
EMBER_DECLARE_KERNEL(normal_stub, void(Tensor& self, double mean, double std, Generator& gen));
/// Fills the contiguous floating `self` with exponential values of rate `lambd` (>= 0).
EMBER_DECLARE_KERNEL(exponential_stub, void(Tensor& self, double lambd, Generator& gen));
/// Fills the contiguous real or bool `self` with 1 with probability `p`, else 0.
EMBER_DECLARE_KERNEL(bernoulli_scalar_stub, void(Tensor& self, double p, Generator& gen));
/// Fills the contiguous real or bool `self` with 1 with probability `p[i]`, else 0; `p` is a
/// contiguous double tensor of self's size. Raises unless every p[i] is in [0, 1].
EMBER_DECLARE_KERNEL(bernoulli_tensor_stub, void(Tensor& self, const Tensor& p, Generator& gen));
/// Fills the contiguous real or bool `self` with integers from + [0, range) (range 0: 2^64).
EMBER_DECLARE_KERNEL(random_stub, void(Tensor& self, int64_t from, uint64_t range, Generator& gen));
/// Fills the contiguous real 1-D `out` of n elements with a random permutation of 0..n-1.
EMBER_DECLARE_KERNEL(randperm_stub, void(Tensor& out, Generator& gen));
/// Fills the contiguous int64 `out` (rows x num_samples) with category indices drawn from the
/// rows of the contiguous double `probs` (rows x categories). Raises on a negative or non-finite
/// probability and on a row that sums to 0.
EMBER_DECLARE_KERNEL(multinomial_stub, void(Tensor& out, const Tensor& probs, int64_t num_samples,
                                            bool replacement, Generator& gen));
/// Raises unless every element of the contiguous double `std` is >= 0 (normal's check).
EMBER_DECLARE_KERNEL(normal_std_check_stub, void(const Tensor& std));

}  // namespace ember
