// Recurrent ops: the fused gate ops against their decomposition into ember ops (forward and
// gradients), the layers against a per-step loop written with plain ember ops, finite-difference
// gradchecks, and bad input. The Python suite compares the same ops with PyTorch 1.13.

#include <gtest/gtest.h>

#include "ember/autograd.h"
#include "ember/ember.h"
#include "ember/rnn.h"

using namespace ember;
namespace ag = ember::autograd;

namespace {

Tensor rnd(std::vector<int64_t> shape, ScalarType dt, bool grad = false) {
  Tensor t = randn(shape, TensorOptions().dtype(dt));
  return grad ? t.requires_grad_() : t;
}

void expect_close(const Tensor& a, const Tensor& b, double tol) {
  ASSERT_EQ(a.sizes().vec(), b.sizes().vec());
  if (a.numel() == 0) return;
  const double err = (a.detach().to(kDouble) - b.detach().to(kDouble)).abs().max().item<double>();
  EXPECT_LE(err, tol);
}

double tol_of(ScalarType dt) { return dt == kFloat ? 2e-5 : 1e-11; }

/// The LSTM gate step as plain ember ops (the reference of the fused op).
std::tuple<Tensor, Tensor> lstm_ref(const Tensor& ig, const Tensor& hg, const Tensor& cx) {
  auto ch = (ig + hg).chunk(4, 1);
  Tensor cy = sigmoid(ch[1]) * cx + sigmoid(ch[0]) * tanh(ch[2]);
  return {sigmoid(ch[3]) * tanh(cy), cy};
}

Tensor gru_ref(const Tensor& ig, const Tensor& hg, const Tensor& hx) {
  auto gi = ig.chunk(3, 1), gh = hg.chunk(3, 1);
  Tensor r = sigmoid(gi[0] + gh[0]), z = sigmoid(gi[1] + gh[1]);
  Tensor n = tanh(gi[2] + r * gh[2]);
  return (1 - z) * n + z * hx;
}

Tensor lin(const Tensor& x, const Tensor& w, const Tensor& b) {
  return b.defined() ? matmul(x, w.t()) + b : matmul(x, w.t());
}

class RnnDtype : public ::testing::TestWithParam<ScalarType> {};

}  // namespace

TEST_P(RnnDtype, LstmFusedGatesMatchesDecomposition) {
  const ScalarType dt = GetParam();
  manual_seed(0);
  for (int64_t H : {1, 5, 16, 37}) {  // vector body and scalar tail
    Tensor ig = rnd({3, 4 * H}, dt, true), hg = rnd({3, 4 * H}, dt, true),
           cx = rnd({3, H}, dt, true);
    auto [hy, cy] = lstm_fused_gates(ig, hg, cx);
    auto [hr, cr] = lstm_ref(ig, hg, cx);
    expect_close(hy, hr, tol_of(dt));
    expect_close(cy, cr, tol_of(dt));
    Tensor gh = rnd({3, H}, dt), gc = rnd({3, H}, dt);
    auto g1 = ag::grad({hy, cy}, {ig, hg, cx}, {gh, gc});
    auto g2 = ag::grad({hr, cr}, {ig, hg, cx}, {gh, gc});
    for (size_t i = 0; i < 3; ++i) expect_close(g1[i], g2[i], 10 * tol_of(dt));
  }
}

TEST_P(RnnDtype, GruFusedGatesMatchesDecomposition) {
  const ScalarType dt = GetParam();
  manual_seed(1);
  for (int64_t H : {1, 8, 19}) {
    Tensor ig = rnd({4, 3 * H}, dt, true), hg = rnd({4, 3 * H}, dt, true),
           hx = rnd({4, H}, dt, true);
    Tensor hy = gru_fused_gates(ig, hg, hx), hr = gru_ref(ig, hg, hx);
    expect_close(hy, hr, tol_of(dt));
    Tensor g = rnd({4, H}, dt);
    auto g1 = ag::grad({hy}, {ig, hg, hx}, {g});
    auto g2 = ag::grad({hr}, {ig, hg, hx}, {g});
    for (size_t i = 0; i < 3; ++i) expect_close(g1[i], g2[i], 10 * tol_of(dt));
  }
}

