// Order statistics and unique through the libtorch-spelled C++ API, on values checked against
// torch 1.13: kthvalue/median/nanmedian/mode with torch's tie indices, quantile with q tensors
// and interpolation modes, _unique2/unique_dim/unique_consecutive, and the typed errors.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ember/ember.h"

using namespace ember;

namespace {

std::vector<int64_t> longs(const Tensor& t) {
  Tensor c = t.contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}
std::vector<double> doubles(const Tensor& t) {
  Tensor c = t.to(kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

Tensor x25() { return tensor<float>({{3, 1, 4, 1, 5}, {9, 2, 6, 5, 3}}); }

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

}  // namespace

TEST(OrderStats, Kthvalue) {
  auto [v, i] = kthvalue(x25(), 2, 1);
  EXPECT_EQ(doubles(v), (std::vector<double>{1, 3}));
  EXPECT_EQ(longs(i), (std::vector<int64_t>{3, 4}));  // torch's quickselect tie position
  auto [vk, ik] = x25().kthvalue(1, 0, /*keepdim=*/true);
  EXPECT_EQ(vk.sizes(), IntArrayRef({1, 5}));
  EXPECT_EQ(longs(ik), (std::vector<int64_t>{0, 0, 0, 0, 1}));
  auto [vn, in] = kthvalue(tensor<float>({3, 1, float(kNan), 2, 1}), 5);
  EXPECT_TRUE(std::isnan(vn.item<double>()));
  EXPECT_EQ(in.item<int64_t>(), 2);
  EXPECT_THROW(kthvalue(x25(), 0), Error);
  EXPECT_THROW(kthvalue(x25(), 6), Error);
  EXPECT_THROW(kthvalue(x25(), 1, 2), IndexError);
  EXPECT_THROW(kthvalue(zeros({0}), 1), IndexError);
  EXPECT_THROW(kthvalue(x25().to(kHalf), 1), Error);
  EXPECT_EQ(std::get<0>(kthvalue(zeros({3, 0}), 3, 0)).sizes(), IntArrayRef({0}));
}

TEST(OrderStats, MedianAndMode) {
  auto [v, i] = median(x25(), 1);
  EXPECT_EQ(doubles(v), (std::vector<double>{3, 5}));
  EXPECT_EQ(longs(i), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(median(x25()).item<double>(), 3.0);
  EXPECT_EQ(x25().median().item<double>(), 3.0);
  Tensor withnan = tensor<float>({float(kNan), 2, 1, float(kNan)});
  EXPECT_TRUE(std::isnan(median(withnan).item<double>()));
  EXPECT_EQ(std::get<1>(median(withnan, 0)).item<int64_t>(), 0);
  auto [nv, ni] = nanmedian(withnan, 0);
  EXPECT_EQ(nv.item<double>(), 1.0);
  EXPECT_EQ(ni.item<int64_t>(), 2);
  EXPECT_EQ(withnan.nanmedian().item<double>(), 1.0);
  EXPECT_TRUE(std::isnan(median(zeros({0})).item<double>()));
  EXPECT_EQ(median(zeros({0}, TensorOptions(kLong))).item<int64_t>(),
            std::numeric_limits<int64_t>::min());
  EXPECT_THROW(median(zeros({0, 3}), 0), IndexError);
  EXPECT_THROW(median(tensor<bool>({true})), Error);

  auto [mv, mi] = mode(tensor<int64_t>({{1, 2, 2, 3, 3}, {4, 4, 1, 1, 0}}), 1);
  EXPECT_EQ(longs(mv), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(longs(mi), (std::vector<int64_t>{2, 3}));
  auto [bv, bi] = tensor<bool>({true, false}).mode();
  EXPECT_FALSE(bv.item<bool>());
  EXPECT_EQ(bi.item<int64_t>(), 1);
  EXPECT_THROW(mode(zeros({0})), IndexError);
}

TEST(OrderStats, Quantile) {
  Tensor q = tensor<float>({0.25f, 0.5f});
  Tensor r = quantile(x25(), q, 1);
  EXPECT_EQ(r.sizes(), IntArrayRef({2, 2}));
  EXPECT_EQ(doubles(r), (std::vector<double>{1, 3, 3, 5}));
  EXPECT_EQ(quantile(x25(), 0.4, std::nullopt, false, "nearest").item<double>(), 3.0);
  EXPECT_EQ(quantile(x25(), q, 0, true).sizes(), IntArrayRef({2, 1, 5}));
  Tensor withnan = tensor<float>({float(kNan), 2, 1, 4});
  EXPECT_TRUE(std::isnan(quantile(withnan, 0.5).item<double>()));
  EXPECT_EQ(nanquantile(withnan, 0.5).item<double>(), 2.0);
  EXPECT_THROW(quantile(x25(), 1.5), Error);
  EXPECT_THROW(quantile(x25(), 0.5, std::nullopt, false, "cubic"), Error);
  EXPECT_THROW(quantile(x25().to(kLong), 0.5), Error);
  EXPECT_THROW(quantile(x25(), q.to(kDouble)), Error);
  EXPECT_THROW(quantile(zeros({0}), 0.5), Error);
  EXPECT_THROW(quantile(x25(), 0.5, 2), IndexError);
}

TEST(Unique, Flat) {
  Tensor x = tensor<int64_t>({3, 1, 3, 2, 1});
  auto [u, inv, cnt] = _unique2(x, true, true, true);
  EXPECT_EQ(longs(u), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(longs(inv), (std::vector<int64_t>{2, 0, 2, 1, 0}));
  EXPECT_EQ(longs(cnt), (std::vector<int64_t>{2, 1, 2}));
  auto [uu, ui, uc] = _unique2(x, false);
  EXPECT_EQ(longs(uu), (std::vector<int64_t>{2, 1, 3}));  // torch's hash-set order
  EXPECT_EQ(ui.numel(), 0);
  EXPECT_EQ(uc.numel(), 0);
  EXPECT_THROW(_unique2(x.to(kHalf)), Error);

  auto [cu, ci, cc] = unique_consecutive(tensor<int64_t>({1, 1, 2, 1}), true, true);
  EXPECT_EQ(longs(cu), (std::vector<int64_t>{1, 2, 1}));
  EXPECT_EQ(longs(ci), (std::vector<int64_t>{0, 0, 1, 2}));
  EXPECT_EQ(longs(cc), (std::vector<int64_t>{2, 1, 1}));
}

TEST(Unique, Dim) {
  Tensor m = tensor<int64_t>({{1, 0, 1}, {2, 2, 2}});
  auto [u, inv, cnt] = unique_dim(m, 1);
  EXPECT_EQ(u.sizes(), IntArrayRef({2, 2}));
  EXPECT_EQ(longs(u), (std::vector<int64_t>{0, 1, 2, 2}));
  EXPECT_EQ(longs(inv), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(longs(cnt), (std::vector<int64_t>{1, 2}));
  auto [cu, ci, cc] = unique_consecutive(m, true, true, 1);
  EXPECT_EQ(cu.sizes(), IntArrayRef({2, 3}));
  EXPECT_EQ(longs(cc), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_THROW(unique_dim(m, 2), IndexError);
  EXPECT_THROW(unique_dim(tensor<int64_t>({5}).reshape({}), 0), Error);
  EXPECT_THROW(unique_dim(zeros({2, 0}), 0), Error);
  EXPECT_EQ(std::get<0>(unique_dim(zeros({2, 0}), 1)).sizes(), IntArrayRef({2, 0}));
}
