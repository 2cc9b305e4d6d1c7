#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The scan kernels behind cumsum / cumprod / cummax / cummin / logcumsumexp (Note [Scan layout]
// in kernels/cpu/scan/scan.cpp).
//
// Every stub scans `self` along `dim` (wrapped; `self` has at least one dim). `self` is
// contiguous and of the result's dtype, which the op has checked the kernel supports; each
// output is contiguous, of `self`'s shape, and may be `self` itself (exactly the same tensor,
// not a partial overlap). Lines are scanned in order by one thread each, so results do not
// depend on the thread count.

#include <cstdint>

#include "core/kernel_stub.h"
#include "ember/tensor.h"

namespace ember {

/// Running sum into `out` (`self`'s dtype: integer, floating or complex).
EMBER_DECLARE_KERNEL(cumsum_stub, void(const Tensor& self, Tensor& out, int64_t dim));
/// Running product into `out` (`self`'s dtype: integer, floating or complex).
EMBER_DECLARE_KERNEL(cumprod_stub, void(const Tensor& self, Tensor& out, int64_t dim));
/// Running log(sum(exp)) into `out` (`self`'s dtype: floating).
EMBER_DECLARE_KERNEL(logcumsumexp_stub, void(const Tensor& self, Tensor& out, int64_t dim));
/// Running maximum into `values` (`self`'s dtype: bool, integer or floating) and the int64
/// index it was taken from into `indices` (a NaN, then a later equal value, takes over).
EMBER_DECLARE_KERNEL(cummax_stub,
                     void(const Tensor& self, Tensor& values, Tensor& indices, int64_t dim));
/// Running minimum, as cummax_stub.
EMBER_DECLARE_KERNEL(cummin_stub,
                     void(const Tensor& self, Tensor& values, Tensor& indices, int64_t dim));

}  // namespace ember
