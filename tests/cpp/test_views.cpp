// View ops: sizes, strides, offsets and values against PyTorch 1.13 (expected values were
// printed by torch 1.13 and pasted here), storage and version-counter sharing, error types.

#include <gtest/gtest.h>

#include <complex>
#include <string>
#include <typeinfo>
#include <vector>

#include "ember/ember.h"
#include "view_test_util.h"

using ember::Tensor;

using namespace ember_test;

TEST(Views, SizeAndStride) {
  Tensor a = a234();
  EXPECT_EQ(a.size(0), 2);
  EXPECT_EQ(a.size(-1), 4);
  EXPECT_EQ(a.stride(0), 12);
  EXPECT_EQ(a.stride(-2), 4);
  EXPECT_EMBER_ERROR(a.size(3), ember::IndexError, "[size]");
  EXPECT_EMBER_ERROR(a.stride(-4), ember::IndexError, "[stride]");
  Tensor s = ember::tensor(7);
  EXPECT_EMBER_ERROR(s.size(0), ember::IndexError, "[size]");
  EXPECT_EMBER_ERROR(s.stride(-1), ember::IndexError, "[stride]");
}

TEST(Views, ViewSharesStorageAndVersion) {
  Tensor base = ember::arange(12);
  Tensor v = base.view({3, -1});
  expect_geometry(v, {3, 4}, {4, 1}, 0);
  EXPECT_TRUE(v.is_alias_of(base));
  EXPECT_FALSE(v.is_same(base));
  EXPECT_EQ(v.data_ptr(), base.data_ptr());
  // A write through the view is seen by the base.
  v.data_ptr<int64_t>()[5] = 100;
  EXPECT_EQ(base.data_ptr<int64_t>()[5], 100);
  // In-place writes through a view bump the one shared counter.
  const uint32_t v0 = base._version();
  v.select(0, 1).fill_(9);
  EXPECT_GT(base._version(), v0);
  EXPECT_EQ(base._version(), v._version());
  EXPECT_EQ(values(base), (V{0, 1, 2, 3, 9, 9, 9, 9, 8, 9, 10, 11}));
}

TEST(Views, ViewStrided) {
  Tensor a = a234();
  // A transposed tensor can still be split within its mergeable chunks.
  Tensor v = a.transpose(0, 1).view({3, 2, 2, 2});
  expect_geometry(v, {3, 2, 2, 2}, {4, 12, 2, 1}, 0);
  EXPECT_EQ(values(v), (V{0,  1,  2,  3,  12, 13, 14, 15, 4,  5,  6,  7,
                          16, 17, 18, 19, 8,  9,  10, 11, 20, 21, 22, 23}));
  Tensor w = a.slice(1, std::nullopt, std::nullopt, 2).view({2, 2, 2, 2});
  expect_geometry(w, {2, 2, 2, 2}, {12, 8, 2, 1}, 0);
  EXPECT_EQ(values(w), (V{0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 20, 21, 22, 23}));
  EXPECT_EMBER_ERROR(a.transpose(0, 1).view({3, 8}), ember::Error, "[view] view size is not");
  try {
    ember::arange(6).view({2, 3}).t().view({6});
    ADD_FAILURE();
  } catch (const ember::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Use .reshape(...) instead"), std::string::npos);
  }
}

TEST(Views, ViewZeroSizeAndScalar) {
  Tensor s = ember::tensor(7);
  expect_geometry(s.view({1, 1}), {1, 1}, {1, 1}, 0);
  expect_geometry(s.view(ember::IntArrayRef()), {}, {}, 0);
  EXPECT_EQ(s.view({1, 1, 1}).view(ember::IntArrayRef()).item<int64_t>(), 7);
  Tensor z = ember::zeros({0, 3});
  expect_geometry(z.view({3, 0}), {3, 0}, {1, 1}, 0);
  expect_geometry(z.view({-1}), {0}, {1}, 0);
  expect_geometry(z.transpose(0, 1).view({3, 0}), {3, 0}, {1, 3}, 0);
  expect_geometry(z.transpose(0, 1).view({0, 3}), {0, 3}, {3, 1}, 0);
  EXPECT_EMBER_ERROR(z.view({-1, 0}), ember::Error, "[view] cannot reshape tensor of 0 elements");
}

