// The public functions and Tensor methods of the elementwise op families in op_list.h, all
// generated from the X-macro lists onto the generic path (ops/elementwise_core.h).
#include "ember/ops.h"
#include "ops/elementwise/elementwise_core.h"

namespace ember {

#define EMBER_DEFINE_UNARY(op)                                      \
  Tensor op(const Tensor& x) { return elementwise(OpId::op, {x}); } \
  Tensor& op##_(Tensor& x) {                                        \
    elementwise(OpId::op, {x}, {}, OutMode::InPlace);               \
    return x;                                                       \
  }                                                                 \
  Tensor& op##_out(Tensor& out, const Tensor& x) {                  \
    elementwise(OpId::op, {x}, {}, OutMode::Out, &out);             \
    return out;                                                     \
  }                                                                 \
  Tensor Tensor::op() const { return ember::op(*this); }            \
  Tensor& Tensor::op##_() {                                         \
    elementwise(OpId::op, {*this}, {}, OutMode::InPlace);           \
    return *this;                                                   \
  }
EMBER_UNARY_OPS(EMBER_DEFINE_UNARY)
#undef EMBER_DEFINE_UNARY

#define EMBER_DEFINE_PRED(op)                                       \
  Tensor op(const Tensor& x) { return elementwise(OpId::op, {x}); } \
  Tensor& op##_out(Tensor& out, const Tensor& x) {                  \
    elementwise(OpId::op, {x}, {}, OutMode::Out, &out);             \
    return out;                                                     \
  }                                                                 \
  Tensor Tensor::op() const { return ember::op(*this); }
EMBER_UNARY_PREDICATE_OPS(EMBER_DEFINE_PRED)
#undef EMBER_DEFINE_PRED

namespace {
// Tensor-scalar forms: pow has scalar-exponent special cases; the rest wrap the scalar.
Tensor binary_scalar(OpId op, const Tensor& a, const Scalar& b, OutMode mode = OutMode::Functional,
                     Tensor* out = nullptr) {
  if (op == OpId::pow) return pow_tensor_scalar(a, b, mode, out);
  if (op == OpId::float_power) {
    // float_power(x, s) is pow in float64/complex128, with pow's scalar special cases.
    ScalarType dt = (a.is_complex() || b.isComplex()) ? kComplexDouble : kDouble;
    const char* name = mode == OutMode::InPlace ? "float_power_" : "float_power";
    Tensor t = mode == OutMode::Out ? *out : a;
    EMBER_CHECK(mode == OutMode::Functional || t.dtype() == dt, "[", name, "] the ",
                mode == OutMode::Out ? "output" : "base", " given to ", name, " has dtype ",
                t.dtype(), " but the operation's result requires dtype ", dt);
    return pow_tensor_scalar(mode == OutMode::InPlace ? a : a.to(dt), b, mode, out);
  }
  const bool like = op == OpId::mul || op == OpId::add || op == OpId::sub;
  return elementwise(op, {a, like ? wrap_scalar_like(b, a) : wrap_scalar(b)}, {}, mode, out);
}
}  // namespace

#define EMBER_DEFINE_BINARY(op)                                                         \
  Tensor op(const Tensor& a, const Tensor& b) { return elementwise(OpId::op, {a, b}); } \
  Tensor op(const Tensor& a, const Scalar& b) { return binary_scalar(OpId::op, a, b); } \
  Tensor op(const Scalar& a, const Tensor& b) {                                         \
    return elementwise(OpId::op, {wrap_scalar(a), b});                                  \
  }                                                                                     \
  Tensor& op##_out(Tensor& out, const Tensor& a, const Tensor& b) {                     \
    elementwise(OpId::op, {a, b}, {}, OutMode::Out, &out);                              \
    return out;                                                                         \
  }                                                                                     \
  Tensor& op##_out(Tensor& out, const Tensor& a, const Scalar& b) {                     \
    binary_scalar(OpId::op, a, b, OutMode::Out, &out);                                  \
    return out;                                                                         \
  }                                                                                     \
  Tensor Tensor::op(const Tensor& other) const { return ember::op(*this, other); }      \
  Tensor Tensor::op(const Scalar& other) const { return ember::op(*this, other); }      \
  Tensor& Tensor::op##_(const Tensor& other) {                                          \
    elementwise(OpId::op, {*this, other}, {}, OutMode::InPlace);                        \
    return *this;                                                                       \
  }                                                                                     \
  Tensor& Tensor::op##_(const Scalar& other) {                                          \
    binary_scalar(OpId::op, *this, other, OutMode::InPlace);                            \
    return *this;                                                                       \
  }
