#pragma once
/// Shape ops: tensor_split, flip/roll/rot90, repeat/tile, diag*, *_scatter, one_hot, pad, meshgrid,
/// broadcast_to, searchsorted/bucketize/histc/bincount, cartesian_prod/combinations (shape_ops.cpp,
/// search_ops.cpp).
///
/// Semantics follow PyTorch 1.13: dtypes, empty and 0-dim inputs, negative dims and error kinds.
/// Results are new contiguous tensors unless stated (broadcast_to, broadcast_tensors, meshgrid
/// and tensor_split return views).

#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/tensor.h"

namespace ember {

// ---- splitting, flipping, rolling, repeating ----

/// Splits `self` along `dim` into `sections` near-equal views (the first size % sections are one
/// longer).
std::vector<Tensor> tensor_split(const Tensor& self, int64_t sections, int64_t dim = 0);
/// Splits `self` along `dim` before each of `indices` (slicing rules: clamped, negative wraps).
std::vector<Tensor> tensor_split(const Tensor& self, IntArrayRef indices, int64_t dim = 0);
/// tensor_split with an int64 tensor: 0-dim = sections, 1-dim = indices.
std::vector<Tensor> tensor_split(const Tensor& self, const Tensor& tensor_indices_or_sections,
                                 int64_t dim = 0);
/// Reverses the order of elements along each of `dims` (a copy).
Tensor flip(const Tensor& self, IntArrayRef dims);
/// flip along dim 1 (input of at least 2 dims).
Tensor fliplr(const Tensor& self);
/// flip along dim 0 (input of at least 1 dim).
Tensor flipud(const Tensor& self);
/// Rolls elements by `shifts` along `dims`; with no dims, rolls the flattened tensor.
Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims = {});
/// Rotates by 90 degrees `k` times in the plane of `dims` (from the first towards the second).
Tensor rot90(const Tensor& self, int64_t k = 1, IntArrayRef dims = {0, 1});
/// Tiles `self` `repeats[i]` times along each dim (len(repeats) >= self.dim()).
Tensor repeat(const Tensor& self, IntArrayRef repeats);
/// numpy.tile: repeat() with `dims` padded with leading ones to self.dim().
Tensor tile(const Tensor& self, IntArrayRef dims);
/// Repeats each element `repeats` times along `dim` (flattened input when dim is nullopt).
Tensor repeat_interleave(const Tensor& self, int64_t repeats,
                         std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
/// Repeats element i `repeats[i]` times (an int32/int64 1-D tensor, or one value for all).
Tensor repeat_interleave(const Tensor& self, const Tensor& repeats,
                         std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
/// Index i repeated repeats[i] times: [0, 1, 1] for repeats [1, 2].
Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size = std::nullopt);

// ---- index factories ----

/// Coordinates (2 x N) of the lower triangle of a row x col matrix (j <= i + offset).
Tensor tril_indices(int64_t row, int64_t col, int64_t offset = 0,
                    const TensorOptions& opts = TensorOptions(kLong));
/// Coordinates (2 x N) of the upper triangle of a row x col matrix (j >= i + offset).
Tensor triu_indices(int64_t row, int64_t col, int64_t offset = 0,
                    const TensorOptions& opts = TensorOptions(kLong));

// ---- diagonals and scatters into views ----

/// 1-D input: a square matrix with `self` on diagonal `diagonal`; 2-D: that diagonal (a copy).
Tensor diag(const Tensor& self, int64_t diagonal = 0);
/// diag into `out` (same dtype; resized when empty).
Tensor& diag_out(Tensor& out, const Tensor& self, int64_t diagonal = 0);
/// Batched diagonal matrices: the last dim of `self` becomes diagonal `offset` of (dim1, dim2).
Tensor diag_embed(const Tensor& self, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);
/// diag of the flattened input.
Tensor diagflat(const Tensor& self, int64_t offset = 0);
/// A copy of `self` with `self.diagonal(offset, dim1, dim2)` replaced by `src`.
Tensor diagonal_scatter(const Tensor& self, const Tensor& src, int64_t offset = 0, int64_t dim1 = 0,
                        int64_t dim2 = 1);
/// A copy of `self` with `self.select(dim, index)` replaced by `src`.
Tensor select_scatter(const Tensor& self, const Tensor& src, int64_t dim, int64_t index);
/// A copy of `self` with `self.slice(dim, start, end, step)` replaced by `src`.
Tensor slice_scatter(const Tensor& self, const Tensor& src, int64_t dim = 0,
                     std::optional<int64_t> start = std::nullopt,
                     std::optional<int64_t> end = std::nullopt, int64_t step = 1);
/// int64 class indices -> one-hot int64 rows of `num_classes` (-1: max + 1).
Tensor one_hot(const Tensor& self, int64_t num_classes = -1);

// ---- broadcasting and grids ----

/// `self` expanded to `size` (a view; -1 keeps a dim).
Tensor broadcast_to(const Tensor& self, IntArrayRef size);
/// Every tensor expanded to the common broadcast shape (views).
std::vector<Tensor> broadcast_tensors(ArrayRef<Tensor> tensors);
/// Coordinate grids of 0-d/1-d tensors; indexing "ij" (matrix) or "xy" (Cartesian).
std::vector<Tensor> meshgrid(ArrayRef<Tensor> tensors, std::string_view indexing = "ij");
/// Cartesian product of 1-D tensors, as rows of an N x len(tensors) tensor.
Tensor cartesian_prod(ArrayRef<Tensor> tensors);
/// The n-th forward difference along `dim` (bool: logical xor), after `prepend`/`append` are
/// concatenated along `dim` (same number of dims as self); n <= 0 returns the input as it is.
Tensor diff(const Tensor& self, int64_t n = 1, int64_t dim = -1,
            const std::optional<Tensor>& prepend = std::nullopt,
            const std::optional<Tensor>& append = std::nullopt);
/// A block-diagonal matrix of 0-d, 1-d (one row) and 2-d tensors, in their promoted dtype.
Tensor block_diag(ArrayRef<Tensor> tensors);
/// Length-`r` combinations of a 1-D tensor's elements (itertools order), as rows.
Tensor combinations(const Tensor& self, int64_t r = 2, bool with_replacement = false);

// ---- padding ----

/// torch.nn.functional.pad: `pad` = (left, right) pairs from the last dim backwards; mode
/// "constant" (negative pads crop), "reflect", "replicate" or "circular".
Tensor pad(const Tensor& self, IntArrayRef pad, std::string_view mode = "constant",
           std::optional<double> value = std::nullopt);
/// Constant padding with `value` (any dims; negative pads crop).
Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, const Scalar& value = 0);

