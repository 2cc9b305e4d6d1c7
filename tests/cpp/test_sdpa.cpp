// scaled_dot_product_attention from C++: the fused path against the decomposition, gradients,
// the 1.13 API, typed errors, and the fused path's memory (O(L·E), never the L×S matrix).

#include <gtest/gtest.h>

#include <cmath>

#include "ember/allocator.h"
#include "ember/ember.h"
#include "ember/nn/functional/attention.h"

using namespace ember;

namespace {

void expect_close(const Tensor& a, const Tensor& b, double tol) {
  ASSERT_EQ(a.sizes(), b.sizes());
  ASSERT_EQ(a.dtype(), b.dtype());
  EXPECT_TRUE(allclose(a, b, tol, tol)) << (a - b).abs().max();
}

/// softmax(q kᵀ / sqrt(E) + causal) v written out with ember ops.
Tensor explicit_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  Tensor s = matmul(q, k.transpose(-2, -1)) / std::sqrt(double(q.size(-1)));
  if (causal) {
    Tensor keep = ones({q.size(-2), k.size(-2)}, kBool).tril();
    s = s.masked_fill(keep.logical_not(), -INFINITY);
  }
  return matmul(softmax(s, -1), v);
}

}  // namespace

TEST(Sdpa, FusedMatchesExplicitFloat64) {
  manual_seed(3);
  Tensor q = randn({2, 3, 37, 16}, kDouble), k = randn({2, 3, 530, 16}, kDouble),
         v = randn({2, 3, 530, 8}, kDouble);
  for (bool causal : {false, true}) {
    Tensor out = scaled_dot_product_attention(q, k, v, {}, 0.0, causal);
    expect_close(out, explicit_attention(q, k, v, causal), 1e-12);
    auto [lse_out, lse] = _scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal);
    EXPECT_EQ(lse.sizes(), IntArrayRef({2, 3, 37}));
    expect_close(lse_out, out, 1e-12);
  }
  EXPECT_EQ(nn::functional::scaled_dot_product_attention(q, k, v).sizes(),
            IntArrayRef({2, 3, 37, 8}));
}

TEST(Sdpa, GradientsOfFusedMatchDecomposition) {
  manual_seed(4);
  Tensor g = randn({2, 70, 8});
  std::vector<Tensor> grads[2];
  for (int fused = 0; fused < 2; ++fused) {
    manual_seed(5);
    Tensor q = randn({2, 70, 8}).requires_grad_(true), k = randn({2, 90, 8}).requires_grad_(true),
           v = randn({2, 90, 8}).requires_grad_(true);
    Tensor out = fused ? scaled_dot_product_attention(q, k, v, {}, 0.0, true)
                       : std::get<0>(_scaled_dot_product_attention_math(q, k, v, {}, 0.0, true));
    out.backward(g);
    grads[fused] = {out.detach(), q.grad(), k.grad(), v.grad()};
  }
  for (size_t i = 0; i < 4; ++i) expect_close(grads[0][i], grads[1][i], 1e-5);
}

TEST(Sdpa, Torch113ApiReturnsWeights) {
  manual_seed(6);
  Tensor q = randn({2, 5, 8}, kDouble), k = randn({2, 6, 8}, kDouble),
         v = randn({2, 6, 4}, kDouble);
  auto [out, w] = _scaled_dot_product_attention(q, k, v, {}, 0.0, false, true);
  EXPECT_EQ(w.sizes(), IntArrayRef({2, 5, 6}));
  expect_close(w.sum(IntArrayRef{-1}), ones({2, 5}, kDouble), 1e-12);
  expect_close(out, explicit_attention(q, k, v, true), 1e-12);
}

TEST(Sdpa, TypedErrors) {
  Tensor q = randn({2, 5, 8}), k = randn({2, 6, 8}), v = randn({2, 6, 8});
  EXPECT_THROW(scaled_dot_product_attention(randn({8}), randn({8}), randn({8})), IndexError);
  EXPECT_THROW(scaled_dot_product_attention(q, randn({2, 6, 7}), v), Error);
  EXPECT_THROW(scaled_dot_product_attention(q, k.to(kDouble), v), Error);
  EXPECT_THROW(scaled_dot_product_attention(q, k, v, ones({4, 6}, kBool)), Error);
  EXPECT_THROW(scaled_dot_product_attention(q, k, v, ones({5, 6}, kBool), 0.0, true), Error);
}

// The fused forward and backward at L = S = 4096, E = 64, one head keep O(L·E) live: the
// 4096×4096 float32 matrix alone would be 64 MiB.
TEST(Sdpa, FusedMemoryIsLinearInLength) {
  const int64_t L = 4096, E = 64;
  manual_seed(7);
  Tensor q = randn({1, 1, L, E}).requires_grad_(true), k = randn({1, 1, L, E}).requires_grad_(true),
         v = randn({1, 1, L, E}).requires_grad_(true);
  Tensor g = randn({1, 1, L, E});
  const int64_t before = cpu::memory_stats().allocated;
  cpu::reset_peak_memory_stats();
  Tensor out = scaled_dot_product_attention(q, k, v, {}, 0.0, true);
  out.backward(g);
  const int64_t peak = cpu::memory_stats().peak_allocated - before;
  const int64_t matrix = L * L * 4;
  EXPECT_LT(peak, matrix / 4) << "peak " << peak << " bytes";
  EXPECT_TRUE(std::isfinite(q.grad().abs().sum().item<double>()));
}
