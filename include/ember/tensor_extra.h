#pragma once
/// The rest of PyTorch's tensor catalogue: renorm, index_reduce, segment_reduce, narrow_copy,
/// rsub, fill, sum_to_size, as_strided_scatter, h/v/dsplit and randint_like
/// (src/ops/tensor_extra/). Tensor methods of the same names are declared in ember/tensor.h.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "ember/tensor.h"

namespace ember {

/// Each slice of `self` along `dim` (the sub-tensors self.select(dim, i)) whose p-norm exceeds
/// `maxnorm` is scaled to norm `maxnorm` (times 1 - 1e-7); others are kept. `self` is floating
/// or complex with at least 2 dims; p > 0, maxnorm >= 0.
Tensor renorm(const Tensor& self, const Scalar& p, int64_t dim, const Scalar& maxnorm);

/// A copy of `self` where self[..., index[i], ...] along `dim` is reduced with
/// source[..., i, ...] by `reduce` ("prod", "mean", "amax" or "amin"); `include_self=false`
/// leaves the old values of the indexed slices out. `index` is 1-D (or 0-dim) int32/int64 with
/// values in [0, self.size(dim)); `source` has self's dtype and shape but index.numel() at dim.
/// Integer "mean" rounds down.
Tensor index_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                    std::string_view reduce, bool include_self = true);

/// Reduces consecutive segments of `data` along `axis` ("sum", "mean", "max", "min" or
/// "prod"). The segments are given by `lengths` or `offsets` (int32/int64) whose last dim runs
/// along `axis` and whose leading dims match data's; `indices` is not supported (as PyTorch
/// 1.13). Empty segments give `initial`, or the reduction's identity (NaN for "mean").
/// Without `unsafe`, the lengths of each row must sum to data.size(axis).
Tensor segment_reduce(const Tensor& data, std::string_view reduce,
                      const std::optional<Tensor>& lengths = std::nullopt,
                      const std::optional<Tensor>& indices = std::nullopt,
                      const std::optional<Tensor>& offsets = std::nullopt, int64_t axis = 0,
                      bool unsafe = false, const std::optional<Scalar>& initial = std::nullopt);

/// self.narrow(dim, start, length) as a new contiguous tensor.
Tensor narrow_copy(const Tensor& self, int64_t dim, int64_t start, int64_t length);

/// other - alpha * self (torch.rsub), with sub's promotion and checks.
Tensor rsub(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor rsub(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);

/// A tensor like `self` (shape, strides, dtype) filled with `value` (torch.fill); the gradient
/// of self is zero, that of a 0-dim tensor `value` the sum of the output gradient.
Tensor fill(const Tensor& self, const Scalar& value);
Tensor fill(const Tensor& self, const Tensor& value);

/// Sums `self` down to `size`, which must expand to self's shape (Tensor.sum_to_size).
Tensor sum_to_size(const Tensor& self, IntArrayRef size);

/// A copy of `self` (its strides kept) whose elements at self.as_strided(size, stride,
/// storage_offset) are replaced by `src` (which has shape `size`).
Tensor as_strided_scatter(const Tensor& self, const Tensor& src, IntArrayRef size,
                          IntArrayRef stride, std::optional<int64_t> storage_offset = std::nullopt);

/// tensor_split along dim 1 (dim 0 for 1-D tensors): `sections` equal parts, or parts
/// split at `indices`.
std::vector<Tensor> hsplit(const Tensor& self, int64_t sections);
std::vector<Tensor> hsplit(const Tensor& self, IntArrayRef indices);
/// tensor_split along dim 0 of a tensor of at least 2 dims.
std::vector<Tensor> vsplit(const Tensor& self, int64_t sections);
std::vector<Tensor> vsplit(const Tensor& self, IntArrayRef indices);
/// tensor_split along dim 2 of a tensor of at least 3 dims.
std::vector<Tensor> dsplit(const Tensor& self, int64_t sections);
std::vector<Tensor> dsplit(const Tensor& self, IntArrayRef indices);

/// A tensor of self's shape (and dtype/device unless `opts` sets them) with integers drawn
/// uniformly from [low, high).
Tensor randint_like(const Tensor& self, int64_t high, const TensorOptions& opts = {});
Tensor randint_like(const Tensor& self, int64_t low, int64_t high, const TensorOptions& opts = {});

/// An uninitialised tensor with the given sizes and strides, and self's dtype and device unless
/// `opts` sets them.
Tensor new_empty_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                         const TensorOptions& opts = {});

}  // namespace ember
