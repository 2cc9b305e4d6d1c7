#pragma once
/// Tensor factories: empty, zeros, ones, full, arange, linspace, logspace, eye, *_like,
/// from_blob, and tensors from initializer lists and vectors.

#include <functional>
#include <initializer_list>
#include <vector>

#include "ember/tensor.h"

namespace ember {

/// Uninitialised tensor.
Tensor empty(IntArrayRef sizes, const TensorOptions& opts = {});
/// Uninitialised tensor with the given strides (storage sized to fit).
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, const TensorOptions& opts = {});
/// Filled with zeros (default dtype unless `opts` says otherwise).
Tensor zeros(IntArrayRef sizes, const TensorOptions& opts = {});
/// Filled with ones.
Tensor ones(IntArrayRef sizes, const TensorOptions& opts = {});
/// Filled with `value`; without a dtype, the dtype follows the value (bool, int64, default
/// float or default complex), as torch.full.
Tensor full(IntArrayRef sizes, const Scalar& value, const TensorOptions& opts = {});
/// Same shape, dtype and device as `t` unless `opts` says otherwise; a dense non-contiguous `t`
/// (e.g. a transpose) gives the same strides, as PyTorch's preserve_format.
Tensor empty_like(const Tensor& t, const TensorOptions& opts = {});
Tensor zeros_like(const Tensor& t, const TensorOptions& opts = {});
Tensor ones_like(const Tensor& t, const TensorOptions& opts = {});
Tensor full_like(const Tensor& t, const Scalar& value, const TensorOptions& opts = {});
/// [start, end) by step; int64 when all arguments are integers, else the default dtype. The size
/// is ceil((end - start) / step); element i is start + i * step computed in the accumulate type
/// (int64 / double; float for half types). RuntimeError on a zero step, a step whose sign
/// disagrees with end - start, or a non-finite bound.
Tensor arange(const Scalar& end, const TensorOptions& opts = {});
Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& opts = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
              const TensorOptions& opts = {});
/// `steps` points from start to end inclusive (default dtype; default complex dtype for complex
/// bounds). As PyTorch: step = (end - start) / (steps - 1); the first half is start + i * step,
/// the second half end - (steps - 1 - i) * step, so both ends are exact.
Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps,
                const TensorOptions& opts = {});
/// base ** linspace(start, end, steps), with PyTorch's evaluation order.
Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base = 10.0,
                const TensorOptions& opts = {});
/// Identity matrix n x n (or n x m); RuntimeError for negative sizes.
Tensor eye(int64_t n, const TensorOptions& opts = {});
Tensor eye(int64_t n, int64_t m, const TensorOptions& opts = {});
/// Wraps user memory without copying; `deleter(data)` runs when the storage dies (the storage
/// has no allocator). `opts.device()` says where the memory lives.
Tensor from_blob(void* data, IntArrayRef sizes, const std::function<void(void*)>& deleter,
                 const TensorOptions& opts = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides,
                 const std::function<void(void*)>& deleter, const TensorOptions& opts = {});
/// Wraps user memory without copying or taking ownership.
Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& opts = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides,
                 const TensorOptions& opts = {});
/// A 0-dim tensor holding `s`; the default dtype unless given (as torch.scalar_tensor).
Tensor scalar_tensor(const Scalar& s, const TensorOptions& opts = {});

/// 1-D tensor from values. dtype as libtorch 1.13: int and int64 -> int64; float and double ->
/// the default dtype; bool, uint8, int8, int16, Half, BFloat16, complex<float>, complex<double>
/// keep their own dtype; `opts` overrides. Instantiated for exactly those element types.
template <class T>
Tensor tensor(std::initializer_list<T> values, const TensorOptions& opts = {});
template <class T>
Tensor tensor(const std::vector<T>& values, const TensorOptions& opts = {});
/// 2-D tensor from nested lists (rows must have equal lengths; ValueError otherwise).
template <class T>
Tensor tensor(std::initializer_list<std::initializer_list<T>> values,
              const TensorOptions& opts = {});
/// 0-dim tensor from a single number: bool -> kBool, integer -> kLong, floating -> default
/// dtype, complex -> kComplexDouble (libtorch's rules), unless `opts` gives a dtype.
Tensor tensor(const Scalar& value, const TensorOptions& opts = {});

}  // namespace ember
