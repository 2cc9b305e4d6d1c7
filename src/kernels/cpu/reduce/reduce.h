#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The reduction engine (see Note [Reductions] in reduce.cpp): a plan that turns any input and
// set of reduced dims into coalesced kept ("outer") and reduced ("inner") loops, and a driver
// that runs a reduction functor over it on the inner, vertical or strided path.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "core/parallel_internal.h"
#include "ember/tensor.h"

namespace ember::cpu {

/// The per-capability leaf kernels of the hot float paths (reduce_kernels.cpp).
struct ReduceKernels {
  float (*sum_f32)(const float* p, int64_t n) = nullptr;    // pairwise
  double (*sum_f64)(const double* p, int64_t n) = nullptr;  // pairwise
  /// out[r] = sum_f32(p + r * rs, n) for r < rows, bit for bit (several rows read at a time).
  void (*sum_rows_f32)(const float* p, int64_t rs, int64_t rows, int64_t n, float* out) = nullptr;
  void (*sum_rows_f64)(const double* p, int64_t rs, int64_t rows, int64_t n, double* out) = nullptr;
  void (*add_rows_f32)(float* acc, const float* row, int64_t w) = nullptr;
  void (*add_rows_f64)(double* acc, const double* row, int64_t w) = nullptr;
  /// acc[j] += base[r * rs + j] for r = 0..rows-1, in row order (several rows read at a time).
  void (*add_row_block_f32)(float* acc, const float* base, int64_t rs, int64_t rows,
                            int64_t w) = nullptr;
  void (*add_row_block_f64)(double* acc, const double* base, int64_t rs, int64_t rows,
                            int64_t w) = nullptr;
  int64_t (*argmax_f32)(const float* p, int64_t n) = nullptr;  // first max; NaN wins
  int64_t (*argmin_f32)(const float* p, int64_t n) = nullptr;
  int64_t (*argmax_f64)(const double* p, int64_t n) = nullptr;
  int64_t (*argmin_f64)(const double* p, int64_t n) = nullptr;
};
/// The kernels of the capability chosen at start-up.
const ReduceKernels& reduce_kernels();
/// Filled by register_reduce_kernels() of the chosen capability.
ReduceKernels& reduce_kernel_slot();

/// Fixed size of the pieces a long reduction is split into when there are few outputs: the
/// pieces (and so the rounding) never depend on the thread count.
constexpr int64_t kReduceChunk = 1 << 15;

/// A reduction laid out for the driver. Input strides are in elements; kept dims are in memory
/// order (outermost first) and the output is written contiguously in that order.
struct ReducePlan {
  DimVector ksize, kstride;  // kept dims, coalesced
  DimVector rsize, rstride;  // reduced dims, coalesced (empty: one element)
  int64_t num_out = 1, num_red = 1;
};

/// Plans the reduction of the dense `in` (an empty one may be any layout) over the dims set in
/// `mask` (bit d: dim d). The memory order of the kept dims is the one the op lays the output
/// out in (kernels/stubs/reduce.h): larger strides first, ties in dim order.
ReducePlan make_plan(const Tensor& in, uint64_t mask);

// Note [Reduction functors]
// A functor Op over input type T has `using acc_t`, `using out_t`, and:
//   acc_t init() const;
//   acc_t reduce(const T* p, int64_t n, int64_t stride, int64_t base_index) const;
//   acc_t combine(acc_t a, acc_t b) const;   // `a` comes first (ties keep a)
//   out_t project(acc_t a) const;
//   static constexpr bool kVertical;         // has vertical():
//   void vertical(out_t* out, const T* base, int64_t rows, int64_t row_stride, int64_t w,
//                 int64_t out_index) const;   // rows of w contiguous elements, elementwise
//   void project_extra(int64_t out_index, acc_t a) const;  // optional second output (indices)
//   static constexpr bool kRows;             // optional; when true, has reduce_rows():
//   void reduce_rows(out_t* out, const T* base, int64_t row_stride, int64_t rows, int64_t n) const;
//                                            // `rows` contiguous rows of n, one output each

/// Whether functor Op reduces whole sets of contiguous rows (Note [Reduction functors]).
template <class Op>
constexpr bool has_reduce_rows() {
  if constexpr (requires { Op::kRows; })
    return Op::kRows;
  else
    return false;
}

template <class Op, class T>
void run_reduce(const ReducePlan& p, const T* in, typename Op::out_t* out, const Op& op) {
  using A = typename Op::acc_t;
  const int64_t nk = int64_t(p.ksize.size()), nr = int64_t(p.rsize.size());
  if (p.num_out == 0) return;
  // The innermost reduced group is reduced by op.reduce; the outer ones are looped over.
  const int64_t rlen = nr ? p.rsize[size_t(nr - 1)] : 1;
  const int64_t rst = nr ? p.rstride[size_t(nr - 1)] : 1;
  auto reduce_one = [&](const T* base) -> A {
    if (nr <= 1) return op.reduce(base, p.num_red == 0 ? 0 : rlen, rst, 0);
    A acc = op.init();
    DimVector idx(size_t(nr - 1), 0);
    const int64_t outer = p.num_red / rlen;
    int64_t off = 0;
    for (int64_t o = 0; o < outer; ++o) {
      acc = op.combine(acc, op.reduce(base + off, rlen, rst, o * rlen));
      for (int64_t d = nr - 2; d >= 0; --d) {
        off += p.rstride[size_t(d)];
        if (++idx[size_t(d)] < p.rsize[size_t(d)]) break;
        off -= p.rstride[size_t(d)] * p.rsize[size_t(d)];
        idx[size_t(d)] = 0;
      }
    }
    return acc;
  };
  // Offset of kept element `o` (memory order).
  auto kept_offset = [&](int64_t o) {
    int64_t off = 0;
    for (int64_t d = nk - 1; d >= 0; --d) {
      off += (o % p.ksize[size_t(d)]) * p.kstride[size_t(d)];
      o /= p.ksize[size_t(d)];
    }
    return off;
  };

  // Vertical: the innermost kept group is contiguous and wide, one reduced group of rows.
  if constexpr (Op::kVertical) {
    if (nk >= 1 && p.kstride[size_t(nk - 1)] == 1 && p.ksize[size_t(nk - 1)] >= 8 && nr == 1 &&
        p.num_red > 1) {
      const int64_t w = p.ksize[size_t(nk - 1)];
      constexpr int64_t kTile = 2048;
      const int64_t tiles = (w + kTile - 1) / kTile, blocks = p.num_out / w;
      const int64_t grain =
          std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, p.num_red * kTile));
      parallel_for(0, blocks * tiles, grain, [&](int64_t b, int64_t e) {
        for (int64_t u = b; u < e; ++u) {
          const int64_t blk = u / tiles, c0 = (u % tiles) * kTile;
          const int64_t ob = blk * w;
          const int64_t ib = kept_offset(ob);
          op.vertical(out + ob + c0, in + ib + c0, rlen, rst, std::min(kTile, w - c0), ob + c0);
        }
      });
      return;
    }
  }
  // Few outputs and a long single reduced group: fixed chunks, combined in order.
  if (p.num_out < 16 && nr == 1 && rlen > 2 * kReduceChunk) {
    const int64_t chunks = (rlen + kReduceChunk - 1) / kReduceChunk;
    // Note [Parallel partials]: one whole object per slot. std::vector<bool> packs bits, so
    // threads writing neighbouring partials of any/all would race on a shared byte.
    std::unique_ptr<A[]> part(new A[size_t(chunks * p.num_out)]);
    parallel_for(0, chunks * p.num_out, 1, [&](int64_t b, int64_t e) {
      for (int64_t u = b; u < e; ++u) {
        const int64_t o = u / chunks, c = u % chunks;
        const int64_t s = c * kReduceChunk, n = std::min(kReduceChunk, rlen - s);
        part[size_t(u)] = op.reduce(in + kept_offset(o) + s * rst, n, rst, s);
      }
    });
    for (int64_t o = 0; o < p.num_out; ++o) {
      A acc = part[size_t(o * chunks)];
      for (int64_t c = 1; c < chunks; ++c) acc = op.combine(acc, part[size_t(o * chunks + c)]);
      out[o] = op.project(acc);
      op.project_extra(o, acc);
    }
    return;
  }
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, p.num_red));
  // Evenly spaced contiguous rows, one output each: the functor takes a whole range of rows.
  if constexpr (has_reduce_rows<Op>()) {
    if (nk == 1 && nr == 1 && rst == 1 && p.num_red > 0) {
      const int64_t ks = p.kstride[0];
      parallel_for(0, p.num_out, grain, [&](int64_t b, int64_t e) {
        op.reduce_rows(out + b, in + b * ks, ks, e - b, rlen);
      });
      return;
    }
  }
  // One output at a time, in parallel over outputs.
  parallel_for(0, p.num_out, grain, [&](int64_t b, int64_t e) {
    DimVector idx(size_t(nk), 0);
    int64_t rem = b, off = 0;
    for (int64_t d = nk - 1; d >= 0; --d) {
      idx[size_t(d)] = rem % p.ksize[size_t(d)];
      rem /= p.ksize[size_t(d)];
      off += idx[size_t(d)] * p.kstride[size_t(d)];
    }
    for (int64_t o = b; o < e; ++o) {
      A acc = reduce_one(in + off);
      out[o] = op.project(acc);
      op.project_extra(o, acc);
      for (int64_t d = nk - 1; d >= 0; --d) {
        off += p.kstride[size_t(d)];
        if (++idx[size_t(d)] < p.ksize[size_t(d)]) break;
        off -= p.kstride[size_t(d)] * p.ksize[size_t(d)];
        idx[size_t(d)] = 0;
      }
    }
  });
}

}  // namespace ember::cpu
