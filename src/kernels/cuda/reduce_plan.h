#pragma once
// Launch planning of the CUDA reductions (plain C++: tested on the host, used by reduce_*.cu).
//
// Note [CUDA reductions]
// The stubs of kernels/stubs/reduce.h hand a dense input and a dim mask. The plan is the CPU
// engine's (make_plan in kernels/cpu/reduce/reduce.cpp): dims in memory order (larger strides
// first, ties in dim order), size-1 dims dropped, neighbouring kept or reduced dims merged. The
// kept groups, read row-major, are the outputs in the memory order the stubs promise.
// One kernel serves every reduction: a block holds `block_x * block_y` threads; in the *row*
// case (the innermost memory dim is reduced) the x lanes share one output's elements and y picks
// the output; in the *column* case (the innermost memory dim is kept) x picks neighbouring
// outputs, so loads coalesce, and y lanes share the elements. Each lane accumulates its strided
// share sequentially, then the lanes combine in a fixed tree. When there are too few outputs to
// fill the GPU, grid.y cuts each reduction into `splits` pieces whose partial accumulators go to
// scratch memory and a second kernel combines them in piece order. Nothing uses atomics and the
// plan depends only on the shapes (not on the device), so a result is reproducible bit for bit.

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace ember::cuda {

/// Most kept or reduced dim groups a reduction kernel takes (after merging).
constexpr int kReduceMaxDims = 12;
/// Threads of a reduction block.
constexpr int kReduceThreads = 512;
/// Blocks a reduction aims for before it cuts reductions into pieces (a few per SM).
constexpr int64_t kReduceTargetBlocks = 512;
/// The fewest elements a lane gets from one piece of a split reduction.
constexpr int64_t kReduceMinPerLane = 16;
/// Most pieces one reduction is cut into.
constexpr int64_t kReduceMaxSplits = 1024;

/// A reduction's geometry: kept and reduced dim groups, outermost first. Passed to kernels by
/// value.
struct ReduceGeometry {
  int nk = 0, nr = 0;
  int64_t ksize[kReduceMaxDims] = {}, kstride[kReduceMaxDims] = {};
  int64_t rsize[kReduceMaxDims] = {}, rstride[kReduceMaxDims] = {};
  int64_t num_out = 1, num_red = 1;
};

/// How a reduction is launched (Note [CUDA reductions]).
struct ReduceLaunch {
  bool row = true;  // x lanes split one output's elements (else y lanes do)
  int block_x = 1, block_y = 1;
  int64_t grid_x = 1;     // blocks along the outputs
  int64_t splits = 1;     // grid.y: pieces of each reduction
  int64_t split_len = 0;  // reduced elements per piece
  int lanes() const { return row ? block_x : block_y; }
  int outputs_per_block() const { return row ? block_y : block_x; }
};

inline int64_t reduce_pow2_ceil(int64_t n) {
  int64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

/// The geometry of reducing a dense tensor of `sizes` / `strides` over the dims in `mask`;
/// false when more than kReduceMaxDims kept or reduced groups remain.
inline bool make_reduce_geometry(const std::vector<int64_t>& sizes,
                                 const std::vector<int64_t>& strides, uint64_t mask,
                                 ReduceGeometry& g) {
  g = ReduceGeometry();
  const int64_t nd = int64_t(sizes.size());
  std::vector<int64_t> order(static_cast<size_t>(nd));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return strides[size_t(a)] > strides[size_t(b)]; });
  for (int64_t d = 0; d < nd; ++d) ((mask >> d) & 1 ? g.num_red : g.num_out) *= sizes[size_t(d)];
  int last = -1;  // 0 kept, 1 reduced
  for (int64_t d : order) {
    const bool red = (mask >> d) & 1;
    const int64_t sz = sizes[size_t(d)], st = strides[size_t(d)];
    if (sz == 1) continue;
    int& n = red ? g.nr : g.nk;
    int64_t* gs = red ? g.rsize : g.ksize;
    int64_t* gt = red ? g.rstride : g.kstride;
    if (last == int(red) && gt[n - 1] == st * sz) {
      gs[n - 1] *= sz;
      gt[n - 1] = st;
    } else {
      if (n == kReduceMaxDims) return false;
      gs[n] = sz;
      gt[n] = st;
      ++n;
    }
    last = int(red);
  }
  if (g.num_red == 0) {  // an empty reduction: every output is the identity
    g.nr = 1;
    g.rsize[0] = 0;
    g.rstride[0] = 1;
  }
  return true;
}

/// The launch of a reduction of geometry `g` (Note [CUDA reductions]).
inline ReduceLaunch plan_reduce(const ReduceGeometry& g) {
  ReduceLaunch l;
  const int64_t out = std::max<int64_t>(g.num_out, 1), red = std::max<int64_t>(g.num_red, 1);
  const int64_t inner_k = g.nk ? g.kstride[g.nk - 1] : INT64_MAX;
  const int64_t inner_r = g.nr ? g.rstride[g.nr - 1] : INT64_MAX;
  l.row = g.nk == 0 || inner_r < inner_k;
  if (l.row) {
    // Short rows (at most 16 elements) get fewer lanes, down to a thread per output, rather
    // than a warp with idle lanes.
    l.block_x = int(red <= 16 ? reduce_pow2_ceil(red)
                              : std::clamp<int64_t>(reduce_pow2_ceil(red), 32, kReduceThreads));
    l.block_y = int(std::min<int64_t>(kReduceThreads / l.block_x, reduce_pow2_ceil(out)));
  } else {
    l.block_x = int(std::min<int64_t>(32, reduce_pow2_ceil(out)));
    l.block_y = int(std::clamp<int64_t>(reduce_pow2_ceil(red), 1, kReduceThreads / l.block_x));
    l.block_y = std::min(l.block_y, 16);
  }
  const int64_t per_block = l.outputs_per_block();
  l.grid_x = (out + per_block - 1) / per_block;
  const int64_t lanes = l.lanes();
  int64_t splits = 1;
  if (l.grid_x < kReduceTargetBlocks) {
    const int64_t want = (kReduceTargetBlocks + l.grid_x - 1) / l.grid_x;
    const int64_t most = red / (lanes * kReduceMinPerLane);
    splits = std::clamp<int64_t>(std::min(want, most), 1, kReduceMaxSplits);
  }
  l.split_len = (red + splits - 1) / splits;
  l.splits = (red + l.split_len - 1) / l.split_len;
  if (g.num_red == 0) l.split_len = 0, l.splits = 1;
  return l;
}

}  // namespace ember::cuda
