// Autograd engine semantics in C++: values derived by hand (the Python suite compares against
// PyTorch 1.13 op by op).

#include <gtest/gtest.h>

#include <cmath>

#include "ember/autograd.h"
#include "ember/ember.h"

using namespace ember;
namespace ag = ember::autograd;

namespace {

Tensor vec(std::vector<double> v) {
  Tensor t = empty({int64_t(v.size())}, TensorOptions().dtype(kDouble));
  for (size_t i = 0; i < v.size(); ++i) t.data_ptr<double>()[i] = v[i];
  return t;
}

double at(const Tensor& t, int64_t i) { return t.contiguous().to(kDouble).data_ptr<double>()[i]; }

}  // namespace

TEST(Autograd, ChainAndAccumulation) {
  Tensor x = vec({1.0, 2.0, 3.0}).requires_grad_();
  Tensor w = vec({0.5, -1.0, 2.0}).requires_grad_();
  Tensor y = (x * w + x.exp()).sum();
  EXPECT_FALSE(y.is_leaf());
  EXPECT_EQ(y.grad_fn()->name(), "SumBackward0");
  y.backward();
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(at(x.grad(), i), at(w, i) + std::exp(at(x, i)), 1e-12);
    EXPECT_NEAR(at(w.grad(), i), at(x, i), 1e-12);
  }
  // A second backward through a fresh graph accumulates.
  (x * w).sum().backward();
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(at(w.grad(), i), 2 * at(x, i), 1e-12);
}

TEST(Autograd, RetainGraphError) {
  Tensor x = vec({1.0, 2.0}).requires_grad_();
  Tensor y = (x.exp() * x).sum();
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();
  try {
    y.backward();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Trying to backward through the graph a second time"),
              std::string::npos);
  }
}

TEST(Autograd, GradFunctionAndCreateGraph) {
  Tensor x = vec({0.5, 1.5}).requires_grad_();
  Tensor y = (x * x * x).sum();
  auto g = ag::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true);
  EXPECT_TRUE(g[0].requires_grad());
  auto gg = ag::grad({g[0].sum()}, {x});
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(at(g[0], i), 3 * at(x, i) * at(x, i), 1e-12);
    EXPECT_NEAR(at(gg[0], i), 6 * at(x, i), 1e-12);
  }
  EXPECT_FALSE(x.grad().defined());  // autograd::grad does not touch .grad
}

TEST(Autograd, AllowUnused) {
  Tensor x = vec({1.0}).requires_grad_();
  Tensor z = vec({2.0}).requires_grad_();
  Tensor y = (x * 2).sum();
  EXPECT_THROW(ag::grad({y}, {x, z}, {}, true), Error);
  auto g = ag::grad({y}, {x, z}, {}, true, false, /*allow_unused=*/true);
  EXPECT_FALSE(g[1].defined());
}

TEST(Autograd, HooksReplaceGradient) {
  Tensor x = vec({1.0, 2.0}).requires_grad_();
  Tensor y = x * 3;
  std::vector<int> order;
  y.register_hook([&](const Tensor& g) {
    order.push_back(1);
    return g * 2;
  });
  y.register_hook([&](const Tensor&) { order.push_back(2); });
  x.register_hook([&](const Tensor&) { order.push_back(3); });
  int post = 0;
  x.register_post_accumulate_grad_hook([&](const Tensor& t) { post += t.grad().defined(); });
  y.sum().backward();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(post, 1);
  EXPECT_NEAR(at(x.grad(), 0), 6.0, 1e-12);
}

TEST(Autograd, RetainGrad) {
  Tensor x = vec({1.0, 2.0}).requires_grad_();
  Tensor y = x * 2;
  y.retain_grad();
  (y * y).sum().backward();
  EXPECT_NEAR(at(y.grad(), 1), 8.0, 1e-12);
}

