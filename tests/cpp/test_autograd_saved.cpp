// Saved tensors: every tensor a backward rule reads is version-checked, so an in-place change
// between forward and backward raises (as PyTorch 1.13 does for the tensors it saves); saved
// outputs keep their forward-AD tangent (forward-over-reverse); node names follow PyTorch's.

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "ember/autograd.h"
#include "ember/ember.h"

using namespace ember;
namespace ag = ember::autograd;
namespace fwd = ember::autograd::forward_ad;

namespace {

Tensor rnd(std::vector<int64_t> shape, uint64_t seed) {
  manual_seed(seed);
  return rand(shape, TensorOptions().dtype(kDouble)).add(0.5);
}

/// Runs `backward` and expects the saved-tensor error (a RuntimeError-kind ember::Error).
void expect_modified_error(const std::function<void()>& backward) {
  try {
    backward();
    ADD_FAILURE() << "backward did not raise";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
    EXPECT_NE(std::string(e.what()).find("modified by an inplace operation"), std::string::npos)
        << e.what();
  }
}

/// Modifies `t` in place under no_grad (an optimizer step).
void step(Tensor& t) {
  NoGradGuard ng;
  t.mul_(2);
}

}  // namespace

TEST(AutogradSaved, LayerNormWeightAndBias) {
  for (int which = 0; which < 2; ++which) {
    Tensor x = rnd({4, 6}, 1).requires_grad_();
    Tensor w = rnd({6}, 2).requires_grad_(), b = rnd({6}, 3).requires_grad_();
    Tensor y = layer_norm(x, {6}, w, b);
    step(which == 0 ? w : b);
    expect_modified_error([&] { y.sum().backward(); });
  }
}

TEST(AutogradSaved, LayerNormWeightGradientUsesForwardWeight) {
  // Without a modification the gradient matches the composite formula.
  Tensor x = rnd({3, 5}, 4).requires_grad_();
  Tensor w = rnd({5}, 5).requires_grad_();
  Tensor g = rnd({3, 5}, 6);
  layer_norm(x, {5}, w).backward(g);
  Tensor x2 = x.detach().requires_grad_();
  Tensor w2 = w.detach().requires_grad_();
  Tensor mu = x2.mean({1}, true);
  Tensor xc = x2 - mu;
  Tensor ref = xc * rsqrt((xc * xc).mean({1}, true) + 1e-5) * w2;
  ref.backward(g);
  EXPECT_TRUE(allclose(x.grad(), x2.grad(), 1e-9, 1e-9));
  EXPECT_TRUE(allclose(w.grad(), w2.grad(), 1e-9, 1e-9));
}

TEST(AutogradSaved, BatchNormWeight) {
  Tensor x = rnd({4, 3, 5}, 7).requires_grad_();
  Tensor w = rnd({3}, 8).requires_grad_(), b = rnd({3}, 9).requires_grad_();
  Tensor y = batch_norm(x, w, b, {}, {}, /*training=*/true, 0.1, 1e-5);
  step(w);
  expect_modified_error([&] { y.sum().backward(); });
  // bias is not read by the rule (PyTorch does not save it either).
  Tensor y2 = batch_norm(x, w, b, {}, {}, true, 0.1, 1e-5);
  step(b);
  EXPECT_NO_THROW(y2.sum().backward());
}

TEST(AutogradSaved, BatchNormRunningStats) {
  // Evaluation reads the running statistics; training updates them (a second forward before
  // backward is fine, as in PyTorch).
  Tensor x = rnd({4, 3}, 10).requires_grad_();
  Tensor rm = zeros({3}, TensorOptions().dtype(kDouble)), rv = ones({3}, TensorOptions(kDouble));
  Tensor y = batch_norm(x, {}, {}, rm, rv, /*training=*/false, 0.1, 1e-5);
  {
    NoGradGuard ng;
    rm.add_(1);
  }
  expect_modified_error([&] { y.sum().backward(); });
  Tensor y1 = batch_norm(x, {}, {}, rm, rv, true, 0.1, 1e-5);
  Tensor y2 = batch_norm(x, {}, {}, rm, rv, true, 0.1, 1e-5);
  EXPECT_NO_THROW((y1 + y2).sum().backward());
}

