#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernels of searching and counting (src/ops/sort/search_ops.cpp): searchsorted, histc and
// bincount.

#include <cstdint>
#include <utility>

#include "core/kernel_stub.h"
#include "ember/tensor.h"

namespace ember {

/// For each value of `values` (contiguous, non-empty), its insertion position into `out` (int32
/// or int64, values' shape) in the last-dim row of `seq` (contiguous, values' dtype: integer or
/// float32/64) that serves it: the one row of a 1-D `seq`, else row i for the i-th run of
/// values.size(-1) values. `sorter` (undefined, or contiguous int64 of seq's shape) gives each
/// row's sorted order; its entries are checked to lie in the row (IndexError).
EMBER_DECLARE_KERNEL(searchsorted_stub, void(const Tensor& seq, const Tensor& values,
                                             const Tensor& sorter, Tensor& out, bool right));
/// The minimum and maximum of the non-empty contiguous floating `x` as double, both NaN when x
/// holds a NaN.
EMBER_DECLARE_KERNEL(histc_range_stub, std::pair<double, double>(const Tensor& x));
/// The histogram of the contiguous floating `x` over `bins` equal bins of [lo, hi] into `counts`
/// (contiguous int64 [bins]); values outside the range are not counted.
EMBER_DECLARE_KERNEL(histc_stub,
                     void(const Tensor& x, Tensor& counts, int64_t bins, double lo, double hi));
/// The minimum and maximum of the non-empty contiguous int64 `x`.
EMBER_DECLARE_KERNEL(bincount_range_stub, std::pair<int64_t, int64_t>(const Tensor& x));
/// Adds, for each i, weights[i] (or 1 when `weights` is undefined) to out[x[i]]: `x` contiguous
/// int64 with values in [0, out.numel()), `out` contiguous zeros (int64 without weights, else
/// of weights' dtype: float or double), `weights` contiguous of x's length.
EMBER_DECLARE_KERNEL(bincount_stub, void(const Tensor& x, const Tensor& weights, Tensor& out));

}  // namespace ember
