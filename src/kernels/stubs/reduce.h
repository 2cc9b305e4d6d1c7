#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The reduction kernels (Note [Reductions] in kernels/cpu/reduce.cpp).
//
// Every stub reduces `self` over the dims set in `mask` (bit d: dim d). `self` is dense (its
// non-size-1 dims tile memory without gaps; the op copies other inputs to contiguous) and of
// the dtype the kernel reduces. Each output is contiguous, has one element per kept position
// and receives the results in the memory order of `self`'s kept dims: larger strides first,
// ties in dim order (the op permutes them to the logical order afterwards).

#include <cstdint>

#include "core/kernel_stub.h"
#include "ember/tensor.h"

namespace ember {

/// sum: `out` is of `self`'s dtype, or int64 for an integer or bool `self`.
EMBER_DECLARE_KERNEL(sum_stub, void(const Tensor& self, uint64_t mask, Tensor& out));
/// nansum (NaNs count as zero): `self` is floating, `out` of its dtype.
EMBER_DECLARE_KERNEL(nansum_stub, void(const Tensor& self, uint64_t mask, Tensor& out));
/// mean (the sum rounded to the dtype, then divided by the count): `self` is floating or
/// complex, `out` of its dtype.
EMBER_DECLARE_KERNEL(mean_stub, void(const Tensor& self, uint64_t mask, Tensor& out));
/// prod: `out` is of `self`'s dtype, or int64 for an integer or bool `self`.
EMBER_DECLARE_KERNEL(prod_stub, void(const Tensor& self, uint64_t mask, Tensor& out));

/// amax (NaN wins): `self` is real or bool, `out` of its dtype.
EMBER_DECLARE_KERNEL(amax_stub, void(const Tensor& self, uint64_t mask, Tensor& out));
/// amin (NaN wins): `self` is real or bool, `out` of its dtype.
EMBER_DECLARE_KERNEL(amin_stub, void(const Tensor& self, uint64_t mask, Tensor& out));
/// max(dim): the largest value (NaN wins) into `values` (`self`'s dtype) and its first index
/// into `indices` (int64). `mask` has at most one dim.
EMBER_DECLARE_KERNEL(max_dim_stub,
                     void(const Tensor& self, uint64_t mask, Tensor& values, Tensor& indices));
/// min(dim), as max_dim_stub.
EMBER_DECLARE_KERNEL(min_dim_stub,
                     void(const Tensor& self, uint64_t mask, Tensor& values, Tensor& indices));
/// argmax: the first index of the largest value (NaN wins) into `out` (int64). `mask` has at
/// most one dim.
EMBER_DECLARE_KERNEL(argmax_stub, void(const Tensor& self, uint64_t mask, Tensor& out));
/// argmin, as argmax_stub.
EMBER_DECLARE_KERNEL(argmin_stub, void(const Tensor& self, uint64_t mask, Tensor& out));

/// all: `out` is uint8 for a uint8 `self`, bool otherwise.
EMBER_DECLARE_KERNEL(all_stub, void(const Tensor& self, uint64_t mask, Tensor& out));
/// any: `out` is uint8 for a uint8 `self`, bool otherwise.
EMBER_DECLARE_KERNEL(any_stub, void(const Tensor& self, uint64_t mask, Tensor& out));
/// count_nonzero: `out` is int64.
EMBER_DECLARE_KERNEL(count_nonzero_stub, void(const Tensor& self, uint64_t mask, Tensor& out));

/// var, or std when `take_sqrt` (Welford; divisor max(0, N - correction)): `self` is floating
/// or complex, `out` of its real dtype. `mean`, when defined, receives the mean (`self`'s
/// dtype; NaN for an empty reduction).
EMBER_DECLARE_KERNEL(std_var_stub, void(const Tensor& self, uint64_t mask, Tensor& out,
                                        Tensor& mean, double correction, bool take_sqrt));

}  // namespace ember
