#pragma once
#include "ops/op_layer.h"  // Note [Layer includes]
// Note [Batched tensors]
// Under vmap a tensor with a batch dimension is a wrapper: a TensorImpl whose sizes and strides
// are the logical ones (the batch dim removed) and whose storage is a BatchedStorage that holds
// the physical tensor, the batch dim's position in it, and the vmap level (with its
// generation). The storage has no data: a wrapper never reaches a kernel. Every op entry under
// an active vmap level finds the batched arguments and runs the op's batching rule on the
// physical tensors instead of the op body (Note [Batching rules]). Nesting follows the levels:
// a wrapper of level L wraps a physical tensor that may itself be a wrapper of a lower level.
// A wrapper used after its level ended (an escape) raises a RuntimeError at its next op.

#include <optional>
#include <utility>
#include <vector>

#include "ember/tensor.h"
#include "func/levels.h"

namespace ember::func {

/// What a wrapper holds.
struct BatchInfo {
  Tensor value;  ///< the physical tensor (possibly batched at a lower level)
  int64_t bdim;  ///< the batch dim in `value`
  int64_t level;
  uint64_t generation;
};

/// Whether `t` is a batched wrapper (at any level).
bool is_batched(const Tensor& t);
/// The wrapper's contents (`t` must be batched).
const BatchInfo& batch_info(const Tensor& t);
/// A wrapper of `value` batched along `bdim` at vmap level `lvl`.
Tensor make_batched(const Tensor& value, int64_t bdim, const TransformLevel& lvl);
/// The physical tensor and batch dim of `t` at `level`; (t, nullopt) when `t` is not batched
/// at that level.
std::pair<Tensor, std::optional<int64_t>> unwrap_level(const Tensor& t, int64_t level);
/// RuntimeError when `t` is a wrapper whose level has ended (named after `op`).
void check_not_escaped(const Tensor& t, const char* op);

/// A tensor split into its physical tensor and the physical dim of each vmap level it is
/// batched at (ascending levels).
struct Decomposed {
  Tensor physical;
  std::vector<std::pair<const TransformLevel*, int64_t>> dims;  ///< (level, physical dim)
};
Decomposed decompose(const Tensor& t);
/// The wrappers of `d` rebuilt in level order.
Tensor compose(const Decomposed& d);

/// `t` with the levels in `levels` (ascending vmap levels) turned into leading physical dims,
/// in that order; a level `t` is not batched at is materialised by expanding. Other levels
/// stay wrapped.
Tensor strip_levels(const Tensor& t, const std::vector<const TransformLevel*>& levels);
/// The inverse of strip_levels: the leading logical dims of `t` become the batch dims of
/// `levels`.
Tensor unstrip_levels(const Tensor& t, const std::vector<const TransformLevel*>& levels);
/// The active vmap levels, outermost first.
std::vector<const TransformLevel*> active_vmap_levels();

}  // namespace ember::func
