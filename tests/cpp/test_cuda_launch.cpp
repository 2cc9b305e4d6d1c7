// The CUDA elementwise kernels' launch arithmetic (src/kernels/cuda/launch_math.h), run on the
// host: 32-bit splitting covers every element exactly once with the 64-bit offsets, the 32-bit
// offset calculator agrees with the 64-bit one, vector widths follow alignment, grids are capped.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <vector>

#include "kernels/cuda/launch_math.h"

using namespace ember::cuda;

namespace {

template <int N>
Geometry<N> make_geom(std::vector<int64_t> sizes, std::vector<std::vector<int64_t>> strides) {
  Geometry<N> g;
  g.ndim = int(sizes.size());
  g.numel = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    g.sizes[d] = sizes[d];
    g.numel *= sizes[d];
    for (int k = 0; k < N; ++k) g.strides[k][d] = strides[size_t(k)][d];
  }
  return g;
}

// The 64-bit offsets of every element of `g` visited through split_32bit's pieces (base plus
// the piece's 32-bit offsets), in visit order.
template <int N>
std::vector<std::vector<int64_t>> visit_split(const Geometry<N>& g, int* pieces = nullptr) {
  std::vector<std::vector<int64_t>> seen;
  int count = 0;
  launch::split_32bit(g, [&](const int64_t(&base)[N], const Geometry<N>& sub) {
    ++count;
    EXPECT_TRUE(launch::fits_32bit(sub));
    Offsets32<N> oc = launch::to_offsets32(sub);
    for (int64_t i = 0; i < sub.numel; ++i) {
      int32_t off[N];
      oc.get(uint32_t(i), off);
      std::vector<int64_t> o(N);
      for (int k = 0; k < N; ++k) o[size_t(k)] = base[k] + off[k];
      seen.push_back(o);
    }
  });
  if (pieces) *pieces = count;
  return seen;
}

}  // namespace

TEST(CudaLaunch, Offsets32MatchGeometryOffsets) {
  // A permuted, broadcast 3-D layout: out contiguous, input 1 transposed, input 2 broadcast.
  auto g = make_geom<3>({3, 4, 5}, {{20, 5, 1}, {1, 3, 12}, {0, 1, 0}});
  ASSERT_TRUE(launch::fits_32bit(g));
  Offsets32<3> oc = launch::to_offsets32(g);
  for (int64_t i = 0; i < g.numel; ++i) {
    int64_t ref[3];
    g.offsets(i, ref);
    int32_t off[3];
    oc.get(uint32_t(i), off);
    for (int k = 0; k < 3; ++k) EXPECT_EQ(off[k], ref[k]) << "i=" << i << " k=" << k;
  }
  // The 1-D fast path (no division) agrees too, with a stride-0 operand.
  auto g1 = make_geom<2>({7}, {{3}, {0}});
  Offsets32<2> o1 = launch::to_offsets32(g1);
  for (int64_t i = 0; i < 7; ++i) {
    int32_t off[2];
    o1.get(uint32_t(i), off);
    EXPECT_EQ(off[0], 3 * i);
    EXPECT_EQ(off[1], 0);
  }
}

TEST(CudaLaunch, Fits32Bit) {
  EXPECT_TRUE(launch::fits_32bit(make_geom<2>({1000}, {{1}, {1}})));
  EXPECT_TRUE(launch::fits_32bit(make_geom<2>({(int64_t(1) << 31) - 1}, {{1}, {0}})));
  // More than 2^31 elements.
  EXPECT_FALSE(launch::fits_32bit(make_geom<2>({int64_t(1) << 31}, {{1}, {1}})));
  // Few elements, but an input offset beyond int32 (a large stride).
  EXPECT_FALSE(launch::fits_32bit(make_geom<2>({3}, {{1}, {int64_t(1) << 30}})));
  EXPECT_TRUE(launch::fits_32bit(make_geom<2>({2}, {{1}, {int64_t(1) << 30}})));
  // A size-1 dim's stride never counts.
  auto g = make_geom<2>({1, 4}, {{4, 1}, {int64_t(1) << 40, 1}});
  EXPECT_TRUE(launch::fits_32bit(g));
  // 0-dim.
  Geometry<2> scalar;
  scalar.numel = 1;
  EXPECT_TRUE(launch::fits_32bit(scalar));
}

