// Reductions through the libtorch-spelled C++ API, on hand-derived values: sums/means with dim
// lists and dtype=, products, extrema with first-occurrence indices and NaN, var/std, norms,
// logsumexp, all/any/count_nonzero, out= forms and the typed errors.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ember/ember.h"

using namespace ember;

namespace {

// [[0, 1, 2], [3, 4, 5]] as float32.
Tensor m23() { return arange(6, TensorOptions(kFloat)).reshape({2, 3}); }

}  // namespace

TEST(Reduce, SumMeanProd) {
  Tensor x = m23();
  EXPECT_EQ(sum(x).item<double>(), 15.0);
  Tensor s0 = sum(x, {0});
  EXPECT_EQ(s0.sizes(), IntArrayRef({3}));
  EXPECT_EQ(s0[2].item<double>(), 7.0);
  Tensor s1 = x.sum({-1}, /*keepdim=*/true);
  EXPECT_EQ(s1.sizes(), IntArrayRef({2, 1}));
  EXPECT_EQ(s1[1][0].item<double>(), 12.0);
  EXPECT_EQ(sum(x.t(), {0}).sizes(), IntArrayRef({2}));
  EXPECT_EQ(sum(x.t(), {0})[1].item<double>(), 12.0);
  EXPECT_EQ(mean(x, {0, 1}).item<double>(), 2.5);
  EXPECT_EQ(prod(x + 1).item<double>(), 720.0);
  EXPECT_EQ(prod(x + 1, 1)[0].item<double>(), 6.0);
  // Integer sums promote to int64; dtype= overrides.
  Tensor xi = arange(5);
  EXPECT_EQ(sum(xi.to(kInt)).dtype(), kLong);
  EXPECT_EQ(sum(xi.to(kBool)).item<int64_t>(), 4);
  EXPECT_EQ(sum(x, {0}, false, kDouble).dtype(), kDouble);
  EXPECT_EQ(sum(x.to(kHalf)).dtype(), kHalf);
  // Empty rules.
  EXPECT_EQ(sum(zeros({0})).item<double>(), 0.0);
  EXPECT_EQ(prod(zeros({0})).item<double>(), 1.0);
  EXPECT_TRUE(std::isnan(mean(zeros({0})).item<double>()));
  Tensor out = empty({0});
  sum_out(out, x, {1});
  EXPECT_EQ(out[0].item<double>(), 3.0);
}

TEST(Reduce, Extrema) {
  Tensor x = tensor<float>({{1, 5, 5}, {7, 2, 7}});
  EXPECT_EQ(max(x).item<double>(), 7.0);
  EXPECT_EQ(min(x).item<double>(), 1.0);
  auto [v, i] = max(x, 1);
  EXPECT_EQ(v[0].item<double>(), 5.0);
  EXPECT_EQ(i[0].item<int64_t>(), 1);  // first occurrence
  EXPECT_EQ(i[1].item<int64_t>(), 0);
  EXPECT_EQ(argmax(x).item<int64_t>(), 3);
  EXPECT_EQ(argmin(x, 0)[1].item<int64_t>(), 1);
  EXPECT_EQ(amax(x, {0, 1}).item<double>(), 7.0);
  EXPECT_EQ(amin(x, {0}, true).sizes(), IntArrayRef({1, 3}));
  auto [lo, hi] = aminmax(x);
  EXPECT_EQ(lo.item<double>(), 1.0);
  EXPECT_EQ(hi.item<double>(), 7.0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor y = tensor<float>({1, nan, 3, nan});
  EXPECT_TRUE(std::isnan(max(y).item<double>()));
  EXPECT_EQ(argmax(y).item<int64_t>(), 1);
  EXPECT_EQ(argmin(y).item<int64_t>(), 1);
  EXPECT_THROW(max(zeros({0})), Error);
  EXPECT_THROW(max(zeros({0, 3}), 0), IndexError);
  EXPECT_THROW(sum(x, {0, 0}), Error);
  EXPECT_THROW(sum(x, {2}), IndexError);
}

TEST(Reduce, VarStdNorm) {
  Tensor x = tensor<double>({1, 2, 3, 4});
  EXPECT_NEAR(var(x).item<double>(), 5.0 / 3.0, 1e-5);
  EXPECT_NEAR(var(x, false).item<double>(), 1.25, 1e-5);
  EXPECT_NEAR(ember::std(x, std::nullopt, std::optional<int64_t>(0)).item<double>(),
              std::sqrt(1.25), 1e-5);
  auto [v, m] = var_mean(x);
  EXPECT_NEAR(m.item<double>(), 2.5, 1e-5);
  EXPECT_THROW(var(arange(3)), Error);
  EXPECT_NEAR(linalg::vector_norm(x).item<double>(), std::sqrt(30.0), 1e-5);
  EXPECT_NEAR(linalg::vector_norm(x, 1).item<double>(), 10.0, 1e-5);
  EXPECT_EQ(linalg::vector_norm(x, INFINITY).item<double>(), 4.0);
  EXPECT_NEAR(norm(x, "fro").item<double>(), std::sqrt(30.0), 1e-5);
  // diag(3, 4): singular values 3 and 4.
  EXPECT_NEAR(norm(tensor<double>({{3, 0}, {0, -4}}), "nuc").item<double>(), 7.0, 1e-5);
  EXPECT_THROW(norm(x, "nuc"), Error);
  EXPECT_NEAR(logsumexp(x, {0}).item<double>(),
              std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0) + std::exp(4.0)), 1e-5);
}

TEST(Reduce, Logical) {
  Tensor x = tensor<int64_t>({{0, 1}, {2, 3}});
  EXPECT_FALSE(all(x).item<bool>());
  EXPECT_TRUE(any(x).item<bool>());
  EXPECT_TRUE(all(x, 0)[1].item<bool>());
  EXPECT_EQ(all(x.to(kByte)).dtype(), kByte);
  EXPECT_EQ(count_nonzero(x).item<int64_t>(), 3);
  EXPECT_EQ(count_nonzero(x, IntArrayRef{0})[0].item<int64_t>(), 1);
  EXPECT_TRUE(all(zeros({0})).item<bool>());
  EXPECT_FALSE(any(zeros({0})).item<bool>());
}

TEST(Reduce, LargeVerticalAndChunked) {
  // 0.1 summed 100000 times down dim 0 (vertical cascade) and across a flat range (chunks).
  Tensor x = full({100000, 8}, 0.1, TensorOptions(kFloat));
  EXPECT_NEAR(sum(x, {0})[3].item<double>(), 10000.0, 1e-2);
  EXPECT_NEAR(sum(x).item<double>(), 80000.0, 1e-1);
  Tensor y = arange(200001, TensorOptions(kFloat));
  EXPECT_EQ(argmax(y).item<int64_t>(), 200000);
  EXPECT_EQ(std::get<1>(min(y.reshape({1, -1}), 1))[0].item<int64_t>(), 0);
}
