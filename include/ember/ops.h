#pragma once
/// Elementwise ops as free functions, libtorch-style: `ember::exp(x)`, `ember::exp_out(out, x)`,
/// `ember::add(a, b, alpha)`, and the arithmetic/comparison/bitwise operators.
///
/// Every op promotes its inputs as `torch.result_type` does, broadcasts them, and writes a new
/// tensor, or `out` (which must have the broadcast shape, or be empty, and a dtype the result
/// can be cast to), or, for in-place forms, self (whose shape must be the broadcast shape).

#include <optional>
#include <string_view>

#include "ember/tensor.h"

namespace ember {

#define EMBER_DECL_UNARY_FN(op) \
  Tensor op(const Tensor& x);   \
  Tensor& op##_(Tensor& x);     \
  Tensor& op##_out(Tensor& out, const Tensor& x);
EMBER_UNARY_OPS(EMBER_DECL_UNARY_FN)
#undef EMBER_DECL_UNARY_FN

#define EMBER_DECL_PRED_FN(op) \
  Tensor op(const Tensor& x);  \
  Tensor& op##_out(Tensor& out, const Tensor& x);
EMBER_UNARY_PREDICATE_OPS(EMBER_DECL_PRED_FN)
#undef EMBER_DECL_PRED_FN

#define EMBER_DECL_BINARY_FN(op)                                  \
  Tensor op(const Tensor& a, const Tensor& b);                    \
  Tensor op(const Tensor& a, const Scalar& b);                    \
  Tensor op(const Scalar& a, const Tensor& b);                    \
  Tensor& op##_out(Tensor& out, const Tensor& a, const Tensor& b); \
  Tensor& op##_out(Tensor& out, const Tensor& a, const Scalar& b);
EMBER_BINARY_OPS(EMBER_DECL_BINARY_FN)
EMBER_COMPARISON_OPS(EMBER_DECL_BINARY_FN)
#undef EMBER_DECL_BINARY_FN

// Aliases with PyTorch's names.
inline Tensor multiply(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor negative(const Tensor& x) { return neg(x); }
inline Tensor absolute(const Tensor& x) { return abs(x); }
inline Tensor arctan2(const Tensor& a, const Tensor& b) { return atan2(a, b); }
inline Tensor greater(const Tensor& a, const Tensor& b) { return gt(a, b); }
inline Tensor less(const Tensor& a, const Tensor& b) { return lt(a, b); }
inline Tensor not_equal(const Tensor& a, const Tensor& b) { return ne(a, b); }
inline Tensor special_expit(const Tensor& x) { return sigmoid(x); }

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
inline Tensor subtract(const Tensor& a, const Tensor& b, const Scalar& alpha = 1) {
  return sub(a, b, alpha);
}
/// True division, or rounded with rounding_mode "trunc" / "floor" (RuntimeError otherwise).
Tensor div(const Tensor& a, const Tensor& b,
           std::optional<std::string_view> rounding_mode = std::nullopt);
Tensor div(const Tensor& a, const Scalar& b,
           std::optional<std::string_view> rounding_mode = std::nullopt);
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b,
                std::optional<std::string_view> rounding_mode = std::nullopt);
inline Tensor divide(const Tensor& a, const Tensor& b,
                     std::optional<std::string_view> rounding_mode = std::nullopt) {
  return div(a, b, rounding_mode);
}

/// Rounds half to even; with `decimals`, rounds to that many decimal places.
Tensor round(const Tensor& x, int64_t decimals = 0);
Tensor& round_out(Tensor& out, const Tensor& x, int64_t decimals = 0);
Tensor clamp(const Tensor& x, const std::optional<Scalar>& min,
             const std::optional<Scalar>& max = std::nullopt);
Tensor clamp(const Tensor& x, const std::optional<Tensor>& min = std::nullopt,
             const std::optional<Tensor>& max = std::nullopt);
Tensor& clamp_out(Tensor& out, const Tensor& x, const std::optional<Scalar>& min,
                  const std::optional<Scalar>& max = std::nullopt);
Tensor& clamp_out(Tensor& out, const Tensor& x, const std::optional<Tensor>& min,
                  const std::optional<Tensor>& max = std::nullopt);
inline Tensor clip(const Tensor& x, const std::optional<Scalar>& min,
                   const std::optional<Scalar>& max = std::nullopt) {
  return clamp(x, min, max);
}
inline Tensor clip(const Tensor& x, const std::optional<Tensor>& min = std::nullopt,
                   const std::optional<Tensor>& max = std::nullopt) {
  return clamp(x, min, max);
}
inline Tensor clamp_min(const Tensor& x, const Scalar& min) { return clamp(x, min, std::nullopt); }
inline Tensor clamp_min(const Tensor& x, const Tensor& min) { return clamp(x, min, std::nullopt); }
inline Tensor clamp_max(const Tensor& x, const Scalar& max) { return clamp(x, std::nullopt, max); }
inline Tensor clamp_max(const Tensor& x, const Tensor& max) { return clamp(x, std::nullopt, max); }
Tensor logit(const Tensor& x, std::optional<double> eps = std::nullopt);
/// The n-th derivative of digamma (n >= 0; polygamma(0, x) is digamma), as torch.polygamma.
Tensor polygamma(int64_t n, const Tensor& x);
/// The multivariate log-gamma of dimension p >= 1 (every element must exceed (p - 1) / 2).
Tensor mvlgamma(const Tensor& x, int64_t p);
Tensor nan_to_num(const Tensor& x, std::optional<double> nan = std::nullopt,
                  std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);
Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight);
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
/// `condition ? a : b` elementwise, broadcasting all three (condition must be bool).
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& condition, const Scalar& a, const Tensor& b);
Tensor where(const Tensor& condition, const Tensor& a, const Scalar& b);
Tensor where(const Tensor& condition, const Scalar& a, const Scalar& b);
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-05, double atol = 1e-08,
               bool equal_nan = false);
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-05, double atol = 1e-08,
              bool equal_nan = false);
