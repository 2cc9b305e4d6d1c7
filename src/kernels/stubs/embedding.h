#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernels of embedding and embedding_bag (src/ops/nn/embedding_ops.cpp) that read index and
// offset values (Note [Kernel stubs]); the lookups themselves are index_select / index_add.

#include <cstdint>

#include "core/kernel_stub.h"
#include "ember/tensor.h"

namespace ember {

/// Checks that every value of the contiguous int64 `indices` lies in [0, num) (IndexError
/// "index out of range in self" otherwise).
EMBER_DECLARE_KERNEL(embedding_check_indices_stub, void(const Tensor& indices, int64_t num));

/// Checks the contiguous int64 bag `offsets` over `num_indices` indices: offsets[0] == 0, then
/// non-decreasing and at most num_indices (RuntimeError otherwise).
EMBER_DECLARE_KERNEL(embedding_bag_check_offsets_stub,
                     void(const Tensor& offsets, int64_t num_indices));

/// Splits the contiguous int64 `indices` into `num_bags` bags by the checked `offsets`: writes
/// the bag of each index into the int64 `offset2bag` (indices' numel), counts the indices other
/// than `padding_idx` of each bag into the zeroed int64 `bag_size`, and writes the positions and
/// bags of those indices, in order, to the front of the int64 `keep_pos` and `keep_bag` (indices'
/// numel each). All four are contiguous. Returns how many indices were kept.
EMBER_DECLARE_KERNEL(embedding_bag_bags_stub,
                     int64_t(Tensor& offset2bag, Tensor& bag_size, Tensor& keep_pos,
                             Tensor& keep_bag, const Tensor& indices, const Tensor& offsets,
                             int64_t num_bags, int64_t padding_idx, bool include_last_offset));

/// The per-bag max of mode "max". `rows` is a contiguous double (K, D) tensor, row k from
/// bag `bags[k]` and embedding index `row_indices[k]` (contiguous int64 (K) each). Writes into
/// the zeroed contiguous double (num_bags, D) `out` the max of each bag and column, into `arg`
/// (int64, filled with -1) the row it came from and into `max_indices` (int64, filled with -1)
/// that row's embedding index; the first of equal rows wins.
EMBER_DECLARE_KERNEL(embedding_bag_max_stub,
                     void(Tensor& out, Tensor& arg, Tensor& max_indices, const Tensor& rows,
                          const Tensor& bags, const Tensor& row_indices));

}  // namespace ember