TEST(CudaLaunch, SplitOfAFittingGeometryIsOneLaunch) {
  auto g = make_geom<2>({6, 5}, {{5, 1}, {1, 6}});
  int pieces = 0;
  auto seen = visit_split(g, &pieces);
  EXPECT_EQ(pieces, 1);
  ASSERT_EQ(int64_t(seen.size()), g.numel);
  for (int64_t i = 0; i < g.numel; ++i) {
    int64_t ref[2];
    g.offsets(i, ref);
    EXPECT_EQ(seen[size_t(i)][0], ref[0]);
    EXPECT_EQ(seen[size_t(i)][1], ref[1]);
  }
  // An empty geometry launches nothing.
  auto empty = make_geom<2>({0, 5}, {{5, 1}, {5, 1}});
  int n = 0;
  launch::split_32bit(empty, [&](const int64_t(&)[2], const Geometry<2>&) { ++n; });
  EXPECT_EQ(n, 0);
}

TEST(CudaLaunch, SplitOfLargeOffsetsCoversEveryElementOnce) {
  // 6 x 4 elements; input 1's outer stride is 2^30, so its largest offset (5 * 2^30) overflows
  // int32 although the element count is small.
  const int64_t big = int64_t(1) << 30;
  auto g = make_geom<2>({6, 4}, {{4, 1}, {big, 1}});
  ASSERT_FALSE(launch::fits_32bit(g));
  int pieces = 0;
  auto seen = visit_split(g, &pieces);
  EXPECT_GT(pieces, 1);
  ASSERT_EQ(int64_t(seen.size()), g.numel);
  // Pieces come in order, so the visit order is the linear order.
  for (int64_t i = 0; i < g.numel; ++i) {
    int64_t ref[2];
    g.offsets(i, ref);
    EXPECT_EQ(seen[size_t(i)][0], ref[0]) << i;
    EXPECT_EQ(seen[size_t(i)][1], ref[1]) << i;
  }
}

TEST(CudaLaunch, SplitOfMoreThanInt32ElementsIsArithmeticOnly) {
  // 3 x 2^30 contiguous elements (too many to visit): the pieces' sizes and bases add up.
  const int64_t inner = int64_t(1) << 30;
  auto g = make_geom<2>({3, inner}, {{inner, 1}, {0, 1}});
  ASSERT_FALSE(launch::fits_32bit(g));
  int64_t total = 0, expect_base = 0;
  std::map<int64_t, int64_t> in_bases;
  launch::split_32bit(g, [&](const int64_t(&base)[2], const Geometry<2>& sub) {
    EXPECT_TRUE(launch::fits_32bit(sub));
    EXPECT_EQ(base[0], expect_base);  // contiguous output: the pieces follow each other
    expect_base += sub.numel;
    in_bases[base[1]] += sub.numel;
    total += sub.numel;
  });
  EXPECT_EQ(total, g.numel);
  EXPECT_EQ(in_bases.size(), 1u);  // the broadcast input restarts at 0 for every row
  // A 1-D tensor of 2^32 + 3 elements: halves until each piece fits.
  auto flat = make_geom<2>({(int64_t(1) << 32) + 3}, {{1}, {1}});
  total = 0;
  expect_base = 0;
  int pieces = 0;
  launch::split_32bit(flat, [&](const int64_t(&base)[2], const Geometry<2>& sub) {
    EXPECT_TRUE(launch::fits_32bit(sub));
    EXPECT_EQ(base[0], expect_base);
    EXPECT_EQ(base[1], expect_base);
    expect_base += sub.numel;
    total += sub.numel;
    ++pieces;
  });
  EXPECT_EQ(total, flat.numel);
  EXPECT_GE(pieces, 3);
}