bool equal(const Tensor& a, const Tensor& b);

// ---- activations with parameters (nn.functional semantics) ----
Tensor leaky_relu(const Tensor& x, const Scalar& negative_slope = 0.01);
Tensor& leaky_relu_(Tensor& x, const Scalar& negative_slope = 0.01);
Tensor elu(const Tensor& x, const Scalar& alpha = 1, const Scalar& scale = 1,
           const Scalar& input_scale = 1);
Tensor& elu_(Tensor& x, const Scalar& alpha = 1, const Scalar& scale = 1,
             const Scalar& input_scale = 1);
Tensor celu(const Tensor& x, const Scalar& alpha = 1);
Tensor& celu_(Tensor& x, const Scalar& alpha = 1);
/// approximate: "none" (erf form) or "tanh"; RuntimeError otherwise (as PyTorch).
Tensor gelu(const Tensor& x, std::string_view approximate = "none");
Tensor& gelu_(Tensor& x, std::string_view approximate = "none");
Tensor softplus(const Tensor& x, const Scalar& beta = 1, const Scalar& threshold = 20);
Tensor hardtanh(const Tensor& x, const Scalar& min_val = -1, const Scalar& max_val = 1);
Tensor& hardtanh_(Tensor& x, const Scalar& min_val = -1, const Scalar& max_val = 1);
Tensor hardshrink(const Tensor& x, const Scalar& lambd = 0.5);
Tensor softshrink(const Tensor& x, const Scalar& lambd = 0.5);
/// `x > threshold ? x : value`.
Tensor threshold(const Tensor& x, const Scalar& threshold, const Scalar& value);
Tensor& threshold_(Tensor& x, const Scalar& threshold, const Scalar& value);

