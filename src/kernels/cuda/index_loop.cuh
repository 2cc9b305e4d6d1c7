#pragma once
// The geometry of the CUDA indexing kernels (index_cuda.cu, index_scatter_cuda.cu): an index
// loop runs over entries i (one per index value) times the positions r of the dims that are not
// indexed, as the CPU's IndexLoop (src/kernels/cpu/index/index_loops.h). The indexed side's
// offset of entry i is the sum over index tensors of (wrapped) index * stride; the other side
// walks entries with a fixed stride.

#include <cstdint>

#include "ember/error.h"
#include "ember/tensor.h"
#include "kernels/cuda/cuda_common.cuh"

namespace ember::cuda {

/// Dims an index kernel walks (rest dims, advanced index tensors, flat-index decomposition).
constexpr int kIndexDims = 12;

/// The dims that are not indexed: sizes and the element strides of dst (a) and src (b).
struct RestDims {
  int nd = 0;
  int64_t numel = 1;
  int64_t sizes[kIndexDims] = {};
  int64_t a[kIndexDims] = {};
  int64_t b[kIndexDims] = {};
  __host__ __device__ void offsets(int64_t r, int64_t& oa, int64_t& ob) const {
    oa = 0;
    ob = 0;
    for (int d = nd - 1; d >= 0; --d) {
      int64_t c = r % sizes[d];
      r /= sizes[d];
      oa += c * a[d];
      ob += c * b[d];
    }
  }
  /// Appends a dim (size-1 dims are dropped).
  void push(int64_t size, int64_t sa, int64_t sb, const char* op) {
    if (size == 1) return;
    EMBER_CHECK_T(::ember::NotImplementedError, nd < kIndexDims, "[", op, "] more than ",
                  kIndexDims, " dims are not supported on cuda");
    sizes[nd] = size;
    a[nd] = sa;
    b[nd] = sb;
    ++nd;
    numel *= size;
  }
};

/// The indexed side's offset of each entry: the sum over index tensors k of
/// wrap(idx[k][i], size[k]) * stride[k], or, with `flat`, one flat index decomposed over
/// (fsizes, fstrides). False for an out-of-range index (Note [Device value checks]).
struct Entries {
  int nidx = 0;
  const int64_t* idx[kIndexDims] = {};
  int64_t size[kIndexDims] = {};
  int64_t stride[kIndexDims] = {};
  bool flat = false;
  int fnd = 0;
  int64_t fsizes[kIndexDims] = {};
  int64_t fstrides[kIndexDims] = {};
  __device__ bool offset(int64_t i, int64_t& off) const {
    off = 0;
    for (int k = 0; k < nidx; ++k) {
      int64_t v = idx[k][i];
      if (v < 0) v += size[k];
      if (v < 0 || v >= size[k]) return false;
      if (flat) {
        for (int d = fnd - 1; d >= 0; --d) {
          off += (v % fsizes[d]) * fstrides[d];
          v /= fsizes[d];
        }
      } else {
        off += v * stride[k];
      }
    }
    return true;
  }
  void push(const Tensor& index, int64_t sz, int64_t st, const char* op) {
    EMBER_CHECK_T(::ember::NotImplementedError, nidx < kIndexDims, "[", op, "] more than ",
                  kIndexDims, " index tensors are not supported on cuda");
    idx[nidx] = static_cast<const int64_t*>(index.data_ptr());
    size[nidx] = sz;
    stride[nidx] = st;
    ++nidx;
  }
};

/// One index loop: n entries; the indexed side is dst (index_dst) or src; the other side
/// advances `istride` elements per entry.
struct IndexLoopDev {
  int64_t n = 0;
  bool index_dst = false;
  int64_t istride = 0;
  Entries ent;
  RestDims rest;
  /// Offsets of (entry i, rest position r); false when entry i is out of range.
  __device__ bool offsets(int64_t i, int64_t r, int64_t& od, int64_t& os) const {
    int64_t e;
    if (!ent.offset(i, e)) return false;
    rest.offsets(r, od, os);
    if (index_dst) {
      od += e;
      os += i * istride;
    } else {
      os += e;
      od += i * istride;
    }
    return true;
  }
};

}  // namespace ember::cuda
