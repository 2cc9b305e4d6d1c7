// Reduction planning: dense layout, memory-order permutation and coalescing of dims.
//
// Note [Reductions]
// Every reduction (sum, prod, max, argmax, var, all, ...) runs on one engine, the reduction
// analogue of the elementwise loop engine (DESIGN.md §5):
//  1. Plan (make_plan): a non-dense input is copied to contiguous; the dims are then sorted by
//     stride (memory order), size-1 dims dropped, and neighbouring dims that are both kept or
//     both reduced merged. What is left is a few "kept" groups (the outputs, written
//     contiguously in memory order) and "reduced" groups.
//  2. Case (run_reduce in reduce.h): when the innermost kept group is contiguous and wide and
//     the rows to reduce form one group, the reduction is *vertical*: whole rows of inputs are
//     accumulated elementwise into a row of accumulators (vectorized across outputs; this is
//     `sum(dim=0)` of a row-major matrix). Otherwise each output is reduced on its own, with a
//     contiguous (vectorized) or strided inner loop over the innermost reduced group.
//  3. Threads: outputs are shared among threads when there are enough of them; a long reduction
//     into a few outputs is cut into pieces of kReduceChunk elements whose partial results are
//     combined in a fixed order. Neither choice looks at the thread count, so results are the
//     same on 1 or N threads.
// Accuracy: float sums are pairwise (blocks of 8 lanes, then halving), vertical sums cascade
// (32 rows into a partial, 32 partials into a second level) so the error grows like log(n) or
// n/1024 rather than n; var/std use Welford's update with Chan's formula to merge partials.
// Half and bfloat16 accumulate in float32 and round once at the end.
#include "kernels/cpu/reduce.h"

#include <numeric>

#include "core/tensor_util.h"
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

ReducePlan make_plan(const Tensor& in0, uint64_t mask) {
  ReducePlan p;
  p.input = (in0.numel() == 0 || is_dense(in0)) ? in0 : in0.contiguous();
  const Tensor& in = p.input;
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
    if (!red) p.out_perm.push_back(d);
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
  for (size_t i = 1; i < p.out_perm.size(); ++i)
    if (p.out_perm[i] < p.out_perm[i - 1]) p.out_identity = false;
  // Kept dims were merged in memory order; with a non-identity order the output is written in
  // that order and permuted afterwards (finish_output).
  return p;
}

Tensor plan_output(const ReducePlan& p, ScalarType dtype) {
  if (p.out_identity) return empty_tensor({p.num_out}, dtype, p.input.device());
  DimVector shape;
  for (int64_t d : p.out_perm) shape.push_back(p.input.size(d));
  return empty_tensor(shape, dtype, p.input.device());
}

Tensor finish_output(const ReducePlan& p, const Tensor& raw, IntArrayRef shape) {
  if (p.out_identity) return raw.view(shape);
  // raw has the kept dims in memory order; put them in logical order.
  DimVector inv(p.out_perm.size());
  std::vector<int64_t> sorted(p.out_perm.begin(), p.out_perm.end());
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < p.out_perm.size(); ++i) {
    const int64_t pos =
        std::lower_bound(sorted.begin(), sorted.end(), p.out_perm[i]) - sorted.begin();
    inv[size_t(pos)] = int64_t(i);
  }
  return raw.permute(inv).contiguous().view(shape);
}

}  // namespace ember::cpu
