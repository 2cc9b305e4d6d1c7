// The libtorch-spelled C++ API of the indexing ops and advanced indexing, on hand-derived
// values (tests/python/test_index_ops.py checks them against torch 1.13 in depth).

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "ember/ember.h"
#include "view_test_util.h"

using ember::Tensor;
using ember::indexing::Slice;
using namespace ember_test;

namespace {
Tensor a34() { return ember::arange(12).view({3, 4}); }  // [[0..3], [4..7], [8..11]]
Tensor longs(std::vector<int64_t> v) { return ember::tensor(v); }
}  // namespace

TEST(IndexOps, IndexSelectGatherTake) {
  Tensor a = a34();
  Tensor r = ember::index_select(a, 0, longs({2, 0}));
  EXPECT_EQ(r.sizes().vec(), (V{2, 4}));
  EXPECT_EQ(values(r), (V{8, 9, 10, 11, 0, 1, 2, 3}));
  EXPECT_EQ(values(a.index_select(1, longs({3, 3}))), (V{3, 3, 7, 7, 11, 11}));
  EXPECT_EQ(values(a.t().index_select(0, longs({1}))), (V{1, 5, 9}));
  Tensor out = ember::empty({0}, ember::kLong);
  ember::index_select_out(out, a, 1, longs({0}).to(ember::kInt));
  EXPECT_EQ(values(out), (V{0, 4, 8}));
  Tensor g = a.gather(1, ember::tensor({{3, 0}, {1, 1}}));
  EXPECT_EQ(values(g), (V{3, 0, 5, 5}));
  EXPECT_EQ(values(ember::gather(a, 0, ember::tensor({{2, 0, 1}}))), (V{8, 1, 6}));
  EXPECT_EQ(values(a.take(longs({-1, 0, 5}))), (V{11, 0, 5}));
  EXPECT_EQ(values(a.t().take(longs({1}))), (V{4}));
  EXPECT_EQ(values(ember::take_along_dim(a, ember::tensor({{1}, {0}, {3}}), 1)), (V{1, 4, 11}));
  EXPECT_EQ(values(a.take_along_dim(longs({11, 2}))), (V{11, 2}));
}

TEST(IndexOps, ScatterFamily) {
  Tensor z = ember::zeros({2, 3}, ember::kLong);
  Tensor src = ember::tensor({{1, 2, 3}, {4, 5, 6}}, ember::kLong);
  Tensor idx = ember::tensor({{1, 0, 1}, {1, 1, 0}});
  EXPECT_EQ(values(z.scatter(0, idx, src)), (V{0, 2, 6, 4, 5, 3}));
  EXPECT_EQ(values(ember::scatter_add(z, 0, idx, src)), (V{0, 2, 6, 5, 5, 3}));
  EXPECT_EQ(values(ember::scatter(z, 1, idx, ember::Scalar(7))), (V{7, 7, 0, 7, 7, 0}));
  EXPECT_EQ(values(ember::ones({2, 3}, ember::kLong).scatter_(0, idx, src, "multiply")),
            (V{1, 2, 6, 4, 5, 3}));
  EXPECT_EQ(values(ember::scatter_reduce(z, 0, idx, src, "amax", false)), (V{0, 2, 6, 4, 5, 3}));
  EXPECT_EQ(values(ember::scatter_reduce(z, 0, idx, src, "mean", true)),
            (V{0, 1, 3, 1, 2, 1}));  // floor((0 + 1 + 4) / 3) = 1, ...
  EXPECT_EMBER_ERROR(z.scatter(0, ember::tensor({{2}}), src), ember::Error,
                     "[scatter_] index 2 is out of bounds for dimension 0 with size 2");
  EXPECT_EQ(values(z), (V{0, 0, 0, 0, 0, 0}));
}