TEST(Autograd, NoGradAndInference) {
  Tensor x = vec({1.0}).requires_grad_();
  {
    NoGradGuard ng;
    EXPECT_FALSE((x * 2).requires_grad());
  }
  Tensor inf;
  {
    InferenceMode im;
    inf = vec({2.0}) * 2;
    EXPECT_TRUE(inf.is_inference());
  }
  try {
    (x * inf).sum().backward();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Inference tensors cannot be saved for backward"),
              std::string::npos);
  }
}

TEST(Autograd, VersionCounterNamesBothOps) {
  Tensor x = vec({1.0, 2.0}).requires_grad_();
  Tensor y = x * 1;
  Tensor z = y.exp();  // saves its output
  z.mul_(2);
  try {
    z.sum().backward();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("ExpBackward0"), std::string::npos) << m;
    EXPECT_NE(m.find("mul_"), std::string::npos) << m;
    EXPECT_NE(m.find("version 1"), std::string::npos) << m;
  }
}

TEST(Autograd, InPlaceOnLeafIsError) {
  Tensor x = vec({1.0}).requires_grad_();
  EXPECT_THROW(x.add_(1), Error);
  EXPECT_NEAR(at(x, 0), 1.0, 0);  // checked before writing
  {
    NoGradGuard ng;
    x.add_(1);  // optimizer-style update
  }
  EXPECT_NEAR(at(x, 0), 2.0, 0);
}

TEST(Autograd, InPlaceOnViewRebasesHistory) {
  // y = x * 1; y[0] *= 3 → d(sum y)/dx = [3, 1, 1]
  Tensor x = vec({1.0, 2.0, 3.0}).requires_grad_();
  Tensor y = x * 1;
  Tensor v = y.select(0, 0);
  v.mul_(3);
  EXPECT_EQ(y.grad_fn()->name(), "CopySlices");
  y.sum().backward();
  EXPECT_NEAR(at(x.grad(), 0), 3.0, 1e-12);
  EXPECT_NEAR(at(x.grad(), 1), 1.0, 1e-12);
  // Writing a requires-grad value into a view of a plain tensor.
  Tensor a = zeros({3}, TensorOptions().dtype(kDouble));
  Tensor b = vec({5.0}).requires_grad_();
  a.narrow(0, 1, 1).copy_(b * 2);
  EXPECT_TRUE(a.requires_grad());
  (a * a).sum().backward();
  EXPECT_NEAR(at(b.grad(), 0), 2 * 2 * 10.0, 1e-12);
}

TEST(Autograd, StaleViewRegenerates) {
  Tensor x = vec({1.0, 2.0}).requires_grad_();
  Tensor y = x * 1;
  Tensor v = y.select(0, 1);
  y.mul_(2);
  v.backward();
  EXPECT_NEAR(at(x.grad(), 0), 0.0, 1e-12);
  EXPECT_NEAR(at(x.grad(), 1), 2.0, 1e-12);
}

TEST(Autograd, DetachSharesStorage) {
  Tensor x = vec({1.0, 2.0}).requires_grad_();
  Tensor d = x.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_EQ(d.data_ptr(), x.data_ptr());
}

TEST(Autograd, AnomalyModeNamesOp) {
  ag::DetectAnomalyGuard guard;
  Tensor x = vec({0.0}).requires_grad_();
  Tensor y = x.sqrt() * 0;  // backward of sqrt at 0 gives 0 * inf = nan
  try {
    y.sum().backward();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("SqrtBackward0"), std::string::npos) << e.what();
  }
}

namespace {
struct CubeFn : ag::Function<CubeFn> {
  static Tensor forward(ag::AutogradContext* ctx, Tensor x, double scale) {
    ctx->save_for_backward({x});
    ctx->saved_data["scale"] = scale;
    return x * x * x * scale;
  }
  static ag::variable_list backward(ag::AutogradContext* ctx, ag::variable_list g) {
    Tensor x = ctx->get_saved_variables()[0];
    double s = ctx->saved_data["scale"].toDouble();
    return {g[0] * 3 * x * x * s, Tensor()};
  }
  static ag::variable_list jvp(ag::AutogradContext* ctx, ag::variable_list t) {
    Tensor x = ctx->get_saved_variables()[0];
    return {t[0] * 3 * x * x * ctx->saved_data["scale"].toDouble()};
  }
};
}  // namespace

