#pragma once
/// Indexing ops: index_select, gather/scatter, index_add/copy/fill, masked_*, nonzero, take,
/// advanced indexing (index_ops.cpp, scatter_ops.cpp, advanced_indexing.cpp). Index tensors are
/// int64 (index_select and the index_* family take int32 too); negative indices wrap where
/// PyTorch wraps them, and an out-of-range index raises IndexError before anything is written.

#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/tensor.h"

namespace ember {

/// Rows (slices along `dim`) of `self` picked by the 1-D (or 0-D) `index`.
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
/// index_select into `out` (resized when empty).
Tensor& index_select_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index);

/// out[i][j][k] = self[index[i][j][k]][j][k] (for dim 0); `index` is int64 with the same number
/// of dims as `self` and no larger than it outside `dim`. `sparse_grad` is accepted and ignored.
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, bool sparse_grad = false);
/// gather into `out` (resized when empty).
Tensor& gather_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                   bool sparse_grad = false);

/// self[index[i][j]][j] = src[i][j] (for dim 0) on a copy of `self`.
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
/// scatter of one value.
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
/// scatter combining with `reduce` ("add" or "multiply").
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
               std::string_view reduce);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
               std::string_view reduce);
/// scatter summing duplicates (deterministically, in index order).
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
/// scatter with reduce = "sum", "prod", "mean", "amax" or "amin"; include_self=false leaves
/// the old values of the scattered-to positions out of the reduction.
Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      std::string_view reduce, bool include_self = true);

/// self[..., index[i], ...] += alpha * source[..., i, ...] along `dim`, on a copy.
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 const Scalar& alpha = 1);
/// self[..., index[i], ...] = source[..., i, ...] along `dim`, on a copy.
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);
/// self[..., index[i], ...] = value along `dim`, on a copy.
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
/// index_fill with a 0-dim tensor value.
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value);

/// `value` where `mask` (bool, broadcast with self) is true, self elsewhere.
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value);
/// masked_fill with a 0-dim tensor value.
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value);
/// The elements of self (broadcast with mask) where mask is true, as a 1-D tensor.
Tensor masked_select(const Tensor& self, const Tensor& mask);
Tensor& masked_select_out(Tensor& out, const Tensor& self, const Tensor& mask);
/// Copies the first mask.sum() elements of `source` (in order) where `mask` is true.
Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source);

/// Coordinates of the nonzero elements as an int64 [count, ndim] tensor, row-major order.
Tensor nonzero(const Tensor& self);
Tensor& nonzero_out(Tensor& out, const Tensor& self);
/// nonzero as one 1-D tensor per dim (`nonzero(as_tuple=True)`).
std::vector<Tensor> nonzero_numpy(const Tensor& self);
/// Same as nonzero.
Tensor argwhere(const Tensor& self);

/// self.flatten()[index] with the shape of `index`.
Tensor take(const Tensor& self, const Tensor& index);
Tensor& take_out(Tensor& out, const Tensor& self, const Tensor& index);
/// gather along `dim` after broadcasting self and indices outside it; dim = nullopt works on
/// the flattened tensors.
Tensor take_along_dim(const Tensor& self, const Tensor& indices,
                      std::optional<int64_t> dim = std::nullopt);
Tensor& take_along_dim_out(Tensor& out, const Tensor& self, const Tensor& indices,
                           std::optional<int64_t> dim = std::nullopt);
/// self.flatten()[index] = source (or += with accumulate), on a copy.
Tensor put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate = false);

/// Advanced indexing with one optional index tensor per leading dim (nullopt = the whole dim),
/// as `at::index`.
Tensor index(const Tensor& self, ArrayRef<std::optional<Tensor>> indices);
/// self[indices] = values (or += with accumulate, summing duplicates) on a copy.
Tensor index_put(const Tensor& self, ArrayRef<std::optional<Tensor>> indices, const Tensor& values,
                 bool accumulate = false);
/// In-place index_put.
Tensor& index_put_(Tensor& self, ArrayRef<std::optional<Tensor>> indices, const Tensor& values,
                   bool accumulate = false);

}  // namespace ember