TEST(IndexOps, IndexAddCopyFill) {
  Tensor a = a34();
  Tensor ones = ember::ones({2, 4}, ember::kLong);
  EXPECT_EQ(values(a.index_add(0, longs({2, 2}), ones, 3)),
            (V{0, 1, 2, 3, 4, 5, 6, 7, 14, 15, 16, 17}));
  EXPECT_EQ(values(ember::index_copy(a, 0, longs({1, 0}), ones * 9)),
            (V{9, 9, 9, 9, 9, 9, 9, 9, 8, 9, 10, 11}));
  EXPECT_EQ(values(a.index_fill(1, longs({-1}), -5)), (V{0, 1, 2, -5, 4, 5, 6, -5, 8, 9, 10, -5}));
  Tensor b = a.clone();
  EXPECT_EMBER_ERROR(b.index_copy_(0, longs({0, 3}), ones), ember::IndexError,
                     "[index_copy_] index 3 is out of bounds for dimension 0 with size 3");
  EXPECT_EQ(values(b), values(a));
}

TEST(IndexOps, MaskedAndNonzero) {
  Tensor a = a34();
  Tensor m = a.remainder(5).eq(0);  // 0, 5, 10
  EXPECT_EQ(values(a.masked_fill(m, -1)), (V{-1, 1, 2, 3, 4, -1, 6, 7, 8, 9, -1, 11}));
  EXPECT_EQ(values(ember::masked_select(a, m)), (V{0, 5, 10}));
  EXPECT_EQ(values(a.masked_scatter(m, longs({7, 8, 9, 10}))),
            (V{7, 1, 2, 3, 4, 8, 6, 7, 8, 9, 9, 11}));
  Tensor nz = ember::nonzero(m);
  EXPECT_EQ(nz.sizes().vec(), (V{3, 2}));
  EXPECT_EQ(values(nz), (V{0, 0, 1, 1, 2, 2}));
  auto parts = ember::nonzero_numpy(m);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(values(parts[1]), (V{0, 1, 2}));
  EXPECT_EQ(values(ember::argwhere(m.t())), (V{0, 0, 1, 1, 2, 2}));
}

TEST(IndexOps, AdvancedIndexing) {
  Tensor a = ember::arange(24).view({2, 3, 4});
  // Adjacent advanced indices stay in place: [2] + [2] + ... -> shape [2, 2].
  Tensor r = a.index({Slice(), longs({0, 2}), longs({1, 3})});
  EXPECT_EQ(r.sizes().vec(), (V{2, 2}));
  EXPECT_EQ(values(r), (V{1, 11, 13, 23}));
  // Separated by a slice: the index dims go first.
  Tensor s = a.index({longs({1, 0}), Slice(), longs({0, 0})});
  EXPECT_EQ(s.sizes().vec(), (V{2, 3}));
  EXPECT_EQ(values(s), (V{12, 16, 20, 0, 4, 8}));
  // A bool mask over two dims.
  Tensor m = a.index({0}).gt(9);
  EXPECT_EQ(values(a.index({Slice(), m})), (V{10, 11, 22, 23}));
  EXPECT_EQ(values(a.index({-1, -1, longs({-1, 0})})), (V{23, 20}));
  // index_put_ with accumulate sums duplicates.
  Tensor z = ember::zeros({3}, ember::kLong);
  ember::index_put_(z, {std::optional<Tensor>(longs({0, 2, 0, 0}))}, longs({1, 2, 3, 4}), true);
  EXPECT_EQ(values(z), (V{8, 0, 2}));
  z.index_put_({longs({1})}, longs({5}));
  EXPECT_EQ(values(z), (V{8, 5, 2}));
  Tensor w = ember::index_put(z, {std::nullopt}, longs({1, 1, 1}), true);
  EXPECT_EQ(values(w), (V{9, 6, 3}));
  EXPECT_EQ(values(ember::index(a, {longs({1}), std::nullopt, longs({2})})), (V{14, 18, 22}));
}
