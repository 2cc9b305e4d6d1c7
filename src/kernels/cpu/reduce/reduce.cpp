// Reduction planning: dense layout, memory-order permutation and coalescing of dims.
//
// Note [Reductions]
// Every reduction (sum, prod, max, argmax, var, all, ...) runs on one engine, the reduction
// analogue of the elementwise loop engine (DESIGN.md §5):
//  1. Plan (make_plan): the op copies a non-dense input to contiguous and lays the outputs out
//     in the memory order of the kept dims (reduce_core.h); the dims are then sorted by stride
//     (memory order), size-1 dims dropped, and neighbouring dims that are both kept or both
//     reduced merged. What is left is a few "kept" groups (the outputs, written contiguously
//     in memory order) and "reduced" groups.
//  2. Case (run_reduce in reduce.h): when the innermost kept group is contiguous and wide and
//     the rows to reduce form one group, the reduction is *vertical*: whole rows of inputs are
//     accumulated elementwise into a row of accumulators (vectorized across outputs; this is
//     `sum(dim=0)` of a row-major matrix). Otherwise each output is reduced on its own, with a
//     contiguous (vectorized) or strided inner loop over the innermost reduced group; evenly
//     spaced contiguous rows may go to the functor as a whole range (reduce_rows: the float
//     sums read two rows at a time, Note [Interleaved pairwise leaves]).
//  3. Threads: outputs are shared among threads when there are enough of them; a long reduction
//     into a few outputs is cut into pieces of kReduceChunk elements whose partial results are
//     combined in a fixed order. Neither choice looks at the thread count, so results are the
//     same on 1 or N threads.
// Accuracy: float sums are pairwise (blocks of 8 lanes, then halving), vertical sums cascade
// (32 rows into a partial, 32 partials into a second level) so the error grows like log(n) or
// n/1024 rather than n; var/std use Welford's update with Chan's formula to merge partials.
// Half and bfloat16 accumulate in float32 and round once at the end.
#include "kernels/cpu/reduce/reduce.h"

#include <numeric>

#include "ember/error.h"
#include "kernels/cpu/kernel_registry.h"

namespace ember::cpu {

ReduceKernels& reduce_kernel_slot() {
  static ReduceKernels k;
  return k;
}

const ReduceKernels& reduce_kernels() {
  (void)kernels();  // registers the chosen capability's families, this one included
  return reduce_kernel_slot();
}

namespace {

// Whether the non-size-1 dims of `t`, sorted by stride, tile memory without gaps or overlap.
bool is_dense(const Tensor& t) {
  std::vector<std::pair<int64_t, int64_t>> d;  // (stride, size)
  for (int64_t i = 0; i < t.dim(); ++i)
    if (t.size(i) != 1) d.push_back({t.stride(i), t.size(i)});
  std::sort(d.begin(), d.end(), [](auto a, auto b) { return a.first < b.first; });
  int64_t expect = 1;
  for (auto [st, sz] : d) {
    if (st != expect) return false;
    expect *= sz;
  }
  return true;
}

}  // namespace

ReducePlan make_plan(const Tensor& in, uint64_t mask) {
  EMBER_INTERNAL_ASSERT(in.numel() == 0 || is_dense(in), "reduction input is not dense");
  ReducePlan p;
  const int64_t nd = in.dim();
  // Memory order: larger strides first; ties keep their logical order. Index results reduce a
  // single dim, so reordering reduced dims never changes what an index means.
  std::vector<int64_t> order(static_cast<size_t>(nd));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return in.stride(a) > in.stride(b); });
  int64_t num_out = 1, num_red = 1;
  for (int64_t d = 0; d < nd; ++d) ((mask >> d) & 1 ? num_red : num_out) *= in.size(d);
  p.num_out = num_out;
  p.num_red = num_red;
  int last = -1;  // 0 kept, 1 reduced
  for (int64_t d : order) {
    const bool red = (mask >> d) & 1;
    if (in.size(d) == 1) continue;
    DimVector& sz = red ? p.rsize : p.ksize;
    DimVector& st = red ? p.rstride : p.kstride;
    if (last == int(red) && st.back() == in.stride(d) * in.size(d)) {
      sz.back() *= in.size(d);
      st.back() = in.stride(d);
    } else {
      sz.push_back(in.size(d));
      st.push_back(in.stride(d));
    }
    last = int(red);
  }
  if (num_red == 0) {
    p.rsize.assign({0});
    p.rstride.assign({1});
  }
  return p;
}

}  // namespace ember::cpu
