#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernels of index_reduce and segment_reduce (src/ops/tensor_extra/reduce_extra_ops.cpp;
// Note [Kernel stubs]). The op bodies validate every index, length and offset first: the
// kernels trust them.

#include <cstdint>

#include "core/kernel_stub.h"
#include "ember/scalar.h"
#include "ember/tensor.h"

namespace ember {

/// The reductions of index_reduce and segment_reduce ("mean" is Sum plus a division).
enum class ExtraReduce : uint8_t { Sum, Prod, Max, Min };

/// self[..., index[i], ...] op= source[..., i, ...] along `dim`, for i in order. `self` has at
/// least one dim; `index` is contiguous int64 with values in [0, self.size(dim)); `source` has
/// self's dtype and dims, index.numel() entries at `dim`, and does not alias self. Max/Min
/// propagate NaN. Threads split the dims other than `dim`, so the result does not depend on
/// the thread count.
EMBER_DECLARE_KERNEL(index_reduce_stub, void(Tensor& self, int64_t dim, const Tensor& index,
                                             const Tensor& source, ExtraReduce op));

/// Segment reduction along dim `axis` of the contiguous floating `data`, whose leading dims
/// (before `axis`) have `outer` elements in all. `offsets` is contiguous int64 of shape
/// (outer, S + 1), nondecreasing in each row, within [0, data.size(axis)]; `out` is contiguous
/// of data's dtype and shape (outer, S, inner). Empty segments get `initial` when it is given,
/// the identity otherwise (0, 1, -inf, +inf; NaN for `mean`). With `mean` the sum (plus
/// `initial`) is divided by the segment length. Max/Min propagate NaN.
EMBER_DECLARE_KERNEL(segment_reduce_stub,
                     void(Tensor& out, const Tensor& data, const Tensor& offsets, int64_t axis,
                          ExtraReduce op, bool mean, const std::optional<Scalar>& initial));

}  // namespace ember
