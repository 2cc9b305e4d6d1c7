// The C++ API of include/ember/nn_ops.h on values derived by hand or from a plain reference
// loop in the test (tests/python/test_loss.py, test_norm.py and test_dropout_embedding.py check
// them against torch 1.13 in depth): linear, cross_entropy / nll_loss, dropout, the fused norms
// and their gradients, embedding, and the error types of bad input.

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ember/ember.h"
#include "ember/nn_ops.h"

using ember::Tensor;

namespace {

std::vector<double> vals(const Tensor& t) {
  Tensor c = t.to(ember::kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

Tensor dvec(std::vector<double> v, std::vector<int64_t> shape) {
  Tensor t = ember::empty({int64_t(v.size())}, ember::kDouble);
  std::copy(v.begin(), v.end(), t.data_ptr<double>());
  return t.view(shape);
}

void expect_near(const std::vector<double>& a, const std::vector<double>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol) << "at " << i;
}

/// Reference log-softmax cross entropy of row-major (N, C) logits.
std::vector<double> ref_ce(const std::vector<double>& x, const std::vector<int64_t>& t, int64_t C) {
  std::vector<double> out;
  for (size_t n = 0; n < t.size(); ++n) {
    double m = -INFINITY, s = 0;
    for (int64_t c = 0; c < C; ++c) m = std::max(m, x[n * C + c]);
    for (int64_t c = 0; c < C; ++c) s += std::exp(x[n * C + c] - m);
    out.push_back(-(x[n * C + t[n]] - m - std::log(s)));
  }
  return out;
}

}  // namespace

TEST(NnOps, LinearMatchesMatmulPlusBias) {
  Tensor x = dvec({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor w = dvec({1, 0, -1, 2, 1, 0}, {2, 3});
  Tensor b = dvec({10, 20}, {2});
  expect_near(vals(ember::linear(x, w, b)), {8, 24, 8, 33}, 1e-12);
  expect_near(vals(ember::linear(x, w)), {-2, 4, -2, 13}, 1e-12);
  // 3-D input folds into one gemm; a transposed (strided) input gives the same result.
  Tensor x3 = x.view({1, 2, 3});
  expect_near(vals(ember::linear(x3, w, b)), {8, 24, 8, 33}, 1e-12);
  expect_near(vals(ember::linear(x.t().contiguous().t(), w, b)), {8, 24, 8, 33}, 1e-12);
  EXPECT_THROW(ember::linear(x, dvec({1, 2}, {1, 2})), ember::Error);
}

TEST(NnOps, CrossEntropyAgainstReference) {
  std::vector<double> xv = {0.5, -1, 2, 0.1, 0.3, 0.3, -2, 1, 4, 0, 0, 1};
  std::vector<int64_t> tv = {2, 0, 3};
  Tensor x = dvec(xv, {3, 4});
  Tensor t = ember::tensor(tv);
  std::vector<double> ref = ref_ce(xv, tv, 4);
  expect_near(vals(ember::cross_entropy(x, t, {}, ember::Reduction::None)), ref, 1e-12);
  expect_near(vals(ember::cross_entropy(x, t)), {(ref[0] + ref[1] + ref[2]) / 3}, 1e-12);
  expect_near(vals(ember::cross_entropy(x, t, {}, ember::Reduction::Sum)),
              {ref[0] + ref[1] + ref[2]}, 1e-12);
  // Class weights: the mean divides by the summed weight of the targets; ignore_index skips.
  Tensor w = dvec({1, 2, 3, 4}, {4});
  expect_near(vals(ember::cross_entropy(x, t, w)), {(3 * ref[0] + 1 * ref[1] + 4 * ref[2]) / 8},
              1e-12);
  expect_near(vals(ember::cross_entropy(x, t, {}, ember::Reduction::Mean, 0)),
              {(ref[0] + ref[2]) / 2}, 1e-12);
  // nll_loss of log_softmax is the same op.
  expect_near(vals(ember::nll_loss(ember::log_softmax(x, 1), t)), vals(ember::cross_entropy(x, t)),
              1e-12);
}

TEST(NnOps, CrossEntropyGradientIsSoftmaxMinusOneHot) {
  Tensor x = dvec({0.5, -1, 2, 0.1, 0.3, 0.3}, {2, 3}).requires_grad_();
  Tensor t = ember::tensor(std::vector<int64_t>{2, 0});
  ember::cross_entropy(x, t, {}, ember::Reduction::Sum).backward();
  std::vector<double> p = vals(ember::softmax(x.detach(), 1));
  p[2] -= 1;
  p[3] -= 1;
  expect_near(vals(x.grad()), p, 1e-12);
}

TEST(NnOps, LossErrors) {
  Tensor x = ember::zeros({3, 5});
  EXPECT_THROW(ember::nll_loss(x, ember::tensor(std::vector<int64_t>{1, 2, 7})), ember::IndexError);
  EXPECT_THROW(ember::nll_loss(x, ember::tensor(std::vector<int64_t>{1, 2})), ember::ValueError);
  EXPECT_THROW(ember::nll_loss(x, ember::zeros({3})), ember::Error);
  EXPECT_THROW(ember::cross_entropy(x, ember::tensor(std::vector<int64_t>{1, 2, 3}), {}, 7),
               ember::ValueError);
  EXPECT_THROW(ember::mse_loss(x, x, -1), ember::ValueError);
}

TEST(NnOps, RegressionLossesByHand) {
  Tensor a = dvec({0, 1, 3}, {3}), b = dvec({0.5, 1, 0}, {3});
  expect_near(vals(ember::mse_loss(a, b, ember::Reduction::None)), {0.25, 0, 9}, 1e-12);
  expect_near(vals(ember::l1_loss(a, b, ember::Reduction::Sum)), {3.5}, 1e-12);
  expect_near(vals(ember::smooth_l1_loss(a, b, ember::Reduction::None, 1.0)), {0.125, 0, 2.5},
              1e-12);
  expect_near(vals(ember::huber_loss(a, b, ember::Reduction::None, 2.0)), {0.125, 0, 4}, 1e-12);
}

TEST(NnOps, DropoutMaskAndScale) {
  ember::manual_seed(0);
  Tensor x = ember::ones({100, 100}, ember::kDouble).requires_grad_();
  Tensor y = ember::dropout(x, 0.25, true);
  std::vector<double> v = vals(y);
  int64_t zeros = 0;
  for (double e : v) {
    if (e == 0)
      ++zeros;
    else
      EXPECT_NEAR(e, 1 / 0.75, 1e-12);
  }
  EXPECT_NEAR(double(zeros) / 10000, 0.25, 0.03);
  y.sum().backward();
  expect_near(vals(x.grad()), v, 0);
  Tensor z = ember::ones({4});
  EXPECT_TRUE(ember::dropout(z, 0.5, false).is_same(z));
  EXPECT_THROW(ember::dropout(z, 1.5, true), ember::ValueError);
  EXPECT_THROW(ember::feature_dropout(z, 0.5, true), ember::Error);
}

TEST(NnOps, BatchNormTrainingStatsAndRunningUpdate) {
  // Channel 0 holds {1, 2, 3, 4}, channel 1 holds {0, 0, 4, 4} over (N=2, S=2).
  Tensor x = dvec({1, 2, 0, 0, 3, 4, 4, 4}, {2, 2, 2});
  Tensor rm = ember::zeros({2}, ember::kDouble), rv = ember::ones({2}, ember::kDouble);
  auto [y, mean, invstd] = ember::native_batch_norm(x, {}, {}, rm, rv, true, 0.1, 0.0);
  expect_near(vals(mean), {2.5, 2}, 1e-12);
  expect_near(vals(invstd), {1 / std::sqrt(1.25), 0.5}, 1e-12);
  expect_near(vals(rm), {0.25, 0.2}, 1e-12);
  // Unbiased batch variance: 5/3 and 16/3.
  expect_near(vals(rv), {0.9 + 0.1 * 5.0 / 3, 0.9 + 0.1 * 16.0 / 3}, 1e-12);
  const double s0 = 1 / std::sqrt(1.25);
  expect_near(vals(y), {-1.5 * s0, -0.5 * s0, -1, -1, 0.5 * s0, 1.5 * s0, 1, 1}, 1e-12);
  // Eval uses the running statistics.
  Tensor ye = ember::batch_norm(x, {}, {}, rm, rv, false, 0.1, 0.0);
  EXPECT_NEAR(vals(ye)[0], (1 - 0.25) / std::sqrt(vals(rv)[0]), 1e-12);
  EXPECT_THROW(ember::batch_norm(x, ember::ones({3}), {}, {}, {}, true, 0.1, 1e-5), ember::Error);
}

TEST(NnOps, NormGradientsMatchComposite) {
  // The fused backward kernels against the differentiable composite (create_graph path).
  ember::manual_seed(1);
  Tensor x = ember::randn({3, 4, 5}, ember::kDouble).requires_grad_();
  Tensor w = ember::randn({4}, ember::kDouble).requires_grad_();
  Tensor g = ember::randn({3, 4, 5}, ember::kDouble);
  auto run = [&](bool create) {
    std::vector<std::vector<double>> out;
    for (int which = 0; which < 3; ++which) {
      Tensor y = which == 0   ? ember::batch_norm(x, w, {}, {}, {}, true, 0.1, 1e-5)
                 : which == 1 ? ember::layer_norm(x.transpose(1, 2), {4}, w)
                              : ember::group_norm(x, 2, w);
      if (which == 1) y = y.transpose(1, 2);
      auto grads = ember::autograd::grad({y}, {x, w}, {g}, std::nullopt, create);
      out.push_back(vals(grads[0]));
      out.push_back(vals(grads[1]));
    }
    return out;
  };
  auto fast = run(false), composite = run(true);
  for (size_t i = 0; i < fast.size(); ++i) expect_near(fast[i], composite[i], 1e-10);
}

TEST(NnOps, EmbeddingPaddingAndErrors) {
  Tensor w = dvec({0, 1, 10, 11, 20, 21}, {3, 2}).requires_grad_();
  Tensor idx = ember::tensor(std::vector<int64_t>{2, 0, 2});
  Tensor y = ember::embedding(w, idx, 0);
  expect_near(vals(y), {20, 21, 0, 1, 20, 21}, 0);
  y.sum().backward();
  expect_near(vals(w.grad()), {0, 0, 0, 0, 2, 2}, 0);  // padding row 0 gets no gradient
  EXPECT_THROW(ember::embedding(w, ember::tensor(std::vector<int64_t>{3})), ember::IndexError);
  EXPECT_THROW(ember::embedding(w, ember::zeros({2})), ember::Error);
  auto bag =
      ember::embedding_bag(w.detach(), idx, ember::tensor(std::vector<int64_t>{0, 1}), false, 1);
  expect_near(vals(std::get<0>(bag)), {20, 21, 10, 11}, 1e-12);
}
