#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernels of the shape ops that move whole elements (src/ops/shape/shape_ops.cpp, pad_ops.cpp).

#include <cstdint>
#include <vector>

#include "core/kernel_stub.h"
#include "ember/tensor.h"

namespace ember {

/// Note [Index-map copies]: out[i0, ..., in] = src[m0[i0], ..., mn[in]], an empty map being the
/// identity. `out` is contiguous and non-empty, at least one map is non-empty, and `src` is a
/// contiguous tensor of out's dtype, not a conj view.
EMBER_DECLARE_KERNEL(map_copy_stub, void(Tensor& out, const Tensor& src,
                                         const std::vector<std::vector<int64_t>>& maps));
/// The (row, col) indices of a triangle, rows [first, last) of a row x col matrix: row i holds
/// columns [0, clamp(i + offset + 1, 0, col)) when `lower`, else [clamp(i + offset, 0, col),
/// col). `out` is a contiguous int64 (2, total) tensor; at most `total` pairs are written.
EMBER_DECLARE_KERNEL(triangle_indices_stub, void(Tensor& out, int64_t first, int64_t last,
                                                 int64_t col, int64_t offset, bool lower));
/// The r-tuples of indices into 0..n-1 in lexicographic order (itertools.combinations, or
/// combinations_with_replacement), written flat into the contiguous int64 `ix` (count * r).
EMBER_DECLARE_KERNEL(combinations_indices_stub,
                     void(Tensor& ix, int64_t n, int64_t r, bool with_replacement));
/// out.flat[k] = src.flat[idx[k]]; `out` and `src` contiguous of one dtype, `idx` contiguous
/// int64 with out's element count and every entry in range.
EMBER_DECLARE_KERNEL(combinations_gather_stub,
                     void(Tensor& out, const Tensor& src, const Tensor& idx));

}  // namespace ember
