// Elementwise ops on nested tensors: one ember op on the packed buffer (Note [Nested tensor
// layout]), so the cost is that of the dense op on sum(numel_i) elements and autograd is the
// dense op's.
#include <string>

#include "ember/error.h"
#include "ember/factory.h"
#include "ember/nested.h"
#include "ember/ops.h"
#include "ember/tensor_extra.h"

namespace ember::nested {

NestedTensor map_elementwise(const NestedTensor& nt,
                             const std::function<Tensor(const Tensor&)>& fn) {
  EMBER_CHECK(nt.defined(), "[nested] undefined nested tensor");
  Tensor r = fn(nt.buffer());
  EMBER_CHECK(r.defined() && r.dim() == 1 && r.numel() == nt.numel(),
              "[nested] an elementwise function must keep the buffer's shape (", nt.numel(),
              "), got ", r.defined() ? r.sizes() : IntArrayRef{});
  return nt.with_buffer(std::move(r));
}

#define EMBER_NESTED_UNARY(op)                                               \
  NestedTensor op(const NestedTensor& x) {                                   \
    return map_elementwise(x, [](const Tensor& b) { return ember::op(b); }); \
  }
EMBER_NESTED_UNARY(relu)
EMBER_NESTED_UNARY(tanh)
EMBER_NESTED_UNARY(sigmoid)
EMBER_NESTED_UNARY(neg)
EMBER_NESTED_UNARY(abs)
EMBER_NESTED_UNARY(exp)
EMBER_NESTED_UNARY(log)
EMBER_NESTED_UNARY(sqrt)
EMBER_NESTED_UNARY(sin)
EMBER_NESTED_UNARY(cos)
EMBER_NESTED_UNARY(silu)
#undef EMBER_NESTED_UNARY

NestedTensor gelu(const NestedTensor& x, std::string_view approximate) {
  return map_elementwise(x, [&](const Tensor& b) { return ember::gelu(b, approximate); });
}

NestedTensor clone(const NestedTensor& x) {
  return map_elementwise(x, [](const Tensor& b) { return b.clone(); });
}

NestedTensor detach(const NestedTensor& x) {
  return map_elementwise(x, [](const Tensor& b) { return b.detach(); });
}

NestedTensor to(const NestedTensor& x, ScalarType dtype) {
  return map_elementwise(x, [&](const Tensor& b) { return b.to(dtype); });
}

namespace {

// Nested-with-nested binary ops pair components one to one; torch 1.13 broadcasts neither
// between components nor within them.
void check_same(const NestedTensor& a, const NestedTensor& b, const char* op) {
  EMBER_CHECK(a.defined() && b.defined(), "[", op, "] undefined nested tensor");
  EMBER_CHECK(same_structure(a, b), "[", op, "] ", op,
              " does not support broadcasting when given a NestedTensor (", a.num_components(),
              " components of dim ", a.dim(), " vs ", b.num_components(), " of dim ", b.dim(),
              ", or different component sizes)");
}

// A dense operand must be 0-dim (torch 1.13 takes it as a scalar).
void check_dense(const Tensor& b, const char* op) {
  EMBER_CHECK(b.defined() && b.dim() == 0, "[", op,
              "] Expected both self and other to be nested, but got a nested self and "
              "non-nested other of shape ",
              b.defined() ? b.sizes() : IntArrayRef{}, " (only a 0-dim tensor is accepted)");
}

}  // namespace

NestedTensor add(const NestedTensor& a, const NestedTensor& b, const Scalar& alpha) {
  check_same(a, b, "add");
  return a.with_buffer(ember::add(a.buffer(), b.buffer(), alpha));
}
NestedTensor sub(const NestedTensor& a, const NestedTensor& b, const Scalar& alpha) {
  check_same(a, b, "sub");
  return a.with_buffer(ember::sub(a.buffer(), b.buffer(), alpha));
}
NestedTensor mul(const NestedTensor& a, const NestedTensor& b) {
  check_same(a, b, "mul");
  return a.with_buffer(ember::mul(a.buffer(), b.buffer()));
}
NestedTensor div(const NestedTensor& a, const NestedTensor& b) {
  check_same(a, b, "div");
  return a.with_buffer(ember::div(a.buffer(), b.buffer()));
}

NestedTensor add(const NestedTensor& a, const Scalar& b, const Scalar& alpha) {
  return map_elementwise(a, [&](const Tensor& x) { return ember::add(x, b, alpha); });
}
NestedTensor sub(const NestedTensor& a, const Scalar& b, const Scalar& alpha) {
  return map_elementwise(a, [&](const Tensor& x) { return ember::sub(x, b, alpha); });
}
NestedTensor mul(const NestedTensor& a, const Scalar& b) {
  return map_elementwise(a, [&](const Tensor& x) { return ember::mul(x, b); });
}
NestedTensor div(const NestedTensor& a, const Scalar& b) {
  return map_elementwise(a, [&](const Tensor& x) { return ember::div(x, b); });
}
NestedTensor rsub(const NestedTensor& a, const Scalar& b) {
  return map_elementwise(a, [&](const Tensor& x) { return ember::rsub(x, b); });
}
NestedTensor rdiv(const NestedTensor& a, const Scalar& b) {
  return map_elementwise(a, [&](const Tensor& x) { return ember::true_divide(b, x); });
}

NestedTensor add(const NestedTensor& a, const Tensor& b, const Scalar& alpha) {
  check_dense(b, "add");
  return map_elementwise(a, [&](const Tensor& x) { return ember::add(x, b, alpha); });
}
NestedTensor sub(const NestedTensor& a, const Tensor& b, const Scalar& alpha) {
  check_dense(b, "sub");
  return map_elementwise(a, [&](const Tensor& x) { return ember::sub(x, b, alpha); });
}
NestedTensor mul(const NestedTensor& a, const Tensor& b) {
  check_dense(b, "mul");
  return map_elementwise(a, [&](const Tensor& x) { return ember::mul(x, b); });
}
NestedTensor div(const NestedTensor& a, const Tensor& b) {
  check_dense(b, "div");
  return map_elementwise(a, [&](const Tensor& x) { return ember::div(x, b); });
}

}  // namespace ember::nested
