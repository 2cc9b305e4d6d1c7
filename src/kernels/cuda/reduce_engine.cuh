#pragma once
// The CUDA reduction engine (Note [CUDA reductions] in reduce_plan.h): one kernel template run
// with a functor per reduction, and the host entry that plans and launches it.
//
// A functor Op over input element type T provides
//   using acc_t;                                  the accumulator
//   __device__ acc_t init() const;               the identity
//   __device__ acc_t step(acc_t, T x, int64_t r) const;  folds element x (reduced index r)
//   __device__ acc_t combine(acc_t a, acc_t b) const;    merges two partials
//   __device__ void write(int64_t o, acc_t) const;       stores output o
// combine() receives partials of interleaved index sets, so index results break ties by index
// themselves rather than by argument order.

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "core/tensor_util.h"
#include "cuda/cuda_context.h"
#include "ember/error.h"
#include "ember/tensor.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_functors.cuh"
#include "kernels/cuda/reduce_plan.h"

namespace ember::cuda {

/// Element offset of index `i` row-major over `n` dims of `size` / `stride`.
__device__ __forceinline__ int64_t reduce_offset(int64_t i, int n, const int64_t* size,
                                                 const int64_t* stride) {
  if (n == 1) return i * stride[0];
  int64_t off = 0;
  for (int d = n - 1; d >= 0; --d) {
    const int64_t sz = size[d];
    off += (i % sz) * stride[d];
    i /= sz;
  }
  return off;
}

template <class Op, class T>
__global__ void reduce_kernel(Op op, const T* __restrict__ in, ReduceGeometry g, ReduceLaunch l,
                              typename Op::acc_t* partials) {
  using A = typename Op::acc_t;
  extern __shared__ __align__(16) unsigned char reduce_smem[];
  A* sh = reinterpret_cast<A*>(reduce_smem);
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t o =
      l.row ? int64_t(blockIdx.x) * l.block_y + ty : int64_t(blockIdx.x) * l.block_x + tx;
  const int lane = l.row ? tx : ty, nl = l.row ? l.block_x : l.block_y;
  A acc = op.init();
  if (o < g.num_out) {
    const T* base = in + (g.nk ? reduce_offset(o, g.nk, g.ksize, g.kstride) : 0);
    const int64_t r0 = int64_t(blockIdx.y) * l.split_len;
    const int64_t r1 = min(g.num_red, r0 + l.split_len);
    for (int64_t r = r0 + lane; r < r1; r += nl)
      acc = op.step(acc, base[g.nr ? reduce_offset(r, g.nr, g.rsize, g.rstride) : 0], r);
  }
  const int me = ty * l.block_x + tx;
  sh[me] = acc;
  __syncthreads();
  // Fixed-order tree over the lanes of each output (nl is a power of two).
  for (int s = nl / 2; s > 0; s >>= 1) {
    if (lane < s) {
      const int other = l.row ? me + s : me + s * l.block_x;
      sh[me] = op.combine(sh[me], sh[other]);
    }
    __syncthreads();
  }
  if (lane == 0 && o < g.num_out) {
    if (l.splits == 1)
      op.write(o, sh[me]);
    else
      partials[int64_t(blockIdx.y) * g.num_out + o] = sh[me];
  }
}

// Combines the pieces of each output in piece order, then writes it.
template <class Op>
__global__ void reduce_finish_kernel(Op op, const typename Op::acc_t* partials, int64_t num_out,
                                     int64_t splits) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < num_out; o += step) {
    typename Op::acc_t a = partials[o];
    for (int64_t s = 1; s < splits; ++s) a = op.combine(a, partials[s * num_out + o]);
    op.write(o, a);
  }
}

/// The geometry of reducing `self` (dense) over `mask`; raises for a layout of too many groups.
inline ReduceGeometry reduce_geometry(const Tensor& self, uint64_t mask, const char* op) {
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end());
  std::vector<int64_t> strides(self.strides().begin(), self.strides().end());
  ReduceGeometry g;
  EMBER_CHECK_T(::ember::NotImplementedError, make_reduce_geometry(sizes, strides, mask, g), "[",
                op, "] on cuda supports at most ", kReduceMaxDims,
                " alternating groups of kept and reduced dims; got sizes ",
                shape_str(self.sizes()));
  return g;
}

/// Runs functor `op` over `self` reduced by `mask` on the current stream.
template <class T, class Op>
void run_reduce(const Tensor& self, uint64_t mask, const Op& op, const char* name) {
  const ReduceGeometry g = reduce_geometry(self, mask, name);
  if (g.num_out == 0) return;
  const ReduceLaunch l = plan_reduce(g);
  using A = typename Op::acc_t;
  const size_t smem = sizeof(A) * size_t(l.block_x) * size_t(l.block_y);
  const T* in = static_cast<const T*>(self.data_ptr());
  cudaStream_t stream = current_raw_stream();
  const dim3 block(unsigned(l.block_x), unsigned(l.block_y));
  const dim3 grid(unsigned(l.grid_x), unsigned(l.splits));
  if (l.splits == 1) {
    reduce_kernel<Op, T><<<grid, block, smem, stream>>>(op, in, g, l, nullptr);
    check_launch(name);
    return;
  }
  DataPtr buf = scratch(sizeof(A) * size_t(l.splits) * size_t(g.num_out));
  A* partials = static_cast<A*>(buf.get());
  reduce_kernel<Op, T><<<grid, block, smem, stream>>>(op, in, g, l, partials);
  check_launch(name);
  reduce_finish_kernel<Op>
      <<<grid_for(g.num_out), kBlockSize, 0, stream>>>(op, partials, g.num_out, l.splits);
  check_launch(name);
}

/// The number of elements reduced into each output.
inline int64_t mask_count(const Tensor& x, uint64_t mask) {
  int64_t n = 1;
  for (int64_t d = 0; d < x.dim(); ++d)
    if ((mask >> d) & 1) n *= x.size(d);
  return n;
}

/// Device element pointer of a tensor.
template <class T>
T* dptr(const Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

}  // namespace ember::cuda