TEST(AutogradSaved, GroupNormWeight) {
  Tensor x = rnd({2, 4, 3}, 11).requires_grad_();
  Tensor w = rnd({4}, 12).requires_grad_(), b = rnd({4}, 13).requires_grad_();
  Tensor y = group_norm(x, 2, w, b);
  step(w);
  expect_modified_error([&] { y.sum().backward(); });
  Tensor y2 = group_norm(x, 2, w, b);
  step(b);
  EXPECT_NO_THROW(y2.sum().backward());
}

TEST(AutogradSaved, NormInputModified) {
  Tensor x0 = rnd({4, 6}, 14).requires_grad_();
  Tensor x = x0 * 1;
  Tensor y = layer_norm(x, {6});
  step(x);
  expect_modified_error([&] { y.sum().backward(); });
}

TEST(AutogradSaved, BinaryCrossEntropyWeight) {
  Tensor x = rnd({5}, 15).sigmoid().detach().requires_grad_();
  Tensor t = rnd({5}, 16).sigmoid();
  Tensor w = rnd({5}, 17);
  Tensor y = binary_cross_entropy(x, t, w);
  step(w);
  expect_modified_error([&] { y.backward(); });
}

TEST(AutogradSaved, IndexTensors) {
  Tensor x = rnd({5}, 18).requires_grad_();
  Tensor i = tensor(std::vector<int64_t>{0, 2});
  Tensor y = x.index({i});
  {
    NoGradGuard ng;
    i.add_(1);
  }
  expect_modified_error([&] { y.sum().backward(); });

  Tensor i2 = tensor(std::vector<int64_t>{0, 2});
  Tensor v = rnd({2}, 19).requires_grad_();
  Tensor z = x * 1;
  z.index_put_({i2}, v);
  {
    NoGradGuard ng;
    i2.add_(1);
  }
  expect_modified_error([&] { z.sum().backward(); });
}

TEST(AutogradSaved, SavedOutputModified) {
  Tensor x = rnd({3}, 20).requires_grad_();
  Tensor y = x.exp();
  step(y);
  expect_modified_error([&] { y.sum().backward(); });
}

TEST(AutogradSaved, ForwardOverReverseTanh) {
  // d/dx of grad(sum(tanh x)) along v: the Hessian-vector product -2 tanh(x) (1 - tanh^2 x) v.
  Tensor x0 = rnd({4}, 21).requires_grad_();
  Tensor v = rnd({4}, 22);
  Tensor hvp;
  {
    fwd::dual_level level;
    Tensor x = fwd::make_dual(x0, v);
    Tensor g = ag::grad({x.tanh().sum()}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
    hvp = fwd::unpack_dual(g).second;
    ASSERT_TRUE(hvp.defined());
    hvp = hvp.detach();
  }
  Tensor t = x0.detach().tanh();
  EXPECT_TRUE(allclose(hvp, -2.0 * t * (1 - t * t) * v, 1e-10, 1e-12));
}

TEST(AutogradSaved, NodeNames) {
  Tensor x = rnd({2, 3}, 23).requires_grad_();
  Tensor m = rnd({3, 4}, 24).requires_grad_();
  EXPECT_EQ((x + x).grad_fn()->name(), "AddBackward0");
  EXPECT_EQ((x * x).grad_fn()->name(), "MulBackward0");
  EXPECT_EQ(x.sum().grad_fn()->name(), "SumBackward0");
  EXPECT_EQ(x.sum({1}).grad_fn()->name(), "SumBackward1");
  EXPECT_EQ(x.mean().grad_fn()->name(), "MeanBackward0");
  EXPECT_EQ(x.mean({1}).grad_fn()->name(), "MeanBackward1");
  EXPECT_EQ(x.tanh().grad_fn()->name(), "TanhBackward0");
  EXPECT_EQ(x.mm(m).grad_fn()->name(), "MmBackward0");
  EXPECT_EQ(x.view({6}).grad_fn()->name(), "ViewBackward0");
  EXPECT_EQ(layer_norm(x, {3}).grad_fn()->name(), "NativeLayerNormBackward0");
  EXPECT_EQ((x * 1).grad_fn()->next_edges()[0].function->name(), "AccumulateGrad");
}