// ---- copies and dtype conversion ----
Tensor clone(const Tensor& x);
Tensor conj(const Tensor& x);
Tensor real(const Tensor& x);
Tensor imag(const Tensor& x);
/// `torch.result_type`: the dtype an op on these operands computes in.
ScalarType result_type(const Tensor& a, const Tensor& b);
ScalarType result_type(const Tensor& a, const Scalar& b);
ScalarType result_type(const Scalar& a, const Tensor& b);
ScalarType result_type(const Scalar& a, const Scalar& b);
/// `torch.broadcast_shapes`; RuntimeError when the shapes are incompatible.
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b);

// ---- joining (join_ops.cpp) ----
/// Concatenates along `dim` (dtype: result_type of all inputs). 1-D empty tensors are skipped,
/// as PyTorch; other shapes must match except along `dim` (RuntimeError otherwise).
Tensor cat(ArrayRef<Tensor> tensors, int64_t dim = 0);
/// An empty `out` is resized; otherwise it must have the result's shape and not alias an input.
Tensor& cat_out(Tensor& out, ArrayRef<Tensor> tensors, int64_t dim = 0);
inline Tensor concat(ArrayRef<Tensor> tensors, int64_t dim = 0) { return cat(tensors, dim); }
/// Joins equal-shaped tensors along a new dim.
Tensor stack(ArrayRef<Tensor> tensors, int64_t dim = 0);
Tensor& stack_out(Tensor& out, ArrayRef<Tensor> tensors, int64_t dim = 0);
Tensor hstack(ArrayRef<Tensor> tensors);
Tensor vstack(ArrayRef<Tensor> tensors);
Tensor dstack(ArrayRef<Tensor> tensors);
Tensor column_stack(ArrayRef<Tensor> tensors);
/// Views with at least 1, 2 or 3 dims (NumPy's rules for where the new dims go).
Tensor atleast_1d(const Tensor& t);
Tensor atleast_2d(const Tensor& t);
Tensor atleast_3d(const Tensor& t);

// ---- triangles (triangle_ops.cpp) ----
/// The lower triangle of the last two dims (elements with j - i <= diagonal), the rest zero.
Tensor tril(const Tensor& x, int64_t diagonal = 0);
/// The upper triangle of the last two dims (elements with j - i >= diagonal), the rest zero.
Tensor triu(const Tensor& x, int64_t diagonal = 0);
Tensor& tril_(Tensor& x, int64_t diagonal = 0);
Tensor& triu_(Tensor& x, int64_t diagonal = 0);
Tensor& tril_out(Tensor& out, const Tensor& x, int64_t diagonal = 0);
Tensor& triu_out(Tensor& out, const Tensor& x, int64_t diagonal = 0);

// ---- operators ----
#define EMBER_DECL_OPERATOR(sym, fn)                                                   \
  inline Tensor operator sym(const Tensor& a, const Tensor& b) { return fn(a, b); }    \
  inline Tensor operator sym(const Tensor& a, const Scalar& b) { return fn(a, b); }    \
  inline Tensor operator sym(const Scalar& a, const Tensor& b) { return fn(a, b); }
EMBER_DECL_OPERATOR(*, mul)
EMBER_DECL_OPERATOR(%, remainder)
EMBER_DECL_OPERATOR(&, bitwise_and)
EMBER_DECL_OPERATOR(|, bitwise_or)
EMBER_DECL_OPERATOR(^, bitwise_xor)
EMBER_DECL_OPERATOR(<<, bitwise_left_shift)
EMBER_DECL_OPERATOR(>>, bitwise_right_shift)
EMBER_DECL_OPERATOR(==, eq)
EMBER_DECL_OPERATOR(!=, ne)
EMBER_DECL_OPERATOR(<, lt)
EMBER_DECL_OPERATOR(<=, le)
EMBER_DECL_OPERATOR(>, gt)
EMBER_DECL_OPERATOR(>=, ge)
#undef EMBER_DECL_OPERATOR
inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
inline Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
Tensor operator-(const Scalar& a, const Tensor& b);
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
Tensor operator/(const Scalar& a, const Tensor& b);

}  // namespace ember
