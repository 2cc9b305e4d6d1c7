#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernel of the inference-only `_add_layer_norm` (src/ops/nn/add_layer_norm_ops.cpp):
// y = layer_norm(x + r) over the last D elements of each row (Note [Kernel stubs]).

#include <cstdint>

#include "core/kernel_stub.h"
#include "ember/tensor.h"

namespace ember {

/// For M rows of D elements: y = ((x + r) - mean) * rstd * weight + bias, one pass over each
/// row. `x`, `r` and `y` are contiguous with one dtype (float32, bfloat16 or float64); weight and
/// bias (D elements each, optional) have that dtype too. Statistics accumulate in float32
/// (float64 for float64 data).
EMBER_DECLARE_KERNEL(add_layer_norm_stub,
                     void(const Tensor& x, const Tensor& r, const Tensor& weight,
                          const Tensor& bias, int64_t M, int64_t D, double eps, Tensor& y));

}  // namespace ember