TEST(Views, ViewBadShapes) {
  Tensor a = ember::arange(6);
  EXPECT_EMBER_ERROR(a.view({-1, -1}), ember::Error, "[view] only one dimension");
  EXPECT_EMBER_ERROR(a.view({-2, 3}), ember::Error, "[view] invalid shape dimension -2");
  EXPECT_EMBER_ERROR(a.view({4}), ember::Error,
                     "[view] shape '[4]' is invalid for input of size 6");
  EXPECT_EMBER_ERROR(a.view({-1, 4}), ember::Error, "[view] shape");
  EXPECT_EMBER_ERROR(a.view({int64_t(1) << 62, 8}), ember::Error, "[view]");
}

TEST(Views, Reshape) {
  Tensor a = a234();
  Tensor r = a.reshape({6, -1});
  expect_geometry(r, {6, 4}, {4, 1}, 0);
  EXPECT_TRUE(r.is_alias_of(a));
  // Not viewable: reshape copies.
  Tensor c = a.transpose(0, 1).reshape({3, 8});
  expect_geometry(c, {3, 8}, {8, 1}, 0);
  EXPECT_FALSE(c.is_alias_of(a));
  EXPECT_EQ(values(c), (V{0,  1,  2,  3,  12, 13, 14, 15, 4,  5,  6,  7,
                          16, 17, 18, 19, 8,  9,  10, 11, 20, 21, 22, 23}));
  expect_geometry(ember::tensor(7).reshape({-1}), {1}, {1}, 0);
  expect_geometry(a.reshape_as(ember::zeros({4, 6})), {4, 6}, {6, 1}, 0);
  EXPECT_EMBER_ERROR(a.reshape({5, -1}), ember::Error, "[reshape]");
}

TEST(Views, PermuteTransposeT) {
  Tensor a = a234();
  Tensor p = a.permute({2, 0, 1});
  expect_geometry(p, {4, 2, 3}, {1, 12, 4}, 0);
  EXPECT_EQ(values(p), (V{0, 4, 8,  12, 16, 20, 1, 5, 9,  13, 17, 21,
                          2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23}));
  expect_geometry(a.permute({-1, 0, -2}), {4, 2, 3}, {1, 12, 4}, 0);
  EXPECT_EMBER_ERROR(a.permute({0, 1}), ember::Error, "[permute]");
  EXPECT_EMBER_ERROR(a.permute({0, 0, 1}), ember::Error, "[permute] duplicate dims");
  EXPECT_EMBER_ERROR(a.permute({0, 1, 3}), ember::IndexError, "[permute]");
  EXPECT_FALSE(a.transpose(0, 1).is_contiguous());
  expect_geometry(a.transpose(-1, 0), {4, 3, 2}, {1, 4, 12}, 0);
  expect_geometry(a.swapaxes(1, 2), {2, 4, 3}, {12, 1, 4}, 0);
  EXPECT_EMBER_ERROR(a.transpose(0, 3), ember::IndexError, "[transpose]");
  Tensor m = a.mT();
  expect_geometry(m, {2, 4, 3}, {12, 1, 4}, 0);
  EXPECT_EQ(values(m)[1], 4);
  EXPECT_EMBER_ERROR(ember::arange(3).mT(), ember::Error, "[mT]");

  Tensor v = ember::arange(6).view({2, 3});
  Tensor vt = v.t();
  expect_geometry(vt, {3, 2}, {1, 3}, 0);
  EXPECT_EQ(values(vt), (V{0, 3, 1, 4, 2, 5}));
  expect_geometry(vt.t(), {2, 3}, {3, 1}, 0);
  expect_geometry(ember::arange(3).t(), {3}, {1}, 0);
  Tensor s = ember::tensor(7);
  expect_geometry(s.t(), {}, {}, 0);
  expect_geometry(s.transpose(0, -1), {}, {}, 0);
  EXPECT_FALSE(s.t().is_same(s));
  EXPECT_EMBER_ERROR(a.t(), ember::Error, "[t] expects a tensor with <= 2 dimensions");
  expect_geometry(ember::zeros({0, 3}).t(), {3, 0}, {1, 3}, 0);
}

