#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernel of softmax / log_softmax (src/ops/nn/softmax_ops.cpp; Note [Kernel stubs]).

#include <cstdint>

#include "core/kernel_stub.h"
#include "ember/tensor.h"

namespace ember {

/// out = softmax(x) (log_softmax when `log`) over the wrapped dim `dim` of `x`, a non-empty
/// contiguous float32 or float64 tensor (on CPU also bfloat16 / float16, computed in float32);
/// `out` is contiguous, of x's shape and dtype.
EMBER_DECLARE_KERNEL(softmax_stub, void(const Tensor& x, Tensor& out, int64_t dim, bool log));

}  // namespace ember
