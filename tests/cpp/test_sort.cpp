// Scans, softmax, sort and topk through the libtorch-spelled C++ API, on hand-derived values:
// dtype promotion and dtype=, out= and in-place forms, index rules of cummax/cummin, NaN order,
// stable ties, top-k selection and the typed errors.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ember/ember.h"

using namespace ember;

namespace {

std::vector<double> values(const Tensor& t) {
  Tensor c = t.to(kDouble).contiguous().reshape({-1});
  std::vector<double> v;
  for (int64_t i = 0; i < c.numel(); ++i) v.push_back(c[i].item<double>());
  return v;
}
std::vector<double> V(std::initializer_list<double> l) { return l; }

const double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

TEST(Scan, CumsumCumprod) {
  Tensor x = tensor<int32_t>({{1, 2, 3}, {4, 5, 6}}, TensorOptions(kInt));
  ASSERT_EQ(x.dtype(), kInt);
  Tensor s = cumsum(x, 1);
  EXPECT_EQ(s.dtype(), kLong);  // integers accumulate in int64
  EXPECT_EQ(values(s), V({1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(values(x.cumsum(0)), V({1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(values(x.t().cumsum(-1)), V({1, 5, 2, 7, 3, 9}));
  Tensor p = cumprod(x, -1, kDouble);
  EXPECT_EQ(p.dtype(), kDouble);
  EXPECT_EQ(values(p), V({1, 2, 6, 4, 20, 120}));
  // dtype= casts the input first; int8 wraps
  EXPECT_EQ(values(cumsum(tensor<float>({1.5f, 2.7f}), 0, kInt)), V({1, 3}));
  EXPECT_EQ(values(cumsum(tensor<int8_t>({100, 100, 100}), 0, kChar)), V({100, -56, 44}));
  // float32 accumulates in float64, rounding every output
  std::vector<float> big(11, 1.0f);
  big[0] = 1e8f;
  EXPECT_EQ(cumsum(tensor<float>(big), 0)[10].item<double>(), 100000008.0);
  // 0-dim and zero-size
  EXPECT_EQ(cumsum(scalar_tensor(3, TensorOptions(kInt)), 0).item<int64_t>(), 3);
  EXPECT_EQ(cumsum(zeros({0, 3}), 1).sizes(), IntArrayRef({0, 3}));
}

TEST(Scan, OutAndInplace) {
  Tensor x = tensor<int32_t>({1, 2, 3}, TensorOptions(kInt));
  Tensor out = empty({0}, TensorOptions(kDouble));
  cumsum_out(out, x, 0);  // out's dtype is the result dtype
  EXPECT_EQ(out.dtype(), kDouble);
  EXPECT_EQ(values(out), V({1, 3, 6}));
  Tensor bad = empty({0}, TensorOptions(kInt));
  EXPECT_THROW(cumsum_out(bad, x, 0, kLong), Error);
  Tensor wrong_shape = empty({5});
  EXPECT_THROW(cumsum_out(wrong_shape, x.to(kFloat), 0), Error);
  Tensor y = x.clone();
  y.cumprod_(0);
  EXPECT_EQ(y.dtype(), kInt);  // in-place keeps self's dtype
  EXPECT_EQ(values(y), V({1, 2, 6}));
  EXPECT_THROW(y.cumsum_(0, kLong), Error);
  Tensor l = empty({0});
  logcumsumexp_out(l, zeros({2}), 0);
  EXPECT_NEAR(l[1].item<double>(), std::log(2.0), 1e-6);
}

TEST(Scan, CummaxCummin) {
  // ties move the index to the latest occurrence; NaN propagates (index of the latest NaN)
  Tensor x = tensor<double>({1, 3, 3, kNaN, 2, kNaN, 5}, TensorOptions(kDouble));
  auto [v, i] = cummax(x, 0);
  EXPECT_EQ(values(i), V({0, 1, 2, 3, 3, 5, 5}));
  EXPECT_EQ(v[2].item<double>(), 3.0);
  EXPECT_TRUE(std::isnan(v[6].item<double>()));
  auto [mv, mi] = x.cummin(0);
  EXPECT_EQ(values(mi), V({0, 0, 0, 3, 3, 5, 5}));
  Tensor m = tensor<int64_t>({{2, 1}, {1, 1}, {3, 0}});
  auto [cv, ci] = cummin(m, 0);
  EXPECT_EQ(values(cv), V({2, 1, 1, 1, 1, 0}));
  EXPECT_EQ(values(ci), V({0, 0, 1, 1, 1, 2}));
  Tensor vo = empty({0}, TensorOptions(kLong)), io = empty({0}, TensorOptions(kLong));
  cummax_out(vo, io, m, 1);
  EXPECT_EQ(values(io), V({0, 0, 0, 1, 0, 0}));
  Tensor io32 = empty({0}, TensorOptions(kInt));
  EXPECT_THROW(cummax_out(vo, io32, m, 1), Error);
  EXPECT_THROW(cummax(ones({2}, TensorOptions(kComplexFloat)), 0), Error);
}

TEST(Scan, Logcumsumexp) {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = tensor<double>({-inf, 0, 0, inf, 1}, TensorOptions(kDouble));
  std::vector<double> r = values(logcumsumexp(x, 0));
  EXPECT_EQ(r[0], -inf);
  EXPECT_NEAR(r[1], 0.0, 1e-12);
  EXPECT_NEAR(r[2], std::log(2.0), 1e-12);
  EXPECT_EQ(r[3], inf);
  EXPECT_EQ(r[4], inf);
  EXPECT_THROW(logcumsumexp(arange(3), 0), Error);
  EXPECT_THROW(logcumsumexp(ones({2}), 1), IndexError);
  EXPECT_THROW(cumsum(ones({2, 3}), -3), IndexError);
}

TEST(Softmax, Basic) {
  Tensor x = tensor<float>({{1, 2, 3}, {0, 0, 0}});
  Tensor s = softmax(x, 1);
  const double e = std::exp(1.0);
  const double z = 1 + e + e * e;
  EXPECT_NEAR(s[0][0].item<double>(), 1 / z, 1e-6);
  EXPECT_NEAR(s[1][2].item<double>(), 1.0 / 3, 1e-6);
  Tensor l = x.log_softmax(0, kDouble);
  EXPECT_EQ(l.dtype(), kDouble);
  EXPECT_NEAR(l[0][0].item<double>(), 1 - std::log(1 + e), 1e-12);
  Tensor out = empty({0});
  softmax_out(out, x, -1);
  EXPECT_NEAR(out[1][0].item<double>(), 1.0 / 3, 1e-6);
  Tensor bad = empty({0}, TensorOptions(kDouble));
  EXPECT_THROW(softmax_out(bad, x, 1), Error);
  EXPECT_THROW(softmax(arange(3), 0), Error);
  EXPECT_THROW(softmax(x, 2), IndexError);
}

TEST(Sort, SortArgsortMsort) {
  Tensor x = tensor<double>({3, kNaN, -0.0, 1, 0.0, 3});
  auto [v, i] = sort(x);
  EXPECT_EQ(values(i), V({2, 4, 3, 0, 5, 1}));  // stable: -0.0 == 0.0, NaN last
  EXPECT_TRUE(std::signbit(v[0].item<double>()));
  auto [dv, di] = x.sort(0, /*descending=*/true);
  EXPECT_EQ(values(di), V({1, 0, 5, 3, 2, 4}));
  EXPECT_EQ(values(argsort(tensor<int64_t>({{5, 1, 3}}), int64_t(-1))), V({1, 2, 0}));
  EXPECT_EQ(values(msort(tensor<int32_t>({{2, 1}, {1, 3}}))), V({1, 1, 2, 3}));
  // a long row takes the radix path
  Tensor r = arange(1000).remainder(7).to(kShort);
  Tensor ri = argsort(r, /*stable=*/true, 0);
  EXPECT_EQ(ri[0].item<int64_t>(), 0);
  EXPECT_EQ(ri[1].item<int64_t>(), 7);
  EXPECT_EQ(ri[999].item<int64_t>(), 993);
  Tensor vo = empty({5}), io = empty({0}, TensorOptions(kLong));
  sort_out(vo, io, tensor<float>({2, 1}));  // multi-output out= resizes
  EXPECT_EQ(vo.sizes(), IntArrayRef({2}));
  EXPECT_EQ(values(io), V({1, 0}));
  EXPECT_THROW(sort(ones({2}, TensorOptions(kComplexFloat))), Error);
  EXPECT_THROW(sort(ones({2}), 1), IndexError);
}

TEST(Sort, Topk) {
  Tensor x = tensor<float>({1, 5, 3, 5, 2});
  auto [v, i] = topk(x, 2);
  EXPECT_EQ(values(v), V({5, 5}));
  auto [sv, si] = x.topk(3, 0, /*largest=*/false);
  EXPECT_EQ(values(sv), V({1, 2, 3}));
  EXPECT_EQ(values(si), V({0, 4, 2}));
  EXPECT_EQ(std::get<0>(topk(x, 0)).sizes(), IntArrayRef({0}));
  EXPECT_EQ(std::get<0>(topk(x, 5)).sizes(), IntArrayRef({5}));
  EXPECT_EQ(std::get<0>(topk(scalar_tensor(4.0), 1)).item<double>(), 4.0);
  EXPECT_THROW(topk(x, 6), Error);
  EXPECT_THROW(topk(ones({2}, TensorOptions(kBool)), 1), Error);
}