TEST(Views, InPlaceViews) {
  Tensor base = ember::arange(6).view({2, 3});
  Tensor x = base.view({2, 3});
  Tensor& r = x.t_();
  EXPECT_EQ(&r, &x);
  expect_geometry(x, {3, 2}, {1, 3}, 0);
  EXPECT_TRUE(x.is_alias_of(base));
  x.transpose_(0, 1);
  expect_geometry(x, {2, 3}, {3, 1}, 0);
  x.unsqueeze_(1);
  expect_geometry(x, {2, 1, 3}, {3, 3, 1}, 0);
  x.unsqueeze_(-1);
  expect_geometry(x, {2, 1, 3, 1}, {3, 3, 1, 1}, 0);
  x.squeeze_(1);
  expect_geometry(x, {2, 3, 1}, {3, 1, 1}, 0);
  x.squeeze_(0);  // not size 1: unchanged
  expect_geometry(x, {2, 3, 1}, {3, 1, 1}, 0);
  x.squeeze_();
  expect_geometry(x, {2, 3}, {3, 1}, 0);
  expect_geometry(base, {2, 3}, {3, 1}, 0);  // the base keeps its geometry
  EXPECT_EMBER_ERROR(a234().t_(), ember::Error, "[t_]");
  EXPECT_EMBER_ERROR(x.transpose_(0, 2), ember::IndexError, "[transpose_]");
}

TEST(Views, Expand) {
  Tensor a = a234();
  expect_geometry(a.expand({2, 2, 3, 4}), {2, 2, 3, 4}, {0, 12, 4, 1}, 0);
  Tensor b = ember::arange(3).view({3, 1});
  Tensor e = b.expand({2, 3, 4});
  expect_geometry(e, {2, 3, 4}, {0, 1, 0}, 0);
  EXPECT_EQ(values(e), (V{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}));
  EXPECT_TRUE(e.is_alias_of(b));
  expect_geometry(b.expand({-1, 5}), {3, 5}, {1, 0}, 0);
  expect_geometry(b.expand({3, 0}), {3, 0}, {1, 0}, 0);
  expect_geometry(ember::arange(6).view({2, 3}).expand({1, 2, 3}), {1, 2, 3}, {6, 3, 1}, 0);
  expect_geometry(ember::arange(3).expand({4, 1, 3}), {4, 1, 3}, {0, 3, 1}, 0);
  Tensor s = ember::tensor(7);
  Tensor se = s.expand({2, 3});
  expect_geometry(se, {2, 3}, {0, 0}, 0);
  EXPECT_EQ(values(se), (V{7, 7, 7, 7, 7, 7}));
  expect_geometry(ember::zeros({0, 3}).expand({2, 0, 3}), {2, 0, 3}, {0, 3, 1}, 0);
  expect_geometry(b.expand_as(ember::zeros({2, 3, 2})), {2, 3, 2}, {0, 1, 0}, 0);
  EXPECT_EMBER_ERROR(ember::arange(3).expand({2}), ember::Error,
                     "[expand] the expanded size of the tensor (2) must match");
  EXPECT_EMBER_ERROR(a.expand({3, 4}), ember::Error, "[expand] the number of sizes provided");
  EXPECT_EMBER_ERROR(ember::arange(3).expand({-1, 3}), ember::Error, "[expand]");
  EXPECT_EMBER_ERROR(ember::zeros({1}).expand({-2}), ember::Error, "[expand]");
}

TEST(Views, SqueezeUnsqueeze) {
  Tensor a = a234();
  expect_geometry(a.unsqueeze(1), {2, 1, 3, 4}, {12, 12, 4, 1}, 0);
  expect_geometry(a.unsqueeze(-1), {2, 3, 4, 1}, {12, 4, 1, 1}, 0);
  expect_geometry(a.unsqueeze(0), {1, 2, 3, 4}, {24, 12, 4, 1}, 0);
  EXPECT_EMBER_ERROR(a.unsqueeze(4), ember::IndexError, "[unsqueeze]");
  EXPECT_EMBER_ERROR(a.unsqueeze(-5), ember::IndexError, "[unsqueeze]");
  Tensor col = a.slice(2, 1, 2);
  Tensor sq = col.squeeze();
  expect_geometry(sq, {2, 3}, {12, 4}, 1);
  EXPECT_EQ(values(sq), (V{1, 5, 9, 13, 17, 21}));
  expect_geometry(col.squeeze(-1), {2, 3}, {12, 4}, 1);
  expect_geometry(col.squeeze(0), {2, 3, 1}, {12, 4, 1}, 1);
  EXPECT_EMBER_ERROR(a.squeeze(3), ember::IndexError, "[squeeze]");
  Tensor s = ember::tensor(7);
  expect_geometry(s.unsqueeze(0), {1}, {1}, 0);
  expect_geometry(s.unsqueeze(-1), {1}, {1}, 0);
  expect_geometry(s.squeeze(), {}, {}, 0);
  expect_geometry(s.squeeze(0), {}, {}, 0);
  expect_geometry(ember::zeros({0, 3}).unsqueeze(1), {0, 1, 3}, {3, 3, 1}, 0);
  EXPECT_EQ(ember::zeros({1, 0, 1}).squeeze().sizes().vec(), (V{0}));
}

