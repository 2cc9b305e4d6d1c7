// Tensor methods that libtorch has and that forward to an ember function declared elsewhere:
// PyTorch's alias names, and the overloads that make libtorch's call forms pick the same meaning
// (`t.var(1)` reduces dim 1, `t.argsort(true)` is the stable sort). Each is one call, so the op
// keeps a single definition.

#include "ember/index_ops.h"
#include "ember/linalg.h"
#include "ember/ops.h"
#include "ember/random.h"
#include "ember/reduce.h"
#include "ember/sort.h"
#include "ember/tensor.h"
#include "ops/call_path.h"

namespace ember {

// ---- aliases ----

Tensor Tensor::absolute() const {
  EMBER_OP(absolute, *this);
  return abs();
}
Tensor& Tensor::absolute_() {
  EMBER_OP(absolute_, *this);
  return abs_();
}
Tensor Tensor::negative() const {
  EMBER_OP(negative, *this);
  return neg();
}
Tensor& Tensor::negative_() {
  EMBER_OP(negative_, *this);
  return neg_();
}
Tensor Tensor::multiply(const Tensor& other) const {
  EMBER_OP(multiply, *this, other);
  return mul(other);
}
Tensor Tensor::multiply(const Scalar& other) const {
  EMBER_OP(multiply_1, *this, other);
  return mul(other);
}
Tensor& Tensor::multiply_(const Tensor& other) {
  EMBER_OP(multiply_, *this, other);
  return mul_(other);
}
Tensor& Tensor::multiply_(const Scalar& other) {
  EMBER_OP(multiply__1, *this, other);
  return mul_(other);
}
Tensor Tensor::hardshrink(const Scalar& lambd) const { return ember::hardshrink(*this, lambd); }
Tensor Tensor::arctan2(const Tensor& other) const {
  EMBER_OP(arctan2, *this, other);
  return atan2(other);
}
Tensor& Tensor::arctan2_(const Tensor& other) {
  EMBER_OP(arctan2_, *this, other);
  return atan2_(other);
}
Tensor Tensor::subtract(const Tensor& other, const Scalar& alpha) const {
  EMBER_OP(subtract, *this, other, alpha);
  return sub(other, alpha);
}
Tensor Tensor::subtract(const Scalar& other, const Scalar& alpha) const {
  EMBER_OP(subtract_1, *this, other, alpha);
  return sub(other, alpha);
}
Tensor& Tensor::subtract_(const Tensor& other, const Scalar& alpha) {
  EMBER_OP(subtract_, *this, other, alpha);
  return sub_(other, alpha);
}
Tensor& Tensor::subtract_(const Scalar& other, const Scalar& alpha) {
  EMBER_OP(subtract__1, *this, other, alpha);
  return sub_(other, alpha);
}
Tensor Tensor::divide(const Tensor& other, std::optional<std::string_view> rounding_mode) const {
  EMBER_OP(divide, *this, other, rounding_mode);
  return div(other, rounding_mode);
}
Tensor Tensor::divide(const Scalar& other, std::optional<std::string_view> rounding_mode) const {
  EMBER_OP(divide_1, *this, other, rounding_mode);
  return div(other, rounding_mode);
}
Tensor& Tensor::divide_(const Tensor& other, std::optional<std::string_view> rounding_mode) {
  EMBER_OP(divide_, *this, other, rounding_mode);
  return div_(other, rounding_mode);
}
Tensor& Tensor::divide_(const Scalar& other, std::optional<std::string_view> rounding_mode) {
  EMBER_OP(divide__1, *this, other, rounding_mode);
  return div_(other, rounding_mode);
}
Tensor Tensor::greater(const Scalar& other) const {
  EMBER_OP(greater, *this, other);
  return gt(other);
}
Tensor Tensor::greater(const Tensor& other) const {
  EMBER_OP(greater_1, *this, other);
  return gt(other);
}
Tensor& Tensor::greater_(const Scalar& other) {
  EMBER_OP(greater_, *this, other);
  return gt_(other);
}
Tensor& Tensor::greater_(const Tensor& other) {
  EMBER_OP(greater__1, *this, other);
  return gt_(other);
}
Tensor Tensor::less(const Scalar& other) const {
  EMBER_OP(less, *this, other);
  return lt(other);
}
Tensor Tensor::less(const Tensor& other) const {
  EMBER_OP(less_1, *this, other);
  return lt(other);
}
Tensor& Tensor::less_(const Scalar& other) {
  EMBER_OP(less_, *this, other);
  return lt_(other);
}
Tensor& Tensor::less_(const Tensor& other) {
  EMBER_OP(less__1, *this, other);
  return lt_(other);
}
Tensor Tensor::not_equal(const Scalar& other) const {
  EMBER_OP(not_equal, *this, other);
  return ne(other);
}
Tensor Tensor::not_equal(const Tensor& other) const {
  EMBER_OP(not_equal_1, *this, other);
  return ne(other);
}
Tensor& Tensor::not_equal_(const Scalar& other) {
  EMBER_OP(not_equal_, *this, other);
  return ne_(other);
}
Tensor& Tensor::not_equal_(const Tensor& other) {
  EMBER_OP(not_equal__1, *this, other);
  return ne_(other);
}

// ---- reductions: libtorch's extra overloads ----

Tensor Tensor::var(int dim) const { return ember::var(*this, dim); }
Tensor Tensor::std(int dim) const { return ember::std(*this, dim); }
Tensor Tensor::norm(const std::optional<Scalar>& p, ScalarType dtype) const {
  return ember::norm(*this, p, dtype);
}
Tensor Tensor::count_nonzero(std::optional<int64_t> dim) const {
  return ember::count_nonzero(*this, dim);
}

// ---- sorting and order statistics ----

Tensor Tensor::argsort(bool stable, int64_t dim, bool descending) const {
  return ember::argsort(*this, stable, dim, descending);
}
Tensor Tensor::quantile(const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                        std::string_view interpolation) const {
  return ember::quantile(*this, q, dim, keepdim, interpolation);
}
Tensor Tensor::quantile(double q, std::optional<int64_t> dim, bool keepdim,
                        std::string_view interpolation) const {
  return ember::quantile(*this, q, dim, keepdim, interpolation);
}
Tensor Tensor::nanquantile(const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                           std::string_view interpolation) const {
  return ember::nanquantile(*this, q, dim, keepdim, interpolation);
}
Tensor Tensor::nanquantile(double q, std::optional<int64_t> dim, bool keepdim,
                           std::string_view interpolation) const {
  return ember::nanquantile(*this, q, dim, keepdim, interpolation);
}

// ---- indexing ----

Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src,
                       std::string_view reduce) const {
  return ember::scatter(*this, dim, index, src, reduce);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Scalar& value,
                       std::string_view reduce) const {
  return ember::scatter(*this, dim, index, value, reduce);
}
Tensor Tensor::index_fill(int64_t dim, const Tensor& index, const Tensor& value) const {
  return ember::index_fill(*this, dim, index, value);
}
std::vector<Tensor> Tensor::nonzero_numpy() const { return ember::nonzero_numpy(*this); }