EMBER_BINARY_OPS(EMBER_DEFINE_BINARY)
EMBER_COMPARISON_OPS(EMBER_DEFINE_BINARY)
#undef EMBER_DEFINE_BINARY

// ---- add / sub: a + alpha * b ----
namespace {
OpParams alpha_params(const Tensor& a, const Tensor& b, const Scalar& alpha, const char* op) {
  OpParams p;
  p.s[0] = alpha;
  EMBER_CHECK(
      !(std::string_view(op).starts_with("sub") && (a.dtype() == kBool || b.dtype() == kBool)), "[",
      op,
      "] Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
      "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  if (alpha.isIntegral(false)) return p;  // an integer alpha suits every dtype
  ScalarType rt = result_type({a, b});
  EMBER_CHECK(!(alpha.isBoolean() && rt != kBool), "[", op,
              "] Boolean alpha only supported for Boolean results.");
  EMBER_CHECK(!(alpha.isFloatingPoint() && isIntegralType(rt, true)), "[", op,
              "] for integral input tensors, argument alpha must not be a floating point number");
  EMBER_CHECK(!(alpha.isComplex() && !isComplexType(rt)), "[", op,
              "] for non-complex input tensors, argument alpha must not be a complex number");
  return p;
}
}  // namespace

#define EMBER_DEFINE_ALPHA_OP(op)                                                                \
  Tensor op(const Tensor& a, const Tensor& b, const Scalar& alpha) {                             \
    return elementwise(OpId::op, {a, b}, alpha_params(a, b, alpha, #op));                        \
  }                                                                                              \
  Tensor op(const Tensor& a, const Scalar& b, const Scalar& alpha) {                             \
    Tensor w = wrap_scalar_like(b, a);                                                           \
    return elementwise(OpId::op, {a, w}, alpha_params(a, w, alpha, #op));                        \
  }                                                                                              \
  Tensor& op##_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {         \
    elementwise(OpId::op, {a, b}, alpha_params(a, b, alpha, #op), OutMode::Out, &out);           \
    return out;                                                                                  \
  }                                                                                              \
  Tensor Tensor::op(const Tensor& other, const Scalar& alpha) const {                            \
    return ember::op(*this, other, alpha);                                                       \
  }                                                                                              \
  Tensor Tensor::op(const Scalar& other, const Scalar& alpha) const {                            \
    return ember::op(*this, other, alpha);                                                       \
  }                                                                                              \
  Tensor& Tensor::op##_(const Tensor& other, const Scalar& alpha) {                              \
    elementwise(OpId::op, {*this, other}, alpha_params(*this, other, alpha, #op "_"),            \
                OutMode::InPlace);                                                               \
    return *this;                                                                                \
  }                                                                                              \
  Tensor& Tensor::op##_(const Scalar& other, const Scalar& alpha) {                              \
    Tensor w = wrap_scalar_like(other, *this);                                                   \
    elementwise(OpId::op, {*this, w}, alpha_params(*this, w, alpha, #op "_"), OutMode::InPlace); \
    return *this;                                                                                \
  }
EMBER_DEFINE_ALPHA_OP(add)
EMBER_DEFINE_ALPHA_OP(sub)
#undef EMBER_DEFINE_ALPHA_OP

Tensor operator-(const Scalar& a, const Tensor& b) { return sub(wrap_scalar(a), b); }

}  // namespace ember