// ---- searching and counting (search_ops.cpp) ----

/// Insertion indices of `self` in the innermost dim of `sorted_sequence` (1-D, or N-D with the
/// leading dims of `self`). side "left"/"right" (or right=true); `sorter` sorts an unsorted
/// sequence.
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& self, bool out_int32 = false,
                    bool right = false, std::optional<std::string_view> side = std::nullopt,
                    const std::optional<Tensor>& sorter = std::nullopt);
/// searchsorted of one value (1-D sequence only): a 0-dim result.
Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& self, bool out_int32 = false,
                    bool right = false, std::optional<std::string_view> side = std::nullopt,
                    const std::optional<Tensor>& sorter = std::nullopt);
/// searchsorted into `out` (int64 or int32 as out_int32; resized when empty).
Tensor& searchsorted_out(Tensor& out, const Tensor& sorted_sequence, const Tensor& self,
                         bool out_int32 = false, bool right = false,
                         std::optional<std::string_view> side = std::nullopt,
                         const std::optional<Tensor>& sorter = std::nullopt);
/// Bucket index of each element of `self` in the 1-D `boundaries`.
Tensor bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32 = false,
                 bool right = false);
Tensor bucketize(const Scalar& self, const Tensor& boundaries, bool out_int32 = false,
                 bool right = false);
Tensor& bucketize_out(Tensor& out, const Tensor& self, const Tensor& boundaries,
                      bool out_int32 = false, bool right = false);
/// Histogram of `self` in `bins` equal bins over [min, max] (data range when min == max).
Tensor histc(const Tensor& self, int64_t bins = 100, const Scalar& min = 0, const Scalar& max = 0);
Tensor& histc_out(Tensor& out, const Tensor& self, int64_t bins = 100, const Scalar& min = 0,
                  const Scalar& max = 0);
/// Counts (or sums `weights`) of each value of a 1-D non-negative integer tensor.
Tensor bincount(const Tensor& self, const std::optional<Tensor>& weights = std::nullopt,
                int64_t minlength = 0);

}  // namespace ember
