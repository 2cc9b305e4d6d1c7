#pragma once
#include "ops/op_layer.h"  // Note [Layer includes]
// Shared pieces of the reduction ops (reduce_ops.cpp, reduce_stats.cpp): dim lists, result
// shapes, out= handling and the functor driver on top of the engine in kernels/cpu/reduce.h.

#include <cmath>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "autograd/record.h"
#include "core/scalar_traits.h"
#include "core/tensor_util.h"
#include "ember/dispatch_type.h"
#include "ember/reduce.h"
#include "kernels/cpu/reduce.h"

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

/// Opmath type: float for half/bfloat16, the type itself otherwise.
template <class T>
using opmath_t =
    std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;
template <class T>
inline constexpr bool is_float_v = std::is_floating_point_v<opmath_t<T>>;

template <class T>
inline bool is_nan(T x) {
  if constexpr (is_float_v<T>)
    return x != x;
  else if constexpr (is_complex_v<T>)
    return x != x;
  else
    return false;
}

/// Elementwise vertical reduction through Op::step (acc, x) -> acc.
template <class Op, class T>
void vertical_simple(const Op& op, typename Op::out_t* out, const T* base, int64_t rows, int64_t rs,
                     int64_t w, int64_t oi) {
  using A = typename Op::acc_t;
  std::unique_ptr<A[]> acc(new A[size_t(w)]);  // not std::vector: A may be bool
  A* a = acc.get();
  std::fill(a, a + w, op.init());
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = base + r * rs;
    for (int64_t j = 0; j < w; ++j) a[j] = op.step(a[j], row[j]);
  }
  for (int64_t j = 0; j < w; ++j) {
    out[j] = op.project(a[j]);
    op.project_extra(oi + j, a[j]);
  }
}

/// Runs functor `op` (input type T) over `x` reduced by `mask` into a new tensor of `out_dtype`
/// and the logical result `shape`. `extra`, when given, is a second output of the same
/// layout that Op::project_extra writes through `*extra_ptr` (set here before the run).
template <class T, class Op>
Tensor run(const Tensor& x, uint64_t mask, IntArrayRef shape, ScalarType out_dtype, Op& op,
           Tensor* extra = nullptr, ScalarType extra_dtype = kLong, void** extra_ptr = nullptr) {
  cpu::ReducePlan p = cpu::make_plan(x, mask);
  Tensor raw = cpu::plan_output(p, out_dtype);
  Tensor raw_extra;
  if (extra) {
    raw_extra = cpu::plan_output(p, extra_dtype);
    *extra_ptr = raw_extra.data_ptr();
  }
  cpu::run_reduce(p, static_cast<const T*>(p.input.data_ptr()),
                  static_cast<typename Op::out_t*>(raw.data_ptr()), op);
  if (extra) *extra = cpu::finish_output(p, raw_extra, shape);
  return cpu::finish_output(p, raw, shape);
}

}  // namespace ember::reduce_detail