TEST(Views, FlattenUnflatten) {
  Tensor a = a234();
  expect_geometry(a.flatten(1), {2, 12}, {12, 1}, 0);
  expect_geometry(a.flatten(), {24}, {1}, 0);
  expect_geometry(a.flatten(0, 1), {6, 4}, {4, 1}, 0);
  EXPECT_TRUE(a.flatten(0, 1).is_alias_of(a));
  EXPECT_TRUE(a.flatten(1, 1).is_same(a));  // as PyTorch: start == end returns the input
  Tensor c = a.transpose(1, 2).flatten(1);  // not viewable: a copy
  expect_geometry(c, {2, 12}, {12, 1}, 0);
  EXPECT_EQ(values(c), (V{0,  4,  8,  1,  5,  9,  2,  6,  10, 3,  7,  11,
                          12, 16, 20, 13, 17, 21, 14, 18, 22, 15, 19, 23}));
  expect_geometry(ember::tensor(7).flatten(), {1}, {1}, 0);
  expect_geometry(ember::zeros({0, 3}).flatten(), {0}, {1}, 0);
  expect_geometry(ember::zeros({0, 1, 3, 0}).flatten(1, 2), {0, 3, 0}, {3, 1, 1}, 0);
  EXPECT_EMBER_ERROR(a.flatten(2, 1), ember::Error, "[flatten]");
  EXPECT_EMBER_ERROR(a.flatten(0, 3), ember::IndexError, "[flatten]");

  expect_geometry(a.unflatten(2, {2, -1}), {2, 3, 2, 2}, {12, 4, 2, 1}, 0);
  expect_geometry(a.unflatten(-3, {1, 2}), {1, 2, 3, 4}, {24, 12, 4, 1}, 0);
  EXPECT_EMBER_ERROR(a.unflatten(1, {2, 2}), ember::Error, "[unflatten] provided sizes [2, 2]");
  EXPECT_EMBER_ERROR(a.unflatten(1, ember::IntArrayRef()), ember::Error, "[unflatten]");
  EXPECT_EMBER_ERROR(a.unflatten(3, {1}), ember::IndexError, "[unflatten]");
  EXPECT_EMBER_ERROR(ember::tensor(7).unflatten(0, {1}), ember::IndexError, "[unflatten]");
}