TEST(CudaLaunch, IsFlat) {
  uint32_t bcast = 0;
  EXPECT_TRUE(launch::is_flat(make_geom<3>({10}, {{1}, {1}, {0}}), bcast));
  EXPECT_EQ(bcast, 1u << 2);
  EXPECT_TRUE(launch::is_flat(make_geom<2>({10}, {{1}, {1}}), bcast));
  EXPECT_EQ(bcast, 0u);
  EXPECT_FALSE(launch::is_flat(make_geom<2>({10}, {{2}, {1}}), bcast));  // strided output
  EXPECT_FALSE(launch::is_flat(make_geom<2>({10}, {{1}, {3}}), bcast));  // strided input
  EXPECT_FALSE(launch::is_flat(make_geom<2>({2, 5}, {{5, 1}, {0, 1}}), bcast));
  Geometry<3> scalar;
  scalar.numel = 1;
  EXPECT_TRUE(launch::is_flat(scalar, bcast));
  EXPECT_EQ(bcast, (1u << 1) | (1u << 2));
}

TEST(CudaLaunch, VectorWidth) {
  static_assert(launch::max_vector_width(4) == 4);  // 4 x 32-bit
  static_assert(launch::max_vector_width(2) == 8);  // 8 x 16-bit
  static_assert(launch::max_vector_width(8) == 2);
  static_assert(launch::max_vector_width(16) == 1);
  static_assert(launch::max_vector_width(1) == 8);
  alignas(64) static char buf[256];
  const int sizes4[2] = {4, 4};
  const void* aligned[2] = {buf, buf + 64};
  EXPECT_EQ(launch::vector_width(4, aligned, sizes4, 2, 0), 4);
  const void* off8[2] = {buf, buf + 8};  // 8-byte aligned input: two floats per load
  EXPECT_EQ(launch::vector_width(4, off8, sizes4, 2, 0), 2);
  const void* off4[2] = {buf + 4, buf};
  EXPECT_EQ(launch::vector_width(4, off4, sizes4, 2, 0), 1);
  // A broadcast operand is read once: its alignment does not matter.
  EXPECT_EQ(launch::vector_width(4, off4 + 1, sizes4, 1, 0), 4);
  const void* bc[2] = {buf, buf + 4};
  EXPECT_EQ(launch::vector_width(4, bc, sizes4, 2, 1u << 1), 4);
  // Mixed sizes: float input, bool output, 4 lanes need the bool pointer 4-byte aligned.
  const int mixed[2] = {1, 4};
  const void* m1[2] = {buf + 4, buf};
  EXPECT_EQ(launch::vector_width(4, m1, mixed, 2, 0), 4);
  const void* m2[2] = {buf + 2, buf};
  EXPECT_EQ(launch::vector_width(4, m2, mixed, 2, 0), 2);
  // 16-bit: 8 lanes need 16-byte alignment.
  const int half[2] = {2, 2};
  const void* h[2] = {buf + 16, buf + 32};
  EXPECT_EQ(launch::vector_width(8, h, half, 2, 0), 8);
  const void* h2[2] = {buf + 8, buf + 32};
  EXPECT_EQ(launch::vector_width(8, h2, half, 2, 0), 4);
}

TEST(CudaLaunch, GridSize) {
  EXPECT_EQ(launch::grid_size(0, 256, 132, 16), 1u);
  EXPECT_EQ(launch::grid_size(1, 256, 132, 16), 1u);
  EXPECT_EQ(launch::grid_size(256, 256, 132, 16), 1u);
  EXPECT_EQ(launch::grid_size(257, 256, 132, 16), 2u);
  EXPECT_EQ(launch::grid_size(int64_t(1) << 40, 256, 132, 16), 132u * 16u);  // capped
  EXPECT_EQ(launch::grid_size(1000000, 256, 0, 16), 16u);  // unknown SM count counts as 1
}