// ---- triangles and linear algebra ----

Tensor Tensor::tril(int64_t diagonal) const { return ember::tril(*this, diagonal); }
Tensor Tensor::triu(int64_t diagonal) const { return ember::triu(*this, diagonal); }
Tensor& Tensor::tril_(int64_t diagonal) { return ember::tril_(*this, diagonal); }
Tensor& Tensor::triu_(int64_t diagonal) { return ember::triu_(*this, diagonal); }
Tensor Tensor::cholesky_inverse(bool upper) const { return ember::cholesky_inverse(*this, upper); }
Tensor Tensor::cholesky_solve(const Tensor& input2, bool upper) const {
  return ember::cholesky_solve(*this, input2, upper);
}
std::tuple<Tensor, Tensor> Tensor::triangular_solve(const Tensor& A, bool upper, bool transpose,
                                                    bool unitriangular) const {
  return ember::triangular_solve(*this, A, upper, transpose, unitriangular);
}

// ---- random ----

Tensor Tensor::bernoulli(double p, std::optional<Generator> gen) const {
  return ember::bernoulli(*this, p, std::move(gen));
}
Tensor Tensor::multinomial(int64_t num_samples, bool replacement,
                           std::optional<Generator> gen) const {
  return ember::multinomial(*this, num_samples, replacement, std::move(gen));
}

}  // namespace ember