TEST(Views, NarrowSliceSelect) {
  Tensor a = a234();
  Tensor n = a.narrow(2, 1, 2);
  expect_geometry(n, {2, 3, 2}, {12, 4, 1}, 1);
  EXPECT_EQ(values(n), (V{1, 2, 5, 6, 9, 10, 13, 14, 17, 18, 21, 22}));
  expect_geometry(a.narrow(-1, -2, 2), {2, 3, 2}, {12, 4, 1}, 2);
  Tensor z = ember::zeros({2, 3});
  expect_geometry(z.narrow(0, 2, 0), {0, 3}, {3, 1}, 6);
  expect_geometry(ember::zeros({0, 3}).narrow(0, 0, 0), {0, 3}, {3, 1}, 0);
  expect_geometry(ember::zeros({0, 3}).narrow(0, -1, 0), {0, 3}, {3, 1}, 0);
  EXPECT_EMBER_ERROR(z.narrow(0, 1, 2), ember::Error, "[narrow] start (1) + length (2)");
  EXPECT_EMBER_ERROR(z.narrow(0, 0, -1), ember::Error, "[narrow]");
  EXPECT_EMBER_ERROR(z.narrow(0, 3, 0), ember::IndexError, "[narrow]");
  EXPECT_EMBER_ERROR(z.narrow(2, 0, 1), ember::IndexError, "[narrow]");
  EXPECT_EMBER_ERROR(ember::tensor(1.0).narrow(0, 0, 1), ember::Error, "[narrow]");

  Tensor s = a.slice(1, -2, 100, 2);
  expect_geometry(s, {2, 1, 4}, {12, 8, 1}, 4);
  EXPECT_EQ(values(s), (V{4, 5, 6, 7, 16, 17, 18, 19}));
  expect_geometry(a.slice(2, std::nullopt, std::nullopt, 3), {2, 3, 2}, {12, 4, 3}, 0);
  expect_geometry(a.slice(0, -100, -1), {1, 3, 4}, {12, 4, 1}, 0);
  expect_geometry(a.slice(1, 2, 1), {2, 0, 4}, {12, 4, 1}, 8);
  expect_geometry(z.slice(0, 5), {0, 3}, {3, 1}, 6);
  expect_geometry(ember::zeros({0, 3}).slice(0, 1), {0, 3}, {3, 1}, 0);
  EXPECT_EMBER_ERROR(a.slice(0, 0, 2, 0), ember::ValueError,
                     "[slice] step must be greater than zero");
  EXPECT_EMBER_ERROR(a.slice(0, 0, 2, -1), ember::ValueError, "[slice]");
  EXPECT_EMBER_ERROR(a.slice(3), ember::IndexError, "[slice]");
  EXPECT_EMBER_ERROR(ember::tensor(1).slice(0), ember::IndexError, "[slice]");

  Tensor sel = a.select(1, -1);
  expect_geometry(sel, {2, 4}, {12, 1}, 8);
  EXPECT_EQ(values(sel), (V{8, 9, 10, 11, 20, 21, 22, 23}));
  EXPECT_EQ(a[1][2][3].item<int64_t>(), 23);
  expect_geometry(a[0][2][3], {}, {}, 11);
  expect_geometry(ember::zeros({0, 3}).select(1, 1), {0}, {3}, 1);
  EXPECT_EMBER_ERROR(z.select(1, 3), ember::IndexError, "[select] index 3 out of range");
  EXPECT_EMBER_ERROR(z.select(0, -3), ember::IndexError, "[select]");
  EXPECT_EMBER_ERROR(ember::tensor(1).select(0, 0), ember::IndexError, "[select]");
  EXPECT_EMBER_ERROR(ember::zeros({0, 3}).select(0, 0), ember::IndexError, "[select]");
}

TEST(Views, AsStrided) {
  Tensor a = a234();
  Tensor s = a.as_strided({2, 2}, {1, 3}, 1);
  expect_geometry(s, {2, 2}, {1, 3}, 1);
  EXPECT_EQ(values(s), (V{1, 4, 2, 5}));
  Tensor row = a[1];
  Tensor d = row.as_strided({2, 2}, {1, 3});  // offset defaults to self's
  expect_geometry(d, {2, 2}, {1, 3}, 12);
  EXPECT_EQ(values(d), (V{12, 15, 13, 16}));
  EXPECT_TRUE(d.is_alias_of(a));
  expect_geometry(a.as_strided({3}, {0}, 23), {3}, {0}, 23);
  expect_geometry(a.as_strided({0, 2}, {100, 100}, 100), {0, 2}, {100, 100}, 100);
  Tensor z = ember::zeros({2, 3});
  expect_geometry(z.as_strided({2, 2}, {1, 2}, 2), {2, 2}, {1, 2}, 2);
  EXPECT_EMBER_ERROR(z.as_strided({2, 2}, {1, 2}, 3), ember::Error, "[as_strided]");
  EXPECT_EMBER_ERROR(z.as_strided({7}, {1}, 0), ember::Error, "[as_strided]");
  EXPECT_EMBER_ERROR(z.as_strided({2, 2}, {1, 2}, -1), ember::Error, "[as_strided]");
  EXPECT_EMBER_ERROR(z.as_strided({2, -2}, {1, 2}, 0), ember::Error, "[as_strided]");
  EXPECT_EMBER_ERROR(z.as_strided({2, 2}, {-1, 2}, 0), ember::Error, "[as_strided]");
  EXPECT_EMBER_ERROR(z.as_strided({2, 2}, {1}, 0), ember::Error, "[as_strided]");
  EXPECT_EMBER_ERROR(z.as_strided({int64_t(1) << 62, 4}, {int64_t(1) << 62, 1}, 0), ember::Error,
                     "[as_strided]");
}

