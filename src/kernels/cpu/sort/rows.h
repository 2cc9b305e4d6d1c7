#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Helpers shared by the sort-family kernels: the geometry of a `rows` tensor (a contiguous
// tensor whose last dim holds the slices) and the type elements are compared in.

#include <cstdint>
#include <type_traits>

#include "ember/half.h"
#include "ember/tensor.h"

namespace ember::cpu::sort_util {

/// The length of each row of `rows` (1 for a 0-dim tensor).
inline int64_t row_length(const Tensor& rows) { return rows.dim() == 0 ? 1 : rows.size(-1); }
/// The number of rows of `rows` (0 when rows are empty).
inline int64_t row_count(const Tensor& rows) {
  const int64_t n = row_length(rows);
  return n == 0 ? 0 : rows.numel() / n;
}

/// The type elements are compared in: half types compare as float (exactly as their own
/// operators).
template <class T>
using cmp_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

}  // namespace ember::cpu::sort_util
