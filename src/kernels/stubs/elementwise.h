#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Kernels of the elementwise family outside the elementwise engine (Note [Kernel stubs]).

#include "core/kernel_stub.h"
#include "ember/scalar.h"
#include "ember/tensor.h"

namespace ember {

/// Writes `s` into the one element of the 0-dim CPU tensor `t` (a wrapped number), converted to
/// t's dtype as the cast kernels convert s.type() (bool, int64, float64 or complex128) to it.
EMBER_DECLARE_KERNEL(write_scalar_stub, void(const Tensor& t, const Scalar& s));

}  // namespace ember
