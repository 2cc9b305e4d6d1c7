#pragma once
#include "ops/op_layer.h"  // Note [Layer includes]
// Shared pieces of the reduction ops (reduce_ops.cpp, reduce_stats.cpp): dim lists, result
// shapes and layouts, out= handling; the loops are behind kernels/stubs/reduce.h.

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "autograd/record.h"
#include "core/scalar_traits.h"
#include "core/tensor_util.h"
#include "ember/reduce.h"

namespace ember::reduce_detail {

/// A reduced result (or its gradient) with the reduced dims put back as size 1 (the shared
/// piece of the reductions' backward rules).
inline Tensor restore_dims(const Tensor& g, uint64_t mask, int64_t nd, bool keepdim) {
  if (keepdim) return g;
  Tensor r = g;
  for (int64_t d = 0; d < nd; ++d)
    if ((mask >> d) & 1) r = r.unsqueeze(d);
  return r;
}

/// An optional dtype stored in a rule's args (None when not given).
inline std::optional<ScalarType> opt_dtype(const autograd::RuleArgs& a, size_t k) {
  if (a.is_none(k)) return std::nullopt;
  return a.dtype(k);
}

/// Records `out`, a whole-tensor max/min/median of `input`, with PyTorch's rule: the gradient
/// is split evenly among the elements equal to the result (reduce_ops.cpp).
void record_evenly_distributed(autograd::OpRecorder& rec, const Tensor& input, const Tensor& out);

/// The dims set in `mask`, in order.
inline std::vector<int64_t> mask_dims(uint64_t mask, int64_t nd) {
  std::vector<int64_t> v;
  for (int64_t d = 0; d < nd; ++d)
    if ((mask >> d) & 1) v.push_back(d);
  return v;
}

/// Bit mask of the dims in `dims` (empty: every dim). IndexError for a dim out of range,
/// RuntimeError for a repeated dim, as PyTorch.
uint64_t dim_mask(const Tensor& x, IntArrayRef dims, const char* op);
/// The result shape of reducing `x` over `mask`.
DimVector reduced_shape(const Tensor& x, uint64_t mask, bool keepdim);
/// Copies `result` into `out` (resized when empty; otherwise its shape must match).
void write_out(Tensor& out, const Tensor& result, const char* op);
/// The number of elements reduced into each output.
int64_t reduced_count(const Tensor& x, uint64_t mask);

/// Whether the non-size-1 dims of `t`, sorted by stride, tile memory without gaps or overlap.
bool is_dense(const Tensor& t);

/// The input and output layout of a reduction kernel (kernels/stubs/reduce.h): the input made
/// dense, the outputs written in the memory order of its kept dims.
struct ReduceLayout {
  Tensor input;              ///< dense (a contiguous copy when the caller's tensor is not)
  DimVector shape;           ///< the logical result shape
  DimVector out_perm;        ///< logical kept dim order of the memory-order kept dims
  bool out_identity = true;  ///< whether the memory-order kept dims are in logical order
  int64_t num_out = 1;

  /// Allocates an output for the kernel (memory-order kept shape, contiguous) of `dtype`.
  Tensor output(ScalarType dtype) const;
  /// Turns a kernel's output into the logical result: kept dims in logical order, contiguous,
  /// reduced dims as size 1 (keepdim) or dropped.
  Tensor finish(const Tensor& raw) const;
};

/// Lays out the reduction of `x` over `mask` with result shape `shape`.
ReduceLayout reduce_layout(const Tensor& x, uint64_t mask, IntArrayRef shape);

}  // namespace ember::reduce_detail
