#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernels of sorting, order statistics and unique (src/ops/sort/sort_ops.cpp,
// order_stats_ops.cpp, unique_ops.cpp). The row kernels take `rows`: a contiguous tensor whose
// last dim holds the slices to sort or reduce (sort_internal.h's to_rows), with at least one
// row of at least one element unless said otherwise.

#include <cstdint>

#include "core/kernel_stub.h"
#include "ember/tensor.h"

namespace ember {

/// Each row of `rows` (any non-complex dtype) sorted stably into `values` (contiguous, of rows'
/// shape and dtype) and its positions into `indices` (int64, same shape).
EMBER_DECLARE_KERNEL(sort_stub,
                     void(const Tensor& rows, Tensor& values, Tensor& indices, bool descending));
/// The k largest (or smallest) of each row of `rows` (integer or floating) into `values` and
/// `indices` (contiguous, rows' shape with k last; 0 < k <= row length), in PyTorch's order.
EMBER_DECLARE_KERNEL(topk_stub, void(const Tensor& rows, Tensor& values, Tensor& indices, int64_t k,
                                     bool largest, bool sorted));

/// The k-th smallest (1-based) of each row of `rows` (integer or floating but float16) into
/// `values` (rows' dtype) and its position into `indices` (int64), both contiguous of rows'
/// shape without the last dim.
EMBER_DECLARE_KERNEL(kthvalue_stub,
                     void(const Tensor& rows, Tensor& values, Tensor& indices, int64_t k));
/// The median (NaN-skipping when `ignore_nan`) of each row of `rows` into `values` and
/// `indices`, as kthvalue_stub.
EMBER_DECLARE_KERNEL(median_dim_stub,
                     void(const Tensor& rows, Tensor& values, Tensor& indices, bool ignore_nan));
/// The most frequent value of each row of `rows` (any non-complex dtype) into `values` and the
/// last position of it into `indices`, as kthvalue_stub.
EMBER_DECLARE_KERNEL(mode_stub, void(const Tensor& rows, Tensor& values, Tensor& indices));
/// The median (NaN-skipping when `ignore_nan`) of the non-empty contiguous 1-D `flat` (integer
/// or floating but float16) into the 0-dim `out` of its dtype.
EMBER_DECLARE_KERNEL(median_all_stub, void(const Tensor& flat, Tensor& out, bool ignore_nan));

/// quantile's interpolation between the two nearest ranks.
enum class QuantileInterp { Linear, Lower, Higher, Midpoint, Nearest };
/// The quantiles `q` (contiguous, 0-D or 1-D, of rows' dtype: float or double) of each row of
/// `rows` into `out` (contiguous, q-major: [q.numel(), number of rows]). Checks that every q is
/// in [0, 1] and that rows have at most 2^24 elements.
EMBER_DECLARE_KERNEL(quantile_stub, void(const Tensor& rows, const Tensor& q, Tensor& out,
                                         QuantileInterp interp, bool ignore_nan));

/// The distinct values of the contiguous `x` (any non-complex dtype but float16) into `out`,
/// PyTorch's order (Note [Unique order] in kernels/cpu/sort/unique.cpp); `inverse` (x's shape)
/// when `return_inverse` or `return_counts`, `counts` when `return_counts`, else both [0]. The
/// kernel allocates all three: their sizes depend on the values.
EMBER_DECLARE_KERNEL(unique_stub,
                     void(const Tensor& x, bool sorted, bool return_inverse, bool return_counts,
                          Tensor& out, Tensor& inverse, Tensor& counts));
/// The runs of equal neighbours of `x` (any shape and non-complex dtype but float16), as
/// unique_stub: `inverse` when `return_inverse`, `counts` when `return_counts`.
EMBER_DECLARE_KERNEL(unique_consecutive_stub,
                     void(const Tensor& x, bool return_inverse, bool return_counts, Tensor& out,
                          Tensor& inverse, Tensor& counts));
/// The distinct slices along dim 0 of the contiguous `x` (no zero size; any non-complex dtype
/// but float16), sorted lexicographically unless `consecutive` (then runs of equal neighbours):
/// `out` of x's shape with the unique count first, `inverse` [x.size(0)], `counts`; allocated
/// by the kernel.
EMBER_DECLARE_KERNEL(unique_dim_stub, void(const Tensor& x, bool consecutive, Tensor& out,
                                           Tensor& inverse, Tensor& counts));

}  // namespace ember
