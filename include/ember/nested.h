#pragma once
/// Nested (ragged) tensors, PyTorch 1.13's `torch.nested` prototype: a list of tensors of equal
/// rank and dtype whose sizes may differ, stored packed in one contiguous buffer. Ops act on the
/// packed elements, so the padding of a ragged batch is never computed on.
///
/// Every op here is written with ember ops on the buffer (or on views of it), so autograd flows
/// from a result back to the buffer and to whatever the buffer was computed from.

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "ember/scalar.h"
#include "ember/tensor.h"

namespace ember::nested {

/// A nested tensor: components t_0 .. t_{n-1} of rank `dim() - 1`, stored one after another
/// (each contiguous) in `buffer()`.
class NestedTensor {
 public:
  NestedTensor() = default;
  /// From a packed buffer and the (n, rank) int64 sizes of its components. The buffer must be
  /// 1-D with exactly as many elements as the components hold (RuntimeError otherwise); a
  /// strided buffer is made contiguous.
  NestedTensor(Tensor buffer, Tensor nested_sizes);

  /// The packed 1-D buffer of all components.
  const Tensor& buffer() const { return buffer_; }
  /// (n, rank) int64 on the CPU: the sizes of each component.
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
  /// Sets requires_grad on the buffer (which must be a leaf).
  NestedTensor& requires_grad_(bool r = true);
  /// Total number of elements of all components.
  int64_t numel() const { return buffer_.numel(); }
  /// Size of dim `d` when all components agree there (dim 0: the number of components);
  /// RuntimeError otherwise, IndexError when `d` is out of range.
  int64_t size(int64_t d) const;
  /// Sizes of component i.
  std::vector<int64_t> component_sizes(int64_t i) const;
  /// Component i (negative counts from the end; IndexError when out of range), a view of the
  /// buffer.
  Tensor operator[](int64_t i) const;
  /// The components, as views of the buffer.
  std::vector<Tensor> unbind() const;
  /// The components stacked into one dense tensor, padded with `padding` to the largest size
  /// in each dim (or to `output_size`).
  Tensor to_padded_tensor(double padding,
                          std::optional<std::vector<int64_t>> output_size = std::nullopt) const;
  /// A nested tensor of the same structure over another buffer (same numel).
  NestedTensor with_buffer(Tensor buffer) const;
  /// The buffer seen as (sum of dim 0, d_1, ..., d_k) when every component has rank >= 1 and
  /// all components agree in their trailing dims (components (L_i, E) give (sum L_i, E));
  /// RuntimeError otherwise.
  Tensor packed_rows() const;
  /// True when packed_rows() is defined.
  bool has_uniform_trailing_dims() const;