TEST(Autograd, CustomFunction) {
  Tensor x = vec({1.0, 2.0}).requires_grad_();
  Tensor y = CubeFn::apply(x, 2.0);
  EXPECT_EQ(y.grad_fn()->name(), "CubeFnBackward");
  y.sum().backward();
  EXPECT_NEAR(at(x.grad(), 1), 3 * 4 * 2.0, 1e-12);
  ag::GradcheckOptions o;
  o.check_forward_ad = true;
  EXPECT_TRUE(ag::gradcheck(
      [](const ag::variable_list& in) { return ag::variable_list{CubeFn::apply(in[0], 1.5)}; },
      {vec({0.3, -0.7}).requires_grad_()}, o));
}

TEST(Autograd, GradcheckCatchesWrongRule) {
  struct Wrong : ag::Function<Wrong> {
    static Tensor forward(ag::AutogradContext*, Tensor x) { return x * x; }
    static ag::variable_list backward(ag::AutogradContext*, ag::variable_list g) { return {g[0]}; }
  };
  ag::GradcheckOptions o;
  o.raise_exception = false;
  EXPECT_FALSE(ag::gradcheck(
      [](const ag::variable_list& in) { return ag::variable_list{Wrong::apply(in[0])}; },
      {vec({0.3, 0.7}).requires_grad_()}, o));
}

TEST(Autograd, ForwardModeNestedAndOverReverse) {
  Tensor x = vec({0.5, 1.0});
  {
    ag::forward_ad::dual_level outer;
    Tensor xd = ag::forward_ad::make_dual(x, vec({1.0, 0.0}));
    Tensor y = xd.sin() * xd;
    Tensor t = ag::forward_ad::unpack_dual(y).second;
    EXPECT_NEAR(at(t, 0), std::cos(0.5) * 0.5 + std::sin(0.5), 1e-12);
    EXPECT_NEAR(at(t, 1), 0.0, 1e-12);
    {
      // Nested: the inner tangent of the outer tangent is a second derivative.
      ag::forward_ad::dual_level inner;
      Tensor xi = ag::forward_ad::make_dual(xd, vec({1.0, 0.0}), inner.level());
      Tensor z = xi * xi * xi;
      Tensor t_outer = ag::forward_ad::unpack_dual(z, outer.level()).second;
      Tensor tt = ag::forward_ad::unpack_dual(t_outer, inner.level()).second;
      ASSERT_TRUE(tt.defined());
      EXPECT_NEAR(at(tt, 0), 6 * 0.5, 1e-12);
    }
  }
  {
    // Forward over reverse: the jvp of a gradient is a Hessian-vector product.
    ag::forward_ad::dual_level lvl;
    Tensor xr = x.clone().requires_grad_();
    Tensor xd = ag::forward_ad::make_dual(xr, vec({1.0, 1.0}));
    Tensor y = (xd * xd * xd).sum();
    Tensor g = ag::grad({y}, {xr}, {}, std::nullopt, true)[0];
    Tensor hv = ag::forward_ad::unpack_dual(g).second;
    ASSERT_TRUE(hv.defined());
    EXPECT_NEAR(at(hv, 1), 6 * 1.0, 1e-12);
  }
}

TEST(Autograd, CheckpointMatches) {
  Tensor x = vec({0.3, 0.9}).requires_grad_();
  auto fn = [](const ag::variable_list& in) {
    return ag::variable_list{(in[0].sin() * in[0]).exp()};
  };
  fn({x})[0].sum().backward();
  Tensor g0 = x.grad().clone();
  x.mutable_grad() = Tensor();
  ember::utils::checkpoint(fn, {x})[0].sum().backward();
  EXPECT_NEAR(at(x.grad(), 0), at(g0, 0), 1e-12);
  EXPECT_NEAR(at(x.grad(), 1), at(g0, 1), 1e-12);
}

