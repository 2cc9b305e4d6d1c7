#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernels of copies, fills and element reads (src/ops/tensor_core_ops.cpp and the ops that
// read a few values back to the host).

#include <cstdint>
#include <vector>

#include "core/kernel_stub.h"
#include "ember/scalar.h"
#include "ember/tensor.h"

namespace ember {

/// dst = src converted to dst's dtype; same shape (src may be broadcast), neither a conj view,
/// no overlap between them, both on this kernel's device.
EMBER_DECLARE_KERNEL(copy_stub, void(Tensor& dst, const Tensor& src));
/// Sets every element of `dst` (not a conj view) to `value`.
EMBER_DECLARE_KERNEL(fill_stub, void(Tensor& dst, const Scalar& value));
/// The one element of `t` as a Scalar, conjugated when `conj`.
EMBER_DECLARE_KERNEL(item_stub, Scalar(const Tensor& t, bool conj));
/// The elements of the contiguous int64 tensor `t`, in order.
EMBER_DECLARE_KERNEL(int64_values_stub, std::vector<int64_t>(const Tensor& t));

}  // namespace ember
