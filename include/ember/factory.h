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
Tensor zeros(IntArrayRef sizes, const TensorOptions& opts = {});
Tensor ones(IntArrayRef sizes, const TensorOptions& opts = {});
/// Filled with `value`; without a dtype, the dtype follows the value (bool, int64, default
/// float or default complex), as torch.full.
Tensor full(IntArrayRef sizes, const Scalar& value, const TensorOptions& opts = {});
Tensor empty_like(const Tensor& t, const TensorOptions& opts = {});
Tensor zeros_like(const Tensor& t, const TensorOptions& opts = {});
Tensor ones_like(const Tensor& t, const TensorOptions& opts = {});
Tensor full_like(const Tensor& t, const Scalar& value, const TensorOptions& opts = {});
/// [start, end) by step; int64 when all arguments are integers, else the default dtype.
Tensor arange(const Scalar& end, const TensorOptions& opts = {});
Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& opts = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
              const TensorOptions& opts = {});
Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps,
                const TensorOptions& opts = {});
Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base = 10.0,
                const TensorOptions& opts = {});
Tensor eye(int64_t n, const TensorOptions& opts = {});
Tensor eye(int64_t n, int64_t m, const TensorOptions& opts = {});
/// Wraps user memory without copying; `deleter(data)` runs when the storage dies.
Tensor from_blob(void* data, IntArrayRef sizes, const std::function<void(void*)>& deleter,
                 const TensorOptions& opts = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides,
                 const std::function<void(void*)>& deleter, const TensorOptions& opts = {});
/// Wraps user memory without copying or taking ownership.
Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& opts = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides,
                 const TensorOptions& opts = {});
/// A 0-dim tensor holding `s` (dtype from the scalar unless given).
Tensor scalar_tensor(const Scalar& s, const TensorOptions& opts = {});

/// Nested initializer list of numbers, as libtorch's `torch::tensor({{1, 2}, {3, 4}})`.
class TensorDataContainer;

/// 1-D tensor from values; dtype from T (int -> int64, float -> float32, double -> float64
/// when the default dtype is float32 in libtorch style), or `opts`.
template <class T>
Tensor tensor(std::initializer_list<T> values, const TensorOptions& opts = {});
template <class T>
Tensor tensor(const std::vector<T>& values, const TensorOptions& opts = {});
/// 2-D tensor from nested lists (rows must have equal lengths; ValueError otherwise).
template <class T>
Tensor tensor(std::initializer_list<std::initializer_list<T>> values,
              const TensorOptions& opts = {});
/// 0-dim tensor from a single number.
Tensor tensor(const Scalar& value, const TensorOptions& opts = {});

}  // namespace ember
