#pragma once
#include "ops/op_layer.h"  // Note [Layer includes]
// Helpers shared by the sort and order-statistics op files: a slice along `dim` as a contiguous
// row (the `rows` of the kernels in kernels/stubs/sort.h), and back.

#include <cstdint>

#include "ember/tensor.h"

namespace ember::sort_detail {

/// `x` with `dim` moved last, contiguous: `rows` rows of `n` elements. 0-dim is one row of 1.
struct Rows {
  Tensor data;
  int64_t rows = 0, n = 0;
  DimVector moved;  ///< the shape with `dim` last
};
Rows to_rows(const Tensor& x, int64_t dim);
/// The inverse of to_rows for a result `y` of the moved shape (last size may differ).
Tensor from_rows(const Tensor& y, const Tensor& x, int64_t dim);
/// A reduction result `y` (moved shape without the last dim) back to x's layout.
Tensor reduced_from_rows(const Tensor& y, const Tensor& x, int64_t dim, bool keepdim);
/// out= of a multi-output op: dtype must match; out is resized to the result's shape.
void assign_out(Tensor& out, const Tensor& r, const char* op);

}  // namespace ember::sort_detail