 private:
  Tensor buffer_;
  Tensor sizes_;
  std::vector<int64_t> offsets_;
};

// ---- construction and conversion (nested_tensor.cpp) ----

/// `torch.nested.nested_tensor(list)`: copies the (detached) components into one buffer; the
/// result is a leaf. dtype defaults to the first component's dtype (the others are cast), device
/// to the first component's device. RuntimeError when the components differ in rank.
NestedTensor nested_tensor(const std::vector<Tensor>& tensors,
                           std::optional<ScalarType> dtype = std::nullopt,
                           bool requires_grad = false, std::optional<Device> device = std::nullopt);
/// `torch.nested.as_nested_tensor`: as nested_tensor, keeping autograd to the inputs.
NestedTensor as_nested_tensor(const std::vector<Tensor>& tensors,
                              std::optional<ScalarType> dtype = std::nullopt,
                              std::optional<Device> device = std::nullopt);
/// `torch.nested.to_padded_tensor`. output_size must have dim() entries, none smaller than the
/// padded size (RuntimeError otherwise).
Tensor to_padded_tensor(const NestedTensor& nt, double padding,
                        std::optional<std::vector<int64_t>> output_size = std::nullopt);
/// A padded batch (B, S, *) as a nested tensor: component b holds the rows of padded[b] whose
/// `padding_mask` (B, S, bool, true = padding as src_key_padding_mask) is false, in order.
NestedTensor from_padded(const Tensor& padded, const Tensor& padding_mask);
/// Components (L_i, *) from packed rows (sum L_i, *) and the lengths L_i (the inverse of
/// packed_rows()).
NestedTensor from_packed_rows(const Tensor& rows, const std::vector<int64_t>& lengths);
/// True when `a` and `b` have the same number of components and the same sizes.
bool same_structure(const NestedTensor& a, const NestedTensor& b);

// ---- elementwise ops (nested_ops.cpp) ----

/// Applies an elementwise function to the buffer: `fn` must map the 1-D buffer to a 1-D tensor
/// of the same length (any ember unary elementwise op does).
NestedTensor map_elementwise(const NestedTensor& nt,
                             const std::function<Tensor(const Tensor&)>& fn);

/// Unary elementwise ops applied to every element.
NestedTensor relu(const NestedTensor& x);
NestedTensor gelu(const NestedTensor& x, std::string_view approximate = "none");
NestedTensor silu(const NestedTensor& x);
NestedTensor tanh(const NestedTensor& x);
NestedTensor sigmoid(const NestedTensor& x);
NestedTensor neg(const NestedTensor& x);
NestedTensor abs(const NestedTensor& x);
NestedTensor exp(const NestedTensor& x);
NestedTensor log(const NestedTensor& x);
NestedTensor sqrt(const NestedTensor& x);
NestedTensor sin(const NestedTensor& x);
NestedTensor cos(const NestedTensor& x);
NestedTensor clone(const NestedTensor& x);
NestedTensor detach(const NestedTensor& x);
/// The buffer cast to `dtype` (autograd flows for floating dtypes).
NestedTensor to(const NestedTensor& x, ScalarType dtype);

/// Binary ops with another nested tensor of the same structure (RuntimeError otherwise; no
/// broadcasting between components), with a scalar, or with a 0-dim / one-element tensor.
NestedTensor add(const NestedTensor& a, const NestedTensor& b, const Scalar& alpha = 1);
NestedTensor add(const NestedTensor& a, const Scalar& b, const Scalar& alpha = 1);
NestedTensor sub(const NestedTensor& a, const NestedTensor& b, const Scalar& alpha = 1);
NestedTensor sub(const NestedTensor& a, const Scalar& b, const Scalar& alpha = 1);
NestedTensor mul(const NestedTensor& a, const NestedTensor& b);
NestedTensor mul(const NestedTensor& a, const Scalar& b);
NestedTensor div(const NestedTensor& a, const NestedTensor& b);
NestedTensor div(const NestedTensor& a, const Scalar& b);
/// With a dense tensor: only a 0-dim (or one-element) tensor is accepted (RuntimeError
/// otherwise, as torch: "Expected both self and other to be nested").
NestedTensor add(const NestedTensor& a, const Tensor& b, const Scalar& alpha = 1);
NestedTensor sub(const NestedTensor& a, const Tensor& b, const Scalar& alpha = 1);
NestedTensor mul(const NestedTensor& a, const Tensor& b);
NestedTensor div(const NestedTensor& a, const Tensor& b);
/// `b - a`, `b / a` for a scalar b.
NestedTensor rsub(const NestedTensor& a, const Scalar& b);
NestedTensor rdiv(const NestedTensor& a, const Scalar& b);

inline NestedTensor operator+(const NestedTensor& a, const NestedTensor& b) { return add(a, b); }
inline NestedTensor operator+(const NestedTensor& a, const Scalar& b) { return add(a, b); }
inline NestedTensor operator+(const Scalar& a, const NestedTensor& b) { return add(b, a); }
inline NestedTensor operator-(const NestedTensor& a, const NestedTensor& b) { return sub(a, b); }
inline NestedTensor operator-(const NestedTensor& a, const Scalar& b) { return sub(a, b); }
inline NestedTensor operator-(const Scalar& a, const NestedTensor& b) { return rsub(b, a); }
inline NestedTensor operator*(const NestedTensor& a, const NestedTensor& b) { return mul(a, b); }
inline NestedTensor operator*(const NestedTensor& a, const Scalar& b) { return mul(a, b); }
inline NestedTensor operator*(const Scalar& a, const NestedTensor& b) { return mul(b, a); }
inline NestedTensor operator/(const NestedTensor& a, const NestedTensor& b) { return div(a, b); }
inline NestedTensor operator/(const NestedTensor& a, const Scalar& b) { return div(a, b); }
inline NestedTensor operator/(const Scalar& a, const NestedTensor& b) { return rdiv(b, a); }
inline NestedTensor operator-(const NestedTensor& a) { return neg(a); }

// ---- structured ops (nested_nn.cpp) ----

/// Components (.., M, K) @ (K, N) for a dense 2-D `other` (components of rank >= 2; a rank-1
/// component (K) gives (N)). RuntimeError on mismatched K.
NestedTensor matmul(const NestedTensor& a, const Tensor& other);
/// Component-wise a_i @ b_i (torch 1.13: equal number of components, batch dims equal,
/// components of rank >= 2).
NestedTensor matmul(const NestedTensor& a, const NestedTensor& b);
/// Component-wise a_i @ b_i for nested tensors of 3 dims (components of rank 2).
NestedTensor bmm(const NestedTensor& a, const NestedTensor& b);
/// Component-wise a_i @ other[i] for a dense (n, K, N) `other`.
NestedTensor bmm(const NestedTensor& a, const Tensor& other);
/// Components (.., K) -> (.., N): x @ weight.T + bias; all components must share the last dim.
NestedTensor linear(const NestedTensor& x, const Tensor& weight, const Tensor& bias = {});
/// Softmax over dim `dim` of each component (dim 0 is the nested dim: RuntimeError).
NestedTensor softmax(const NestedTensor& x, int64_t dim,
                     std::optional<ScalarType> dtype = std::nullopt);
NestedTensor log_softmax(const NestedTensor& x, int64_t dim,
                         std::optional<ScalarType> dtype = std::nullopt);
/// layer_norm over the trailing `normalized_shape` dims of every component.
NestedTensor layer_norm(const NestedTensor& x, IntArrayRef normalized_shape,
                        const Tensor& weight = {}, const Tensor& bias = {}, double eps = 1e-5);
/// Dropout of the buffer's elements (identity unless `train`).
NestedTensor dropout(const NestedTensor& x, double p, bool train);
/// Swaps two non-batch dims of every component (dim 0 cannot be transposed: RuntimeError).
NestedTensor transpose(const NestedTensor& x, int64_t d0, int64_t d1);

/// NotImplementedError "[op] is not supported for nested tensors".
[[noreturn]] void throw_unsupported(std::string_view op);

}  // namespace ember::nested
