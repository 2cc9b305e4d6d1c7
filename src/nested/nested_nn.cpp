// Structured ops on nested tensors: matmul/bmm, linear, softmax, layer_norm, dropout,
// transpose. Where every component shares the dims an op reads, it runs once on the buffer
// viewed as rows (Note [Nested tensor layout]); otherwise once per component, re-packed with
// as_nested_tensor (whose cat keeps autograd).
#include <string>

#include "ember/blas.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/nested.h"
#include "ember/nn_ops.h"
#include "ember/ops.h"
#include "ember/sort.h"

namespace ember::nested {

namespace {

// The common last dim of every component, or -1 when they differ or there is none.
int64_t uniform_last_dim(const NestedTensor& x) {
  const int64_t n = x.num_components(), r = x.dim() - 1;
  if (n == 0 || r == 0) return -1;
  const int64_t* s = x.nested_sizes().data_ptr<int64_t>();
  for (int64_t i = 1; i < n; ++i)
    if (s[i * r + r - 1] != s[r - 1]) return -1;
  return s[r - 1];
}

// Sizes of `x` with the last dim of every component replaced by `last`.
Tensor sizes_with_last(const NestedTensor& x, int64_t last) {
  Tensor s = x.nested_sizes().clone();
  if (s.size(1) > 0) s.select(1, s.size(1) - 1).fill_(last);
  return s;
}

// The buffer as rows of the common last dim `k` (each component's rows are contiguous).
Tensor rows_of(const NestedTensor& x, int64_t k) {
  return x.buffer().view({k == 0 ? 0 : x.numel() / k, k});
}

int64_t wrap_dim(int64_t d, int64_t nd, const char* op) {
  EMBER_CHECK_INDEX(d >= -nd && d < nd, "[", op,
                    "] Dimension out of range (expected to be in range of [", -nd, ", ", nd - 1,
                    "], but got ", d, ")");
  return d < 0 ? d + nd : d;
}

// Applies `fn` to each component and packs the results (same rank for all).
NestedTensor per_component(const NestedTensor& x,
                           const std::function<Tensor(const Tensor&, int64_t)>& fn) {
  std::vector<Tensor> out;
  out.reserve(size_t(x.num_components()));
  for (int64_t i = 0; i < x.num_components(); ++i) out.push_back(fn(x[i], i));
  if (out.empty()) return x;
  return as_nested_tensor(out);
}

}  // namespace

NestedTensor matmul(const NestedTensor& a, const Tensor& other) {
  EMBER_CHECK(a.defined() && other.defined(), "[matmul] undefined operand");
  EMBER_CHECK(other.dim() == 2, "[matmul] a nested tensor multiplies a 2-D dense matrix, got ",
              other.dim(), " dims (shape ", other.sizes(), ")");
  EMBER_CHECK(a.dim() >= 2, "[matmul] the nested tensor's components must have rank >= 1");
  const int64_t k = other.size(0);
  EMBER_CHECK(a.num_components() == 0 || uniform_last_dim(a) == k,
              "[matmul] every component's last dim must equal other.size(0) = ", k,
              " (nested tensor of ", a.num_components(), " components)");
  if (a.num_components() == 0)
    return NestedTensor(empty({0}, a.buffer().options().dtype(result_type(a.buffer(), other))),
                        a.nested_sizes());
  Tensor y = ember::matmul(rows_of(a, k), other);
  return NestedTensor(y.reshape({-1}), sizes_with_last(a, other.size(1)));
}

NestedTensor matmul(const NestedTensor& a, const NestedTensor& b) {
  EMBER_CHECK(a.defined() && b.defined(), "[matmul] undefined operand");
  EMBER_CHECK(a.dim() >= 3,
              "[matmul] For nested tensors, only inputs with >= 3 dims are "
              "currently supported. 1st input has rank: ",
              a.dim());
  EMBER_CHECK(b.dim() >= 3,
              "[matmul] For nested tensors, only inputs with >= 3 dims are "
              "currently supported. 2nd input has rank: ",
              b.dim());
  EMBER_CHECK(a.dim() == b.dim(), "[matmul] nested tensors of different dims: ", a.dim(), " and ",
              b.dim());
  EMBER_CHECK(a.num_components() == b.num_components(),
              "[matmul] Expected size for the 1st dimension of 2nd input tensor to be: ",
              a.num_components(), " but got: ", b.num_components(), ".");
  EMBER_CHECK(a.dtype() == b.dtype(), "[matmul] expected scalar type ", dtype_name(a.dtype()),
              " but found ", dtype_name(b.dtype()));
  return per_component(a, [&](const Tensor& ai, int64_t i) {
    Tensor bi = b[i];
    for (int64_t d = 0; d + 2 < ai.dim(); ++d)
      EMBER_CHECK(ai.size(d) == bi.size(d),
                  "[matmul] For nested tensors, batch dimensions must "
                  "have the same sizes, no broadcasting is currently performed. Component ",
                  i, ": ", ai.sizes(), " and ", bi.sizes());
    EMBER_CHECK(ai.size(-1) == bi.size(-2),
                "[matmul] Nested tensors cannot be matrix "
                "multiplied: component ",
                i, " has shapes ", ai.sizes(), " and ", bi.sizes());
    return ember::matmul(ai, bi);
  });
}

NestedTensor bmm(const NestedTensor& a, const NestedTensor& b) {
  EMBER_CHECK(a.defined() && b.defined(), "[bmm] undefined operand");
  EMBER_CHECK(a.dim() == 3, "[bmm] batch1 must be a 3D tensor, got ", a.dim(), " dims");
  EMBER_CHECK(b.dim() == 3, "[bmm] batch2 must be a 3D tensor, got ", b.dim(), " dims");
  EMBER_CHECK(a.num_components() == b.num_components(),
              "[bmm] Expected size for the 1st dimension of batch2 tensor to be: ",
              a.num_components(), " but got: ", b.num_components(), ".");
  EMBER_CHECK(a.dtype() == b.dtype(), "[bmm] expected scalar type ", dtype_name(a.dtype()),
              " but found ", dtype_name(b.dtype()));
  return per_component(a, [&](const Tensor& ai, int64_t i) {
    Tensor bi = b[i];
    EMBER_CHECK(ai.size(1) == bi.size(0), "[bmm] ", i,
                "-th nested matrices in batch cannot be multiplied (", ai.size(0), "x", ai.size(1),
                " and ", bi.size(0), "x", bi.size(1), ")");
    return ember::mm(ai, bi);
  });
}

NestedTensor bmm(const NestedTensor& a, const Tensor& other) {
  EMBER_CHECK(a.defined() && other.defined(), "[bmm] undefined operand");
  EMBER_CHECK(a.dim() == 3, "[bmm] batch1 must be a 3D tensor, got ", a.dim(), " dims");
  EMBER_CHECK(other.dim() == 3, "[bmm] batch2 must be a 3D tensor, got ", other.dim(), " dims");
  EMBER_CHECK(other.size(0) == a.num_components(),
              "[bmm] Expected size for the 1st dimension of batch2 tensor to be: ",
              a.num_components(), " but got: ", other.size(0), ".");
  return per_component(a, [&](const Tensor& ai, int64_t i) {
    EMBER_CHECK(ai.size(1) == other.size(1), "[bmm] ", i,
                "-th nested matrices in batch cannot be multiplied (", ai.size(0), "x", ai.size(1),
                " and ", other.size(1), "x", other.size(2), ")");
    return ember::mm(ai, other[i]);
  });
}

NestedTensor linear(const NestedTensor& x, const Tensor& weight, const Tensor& bias) {
  EMBER_CHECK(x.defined() && weight.defined(), "[linear] undefined operand");
  EMBER_CHECK(weight.dim() == 2 && x.dim() >= 2,
              "[linear] Linear requires nested_tensor.dim >= 2 and dense_matrix.dim == 2. "
              "Nested tensor dim: ",
              x.dim(), ". Dense tensor dim: ", weight.dim());
  const int64_t k = uniform_last_dim(x);
  EMBER_CHECK(x.num_components() == 0 || k >= 0,
              "[linear] Expected all tensors in nested tensor to have the same trailing "
              "dimension");
  EMBER_CHECK(x.num_components() == 0 || k == weight.size(1),
              "[linear] Shape mismatch for NestedTensor Linear: Expected input's (a nested "
              "tensor) 'last_dim' to equal 'weight.size(1), but got: last_dim = ",
              k, ", and weight.size(1) = ", weight.size(1));
  EMBER_CHECK(
      !bias.defined() || (bias.dim() <= 1 && bias.numel() == weight.size(0)) || bias.numel() == 1,
      "[linear] bias of shape ", bias.sizes(), " does not match weight.size(0) = ", weight.size(0));
  if (x.num_components() == 0) return x;
  Tensor y = ember::linear(rows_of(x, k), weight, bias);
  return NestedTensor(y.reshape({-1}), sizes_with_last(x, weight.size(0)));
}

namespace {

NestedTensor softmax_impl(const NestedTensor& x, int64_t dim, std::optional<ScalarType> dtype,
                          bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  EMBER_CHECK(x.defined(), "[", op, "] undefined nested tensor");
  dim = wrap_dim(dim, x.dim(), op);
  EMBER_CHECK(dim != 0, "[", op, "] Cannot apply ", op, " across nested dimension 0");
  auto f = [&](const Tensor& t, int64_t d) {
    return log ? ember::log_softmax(t, d, dtype) : ember::softmax(t, d, dtype);
  };
  const int64_t k = uniform_last_dim(x);
  // Softmax over the last dim is row-wise: one call on the buffer's rows.
  if (dim == x.dim() - 1 && k >= 0) return x.with_buffer(f(rows_of(x, k), 1).reshape({-1}));
  return per_component(x, [&](const Tensor& c, int64_t) { return f(c, dim - 1); });
}

}  // namespace

NestedTensor softmax(const NestedTensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_impl(x, dim, dtype, false);
}

NestedTensor log_softmax(const NestedTensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_impl(x, dim, dtype, true);
}

NestedTensor layer_norm(const NestedTensor& x, IntArrayRef normalized_shape, const Tensor& weight,
                        const Tensor& bias, double eps) {
  EMBER_CHECK(x.defined(), "[layer_norm] undefined nested tensor");
  const int64_t k = int64_t(normalized_shape.size()), r = x.dim() - 1;
  EMBER_CHECK(k >= 1 && k <= r, "[layer_norm] normalized_shape ", normalized_shape,
              " must name 1 to ", r, " trailing dims of the components");
  int64_t inner = 1;
  for (int64_t v : normalized_shape) inner *= v;
  const int64_t* s = x.nested_sizes().data_ptr<int64_t>();
  for (int64_t i = 0; i < x.num_components(); ++i)
    for (int64_t d = 0; d < k; ++d)
      EMBER_CHECK(s[i * r + r - k + d] == normalized_shape[size_t(d)],
                  "[layer_norm] Given normalized_shape=", normalized_shape,
                  ", expected every component to end in these dims, but component ", i,
                  " has size ", IntArrayRef(x.component_sizes(i)));
  if (x.num_components() == 0) return x;
  // Every component ends in normalized_shape, so the buffer is a stack of such blocks.
  std::vector<int64_t> shape{inner == 0 ? 0 : x.numel() / inner};
  shape.insert(shape.end(), normalized_shape.begin(), normalized_shape.end());
  Tensor y = ember::layer_norm(x.buffer().view(shape), normalized_shape, weight, bias, eps);
  return x.with_buffer(y.reshape({-1}));
}

NestedTensor dropout(const NestedTensor& x, double p, bool train) {
  return map_elementwise(x, [&](const Tensor& b) { return ember::dropout(b, p, train); });
}

NestedTensor transpose(const NestedTensor& x, int64_t d0, int64_t d1) {
  EMBER_CHECK(x.defined(), "[transpose] undefined nested tensor");
  d0 = wrap_dim(d0, x.dim(), "transpose");
  d1 = wrap_dim(d1, x.dim(), "transpose");
  EMBER_CHECK(d0 != 0 && d1 != 0, "[transpose] Nested tensor dimension 0 cannot be transposed");
  if (d0 == d1) return x;
  return per_component(x, [&](const Tensor& c, int64_t) { return c.transpose(d0 - 1, d1 - 1); });
}

}  // namespace ember::nested