TEST_P(RnnDtype, LstmLayerMatchesStepLoop) {
  const ScalarType dt = GetParam();
  manual_seed(2);
  const int64_t T = 4, B = 3, I = 5, H = 6, P = 4;
  for (bool proj : {false, true}) {
    const int64_t Ph = proj ? P : H;
    Tensor x = rnd({B, T, I}, dt), h0 = rnd({2, B, Ph}, dt), c0 = rnd({2, B, H}, dt);
    std::vector<Tensor> params;
    for (int d = 0; d < 2; ++d) {
      params.push_back(rnd({4 * H, I}, dt, true));
      params.push_back(rnd({4 * H, Ph}, dt, true));
      params.push_back(rnd({4 * H}, dt, true));
      params.push_back(rnd({4 * H}, dt, true));
      if (proj) params.push_back(rnd({P, H}, dt, true));
    }
    auto [out, hn, cn] = lstm(x, {h0, c0}, params, true, 1, 0.0, false, true, true);
    ASSERT_EQ(out.sizes().vec(), (std::vector<int64_t>{B, T, 2 * Ph}));
    // Reference: each direction as a loop of the decomposed step.
    const int64_t per = proj ? 5 : 4;
    std::vector<Tensor> outs_dir;
    for (int d = 0; d < 2; ++d) {
      const Tensor* w = params.data() + d * per;
      Tensor h = h0[d], c = c0[d];
      std::vector<Tensor> steps(static_cast<size_t>(T));
      for (int64_t s = 0; s < T; ++s) {
        const int64_t t = d == 0 ? s : T - 1 - s;
        auto [hy, cy] = lstm_ref(lin(x.select(1, t), w[0], w[2]), lin(h, w[1], w[3]), c);
        h = proj ? matmul(hy, w[4].t()) : hy;
        c = cy;
        steps[size_t(t)] = h;
      }
      outs_dir.push_back(stack(steps, 1));
      expect_close(hn[d], h, tol_of(dt));
      expect_close(cn[d], c, tol_of(dt));
    }
    expect_close(out, cat(outs_dir, 2), tol_of(dt));
  }
}

TEST_P(RnnDtype, GruAndElmanLayersMatchStepLoop) {
  const ScalarType dt = GetParam();
  manual_seed(3);
  const int64_t T = 5, B = 2, I = 3, H = 4;
  for (int mode = 0; mode < 3; ++mode) {
    const int64_t G = mode == 0 ? 3 : 1;
    Tensor x = rnd({T, B, I}, dt), h0 = rnd({2, B, H}, dt);
    std::vector<Tensor> params = {rnd({G * H, I}, dt), rnd({G * H, H}, dt), rnd({G * H}, dt),
                                  rnd({G * H}, dt),    rnd({G * H, H}, dt), rnd({G * H, H}, dt),
                                  rnd({G * H}, dt),    rnd({G * H}, dt)};
    auto fn = mode == 0 ? &gru : mode == 1 ? &rnn_tanh : &rnn_relu;
    auto [out, hn] = fn(x, h0, params, true, 2, 0.0, false, false, false);
    Tensor in = x;
    for (int64_t l = 0; l < 2; ++l) {
      const Tensor* w = params.data() + l * 4;
      Tensor h = h0[l];
      std::vector<Tensor> steps;
      for (int64_t t = 0; t < T; ++t) {
        Tensor xi = lin(in[t], w[0], w[2]), hh = lin(h, w[1], w[3]);
        h = mode == 0 ? gru_ref(xi, hh, h) : mode == 1 ? tanh(xi + hh) : relu(xi + hh);
        steps.push_back(h);
      }
      in = stack(steps, 0);
      expect_close(hn[l], h, tol_of(dt));
    }
    expect_close(out, in, tol_of(dt));
  }
}

TEST_P(RnnDtype, CellsMatchDecomposition) {
  const ScalarType dt = GetParam();
  manual_seed(4);
  const int64_t B = 3, I = 4, H = 5;
  Tensor x = rnd({B, I}, dt), h = rnd({B, H}, dt), c = rnd({B, H}, dt);
  Tensor w4 = rnd({4 * H, I}, dt), u4 = rnd({4 * H, H}, dt), b4 = rnd({4 * H}, dt);
  auto [hy, cy] = lstm_cell(x, {h, c}, w4, u4, b4, b4);
  auto [hr, cr] = lstm_ref(lin(x, w4, b4), lin(h, u4, b4), c);
  expect_close(hy, hr, tol_of(dt));
  expect_close(cy, cr, tol_of(dt));
  // Unbatched: the batched result's row.
  auto [hy1, cy1] = lstm_cell(x[0], {h[0], c[0]}, w4, u4, b4, b4);
  expect_close(hy1, hy[0], tol_of(dt));
  expect_close(cy1, cy[0], tol_of(dt));
  Tensor w3 = rnd({3 * H, I}, dt), u3 = rnd({3 * H, H}, dt);
  expect_close(gru_cell(x, h, w3, u3), gru_ref(lin(x, w3, {}), lin(h, u3, {}), h), tol_of(dt));
  Tensor w1 = rnd({H, I}, dt), u1 = rnd({H, H}, dt), b1 = rnd({H}, dt);
  expect_close(rnn_tanh_cell(x, h, w1, u1, b1), tanh(lin(x, w1, b1) + lin(h, u1, {})), tol_of(dt));
  expect_close(rnn_relu_cell(x, h, w1, u1, {}, b1), relu(lin(x, w1, {}) + lin(h, u1, b1)),
               tol_of(dt));
}

INSTANTIATE_TEST_SUITE_P(Rnn, RnnDtype, ::testing::Values(kFloat, kDouble));

