// ember::func transforms: vmap against a loop, grad/jvp/jacobians against derivatives worked by
// hand, compositions, functional_call, and the typed errors.

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "ember/ember.h"
#include "ember/func.h"

using namespace ember;
using func::TensorList;

namespace {

void expect_close(const Tensor& a, const Tensor& b, double tol = 1e-5) {
  ASSERT_EQ(a.sizes(), b.sizes());
  ASSERT_EQ(a.dtype(), b.dtype());
  EXPECT_TRUE(allclose(a, b, tol, tol)) << a << "\n vs \n" << b;
}

Tensor loop(const func::UnaryFn& f, const Tensor& x, int64_t dim = 0) {
  std::vector<Tensor> r;
  for (int64_t b = 0; b < x.size(dim); ++b) r.push_back(f(x.select(dim, b)));
  return stack(r, 0);
}

}  // namespace

TEST(FuncVmap, ElementwiseReductionsViewsMatchLoop) {
  manual_seed(0);
  Tensor x = randn({4, 3, 5});
  std::vector<func::UnaryFn> fns = {
      [](const Tensor& t) { return (t.sin() * 2 + 1).exp(); },
      [](const Tensor& t) { return t.sum(IntArrayRef{1}); },
      [](const Tensor& t) { return t.mean(IntArrayRef{-1}, true); },
      [](const Tensor& t) { return t.t().contiguous().view({-1}); },
      [](const Tensor& t) { return softmax(t, 0); },
      [](const Tensor& t) {
        return t.unsqueeze(0).expand({2, 3, 5}).reshape({6, 5});
      },
      [](const Tensor& t) { return std::get<0>(t.max(1)); },
      [](const Tensor& t) {
        return t.permute({1, 0}).select(0, 2);
      },
      [](const Tensor& t) {
        return cat({t, t * 2}, 1);
      },
      [](const Tensor& t) { return t.sum(); },
      [](const Tensor& t) {
        return t.index_select(1, tensor({0, 2}, kLong));
      },
  };
  for (size_t k = 0; k < fns.size(); ++k) {
    SCOPED_TRACE(k);
    expect_close(func::vmap(fns[k])(x), loop(fns[k], x));
    // A batch dim in another position.
    Tensor xt = x.movedim(0, 2).contiguous();
    expect_close(func::vmap(fns[k], 2)(xt), loop(fns[k], x));
  }
}

TEST(FuncVmap, UnbatchedArgumentsBroadcastAndMatmul) {
  manual_seed(1);
  Tensor x = randn({6, 4}), w = randn({3, 4}), b = randn({3});
  func::Fn f = [](const TensorList& a) {
    return TensorList{matmul(a[1], a[0]) + a[2], linear(a[0], a[1], a[2])};
  };
  func::VmapOptions o;
  o.in_dims = {0, std::nullopt, std::nullopt};
  TensorList r = func::vmap_call(f, {x, w, b}, o);
  expect_close(r[0], matmul(x, w.t()) + b);
  expect_close(r[1], linear(x, w, b));
  // out_dims=1 and an output that does not depend on the batch (broadcast).
  o.out_dims = {1, 0};
  func::Fn g = [](const TensorList& a) { return TensorList{a[0] * 2, a[1].sum()}; };
  TensorList r2 = func::vmap_call(g, {x, w, b}, o);
  expect_close(r2[0], (x * 2).t());
  expect_close(r2[1], w.sum().expand({6}));
}

TEST(FuncVmap, NestedVmapAndChunks) {
  manual_seed(2);
  Tensor x = randn({3, 4, 5});
  func::UnaryFn inner = [](const Tensor& t) { return (t * t).sum(); };
  Tensor r = func::vmap(func::vmap(inner))(x);
  expect_close(r, (x * x).sum(IntArrayRef{2}));
  func::VmapOptions o;
  o.chunk_size = 2;
  Tensor c =
      func::vmap_call([](const TensorList& a) { return TensorList{a[0].cumsum(0)}; }, {x}, o)[0];
  expect_close(c, x.cumsum(1));
}

