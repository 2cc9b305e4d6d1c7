// Basic indexing (`index`, `index_put_`) against Python's `x[...]` in PyTorch 1.13 (expected
// geometry and values printed by torch 1.13 and pasted here).

#include <gtest/gtest.h>

#include <string>
#include <typeinfo>
#include <vector>

#include "ember/ember.h"
#include "view_test_util.h"

using ember::Tensor;
using ember::indexing::Ellipsis;
using ember::indexing::None;
using ember::indexing::Slice;
using ember::indexing::TensorIndex;

using namespace ember_test;

TEST(Indexing, IntegersAndSlices) {
  Tensor a = a234();
  Tensor r = a.index({1, Slice(), Slice(None, None, 3)});
  expect_geometry(r, {3, 2}, {4, 3}, 12);
  EXPECT_EQ(values(r), (V{12, 15, 16, 19, 20, 23}));
  EXPECT_TRUE(r.is_alias_of(a));
  Tensor q = a.index({-1, Slice(1, None), None, Slice(-3, 3)});
  expect_geometry(q, {2, 1, 2}, {4, 4, 1}, 17);
  EXPECT_EQ(values(q), (V{17, 18, 21, 22}));
  expect_geometry(a.index({Slice(), 1}), {2, 4}, {12, 1}, 4);
  Tensor e = a.index({1, 2, 3});
  expect_geometry(e, {}, {}, 23);
  EXPECT_EQ(e.item<int64_t>(), 23);
  EXPECT_EQ(a.index({-2, -3, -4}).item<int64_t>(), 0);

  Tensor v = ember::arange(6).view({2, 3});
  expect_geometry(v.index({Slice(1, None), -2}), {1}, {3}, 4);
  expect_geometry(v.index({Slice(), Slice(-100, 100)}), {2, 3}, {3, 1}, 0);
  expect_geometry(v.index({Slice(5, None)}), {0, 3}, {3, 1}, 6);
  expect_geometry(v.index({Slice(), Slice(2, 1)}), {2, 0}, {3, 1}, 2);
  expect_geometry(v.index({Slice(None, -1)}), {1, 3}, {3, 1}, 0);
  // An empty index list (and a full slice) still returns a new view, as `x[()]`.
  Tensor all = v.index(ember::ArrayRef<TensorIndex>());
  expect_geometry(all, {2, 3}, {3, 1}, 0);
  EXPECT_FALSE(all.is_same(v));
  EXPECT_FALSE(v.index({Slice()}).is_same(v));
}

TEST(Indexing, NoneAndEllipsis) {
  Tensor a = a234();
  Tensor r = a.index({"...", 1});
  expect_geometry(r, {2, 3}, {12, 4}, 1);
  EXPECT_EQ(values(r), (V{1, 5, 9, 13, 17, 21}));
  expect_geometry(a.index({Ellipsis, 1}), {2, 3}, {12, 4}, 1);
  expect_geometry(a.index({None, 0, Ellipsis, None}), {1, 3, 4, 1}, {24, 4, 1, 1}, 0);
  expect_geometry(a.index({1, None}), {1, 3, 4}, {12, 4, 1}, 12);
  expect_geometry(a.index({Ellipsis}), {2, 3, 4}, {12, 4, 1}, 0);
  expect_geometry(a.index({0, 1, 2, Ellipsis}), {}, {}, 6);
  Tensor v = ember::arange(6).view({2, 3});
  expect_geometry(v.index({Slice(), None, Slice(None, None, 2)}), {2, 1, 2}, {3, 3, 2}, 0);
  expect_geometry(v.index({Ellipsis, None, Slice()}), {2, 1, 3}, {3, 3, 1}, 0);
  // Several Ellipsis are accepted as in PyTorch 1.13: each skips the unspecified dims.
  expect_geometry(a.index({0, Ellipsis, Ellipsis}), {3, 4}, {4, 1}, 0);
  expect_geometry(v.index({Ellipsis, 1, Ellipsis}), {2}, {3}, 1);
  EXPECT_EMBER_ERROR(v.index({Ellipsis, Ellipsis, 1}), ember::IndexError, "[index]");
  EXPECT_EMBER_ERROR(a.index({Ellipsis, Ellipsis, 0}), ember::IndexError, "[index] dimension");
  EXPECT_EMBER_ERROR(a.index({Ellipsis, Ellipsis, None, 0}), ember::IndexError, "[index]");
  EXPECT_EMBER_ERROR(a.index({"..", 0}), ember::Error, "[index] expected \"...\"");
}

TEST(Indexing, ZeroDimAndZeroSize) {
  Tensor s = ember::tensor(7);
  expect_geometry(s.index({Ellipsis}), {}, {}, 0);
  expect_geometry(s.index({None}), {1}, {1}, 0);
  expect_geometry(s.index({Ellipsis, None}), {1}, {1}, 0);
  EXPECT_EQ(s.index({None}).item<int64_t>(), 7);
  EXPECT_EMBER_ERROR(s.index({0}), ember::IndexError, "[index] invalid index of a 0-dim tensor");
  EXPECT_EMBER_ERROR(s.index({Slice()}), ember::IndexError, "[index] too many indices");
  Tensor z = ember::zeros({0, 3});
  expect_geometry(z.index({Slice(1, None)}), {0, 3}, {3, 1}, 0);
  expect_geometry(z.index({Slice(), 1}), {0}, {3}, 1);
  EXPECT_EMBER_ERROR(z.index({0}), ember::IndexError, "[index] index 0 is out of bounds");
}

