#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernels of the value-producing factories (src/ops/creation/factory.cpp): constant fills,
// ranges and eye.

#include "core/kernel_stub.h"
#include "ember/scalar.h"
#include "ember/tensor.h"

namespace ember {

/// Sets every byte of the contiguous `out` to zero (the value zero in every dtype).
EMBER_DECLARE_KERNEL(zeros_stub, void(Tensor& out));
/// Stores `value` converted to out's dtype in the one element of the 0-dim `out`; `op` names
/// the op in the error for a dtype it cannot store.
EMBER_DECLARE_KERNEL(store_scalar_stub, void(Tensor& out, const Scalar& value, const char* op));
/// out[i] = start + step * i in PyTorch's accumulate type of out's real dtype; `out` is 1-D and
/// contiguous.
EMBER_DECLARE_KERNEL(arange_stub, void(Tensor& out, const Scalar& start, const Scalar& step));
/// Fills the contiguous 1-D non-bool `out` with evenly spaced values from start to end.
EMBER_DECLARE_KERNEL(linspace_stub, void(Tensor& out, const Scalar& start, const Scalar& end));
/// Fills the contiguous 1-D non-bool `out` with base ** v for v evenly spaced from start to end.
EMBER_DECLARE_KERNEL(logspace_stub,
                     void(Tensor& out, const Scalar& start, const Scalar& end, double base));
/// Writes 1 on the main diagonal of the contiguous zero matrix `out`.
EMBER_DECLARE_KERNEL(eye_stub, void(Tensor& out));

}  // namespace ember