TEST(FuncGrad, GradOfGradAndJvp) {
  Tensor x = linspace(-1.0, 1.0, 5, TensorOptions().dtype(kDouble));
  // d/dx sum(sin x) = cos x; second derivative of sin is -sin.
  func::UnaryFn f = [](const Tensor& t) { return t.sin().sum(); };
  expect_close(func::grad(f)(x), x.cos());
  func::UnaryFn fp = [](const Tensor& t) { return t.sin(); };
  func::UnaryFn g1 = [](const Tensor& t) {
    return func::grad([](const Tensor& u) { return u.sin().sum(); })(t).sum();
  };
  expect_close(func::grad(g1)(x), -x.sin());
  auto [out, tan] =
      func::jvp([&](const TensorList& a) { return TensorList{fp(a[0])}; }, {x}, {ones_like(x)});
  expect_close(out[0], x.sin());
  expect_close(tan[0], x.cos());
}

TEST(FuncGrad, PerSampleGradsMatchLoop) {
  manual_seed(3);
  Tensor w = randn({3, 4}, TensorOptions().dtype(kDouble));
  Tensor x = randn({5, 4}, TensorOptions().dtype(kDouble));
  Tensor y = randn({5, 3}, TensorOptions().dtype(kDouble));
  func::Fn loss = [](const TensorList& a) {
    Tensor p = matmul(a[0], a[1]).tanh();  // a[0]: w (3, 4), a[1]: x (4)
    return TensorList{((p - a[2]) * (p - a[2])).sum()};
  };
  func::VmapOptions o;
  o.in_dims = {std::nullopt, 0, 0};
  Tensor per = func::vmap_call(func::grad(loss), {w, x, y}, o)[0];
  ASSERT_EQ(per.sizes(), (std::vector<int64_t>{5, 3, 4}));
  for (int64_t b = 0; b < 5; ++b) {
    Tensor g = func::grad(loss)({w, x[b], y[b]})[0];
    expect_close(per[b], g, 1e-10);
  }
}

TEST(FuncGrad, CapturedTensorKeepsOrdinaryAutograd) {
  Tensor w = tensor({1.0, 2.0, 3.0}, kDouble).requires_grad_(true);
  Tensor x = tensor({0.5, -1.0, 2.0}, kDouble);
  // d/dx sum(w * x^2) = 2 w x; the result still depends on w for ordinary autograd.
  Tensor g = func::grad([&](const Tensor& t) { return (w * t * t).sum(); })(x);
  expect_close(g.detach(), 2 * w.detach() * x);
  ASSERT_TRUE(g.requires_grad());
  g.sum().backward();
  expect_close(w.grad(), 2 * x);
}

TEST(FuncJacobians, JacrevJacfwdHessian) {
  Tensor x = tensor({0.1, -0.4, 0.7}, kDouble);
  func::UnaryFn f = [](const Tensor& t) { return t.tanh(); };
  Tensor d = 1 - x.tanh() * x.tanh();
  expect_close(func::jacrev(f)(x), diag(d));
  expect_close(func::jacfwd(f)(x), diag(d));
  // Hessian of sum(tanh x): diag(-2 tanh(x) (1 - tanh(x)^2)).
  Tensor h = func::hessian([](const Tensor& t) { return t.tanh().sum(); })(x);
  expect_close(h, diag(-2 * x.tanh() * d));
  // Through ops that save their output: exp, sigmoid, softmax.
  Tensor hs = func::hessian([](const Tensor& t) { return (t.exp() + t.sigmoid()).sum(); })(x);
  Tensor s = x.sigmoid();
  expect_close(hs, diag(x.exp() + s * (1 - s) * (1 - 2 * s)));
  func::UnaryFn sm = [](const Tensor& t) { return softmax(t, 0); };
  Tensor jr = func::jacrev(sm)(x), jf = func::jacfwd(sm)(x);
  Tensor p = softmax(x, 0);
  expect_close(jr, diag(p) - outer(p, p));
  expect_close(jf, jr);
}