TEST(Rnn, GradcheckFusedGatesAndLayer) {
  manual_seed(5);
  auto lstm_fn = [](const ag::variable_list& v) {
    auto [h, c] = lstm_fused_gates(v[0], v[1], v[2]);
    return ag::variable_list{h, c};
  };
  ag::variable_list in = {rnd({2, 8}, kDouble, true), rnd({2, 8}, kDouble, true),
                          rnd({2, 2}, kDouble, true)};
  ag::GradcheckOptions fw;
  fw.check_forward_ad = true;  // the explicit jvp rules against finite differences
  EXPECT_TRUE(ag::gradcheck(lstm_fn, in, fw));
  EXPECT_TRUE(ag::gradgradcheck(lstm_fn, in));
  auto gru_fn = [](const ag::variable_list& v) {
    return ag::variable_list{gru_fused_gates(v[0], v[1], v[2])};
  };
  ag::variable_list gin = {rnd({2, 6}, kDouble, true), rnd({2, 6}, kDouble, true),
                           rnd({2, 2}, kDouble, true)};
  EXPECT_TRUE(ag::gradcheck(gru_fn, gin, fw));
  EXPECT_TRUE(ag::gradgradcheck(gru_fn, gin));
  // A 2-layer GRU without biases: input, state and weights.
  auto layer = [](const ag::variable_list& v) {
    auto [o, h] = gru(v[0], v[1], {v[2], v[3], v[4], v[5]}, false, 2, 0.0, false, false, false);
    return ag::variable_list{o, h};
  };
  ag::variable_list lin_ = {rnd({3, 2, 2}, kDouble, true), rnd({2, 2, 3}, kDouble, true),
                            rnd({9, 2}, kDouble, true),    rnd({9, 3}, kDouble, true),
                            rnd({9, 3}, kDouble, true),    rnd({9, 3}, kDouble, true)};
  EXPECT_TRUE(ag::gradcheck(layer, lin_));
}

TEST(Rnn, ZeroBatchAndNoGrad) {
  Tensor x = zeros({3, 0, 2}), h = zeros({1, 0, 4}), c = zeros({1, 0, 4});
  std::vector<Tensor> p = {rnd({16, 2}, kFloat), rnd({16, 4}, kFloat)};
  auto [o, hn, cn] = lstm(x, {h, c}, p, false, 1, 0.0, false, false, false);
  EXPECT_EQ(o.sizes().vec(), (std::vector<int64_t>{3, 0, 4}));
  EXPECT_EQ(cn.sizes().vec(), (std::vector<int64_t>{1, 0, 4}));
  NoGradGuard g;
  Tensor x1 = rnd({2, 1, 2}, kFloat, true);
  auto [o1, h1, c1] =
      lstm(x1, {zeros({1, 1, 4}), zeros({1, 1, 4})}, p, false, 1, 0.0, false, false, false);
  EXPECT_FALSE(o1.requires_grad());
}

TEST(Rnn, BadInputThrows) {
  std::vector<Tensor> p = {rnd({16, 3}, kFloat), rnd({16, 4}, kFloat), rnd({16}, kFloat),
                           rnd({16}, kFloat)};
  Tensor h = zeros({1, 2, 4});
  EXPECT_NO_THROW(lstm(zeros({5, 2, 3}), {h, h}, p, true, 1, 0.0, false, false, false));
  // Zero-length sequence, wrong input size, wrong state shape, wrong parameter count, dtype.
  EXPECT_THROW(lstm(zeros({0, 2, 3}), {h, h}, p, true, 1, 0.0, false, false, false), Error);
  EXPECT_THROW(lstm(zeros({5, 2, 7}), {h, h}, p, true, 1, 0.0, false, false, false), Error);
  EXPECT_THROW(lstm(zeros({5, 3, 3}), {h, h}, p, true, 1, 0.0, false, false, false), Error);
  EXPECT_THROW(lstm(zeros({5, 2, 3}), {h, h}, p, false, 1, 0.0, false, false, false), Error);
  EXPECT_THROW(lstm(zeros({5, 2, 3}), {h}, p, true, 1, 0.0, false, false, false), Error);
  EXPECT_THROW(lstm(zeros({5, 2, 3}, TensorOptions().dtype(kDouble)), {h, h}, p, true, 1, 0.0,
                    false, false, false),
               Error);
  EXPECT_THROW(lstm(zeros({5, 2, 3}), {h, h}, p, true, 1, -0.5, true, false, false), Error);
  EXPECT_THROW(gru(zeros({5, 2, 3}), h, p, true, 1, 0.0, false, false, false), Error);
  EXPECT_THROW(lstm_fused_gates(zeros({2, 16}), zeros({2, 12}), zeros({2, 4})), Error);
  EXPECT_THROW(gru_fused_gates(zeros({2, 12}), zeros({2, 12}), zeros({3, 4})), Error);
  EXPECT_THROW(lstm_cell(zeros({2, 3}), {zeros({3, 4}), zeros({3, 4})}, p[0], p[1]), Error);
  EXPECT_THROW(lstm_fused_gates(zeros({2, 16}, TensorOptions().dtype(kLong)),
                                zeros({2, 16}, TensorOptions().dtype(kLong)),
                                zeros({2, 4}, TensorOptions().dtype(kLong))),
               Error);
}
