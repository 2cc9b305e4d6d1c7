// Function transforms from C++ (ember::func), four programs with their results checked:
//   1. per-sample gradients of an MLP (vmap over grad, unbatched parameters);
//   2. an ensemble of 8 small MLPs run as one vmap (stack_module_state + functional_call);
//   3. a MAML-style inner loop: the gradient of a loss taken after a gradient step;
//   4. a Hessian-vector product of a small model, forward-over-reverse, against the Hessian.
// Exits non-zero when a check fails (it runs in CI as the test example.func_transforms).

#include <cstdio>
#include <cstdlib>

#include "ember/ember.h"
#include "ember/func.h"

using namespace ember;
using func::TensorList;

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  std::printf("%-58s %s\n", what, ok ? "ok" : "FAILED");
  if (!ok) ++failures;
}

// An MLP 8-16-4 as a function of its parameters and one sample.
Tensor mlp(const TensorList& p, const Tensor& x) {
  Tensor h = tanh(linear(x, p[0], p[1]));
  return linear(h, p[2], p[3]);
}

void per_sample_gradients() {
  manual_seed(0);
  TensorList p = {randn({16, 8}, kDouble) * 0.3, zeros({16}, kDouble),
                  randn({4, 16}, kDouble) * 0.3, zeros({4}, kDouble)};
  Tensor x = randn({32, 8}, kDouble), y = randn({32, 4}, kDouble);
  func::Fn loss = [](const TensorList& a) {
    Tensor d = mlp({a[0], a[1], a[2], a[3]}, a[4]) - a[5];
    return TensorList{(d * d).sum()};
  };
  func::VmapOptions o;
  o.in_dims = {std::nullopt, std::nullopt, std::nullopt, std::nullopt, 0, 0};
  TensorList per =
      func::vmap_call(func::grad(loss, {0, 1, 2, 3}), {p[0], p[1], p[2], p[3], x, y}, o);
  // Against autograd, one sample at a time.
  bool ok = per[0].sizes() == IntArrayRef({32, 16, 8});
  for (int64_t i = 0; i < 32 && ok; ++i) {
    TensorList leaves;
    for (const Tensor& t : p) leaves.push_back(t.detach().requires_grad_(true));
    Tensor d = mlp(leaves, x[i]) - y[i];
    TensorList g = autograd::grad({(d * d).sum()}, leaves);
    for (size_t k = 0; k < 4; ++k) ok = ok && allclose(per[k][i], g[k], 1e-10, 1e-12);
  }
  check(ok, "per-sample gradients equal autograd per sample");
}

void ensemble() {
  manual_seed(1);
  std::vector<nn::Sequential> models;
  std::vector<nn::Module*> ptrs;
  for (int k = 0; k < 8; ++k) {
    models.emplace_back(nn::Linear(8, 16), nn::Tanh(), nn::Linear(16, 4));
    ptrs.push_back(models.back().ptr().get());
  }
  Tensor x = randn({5, 8});
  auto [params, buffers] = func::stack_module_state(ptrs);
  std::vector<std::string> names;
  TensorList stacked;
  for (auto& [k, v] : params) {
    names.push_back(k);
    stacked.push_back(v);
  }
  func::Fn one = [&](const TensorList& ps) {
    std::map<std::string, Tensor> sub;
    for (size_t i = 0; i < names.size(); ++i) sub[names[i]] = ps[i];
    return func::functional_call(*models[0], sub,
                                 [&] { return TensorList{models[0]->forward(x)}; });
  };
  Tensor out = func::vmap_call(one, stacked)[0];
  bool ok = out.sizes() == IntArrayRef({8, 5, 4});
  for (int k = 0; k < 8 && ok; ++k) ok = allclose(out[k], models[k]->forward(x), 1e-5, 1e-6);
  check(ok, "ensemble of 8 MLPs in one vmap equals 8 separate runs");
}

void maml() {
  // Inner step w' = w - lr * dL/dw on a task; meta-loss L(w'); its gradient with respect to w
  // goes through the inner gradient (second order). Linear regression makes it exact:
  // L(w) = |X w - y|^2, w' = w - lr * 2 X^T (X w - y), meta gradient = (I - 2 lr X^T X) g',
  // g' = 2 Xq^T (Xq w' - yq).
  manual_seed(2);
  Tensor X = randn({6, 3}, kDouble), y = randn({6}, kDouble);
  Tensor Xq = randn({4, 3}, kDouble), yq = randn({4}, kDouble);
  Tensor w = randn({3}, kDouble);
  const double lr = 0.05;
  auto task_loss = [](const Tensor& A, const Tensor& b, const Tensor& v) {
    Tensor r = matmul(A, v) - b;
    return (r * r).sum();
  };
  func::UnaryFn meta = [&](const Tensor& v) {
    Tensor g = func::grad([&](const Tensor& u) { return task_loss(X, y, u); })(v);
    return task_loss(Xq, yq, v - lr * g);
  };
  Tensor got = func::grad(meta)(w);
  Tensor w1 = w - lr * 2 * matmul(X.t(), matmul(X, w) - y);
  Tensor g1 = 2 * matmul(Xq.t(), matmul(Xq, w1) - yq);
  Tensor expect = matmul(eye(3, kDouble) - 2 * lr * matmul(X.t(), X), g1);
  check(allclose(got, expect, 1e-10, 1e-12), "MAML meta-gradient through the inner step");
}

void hessian_vector_product() {
  manual_seed(3);
  Tensor W = randn({5, 5}, kDouble) * 0.5, x = randn({5}, kDouble), v = randn({5}, kDouble);
  func::UnaryFn f = [&](const Tensor& z) { return tanh(matmul(W, z)).sum(); };
  // HVP as jvp of grad (forward over reverse), against the full Hessian times v.
  auto [g, hv] =
      func::jvp([&](const TensorList& a) { return TensorList{func::grad(f)(a[0])}; }, {x}, {v});
  Tensor H = func::hessian(f)(x);
  // By hand: H = W^T diag(-2 tanh(Wx) (1 - tanh(Wx)^2)) W.
  Tensor t = tanh(matmul(W, x));
  Tensor Hh = matmul(W.t(), matmul(diag(-2 * t * (1 - t * t)), W));
  check(allclose(H, Hh, 1e-10, 1e-12), "Hessian of a small model equals the closed form");
  check(allclose(hv[0], matmul(H, v), 1e-10, 1e-12), "Hessian-vector product equals H v");
}

}  // namespace

int main() {
  per_sample_gradients();
  ensemble();
  maml();
  hessian_vector_product();
  if (failures) std::printf("%d check(s) failed\n", failures);
  return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
