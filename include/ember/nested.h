#pragma once
/// Nested (ragged) tensors, PyTorch 1.13's `torch.nested` prototype: a list of tensors of equal
/// rank and dtype whose sizes may differ, stored packed in one contiguous buffer. Ops act on the
/// packed elements, so the padding of a ragged batch is never computed on.

#include <optional>
#include <vector>

#include "ember/tensor.h"

namespace ember::nested {

/// A nested tensor: components t_0 .. t_{n-1} of rank `dim() - 1`, stored one after another
/// (each contiguous) in `buffer()`.
class NestedTensor {
 public:
  NestedTensor() = default;
  /// From a packed buffer and the (n, rank) int64 sizes of its components.
  NestedTensor(Tensor buffer, Tensor nested_sizes);

  /// The packed 1-D buffer of all components.
  const Tensor& buffer() const { return buffer_; }
  /// (n, rank) int64: the sizes of each component.
  const Tensor& nested_sizes() const { return sizes_; }
  /// Start of each component in the buffer (n).
  const std::vector<int64_t>& offsets() const { return offsets_; }
  bool defined() const { return buffer_.defined(); }

  /// Number of components.
  int64_t num_components() const { return int64_t(offsets_.size()); }
  /// Rank of the nested tensor: 1 + the components' rank.
  int64_t dim() const;
  ScalarType dtype() const { return buffer_.dtype(); }
  Device device() const { return buffer_.device(); }
  bool requires_grad() const { return buffer_.requires_grad(); }
  /// Size of dim `d` when all components agree there (dim 0: the number of components);
  /// raises otherwise.
  int64_t size(int64_t d) const;
  /// Sizes of component i.
  std::vector<int64_t> component_sizes(int64_t i) const;
  /// Component i, a view of the buffer.
  Tensor operator[](int64_t i) const;
  /// The components, as views of the buffer.
  std::vector<Tensor> unbind() const;
  /// The components stacked into one dense tensor, padded with `padding` to the largest size
  /// in each dim (or to `output_size`).
  Tensor to_padded_tensor(double padding,
                          std::optional<std::vector<int64_t>> output_size = std::nullopt) const;

 private:
  Tensor buffer_;
  Tensor sizes_;
  std::vector<int64_t> offsets_;
};

/// `torch.nested.nested_tensor(list)`: copies the components into one buffer.
NestedTensor nested_tensor(const std::vector<Tensor>& tensors,
                           std::optional<ScalarType> dtype = std::nullopt,
                           bool requires_grad = false);
/// `torch.nested.as_nested_tensor`: as nested_tensor, keeping autograd to the inputs.
NestedTensor as_nested_tensor(const std::vector<Tensor>& tensors);
/// `torch.nested.to_padded_tensor`.
Tensor to_padded_tensor(const NestedTensor& nt, double padding,
                        std::optional<std::vector<int64_t>> output_size = std::nullopt);
/// A padded batch (B, S, *) as a nested tensor: component b holds the rows of padded[b] whose
/// `padding_mask` (B, S, bool, true = padding as src_key_padding_mask) is false, in order.
NestedTensor from_padded(const Tensor& padded, const Tensor& padding_mask);

}  // namespace ember::nested