TEST(FuncErrors, TypedErrors) {
  Tensor x = randn({3, 2});
  auto vm = [&](func::UnaryFn f) { return func::vmap(f)(x); };
  EXPECT_THROW(vm([](const Tensor& t) { return scalar_tensor(t.sum().item<float>()); }), Error);
  EXPECT_THROW(vm([](const Tensor& t) { return t + randn({2}); }), Error);
  EXPECT_THROW(vm([](const Tensor& t) { return nonzero(t); }), Error);
  Tensor base = zeros({2});
  EXPECT_THROW(vm([&](const Tensor& t) { return base.add_(t); }), Error);
  Tensor escaped;
  func::vmap([&](const Tensor& t) {
    escaped = t;
    return t;
  })(x);
  EXPECT_THROW(escaped + 1, Error);
  EXPECT_THROW(func::vmap([](const Tensor& t) { return t; }, 5)(x), ValueError);
  EXPECT_THROW(func::grad([](const Tensor& t) { return t * 2; })(x), Error);
  // 65 nested levels.
  std::function<Tensor(const Tensor&, int)> nest = [&](const Tensor& t, int n) -> Tensor {
    if (n == 0) return t.sum();
    return func::grad([&](const Tensor& u) { return nest(u, n - 1); })(t).sum();
  };
  EXPECT_THROW(nest(x, 65), Error);
  // The stack is per thread: another thread sees no transform.
  func::vmap([&](const Tensor& t) {
    std::thread th([] { EXPECT_NO_THROW(randn({2}).sum().item<float>()); });
    th.join();
    return t;
  })(x);
}

TEST(FuncRandomness, DifferentAndSame) {
  Tensor x = zeros({4, 3});
  func::VmapOptions o;
  o.randomness = func::VmapRandomness::Different;
  func::Fn f = [](const TensorList& a) { return TensorList{a[0] + rand_like(a[0])}; };
  Tensor d = func::vmap_call(f, {x}, o)[0];
  EXPECT_FALSE(allclose(d[0], d[1]));
  o.randomness = func::VmapRandomness::Same;
  Tensor s = func::vmap_call(f, {x}, o)[0];
  expect_close(s[0], s[1]);
}

TEST(FuncFunctionalCall, SubstitutesMemberHandles) {
  manual_seed(4);
  nn::Linear lin(4, 2);
  Tensor w0 = lin->weight.clone(), b0 = lin->bias.clone();
  Tensor x = randn({3, 4});
  Tensor w = randn({2, 4}).requires_grad_(true);
  TensorList out =
      func::functional_call(*lin, {{"weight", w}}, [&] { return TensorList{lin->forward(x)}; });
  expect_close(out[0].detach(), linear(x, w.detach(), b0));
  // Gradients reach the substitute; the module is unchanged.
  out[0].sum().backward();
  expect_close(w.grad(), x.sum(IntArrayRef{0}).unsqueeze(0).expand({2, 4}).contiguous());
  expect_close(lin->weight.detach(), w0);
  EXPECT_FALSE(lin->weight.grad().defined());
  // An ensemble: stacked parameters under vmap equal separate runs.
  nn::Linear a(4, 2), b(4, 2);
  auto [params, buffers] = func::stack_module_state({a.ptr().get(), b.ptr().get()});
  func::Fn one = [&](const TensorList& p) {
    return func::functional_call(*a, {{"weight", p[0]}, {"bias", p[1]}},
                                 [&] { return TensorList{a->forward(x)}; });
  };
  Tensor ens = func::vmap_call(one, {params["weight"], params["bias"]})[0];
  expect_close(ens[0], a->forward(x).detach());
  expect_close(ens[1], b->forward(x).detach());
}

// Note [Tangents and reference cycles]: forward-over-reverse through ops that save their
// output (exp, tanh) frees everything it made (a cycle would leak every call).
TEST(FuncMemory, ForwardOverReverseFreesItsGraph) {
  Tensor x = randn({64}, kDouble), a = randn({64, 64}, kDouble) * 0.1;
  auto once = [&] {
    Tensor xr = x.clone().requires_grad_(true);
    autograd::forward_ad::dual_level level;
    Tensor d = autograd::forward_ad::make_dual(xr, x);
    Tensor y = exp(d).tanh().sum();
    Tensor g = autograd::grad({y}, {xr}, {}, std::nullopt, true)[0];
    return autograd::forward_ad::unpack_dual(g).second.sum().item<double>();
  };
  // jvp of grad (a Hessian-vector product) through the transforms.
  func::UnaryFn f = [&](const Tensor& v) { return tanh(matmul(a, v)).sum(); };
  auto hvp = [&] {
    return func::jvp([&](const TensorList& t) { return TensorList{func::grad(f)(t[0])}; }, {x}, {x})
        .second[0]
        .sum()
        .item<double>();
  };
  once();
  hvp();
  const int64_t before = cpu::memory_stats().allocated;
  for (int k = 0; k < 20; ++k) {
    once();
    hvp();
  }
  EXPECT_EQ(cpu::memory_stats().allocated, before);
}
