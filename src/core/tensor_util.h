#pragma once
// Internal helpers shared by ops: dim wrapping and view construction.

#include <new>
#include <vector>

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
// Note [Checked storage sizes]
// Every buffer whose size comes from user input (tensor storage, and the tables, workspaces and
// im2col buffers inside ops) is sized by checked_nbytes before anything is allocated: the product
// of the sizes times the item size is overflow-checked, and a request larger than any machine
// can hold (kMaxStorageBytes) fails at once. A wrapped product would allocate a too-small buffer;
// an impossible one would grow until the OOM killer ends the process. Errors are RuntimeErrors
// "[op] Storage size calculation overflowed with sizes=[...]" and "[op] out of memory: tried to
// allocate N bytes" (as PyTorch's), and a failed allocation of an internal buffer says the same.

/// Requests above this many bytes (256 TiB, beyond x86-64 and AArch64 user address spaces) are
/// refused before allocating.
inline constexpr int64_t kMaxStorageBytes = int64_t(1) << 48;

/// Bytes of a contiguous buffer of `sizes` elements of `itemsize` bytes (0 when a size is 0).
/// RuntimeError naming `op` for a negative size, an overflowing product or a request above
/// kMaxStorageBytes; see Note [Checked storage sizes].
size_t checked_nbytes(const char* op, IntArrayRef sizes, size_t itemsize);
/// Bytes of a contiguous tensor of `sizes`; the checked_nbytes rule under the name "empty".
size_t storage_nbytes(IntArrayRef sizes, ScalarType dtype);
/// Throws "[op] out of memory: tried to allocate `nbytes` bytes" (RuntimeError).
[[noreturn]] void throw_out_of_memory(const char* op, size_t nbytes);

/// Physical memory plus swap of this machine (defined in allocator.cpp): no CPU buffer can be
/// larger.
size_t host_memory_bytes();

/// A std::vector of prod(sizes) copies of `value` for an op's internal buffer, sized by the
/// checked_nbytes rule and bounded by host_memory_bytes(); allocation failure is the typed
/// out-of-memory error, not std::bad_alloc.
template <class T>
std::vector<T> checked_buffer(const char* op, IntArrayRef sizes, const T& value = T()) {
  const size_t nbytes = checked_nbytes(op, sizes, sizeof(T));
  if (nbytes > host_memory_bytes()) throw_out_of_memory(op, nbytes);
  try {
    return std::vector<T>(nbytes / sizeof(T), value);
  } catch (const std::bad_alloc&) {
    throw_out_of_memory(op, nbytes);
  }
}

Tensor empty_tensor(IntArrayRef sizes, ScalarType dtype, Device device = Device(kCPU));
/// empty_tensor whose size errors name `op`.
Tensor empty_tensor(const char* op, IntArrayRef sizes, ScalarType dtype,
                    Device device = Device(kCPU));

/// Shape as "[2, 3]" for error messages.
std::string shape_str(IntArrayRef sizes);

}  // namespace ember