TEST(Views, Unfold) {
  Tensor u = ember::arange(7).unfold(0, 3, 2);
  expect_geometry(u, {3, 3}, {2, 1}, 0);
  EXPECT_EQ(values(u), (V{0, 1, 2, 2, 3, 4, 4, 5, 6}));
  Tensor a = a234();
  expect_geometry(a.unfold(2, 2, 1), {2, 3, 3, 2}, {12, 4, 1, 1}, 0);
  Tensor w = a.unfold(1, 2, 2);
  expect_geometry(w, {2, 1, 4, 2}, {12, 8, 1, 4}, 0);
  EXPECT_EQ(values(w), (V{0, 4, 1, 5, 2, 6, 3, 7, 12, 16, 13, 17, 14, 18, 15, 19}));
  expect_geometry(ember::arange(6).unfold(0, 0, 2), {4, 0}, {2, 1}, 0);
  expect_geometry(ember::tensor(7).unfold(0, 1, 1), {1}, {1}, 0);
  expect_geometry(ember::zeros({0, 3}).unfold(1, 2, 1), {0, 2, 2}, {3, 1, 1}, 0);
  EXPECT_EMBER_ERROR(ember::arange(6).unfold(0, 7, 1), ember::Error, "[unfold] maximum size");
  EXPECT_EMBER_ERROR(ember::arange(6).unfold(0, 2, 0), ember::Error, "[unfold] step is 0");
  EXPECT_EMBER_ERROR(ember::arange(6).unfold(0, -1, 1), ember::Error, "[unfold]");
  EXPECT_EMBER_ERROR(ember::arange(6).unfold(1, 1, 1), ember::IndexError, "[unfold]");
}

TEST(Views, Diagonal) {
  Tensor a = a234();
  Tensor d = a.diagonal();
  expect_geometry(d, {4, 2}, {1, 16}, 0);
  EXPECT_EQ(values(d), (V{0, 16, 1, 17, 2, 18, 3, 19}));
  expect_geometry(a.diagonal(1, 1, 2), {2, 3}, {12, 5}, 1);
  EXPECT_EQ(values(a.diagonal(1, 1, 2)), (V{1, 6, 11, 13, 18, 23}));
  expect_geometry(a.diagonal(-1, -1, -2), {2, 3}, {12, 5}, 1);
  expect_geometry(a.diagonal(-1, 1, 2), {2, 2}, {12, 5}, 4);
  EXPECT_EQ(values(a.diagonal(-1, 1, 2)), (V{4, 9, 16, 21}));
  Tensor v = ember::arange(6).view({2, 3});
  expect_geometry(v.diagonal(1), {2}, {4}, 1);
  expect_geometry(v.diagonal(-1), {1}, {4}, 3);
  expect_geometry(v.diagonal(3), {0}, {4}, 0);
  expect_geometry(v.diagonal(-2), {0}, {4}, 0);
  expect_geometry(ember::zeros({0, 3}).diagonal(), {0}, {4}, 0);
  EXPECT_EMBER_ERROR(v.diagonal(0, 1, 1), ember::Error, "[diagonal] diagonal dimensions");
  EXPECT_EMBER_ERROR(v.diagonal(0, 0, 2), ember::IndexError, "[diagonal]");
  EXPECT_EMBER_ERROR(ember::arange(3).diagonal(), ember::IndexError, "[diagonal]");
}

TEST(Views, Movedim) {
  Tensor a = a234();
  Tensor m = a.movedim(0, -1);
  expect_geometry(m, {3, 4, 2}, {4, 1, 12}, 0);
  EXPECT_EQ(values(m)[1], 12);
  expect_geometry(a.movedim({0, 1}, {2, 0}), {3, 4, 2}, {4, 1, 12}, 0);
  expect_geometry(a.movedim({2, 0}, {0, 2}), {4, 3, 2}, {1, 4, 12}, 0);
  expect_geometry(a.moveaxis(1, 0), {3, 2, 4}, {4, 12, 1}, 0);
  expect_geometry(a.movedim(ember::IntArrayRef(), ember::IntArrayRef()), {2, 3, 4}, {12, 4, 1}, 0);
  Tensor s = ember::tensor(7);
  Tensor sm = s.movedim(0, 0);
  expect_geometry(sm, {}, {}, 0);
  EXPECT_FALSE(sm.is_same(s));
  EXPECT_EMBER_ERROR(a.movedim({0, 0}, {1, 0}), ember::Error, "[movedim] repeated dim in `source`");
  EXPECT_EMBER_ERROR(a.movedim({0, 1}, {1, 1}), ember::Error,
                     "[movedim] repeated dim in `destination`");
  EXPECT_EMBER_ERROR(a.movedim({0}, {1, 0}), ember::Error, "[movedim] invalid source");
  EXPECT_EMBER_ERROR(a.movedim(3, 0), ember::IndexError, "[movedim]");
}

