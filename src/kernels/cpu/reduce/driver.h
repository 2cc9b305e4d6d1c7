#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// What the reduction kernel files (sum.cpp, minmax.cpp, arg.cpp, logical.cpp, var.cpp) share:
// opmath types, the leaf kernels, the plain vertical loop of a functor and the driver that runs
// a functor over the tensors of a stub (kernels/stubs/reduce.h) on the engine of
// kernels/cpu/reduce.h.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "core/scalar_traits.h"
#include "ember/error.h"
#include "ember/half.h"
#include "ember/tensor.h"
#include "kernels/cpu/reduce/reduce.h"

namespace ember::cpu::reduce_impl {

/// The leaf kernels of the CPU capability in use (reduce_kernels.cpp).
inline const ReduceKernels& K() { return reduce_kernels(); }

/// Opmath type: float for half/bfloat16, the type itself otherwise.
template <class T>
using opmath_t =
    std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;
template <class T>
inline constexpr bool is_float_v = std::is_floating_point_v<opmath_t<T>>;

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

/// The number of elements reduced into each output.
inline int64_t reduced_count(const Tensor& x, uint64_t mask) {
  int64_t n = 1;
  for (int64_t d = 0; d < x.dim(); ++d)
    if ((mask >> d) & 1) n *= x.size(d);
  return n;
}

/// Runs functor `op` (input type T) over the dense `in` reduced by `mask` into `out`, laid out
/// as the stubs of kernels/stubs/reduce.h say. A second output (Op::project_extra) is wired
/// into `op` by the caller.
template <class T, class Op>
void run(const Tensor& in, uint64_t mask, Tensor& out, const Op& op) {
  const ReducePlan p = make_plan(in, mask);
  EMBER_INTERNAL_ASSERT(out.is_contiguous() && out.numel() == p.num_out,
                        "reduction output of the wrong layout");
  run_reduce(p, in.data_ptr<T>(), out.data_ptr<typename Op::out_t>(), op);
}

}  // namespace ember::cpu::reduce_impl
