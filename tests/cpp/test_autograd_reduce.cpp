// Autograd rules of the reductions, scans, sorts and shape ops from C++: exact gradients where
// they are easy to derive (sums, ties, zeros in prod, cat slabs), gradcheck with forward AD for
// the rest. The Python tests compare the same rules against torch 1.13.
#include <gtest/gtest.h>

#include <vector>

#include "ember/ember.h"

using namespace ember;
using autograd::variable_list;

namespace {
std::vector<double> values(const Tensor& t) {
  Tensor c = t.detach().to(kDouble).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

Tensor leaf(std::vector<double> v, std::vector<int64_t> shape) {
  return tensor(v, TensorOptions(kDouble)).reshape(shape).requires_grad_();
}

Tensor grad_of(const Tensor& out, const Tensor& x) {
  return autograd::grad({out}, {x}, {ones_like(out)})[0];
}

// gradcheck with forward AD (second derivatives are compared with torch's in the Python tests).
bool check(const std::function<Tensor(const Tensor&)>& f, const Tensor& x) {
  auto fn = [&](const variable_list& in) { return variable_list{f(in[0])}; };
  autograd::GradcheckOptions o;
  o.check_forward_ad = true;
  return autograd::gradcheck(fn, {x}, o);
}
}  // namespace

TEST(AutogradReduce, SumMeanBroadcastBack) {
  Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(values(grad_of(x.sum({1}), x)), std::vector<double>(6, 1.0));
  EXPECT_EQ(values(grad_of(x.mean({0}, true), x)), std::vector<double>(6, 0.5));
  EXPECT_EQ(values(grad_of(x.t().sum(), x)), std::vector<double>(6, 1.0));
}

TEST(AutogradReduce, MaxTiesShareTheGradient) {
  Tensor x = leaf({1, 3, 3, 2}, {4});
  EXPECT_EQ(values(grad_of(x.max(), x)), (std::vector<double>{0, 0.5, 0.5, 0}));
  EXPECT_EQ(values(grad_of(x.amax({0}), x)), (std::vector<double>{0, 0.5, 0.5, 0}));
  // max along a dim selects the first index only
  EXPECT_EQ(values(grad_of(std::get<0>(x.max(0)), x)), (std::vector<double>{0, 1, 0, 0}));
}

TEST(AutogradReduce, ProdWithZeros) {
  Tensor x = leaf({2, 0, 3, 4}, {4});
  EXPECT_EQ(values(grad_of(x.prod(), x)), (std::vector<double>{0, 24, 0, 0}));
  Tensor y = leaf({0, 0, 3, 4}, {4});
  EXPECT_EQ(values(grad_of(y.prod(), y)), (std::vector<double>{0, 0, 0, 0}));
  Tensor z = leaf({2, 0, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(values(grad_of(z.prod(1), z)), (std::vector<double>{0, 6, 0, 30, 24, 20}));
}

TEST(AutogradReduce, NormOfZeroHasZeroSubgradient) {
  Tensor x = leaf({0, 0, 3, 4}, {2, 2});
  Tensor g = grad_of(linalg::vector_norm(x, 2, IntArrayRef{1}), x);
  EXPECT_EQ(values(g), (std::vector<double>{0, 0, 0.6, 0.8}));
}

TEST(AutogradReduce, CatAndStackSlabs) {
  Tensor a = leaf({1, 2}, {1, 2}), b = leaf({3, 4, 5, 6}, {2, 2});
  Tensor out = cat({a, b}, 0);
  auto g = autograd::grad({out}, {a, b}, {arange(6, kDouble).reshape({3, 2})});
  EXPECT_EQ(values(g[0]), (std::vector<double>{0, 1}));
  EXPECT_EQ(values(g[1]), (std::vector<double>{2, 3, 4, 5}));
}

TEST(AutogradReduce, IndicesAndNonDifferentiableOutputs) {
  Tensor x = leaf({1, 3, 2, 5}, {2, 2});
  EXPECT_FALSE(std::get<1>(x.max(1)).requires_grad());
  EXPECT_FALSE(std::get<1>(x.sort(1)).requires_grad());
  EXPECT_FALSE(x.argmax().requires_grad());
  EXPECT_FALSE(histc(x, 4).requires_grad());
  Tensor u = std::get<0>(_unique2(x, true, false, false));
  EXPECT_TRUE(u.requires_grad());
  EXPECT_ANY_THROW(autograd::grad({u.sum()}, {x}));
}

TEST(AutogradReduce, InPlaceTrilAndCumsum) {
  Tensor x = leaf({1, 2, 3, 4}, {2, 2});
  Tensor y = x.mul(2.0);
  tril_(y);
  EXPECT_EQ(values(grad_of(y, x)), (std::vector<double>{2, 0, 2, 2}));
  Tensor z = x.mul(1.0);
  z.cumsum_(1);
  EXPECT_EQ(values(grad_of(z, x)), (std::vector<double>{2, 1, 2, 1}));
}

TEST(AutogradReduce, Gradcheck) {
  Tensor x = (arange(12, kDouble).reshape({3, 4}) * 0.37 - 1.9).remainder(2.3).requires_grad_();
  EXPECT_TRUE(check([](const Tensor& t) { return t.var(IntArrayRef{1}, true); }, x));
  EXPECT_TRUE(check([](const Tensor& t) { return t.logsumexp({0}); }, x));
  EXPECT_TRUE(check([](const Tensor& t) { return cumprod(t, 1); }, x));
  EXPECT_TRUE(check([](const Tensor& t) { return softmax(t, 1); }, x));
  EXPECT_TRUE(check([](const Tensor& t) { return log_softmax(t, 0); }, x));
  EXPECT_TRUE(check([](const Tensor& t) { return std::get<0>(t.sort(1)); }, x));
  EXPECT_TRUE(check([](const Tensor& t) { return t.repeat({2, 1}); }, x));
  EXPECT_TRUE(check([](const Tensor& t) { return pad(t, {1, 2}, "constant", 0.5); }, x));
  EXPECT_TRUE(check([](const Tensor& t) { return diag_embed(t); }, x));
}