TEST(Autograd, OutFormRefusesGrad) {
  Tensor x = vec({1.0}).requires_grad_();
  Tensor out = empty({1}, TensorOptions().dtype(kDouble));
  EXPECT_THROW(exp_out(out, x), Error);
}

TEST(Autograd, LongChainFreesSavedTensors) {
  // Each node frees its saved tensors once run: the chain's backward keeps working memory flat
  // (checked in bench/; here: the graph is usable once, then reports freed buffers).
  Tensor x = vec({0.1}).requires_grad_();
  Tensor y = x;
  for (int i = 0; i < 200; ++i) y = y.sin();
  y.backward();
  EXPECT_TRUE(y.grad_fn()->released());
}

// Note [Engine bookkeeping]: the per-thread tables of the backward engine. A graph much wider
// than the tables' first size, captures of several inputs that meet at one node (in the order
// asked), a backward nested in a hook (tables of its own), and nothing kept alive afterwards.
TEST(Autograd, EngineTablesWideGraphAndCaptureOrder) {
  Tensor x = vec({1.0, 2.0}).requires_grad_();
  Tensor acc = zeros({2}, kDouble);
  for (int i = 1; i <= 300; ++i) acc = acc + x * double(i);  // 600 nodes above x
  Tensor y = acc.sum();
  y.backward();
  EXPECT_DOUBLE_EQ(at(x.grad(), 0), 300.0 * 301.0 / 2.0);
  EXPECT_DOUBLE_EQ(at(x.grad(), 1), 300.0 * 301.0 / 2.0);

  // Two inputs whose gradient edges lead into one node (a's and b's AccumulateGrad are
  // distinct, but both are captured, asked in both orders), and an input asked twice.
  Tensor a = vec({3.0}).requires_grad_(), b = vec({5.0}).requires_grad_();
  Tensor z = a * b;
  auto g = ag::grad({z}, {b, a, b}, {}, /*retain_graph=*/true);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_DOUBLE_EQ(at(g[0], 0), 3.0);
  EXPECT_DOUBLE_EQ(at(g[1], 0), 5.0);
  EXPECT_DOUBLE_EQ(at(g[2], 0), 3.0);
  // Capturing a non-leaf output of a node with two outputs of interest.
  Tensor m = a * 2.0;
  Tensor w = m * m;
  auto gm = ag::grad({w}, {m, a});
  EXPECT_DOUBLE_EQ(at(gm[0], 0), 12.0);
  EXPECT_DOUBLE_EQ(at(gm[1], 0), 24.0);
}

TEST(Autograd, EngineNestedBackwardInHookAndRelease) {
  Tensor x = vec({2.0}).requires_grad_();
  Tensor u = vec({4.0}).requires_grad_();
  double inner = 0;
  Tensor h = x * 3.0;
  h.register_hook([&](const Tensor& g) {
    // A second pass on this thread while the first one is running (hooks run with grad mode
    // set to create_graph, off here).
    AutoGradMode on(true);
    Tensor v = (u * u).sum();
    auto gv = ag::grad({v}, {u});
    inner = at(gv[0], 0);
    return g * 2.0;
  });
  std::weak_ptr<ag::Node> node;
  {
    Tensor y = (h * x).sum();  // dy/dx = 3x + 3x (the hook doubles h's gradient x)
    node = y.grad_fn();
    y.backward();
  }
  EXPECT_DOUBLE_EQ(inner, 8.0);
  EXPECT_DOUBLE_EQ(at(x.grad(), 0), 2.0 * 3.0 + 2.0 * 3.0 * 2.0);
  // The engine keeps no node of a finished pass alive.
  EXPECT_TRUE(node.expired());
}
