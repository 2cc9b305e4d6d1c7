// Nested tensors through the C++ API (include/ember/nested.h), on hand-derived values and
// against the same computation done component by component on dense tensors.
#include <gtest/gtest.h>

#include <vector>

#include "ember/ember.h"
#include "ember/nested.h"

using namespace ember;
namespace nt = ember::nested;

namespace {

std::vector<float> vals(const Tensor& t) {
  Tensor c = t.detach().to(kFloat).contiguous();
  const float* p = c.data_ptr<float>();
  return std::vector<float>(p, p + c.numel());
}

// Components (2, 3) = 0..5 and (1, 3) = 6..8, and one of (0, 3).
std::vector<Tensor> ragged() {
  return {arange(0, 6).to(kFloat).view({2, 3}), arange(6, 9).to(kFloat).view({1, 3}),
          zeros({0, 3})};
}

void expect_close(const Tensor& a, const Tensor& b, double tol = 1e-5) {
  ASSERT_EQ(a.sizes(), b.sizes());
  EXPECT_TRUE(allclose(a.detach().to(kDouble), b.detach().to(kDouble), tol, tol));
}

}  // namespace

TEST(Nested, LayoutAndMetadata) {
  nt::NestedTensor x = nt::nested_tensor(ragged());
  EXPECT_EQ(x.num_components(), 3);
  EXPECT_EQ(x.dim(), 3);
  EXPECT_EQ(x.numel(), 9);
  EXPECT_EQ(x.dtype(), kFloat);
  EXPECT_EQ(x.offsets(), (std::vector<int64_t>{0, 6, 9}));
  EXPECT_EQ(vals(x.buffer()), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(x.component_sizes(1), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(x.size(0), 3);
  EXPECT_EQ(x.size(2), 3);
  EXPECT_EQ(x.size(-1), 3);
  EXPECT_THROW(x.size(1), Error);       // irregular
  EXPECT_THROW(x.size(3), IndexError);  // out of range
  EXPECT_EQ(x[1].sizes(), IntArrayRef({1, 3}));
  EXPECT_EQ(vals(x[-3]), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(x[2].numel(), 0);
  EXPECT_THROW(x[3], IndexError);
  EXPECT_TRUE(x.has_uniform_trailing_dims());
  EXPECT_EQ(x.packed_rows().sizes(), IntArrayRef({3, 3}));
  // The buffer is a copy: writing the source leaves it alone.
  std::vector<Tensor> src = ragged();
  nt::NestedTensor y = nt::nested_tensor(src);
  src[0].fill_(100);
  EXPECT_EQ(vals(y[0])[0], 0.f);
  // Components are views of the buffer.
  EXPECT_TRUE(y[1].is_alias_of(y.buffer()));
}

TEST(Nested, ConstructionRules) {
  // dtype and device default to the first component's; the others are converted.
  nt::NestedTensor m = nt::nested_tensor({arange(3).to(kDouble), ones({2}, kFloat)});
  EXPECT_EQ(m.dtype(), kDouble);
  EXPECT_EQ(nt::nested_tensor({arange(3)}, kFloat).dtype(), kFloat);
  // Different ranks are an error.
  EXPECT_THROW(nt::nested_tensor({zeros({2}), zeros({2, 3})}), Error);
  // No components: one dim, zero components.
  nt::NestedTensor e = nt::nested_tensor({});
  EXPECT_EQ(e.dim(), 1);
  EXPECT_EQ(e.size(0), 0);
  EXPECT_EQ(e.to_padded_tensor(0).sizes(), IntArrayRef({0}));
  // 0-dim components.
  nt::NestedTensor s = nt::nested_tensor({scalar_tensor(1.5), scalar_tensor(2.5)});
  EXPECT_EQ(s.dim(), 1);
  EXPECT_EQ(vals(s.to_padded_tensor(0)), (std::vector<float>{1.5f, 2.5f}));
  // A buffer that does not match the sizes.
  Tensor sizes = tensor<int64_t>({2, 3}).view({1, 2});
  EXPECT_THROW(nt::NestedTensor(zeros({5}), sizes), Error);
  EXPECT_THROW(nt::NestedTensor(zeros({2, 3}), sizes), Error);
  // requires_grad makes the buffer a leaf requiring grad; ints cannot.
  EXPECT_TRUE(nt::nested_tensor(ragged(), std::nullopt, true).requires_grad());
  EXPECT_THROW(nt::nested_tensor({arange(3)}, std::nullopt, true), Error);
}

TEST(Nested, ToPaddedTensor) {
  nt::NestedTensor x = nt::nested_tensor(ragged());
  Tensor p = x.to_padded_tensor(-1);
  ASSERT_EQ(p.sizes(), IntArrayRef({3, 2, 3}));
  EXPECT_EQ(vals(p),
            (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, -1, -1, -1, -1, -1, -1, -1, -1, -1}));
  // output_size: larger in every dim.
  Tensor q = nt::to_padded_tensor(x, 0.5, std::vector<int64_t>{4, 3, 4});
  ASSERT_EQ(q.sizes(), IntArrayRef({4, 3, 4}));
  expect_close(q.slice(0, 0, 3).slice(1, 0, 2).slice(2, 0, 3), where(p != -1, p, Scalar(0.5)));
  EXPECT_EQ(vals(q[3]), std::vector<float>(12, 0.5f));
  EXPECT_EQ(vals(q.select(2, 3)), std::vector<float>(12, 0.5f));
  EXPECT_THROW(nt::to_padded_tensor(x, 0, std::vector<int64_t>{3, 1, 3}), Error);
  EXPECT_THROW(nt::to_padded_tensor(x, 0, std::vector<int64_t>{3, 2}), Error);
  // Ragged in every dim (the per-component path).
  nt::NestedTensor r = nt::nested_tensor({ones({1, 2}), ones({2, 1}) * 2});
  EXPECT_EQ(vals(r.to_padded_tensor(0)), (std::vector<float>{1, 1, 0, 0, 2, 0, 2, 0}));
  // Integer padding of an integer tensor.
  nt::NestedTensor i = nt::nested_tensor({arange(2), arange(1)});
  Tensor ip = i.to_padded_tensor(7);
  EXPECT_EQ(ip.dtype(), kLong);
  EXPECT_EQ(ip[1][1].item<int64_t>(), 7);
}

TEST(Nested, FromPaddedRoundTrip) {
  manual_seed(0);
  Tensor padded = randn({3, 4, 5});
  // Row 0: 4 tokens, row 1: 1, row 2: none (all padding).
  Tensor mask =
      tensor<bool>({false, false, false, false, false, true, true, true, true, true, true, true})
          .view({3, 4});
  nt::NestedTensor x = nt::from_padded(padded, mask);
  EXPECT_EQ(x.num_components(), 3);
  EXPECT_EQ(x.component_sizes(0), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(x.component_sizes(1), (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(x.component_sizes(2), (std::vector<int64_t>{0, 5}));
  expect_close(x[1], padded[1].slice(0, 0, 1));
  EXPECT_EQ(x.packed_rows().sizes(), IntArrayRef({5, 5}));
  // Back to padded with output_size = the original shape: the kept rows come back, padding 0.
  Tensor back = x.to_padded_tensor(0, std::vector<int64_t>{3, 4, 5});
  expect_close(back, padded * logical_not(mask).unsqueeze(-1));
  // Gradients reach the padded input only at kept positions.
  Tensor pin = padded.clone().requires_grad_();
  nt::to_padded_tensor(nt::from_padded(pin, mask), 0).sum().backward();
  expect_close(pin.grad(), logical_not(mask).unsqueeze(-1).expand({3, 4, 5}).to(kFloat));
  // Bad masks.
  EXPECT_THROW(nt::from_padded(padded, mask.to(kLong)), TypeError);
  EXPECT_THROW(nt::from_padded(padded, mask.slice(1, 0, 3)), Error);
}

TEST(Nested, ElementwiseAndBinary) {
  nt::NestedTensor x = nt::nested_tensor(
      {arange(-3, 3).to(kFloat).view({2, 3}), arange(0, 3).to(kFloat).view({1, 3})});
  nt::NestedTensor y = nt::nested_tensor({ones({2, 3}) * 2, ones({1, 3}) * 4});
  auto each = [&](const nt::NestedTensor& r, auto f) {
    for (int64_t i = 0; i < x.num_components(); ++i) expect_close(r[i], f(x[i], y[i]));
  };
  each(nt::relu(x), [](const Tensor& a, const Tensor&) { return relu(a); });
  each(nt::tanh(x), [](const Tensor& a, const Tensor&) { return tanh(a); });
  each(nt::gelu(x, "tanh"), [](const Tensor& a, const Tensor&) { return gelu(a, "tanh"); });
  each(x + y, [](const Tensor& a, const Tensor& b) { return a + b; });
  each(x - y, [](const Tensor& a, const Tensor& b) { return a - b; });
  each(x * y, [](const Tensor& a, const Tensor& b) { return a * b; });
  each(x / y, [](const Tensor& a, const Tensor& b) { return a / b; });
  each(nt::add(x, y, 3), [](const Tensor& a, const Tensor& b) { return a + 3 * b; });
  each(x * 2, [](const Tensor& a, const Tensor&) { return a * 2; });
  each(1 - x, [](const Tensor& a, const Tensor&) { return 1 - a; });
  each(nt::map_elementwise(x, [](const Tensor& b) { return square(b); }),
       [](const Tensor& a, const Tensor&) { return a * a; });
  // Structures must match; a dense operand must be 0-dim.
  EXPECT_THROW(x + nt::nested_tensor({ones({2, 3})}), Error);
  EXPECT_THROW(nt::add(x, ones({3})), Error);
  each(nt::mul(x, scalar_tensor(3.0)), [](const Tensor& a, const Tensor&) { return a * 3; });
}

TEST(Nested, StructuredOps) {
  manual_seed(1);
  nt::NestedTensor x = nt::nested_tensor({randn({2, 4}), randn({3, 4}), randn({0, 4})});
  Tensor w = randn({5, 4}), b = randn({5});
  nt::NestedTensor l = nt::linear(x, w, b);
  for (int64_t i = 0; i < 3; ++i) expect_close(l[i], linear(x[i], w, b));
  nt::NestedTensor xm = nt::matmul(x, w.t());
  for (int64_t i = 0; i < 3; ++i) expect_close(xm[i], matmul(x[i], w.t()));
  nt::NestedTensor sm = nt::softmax(x, -1);
  for (int64_t i = 0; i < 3; ++i) expect_close(sm[i], softmax(x[i], -1));
  nt::NestedTensor sm1 = nt::softmax(x, 1);
  for (int64_t i = 0; i < 2; ++i) expect_close(sm1[i], softmax(x[i], 0));
  EXPECT_THROW(nt::softmax(x, 0), Error);
  nt::NestedTensor ln = nt::layer_norm(x, {4}, w[0], b.slice(0, 0, 4));
  for (int64_t i = 0; i < 3; ++i)
    expect_close(ln[i], layer_norm(x[i], {4}, w[0], b.slice(0, 0, 4)));
  EXPECT_THROW(nt::layer_norm(x, {5}), Error);
  nt::NestedTensor t = nt::transpose(x, 1, 2);
  EXPECT_EQ(t.component_sizes(1), (std::vector<int64_t>{4, 3}));
  expect_close(t[1], x[1].t());
  EXPECT_THROW(nt::transpose(x, 0, 1), Error);
  nt::NestedTensor bm = nt::bmm(x, t);
  for (int64_t i = 0; i < 3; ++i) expect_close(bm[i], mm(x[i], x[i].t()));
  EXPECT_THROW(nt::bmm(x, x), Error);
  EXPECT_THROW(nt::linear(x, randn({5, 3})), Error);
  EXPECT_THROW(nt::linear(nt::nested_tensor({randn({2, 3}), randn({2, 4})}), w), Error);
  // Dropout: identity in eval, zeros or 1/(1-p)-scaled values in training.
  expect_close(nt::dropout(x, 0.5, false).buffer(), x.buffer());
  Tensor d = nt::dropout(x, 0.5, true).buffer();
  EXPECT_TRUE(allclose(d * (d - 2 * x.buffer()), zeros_like(d), 1e-5, 1e-5));
}

TEST(Nested, GradientsReachInputs) {
  Tensor a = randn({2, 3}).requires_grad_(), c = randn({4, 3}).requires_grad_();
  Tensor w = randn({5, 3}).requires_grad_();
  nt::NestedTensor x = nt::as_nested_tensor({a, c});
  EXPECT_TRUE(x.requires_grad());
  nt::NestedTensor y = nt::relu(nt::linear(x, w)) * 2;
  y.to_padded_tensor(0).sum().backward();
  // Dense reference.
  Tensor a2 = a.detach().clone().requires_grad_(), c2 = c.detach().clone().requires_grad_();
  Tensor w2 = w.detach().clone().requires_grad_();
  ((relu(linear(a2, w2)) * 2).sum() + (relu(linear(c2, w2)) * 2).sum()).backward();
  expect_close(a.grad(), a2.grad());
  expect_close(c.grad(), c2.grad());
  expect_close(w.grad(), w2.grad());
  // nested_tensor detaches its inputs.
  EXPECT_FALSE(nt::nested_tensor({a, c}).requires_grad());
}

TEST(Nested, UnsupportedOpError) {
  try {
    nt::throw_unsupported("cumsum");
    FAIL();
  } catch (const NotImplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("cumsum is not supported for nested tensors"),
              std::string::npos);
  }
}
