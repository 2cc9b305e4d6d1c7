#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// CPU kernels of the indexing ops (index.cpp). Callers validate and wrap every index first:
// the kernels trust their offsets and never check bounds.

#include <cstdint>

#include "ember/scalar.h"
#include "ember/tensor.h"

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

/// Reductions of scatter / scatter_reduce.
enum class ScatterOp : uint8_t { Assign, Sum, Prod, Max, Min };

/// gather / scatter over the shape of a contiguous int64 `index` whose values are in range.
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
};
void gather_kernel(const GatherLoop& l, size_t elsize);
void scatter_kernel(const GatherLoop& l, ScalarType dtype, ScatterOp op);

/// Checks that every index in [p, p + n) lies in [-size, size) (wrap) or [0, size); IndexError
/// "index v is out of bounds for dimension d with size s" naming `op` otherwise.
/// `runtime_error` raises RuntimeError instead (gather/scatter, as PyTorch).
void check_indices(const int64_t* p, int64_t n, int64_t size, bool wrap, const char* op,
                   int64_t dim, bool runtime_error = false);

}  // namespace ember::cpu