TEST(Views, SplitChunkUnbind) {
  auto sp = ember::arange(10).split(4);
  ASSERT_EQ(sp.size(), 3u);
  expect_geometry(sp[0], {4}, {1}, 0);
  expect_geometry(sp[1], {4}, {1}, 4);
  expect_geometry(sp[2], {2}, {1}, 8);
  EXPECT_EQ(values(sp[2]), (V{8, 9}));
  EXPECT_EQ(ember::arange(3).split(5).size(), 1u);
  Tensor a = a234();
  auto ss = a.split({1, 3}, 2);
  ASSERT_EQ(ss.size(), 2u);
  expect_geometry(ss[0], {2, 3, 1}, {12, 4, 1}, 0);
  expect_geometry(ss[1], {2, 3, 3}, {12, 4, 1}, 1);
  EXPECT_TRUE(ss[1].is_alias_of(a));
  auto sw = a.split_with_sizes({0, 3, 0}, -2);
  ASSERT_EQ(sw.size(), 3u);
  expect_geometry(sw[2], {2, 0, 4}, {12, 4, 1}, 12);
  auto ch = a.chunk(2, -1);
  ASSERT_EQ(ch.size(), 2u);
  expect_geometry(ch[1], {2, 3, 2}, {12, 4, 1}, 2);
  auto c5 = ember::zeros({5, 3}).chunk(3);
  ASSERT_EQ(c5.size(), 3u);
  EXPECT_EQ(c5[2].sizes().vec(), (V{1, 3}));
  EXPECT_EQ(ember::zeros({6, 3}).chunk(4).size(), 3u);
  auto c0 = ember::zeros({2, 0}).chunk(3, 1);
  ASSERT_EQ(c0.size(), 3u);
  EXPECT_EQ(c0[2].sizes().vec(), (V{2, 0}));
  EXPECT_EQ(c0[2].storage_offset(), 0);
  auto z2 = ember::zeros({0, 3}).split(2, 1);
  ASSERT_EQ(z2.size(), 2u);
  EXPECT_EQ(z2[1].sizes().vec(), (V{0, 1}));
  EXPECT_EQ(ember::zeros({0, 3}).split(0).size(), 1u);

  auto ub = a.unbind(1);
  ASSERT_EQ(ub.size(), 3u);
  expect_geometry(ub[2], {2, 4}, {12, 1}, 8);
  EXPECT_EQ(values(ub[1]), (V{4, 5, 6, 7, 16, 17, 18, 19}));
  EXPECT_TRUE(ember::zeros({0, 3}).unbind(0).empty());

  Tensor z = ember::zeros({2, 3});
  EXPECT_EMBER_ERROR(z.split(0), ember::Error, "[split] split_size can only be 0");
  EXPECT_EMBER_ERROR(z.split(-1), ember::Error, "[split]");
  EXPECT_EMBER_ERROR(ember::tensor(1.0).split(1), ember::Error, "[split]");
  EXPECT_EMBER_ERROR(z.split(1, 2), ember::IndexError, "[size]");
  EXPECT_EMBER_ERROR(z.split({1, 2}), ember::Error,
                     "[split_with_sizes] expects split_sizes to sum");
  EXPECT_EMBER_ERROR(z.split_with_sizes({1, -1, 2}), ember::Error,
                     "[split_with_sizes] expects split_sizes have only non-negative");
  EXPECT_EMBER_ERROR(z.chunk(0), ember::Error, "[chunk]");
  EXPECT_EMBER_ERROR(ember::tensor(1.0).chunk(1), ember::Error, "[chunk]");
  EXPECT_EMBER_ERROR(ember::tensor(1.0).unbind(), ember::IndexError, "[unbind]");
  EXPECT_EMBER_ERROR(z.unbind(2), ember::IndexError, "[unbind]");
}

