#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The CPU loop engine of the indexing kernels (index_loops.cpp), shared by the files of
// kernels/cpu/index/. Callers validate and wrap every index first: the loops trust their offsets
// and never check bounds.

#include <cstdint>

#include "ember/scalar.h"
#include "ember/tensor.h"
#include "kernels/stubs/index.h"

namespace ember::cpu {

/// One side of an indexed loop: element (i, j) lives at
/// data + elsize * ((off ? off[i] : i * istride) + <rest offset of j>).
struct IndexSide {
  char* data = nullptr;
  const int64_t* off = nullptr;
  int64_t istride = 0;
  DimVector rest_strides;
};

/// `n` entries, each a block of `rest_sizes` elements.
struct IndexLoop {
  int64_t n = 0;
  DimVector rest_sizes;
  IndexSide dst, src;
  size_t elsize = 0;
};

/// dst(i, j) = src(i, j), bytewise.
void index_copy_bytes(IndexLoop l);
/// dst(i, j) = *value (elsize bytes); `l.src` is unused.
void index_fill_bytes(IndexLoop l, const void* value);
/// dst(i, j) += alpha * src(i, j) in `dtype` (logical or for bool). Entries are added in order
/// for each destination, whatever the thread count.
void index_accumulate(IndexLoop l, ScalarType dtype, const Scalar& alpha);

/// gather / scatter over the shape of a contiguous int64 `index`.
/// gather:  dst[p] = src[p with p[dim] = index[p]]
/// scatter: dst[p with p[dim] = index[p]] op= src[p]   (src == nullptr: op= *value)
/// Strides are in elements; `dst_strides`/`src_strides` hold the indexed tensor's strides.
struct GatherLoop {
  DimVector sizes;  // the index shape
  int64_t dim = 0;
  char* dst = nullptr;
  DimVector dst_strides;
  const char* src = nullptr;
  DimVector src_strides;
  const int64_t* index = nullptr;
  const void* value = nullptr;  // scatter of one value (dst dtype)
  int64_t dim_size = 0;         // gather: the indexed tensor's size at `dim`
};
/// gather, checking each index against [0, l.dim_size) as it copies (Note [Fused index
/// checks]): an index out of range raises check_indices' RuntimeError for the first such index
/// in order; positions before it may have been written.
void gather_kernel(const GatherLoop& l, size_t elsize);
/// scatter with indices already checked.
void scatter_kernel(const GatherLoop& l, ScalarType dtype, ScatterOp op);

/// index_select (Note [Fused index checks]): dst(i, j) = src(index[i], j) for the int64 or
/// int32 (`int32`) indices at `index`, each checked against [0, size) as it is used; an index
/// out of range raises check_indices' IndexError ("index_select", `dim`) for the first such
/// index. `l.src.istride` is the source's stride along the indexed dim; `l.src.off` is unused.
void index_select_checked(IndexLoop l, const void* index, bool int32, int64_t size, int64_t dim);

/// Element offset of flat (row-major) position `i` in a tensor of `sizes`/`strides`.
inline int64_t flat_offset(int64_t i, IntArrayRef sizes, IntArrayRef strides) {
  int64_t off = 0;
  for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; --d) {
    off += (i % sizes[size_t(d)]) * strides[size_t(d)];
    i /= sizes[size_t(d)];
  }
  return off;
}

/// Checks that every index in [p, p + n) lies in [-size, size) (wrap) or [0, size); IndexError
/// "index v is out of bounds for dimension d with size s" naming `op` otherwise.
/// `runtime_error` raises RuntimeError instead (gather/scatter, as PyTorch).
void check_indices(const int64_t* p, int64_t n, int64_t size, bool wrap, const char* op,
                   int64_t dim, bool runtime_error = false);
void check_indices(const int32_t* p, int64_t n, int64_t size, bool wrap, const char* op,
                   int64_t dim, bool runtime_error = false);

}  // namespace ember::cpu
