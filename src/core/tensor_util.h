#pragma once
// Internal helpers shared by ops: dim wrapping and view construction.

#include "ember/tensor.h"

namespace ember {

/// Wraps a possibly negative dim into [0, ndim); IndexError naming `op` when out of range.
/// A 0-dim tensor accepts dims -1 and 0 (as PyTorch).
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

/// A view of `base` with new geometry: shares storage, version counter and conj bit.
Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t offset);

/// A view of `base`'s storage reinterpreted with another dtype (real/imag views).
Tensor make_view_with_dtype(const Tensor& base, ScalarType dtype, IntArrayRef sizes,
                            IntArrayRef strides, int64_t offset);

/// A new uninitialised contiguous tensor on `device`.
/// Whether `v` converts to `dt` without overflow, by PyTorch's rule for fill_ and factories
/// (unsigned targets take -max..max, floating targets take inf/NaN; defined in
/// tensor_core_ops.cpp).
bool value_fits(const Scalar& v, ScalarType dt);
/// Gives an out= tensor fresh contiguous storage of `sizes` (PyTorch's resize_output). Callers
/// resize only empty outs: a non-empty out of another shape is an error in ember.
void resize_output(Tensor& out, IntArrayRef sizes);
/// Bytes of a contiguous tensor of `sizes`; RuntimeError for negative sizes or on overflow.
size_t storage_nbytes(IntArrayRef sizes, ScalarType dtype);
Tensor empty_tensor(IntArrayRef sizes, ScalarType dtype, Device device = Device(kCPU));

/// Shape as "[2, 3]" for error messages.
std::string shape_str(IntArrayRef sizes);

}  // namespace ember