TEST(Views, RealImag) {
  using C = std::complex<float>;
  Tensor x = ember::zeros({2, 3}, ember::kComplexFloat);
  C* p = x.data_ptr<C>();
  for (int i = 0; i < 6; ++i) p[i] = C(float(i), float(10 * i));
  Tensor re = x.real();
  Tensor im = ember::imag(x);
  EXPECT_EQ(re.dtype(), ember::kFloat);
  EXPECT_EQ(im.dtype(), ember::kFloat);
  expect_geometry(re, {2, 3}, {6, 2}, 0);
  expect_geometry(im, {2, 3}, {6, 2}, 1);
  EXPECT_EQ(values<float>(re), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(values<float>(im), (std::vector<float>{0, 10, 20, 30, 40, 50}));
  EXPECT_TRUE(im.is_alias_of(x));
  im.data_ptr<float>()[2] = -7.f;  // writes the imaginary part of x[0][1]
  EXPECT_EQ(p[1], C(1.f, -7.f));
  const uint32_t v0 = x._version();
  ember::real(x).fill_(3);
  EXPECT_GT(x._version(), v0);
  EXPECT_EQ(p[5], C(3.f, 50.f));
  expect_geometry(x.t().imag(), {3, 2}, {2, 6}, 1);
  expect_geometry(x[1].imag(), {3}, {2}, 7);
  EXPECT_EQ(values<float>(x[1].imag()), (std::vector<float>{30, 40, 50}));

  Tensor xd = ember::zeros({2}, ember::kComplexDouble);
  EXPECT_EQ(xd.real().dtype(), ember::kDouble);
  // A lazy conjugate: real() is the stored real part; imag() is negated.
  xd.data_ptr<std::complex<double>>()[1] = {2.0, 5.0};
  Tensor xc = xd.conj();
  if (xc.is_conj()) {
    EXPECT_FALSE(xc.real().is_conj());
    EXPECT_EQ(values<double>(xc.real())[1], 2.0);
  }
  EXPECT_EQ(values<double>(xc.imag())[1], -5.0);

  Tensor r = ember::arange(3);
  EXPECT_TRUE(r.real().is_same(r));
  EXPECT_TRUE(ember::real(r).is_same(r));
  EXPECT_EMBER_ERROR(r.imag(), ember::Error, "[imag] imag is not implemented");
  EXPECT_EMBER_ERROR(ember::imag(r), ember::Error, "[imag]");
}

// The libtorch spelling of joins (values checked against torch.cat/stack by tests/python).
TEST(Join, CatAndStackCppApi) {
  ember::Tensor a = ember::arange(6, ember::kFloat).view({2, 3});
  ember::Tensor b = ember::ones({1, 3}, ember::kDouble);
  ember::Tensor c = ember::cat({a, b});
  EXPECT_EQ(c.sizes(), ember::IntArrayRef({3, 3}));
  EXPECT_EQ(c.dtype(), ember::kDouble);
  EXPECT_EQ(c.index({2, 1}).item<double>(), 1.0);
  EXPECT_EQ(ember::stack({a, a}, -1).sizes(), ember::IntArrayRef({2, 3, 2}));
  EXPECT_THROW(ember::cat({a, ember::ones({2})}), ember::Error);
  EXPECT_THROW(ember::cat({a}, 2), ember::IndexError);
}

// tril/triu on a batch, values derived by hand.
TEST(Triangle, TrilTriuByHand) {
  ember::Tensor x = ember::arange(1, 10, ember::kLong).view({3, 3});
  ember::Tensor lo = ember::tril(x, -1), up = ember::triu(x, 1);
  const std::vector<int64_t> want_lo = {0, 0, 0, 4, 0, 0, 7, 8, 0};
  const std::vector<int64_t> want_up = {0, 2, 3, 0, 0, 6, 0, 0, 0};
  EXPECT_EQ(std::vector<int64_t>(lo.data_ptr<int64_t>(), lo.data_ptr<int64_t>() + 9), want_lo);
  EXPECT_EQ(std::vector<int64_t>(up.data_ptr<int64_t>(), up.data_ptr<int64_t>() + 9), want_up);
  ember::tril_(x);
  EXPECT_EQ(x.index({0, 1}).item<int64_t>(), 0);
  EXPECT_EQ(x.index({2, 2}).item<int64_t>(), 9);
  EXPECT_THROW(ember::tril(ember::ones({3})), ember::IndexError);
}