TEST(Indexing, Booleans) {
  Tensor v = ember::arange(6).view({2, 3});
  EXPECT_EQ(v.index({true}).sizes().vec(), (V{1, 2, 3}));
  EXPECT_EQ(values(v.index({true})), (V{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(v.index({false}).sizes().vec(), (V{0, 2, 3}));
  // Several bool indices collapse into one dim: in place when adjacent, else in front.
  EXPECT_EQ(v.index({true, true}).sizes().vec(), (V{1, 2, 3}));
  EXPECT_EQ(v.index({Slice(), true, false}).sizes().vec(), (V{2, 0, 3}));
  EXPECT_EQ(v.index({true, Slice(), false}).sizes().vec(), (V{0, 2, 3}));
  EXPECT_EQ(v.index({true, 0, false}).sizes().vec(), (V{0, 3}));
  EXPECT_EQ(v.index({true, None, true}).sizes().vec(), (V{1, 1, 2, 3}));
  EXPECT_EQ(v.index({false, Ellipsis, true}).sizes().vec(), (V{0, 2, 3}));
  Tensor s = ember::tensor(7);
  EXPECT_EQ(s.index({true}).sizes().vec(), (V{1}));
  EXPECT_EQ(s.index({true}).item<int64_t>(), 7);
  EXPECT_EQ(s.index({false}).sizes().vec(), (V{0}));
}

TEST(Indexing, Errors) {
  Tensor a = a234();
  EXPECT_EMBER_ERROR(a.index({0, 1, 2, 3}), ember::IndexError,
                     "[index] too many indices for tensor of dimension 3");
  EXPECT_EMBER_ERROR(a.index({5}), ember::IndexError,
                     "[index] index 5 is out of bounds for dimension 0 with size 2");
  EXPECT_EMBER_ERROR(a.index({Slice(), -4}), ember::IndexError, "[index] index -4");
  EXPECT_EMBER_ERROR(a.index({Slice(None, None, 0)}), ember::ValueError,
                     "[index] step must be greater than zero");
  EXPECT_EMBER_ERROR(a.index({Slice(None, None, -1)}), ember::ValueError, "[index]");
  EXPECT_EMBER_ERROR(a.index({ember::arange(3)}), ember::IndexError,
                     "[index] index 2 is out of bounds for dimension 0 with size 2");
  EXPECT_EMBER_ERROR(a.index({0, ember::tensor({0, 3})}), ember::IndexError,
                     "[index] index 3 is out of bounds for dimension 0 with size 3");
  EXPECT_EMBER_ERROR(a.index_put_({ember::arange(3)}, 1), ember::IndexError,
                     "[index_put_] index 2 is out of bounds for dimension 0 with size 2");
  EXPECT_EQ(values(a), values(ember::arange(24)));  // the failed index_put_ wrote nothing
}

TEST(Indexing, IndexPutTensor) {
  Tensor x = ember::zeros({2, 3}, ember::kLong);
  Tensor& r = x.index_put_({0}, ember::tensor({1, 2, 3}));
  EXPECT_EQ(&r, &x);
  EXPECT_EQ(values(x), (V{1, 2, 3, 0, 0, 0}));
  // The value broadcasts; leading size-1 dims of the value are dropped first, as setitem.
  x.index_put_({Slice(), Slice(1, None)}, ember::tensor({7, 8}));
  EXPECT_EQ(values(x), (V{1, 7, 8, 0, 7, 8}));
  x.index_put_({1}, ember::tensor({4, 5, 6}).view({1, 1, 3}));
  EXPECT_EQ(values(x), (V{1, 7, 8, 4, 5, 6}));
  x.index_put_({Slice(), 0}, ember::tensor(9));
  EXPECT_EQ(values(x), (V{9, 7, 8, 9, 5, 6}));
  x.index_put_({Ellipsis, -1}, ember::tensor({1, 2}).view({2}).expand({2}));
  EXPECT_EQ(values(x), (V{9, 7, 1, 9, 5, 2}));
  x.index_put_({false}, ember::tensor({3, 3, 3}));  // selects nothing
  EXPECT_EQ(values(x), (V{9, 7, 1, 9, 5, 2}));
  EXPECT_EMBER_ERROR(x.index_put_({0}, ember::tensor({1, 2})), ember::Error,
                     "[index_put_] shape mismatch");
  EXPECT_EMBER_ERROR(x.index_put_({0}, ember::zeros({2, 3}, ember::kLong)), ember::Error,
                     "[index_put_] shape mismatch");
}

TEST(Indexing, IndexPutScalarAndVersion) {
  Tensor x = ember::zeros({2, 3}, ember::kLong);
  Tensor view = x.view({6});
  const uint32_t v0 = x._version();
  x.index_put_({Slice(), Slice(None, None, 2)}, 5);
  EXPECT_EQ(values(x), (V{5, 0, 5, 5, 0, 5}));
  EXPECT_GT(x._version(), v0);
  EXPECT_EQ(view._version(), x._version());  // the version counter is shared with views
  const uint32_t v1 = x._version();
  x.index_put_(std::vector<TensorIndex>{1, 1}, ember::Scalar(int64_t(-1)));
  EXPECT_EQ(values(view), (V{5, 0, 5, 5, -1, 5}));
  EXPECT_GT(x._version(), v1);
  // Writing through an index view also updates the base.
  Tensor row = x.index({0});
  row.data_ptr<int64_t>()[1] = 42;
  EXPECT_EQ(x.index({0, 1}).item<int64_t>(), 42);
}
