#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernels of the special family that are not plain elementwise functors
// (src/ops/elementwise/special_ops.cpp).

#include "core/kernel_stub.h"
#include "ember/tensor.h"

namespace ember {

/// frexp: `self` (contiguous, float16 / bfloat16 / float32 / float64) split into `mantissa`
/// (contiguous, self's dtype and shape; |m| in [0.5, 1), or 0, inf, NaN as self) and `exponent`
/// (contiguous int32 of self's shape; 0 for zero, inf and NaN) with self = m * 2^exponent.
EMBER_DECLARE_KERNEL(frexp_stub, void(const Tensor& self, Tensor& mantissa, Tensor& exponent));

}  // namespace ember
