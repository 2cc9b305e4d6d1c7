#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernels of the indexing ops (src/ops/index/index_ops.cpp, advanced_indexing.cpp,
// scatter_ops.cpp; Note [Kernel stubs]). Index tensors reach them as contiguous int64 tensors
// and are range-checked (index_check_stub) before the kernel that uses them runs, so the writing
// kernels trust their indices. The CPU's index_select and gather are the exception: they take
// int32 or int64 indices unchecked and check them inside the copy (Note [Fused index checks]).

#include <cstdint>
#include <vector>

#include "core/kernel_stub.h"
#include "ember/scalar.h"
#include "ember/tensor.h"

namespace ember {

/// Reductions of scatter / scatter_reduce.
enum class ScatterOp : uint8_t { Assign, Sum, Prod, Max, Min };

/// Checks that every value of the contiguous int64 `index` lies in [-size, size) (`wrap`) or
/// [0, size); IndexError "[op] index v is out of bounds for dimension dim with size size"
/// otherwise (RuntimeError with `runtime_error`, as PyTorch's gather / scatter).
EMBER_DECLARE_KERNEL(index_check_stub, void(const Tensor& index, int64_t size, bool wrap,
                                            const char* op, int64_t dim, bool runtime_error));

/// out[..., i, ...] = self[..., index[i], ...] along `dim` (index_select). `index` holds
/// values in [0, self.size(dim)), checked before the call on CUDA and inside the kernel on the CPU;
/// `out` has self's dtype and dims, with index.numel() entries at `dim`.
EMBER_DECLARE_KERNEL(index_select_stub,
                     void(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index));

/// out[p] = self[p with p[dim] = index[p]] (gather). `index` has values in [0, self.size(dim))
/// (checked as for index_select) and self's dim count; `out` has index's shape and self's dtype.
EMBER_DECLARE_KERNEL(gather_stub,
                     void(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index));

/// self[p with p[dim] = index[p]] op= src[p] (scatter), or op= `value` (a 0-dim tensor of
/// self's dtype) when `src` is undefined. `index` has checked values in [0, self.size(dim)) and
/// self's dim count; `src` has self's dtype and dim count and does not alias self. Entries that
/// hit one position are combined in index order (Note [Deterministic index accumulation]).
EMBER_DECLARE_KERNEL(scatter_stub, void(Tensor& self, int64_t dim, const Tensor& index,
                                        const Tensor& src, const Tensor& value, ScatterOp op));

/// out[i] = self.flatten()[index[i]] (take). `self` and `out` are contiguous and of one dtype;
/// `index` has checked values in [-self.numel(), self.numel()).
EMBER_DECLARE_KERNEL(take_stub, void(Tensor& out, const Tensor& self, const Tensor& index));

/// self.flatten()[index[i]] = source[i], or += with `accumulate` (put_). `index` has checked
/// values in [-self.numel(), self.numel()); `source` is contiguous, of self's dtype, with
/// index.numel() elements and does not alias self.
EMBER_DECLARE_KERNEL(put_stub, void(Tensor& self, const Tensor& index, const Tensor& source,
                                    bool accumulate));

/// self[..., index[i], ...] = source[..., i, ...] along `dim` (index_copy_). `self` has at least
/// one dim; `index` has checked values in [0, self.size(dim)); `source` has self's dtype and
/// dims, with index.numel() entries at `dim`, and does not alias self.
EMBER_DECLARE_KERNEL(index_copy_stub,
                     void(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source));

/// self[..., index[i], ...] += alpha * source[..., i, ...] (index_add_), entries added in index
/// order. The arguments are as index_copy_stub's.
EMBER_DECLARE_KERNEL(index_add_stub, void(Tensor& self, int64_t dim, const Tensor& index,
                                          const Tensor& source, const Scalar& alpha));

/// self[..., index[i], ...] = value along `dim` (index_fill_). `self` has at least one dim;
/// `index` has checked values in [-self.size(dim), self.size(dim)); `value` is a 0-dim tensor of
/// self's dtype.
EMBER_DECLARE_KERNEL(index_fill_stub,
                     void(Tensor& self, int64_t dim, const Tensor& index, const Tensor& value));

/// The number of true elements of the contiguous bool `mask`.
EMBER_DECLARE_KERNEL(nonzero_count_stub, int64_t(const Tensor& mask));

/// Writes the coordinates of the true elements of the contiguous bool `mask`, in row-major
/// order, into the contiguous int64 (nonzero_count, mask.dim()) `out` (nonzero).
EMBER_DECLARE_KERNEL(nonzero_stub, void(Tensor& out, const Tensor& mask));

/// self[mask] = value (masked_fill_). `mask` is a contiguous bool tensor of self's shape;
/// `value` is a 0-dim tensor of self's dtype.
EMBER_DECLARE_KERNEL(masked_fill_stub, void(Tensor& self, const Tensor& mask, const Tensor& value));

/// out = self[mask] in row-major order (masked_select). `mask` is a contiguous bool tensor of
/// self's shape; `out` is 1-D, of self's dtype, with nonzero_count(mask) elements.
EMBER_DECLARE_KERNEL(masked_select_stub, void(Tensor& out, const Tensor& self, const Tensor& mask));

/// self[mask] = the first elements of `source`, in row-major order (masked_scatter_). `mask` is
/// a contiguous bool tensor of self's shape; `source` is contiguous, of self's dtype, and does
/// not alias self. RuntimeError when `source` has fewer elements than `mask` has true ones.
EMBER_DECLARE_KERNEL(masked_scatter_stub,
                     void(Tensor& self, const Tensor& mask, const Tensor& source));

/// Advanced indexing (Note [Advanced index placement]): `indices` holds one entry per dim of
/// `self`, undefined for the dims taken whole, else a contiguous int64 tensor of the broadcast
/// index shape with checked values in [-size, size) of that dim. `out` is contiguous, of self's
/// dtype and of the result shape, the index dims starting at `block_pos`.
EMBER_DECLARE_KERNEL(advanced_index_stub,
                     void(Tensor& out, const Tensor& self, const std::vector<Tensor>& indices,
                          int64_t block_pos));

/// The write of advanced indexing: self[indices] = values, or += with `accumulate` (entries
/// added in index order). `indices` and `block_pos` are as advanced_index_stub's; `values` is
/// contiguous, of self's dtype and of the result shape, and does not alias self.
EMBER_DECLARE_KERNEL(advanced_index_put_stub,
                     void(Tensor& self, const std::vector<Tensor>& indices, int64_t block_pos,
                          const Tensor& values, bool accumulate));

}  // namespace ember
