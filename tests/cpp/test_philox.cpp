// The shared Philox map (kernels/common/philox.h) evaluated on the host reproduces the CPU
// generator's draws: the CUDA kernels evaluate the same functions, so one seed gives the same
// numbers on both devices.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "ember/ember.h"
#include "kernels/common/philox.h"

using namespace ember;

namespace {

// (seed, offset) of a generator's state.
std::pair<uint64_t, uint64_t> state_of(const Generator& g) {
  Tensor s = g.get_state();
  uint64_t v[2];
  std::memcpy(v, s.data_ptr(), 16);
  return {v[0], v[1]};
}

// A generator at `seed`, advanced by a draw of `skip` floats.
Generator make_gen(uint64_t seed, int64_t skip) {
  Generator g;
  g.manual_seed(seed);
  if (skip > 0) empty({skip}).uniform_(0, 1, g);
  return g;
}

const uint64_t kSeeds[] = {0, 1, 42, 0xDEADBEEFCAFEull};
const int64_t kSkips[] = {0, 3, 1000};
const int64_t kSizes[] = {1, 5, 4099, 70001};

template <class F>
void for_cases(const F& f) {
  for (uint64_t seed : kSeeds)
    for (int64_t skip : kSkips)
      for (int64_t n : kSizes) f(seed, skip, n);
}

TEST(Philox, BlockMatchesGenerator) {
  const uint64_t cases[][3] = {{0, 0, 0}, {42, 7, 0}, {0xFFFFFFFFFFFFFFFFull, 3, 9}, {5, ~0ull, 1}};
  for (const auto& c : cases) {
    uint32_t want[4];
    Philox4x32::block(c[0], c[1], c[2], want);
    philox::Words got = philox::block(c[0], c[1], c[2]);
    for (int j = 0; j < 4; ++j) EXPECT_EQ(got.w[j], want[j]);
  }
  // Random123's known answer for philox4x32_10 of a zero counter and key.
  philox::Words z = philox::block(0, 0, 0);
  EXPECT_EQ(z.w[0], 0x6627e8d5u);
  EXPECT_EQ(z.w[1], 0xe169c58du);
  EXPECT_EQ(z.w[2], 0xbc57ac4cu);
  EXPECT_EQ(z.w[3], 0x9b00dbd8u);
}

TEST(Philox, DrawBlockCarriesIntoTheHighHalf) {
  philox::Words a = philox::draw_block(9, ~0ull, 1);
  philox::Words b = philox::block(9, 0, 1);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(a.w[j], b.w[j]);
}

TEST(Philox, UniformFloatMatchesCpu) {
  for_cases([](uint64_t seed, int64_t skip, int64_t n) {
    Generator g = make_gen(seed, skip);
    auto [s, off] = state_of(g);
    Tensor t = empty({n});
    t.uniform_(-2.5, 3.0, g);
    EXPECT_EQ(state_of(g).second, off + uint64_t((n + 3) / 4));
    const float* p = t.data_ptr<float>();
    float from = -2.5f, range = 5.5f;
    for (int64_t i = 0; i < n; ++i) {
      philox::Words w = philox::draw_block(s, off, uint64_t(i / 4));
      float want = philox::uniform_float(w.w[i % 4], philox::kBitsFloat, from, range);
      ASSERT_EQ(p[i], want) << "seed " << seed << " skip " << skip << " i " << i;
    }
  });
}

TEST(Philox, UniformDoubleMatchesCpu) {
  for_cases([](uint64_t seed, int64_t skip, int64_t n) {
    Generator g = make_gen(seed, skip);
    auto [s, off] = state_of(g);
    Tensor t = empty({n}, TensorOptions(kDouble));
    t.uniform_(1.0, 4.0, g);
    EXPECT_EQ(state_of(g).second, off + uint64_t((n + 1) / 2));
    const double* p = t.data_ptr<double>();
    for (int64_t i = 0; i < n; ++i) {
      philox::Words w = philox::draw_block(s, off, uint64_t(i / 2));
      double want = philox::uniform_double(w.w[2 * (i % 2)], w.w[2 * (i % 2) + 1], 1.0, 3.0);
      ASSERT_EQ(p[i], want) << "seed " << seed << " i " << i;
    }
  });
}

TEST(Philox, UniformHalfAndBFloat16MatchCpu) {
  for (ScalarType dt : {kHalf, kBFloat16}) {
    for_cases([dt](uint64_t seed, int64_t skip, int64_t n) {
      Generator g = make_gen(seed, skip);
      auto [s, off] = state_of(g);
      Tensor t = empty({n}, TensorOptions(dt));
      t.uniform_(0, 1, g);
      std::vector<float> got(static_cast<size_t>(n));
      Tensor f = t.to(kFloat);
      std::memcpy(got.data(), f.data_ptr(), size_t(n) * 4);
      const int bits = dt == kHalf ? philox::kBitsHalf : philox::kBitsBFloat16;
      for (int64_t i = 0; i < n; ++i) {
        philox::Words w = philox::draw_block(s, off, uint64_t(i / 4));
        float want = philox::uniform_float(w.w[i % 4], bits, 0.0f, 1.0f);
        // Every draw is exact in the 16-bit type.
        ASSERT_EQ(got[size_t(i)], want) << dt << " i " << i;
      }
    });
  }
}

TEST(Philox, ComplexFillsTwiceTheReals) {
  Generator g = make_gen(3, 0);
  auto [s, off] = state_of(g);
  Tensor t = empty({7}, TensorOptions(kComplexFloat));
  t.uniform_(0, 1, g);
  Tensor r = view_as_real(t).contiguous();
  const float* p = r.data_ptr<float>();
  for (int64_t i = 0; i < 14; ++i) {
    philox::Words w = philox::draw_block(s, off, uint64_t(i / 4));
    EXPECT_EQ(p[i], philox::uniform_float(w.w[i % 4], philox::kBitsFloat, 0.0f, 1.0f));
  }
}

TEST(Philox, BernoulliMatchesCpu) {
  for_cases([](uint64_t seed, int64_t skip, int64_t n) {
    for (double prob : {0.0, 0.3, 1.0}) {
      Generator g = make_gen(seed, skip);
      auto [s, off] = state_of(g);
      Tensor t = empty({n});
      t.bernoulli_(prob, g);
      const float* p = t.data_ptr<float>();
      for (int64_t i = 0; i < n; ++i) {
        philox::Words w = philox::draw_block(s, off, uint64_t(i / 4));
        ASSERT_EQ(p[i], philox::bernoulli(w.w[i % 4], prob) ? 1.0f : 0.0f) << i;
      }
    }
  });
}

TEST(Philox, BernoulliTensorMatchesCpu) {
  const int64_t n = 1003;
  Tensor probs = linspace(0, 1, n, TensorOptions(kDouble));
  Generator g = make_gen(11, 5);
  auto [s, off] = state_of(g);
  Tensor t = empty({n}, TensorOptions(kLong));
  t.bernoulli_(probs, g);
  const int64_t* p = t.data_ptr<int64_t>();
  const double* pp = probs.data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) {
    philox::Words w = philox::draw_block(s, off, uint64_t(i / 4));
    ASSERT_EQ(p[i], philox::bernoulli(w.w[i % 4], pp[i]) ? 1 : 0) << i;
  }
}

TEST(Philox, IntegerRangesMatchCpu) {
  struct Case {
    int64_t from;
    std::optional<int64_t> to;
  };
  const int64_t big = int64_t(1) << 40;
  const Case cases[] = {{0, 10},
                        {-7, 3},
                        {0, int64_t(1) << 32},
                        {-big, big},
                        {std::numeric_limits<int64_t>::min(), std::nullopt}};
  for (const Case& c : cases) {
    for_cases([&](uint64_t seed, int64_t skip, int64_t n) {
      Generator g = make_gen(seed, skip);
      auto [s, off] = state_of(g);
      Tensor t = empty({n}, TensorOptions(kLong));
      t.random_(c.from, c.to, g);
      uint64_t range = c.to ? uint64_t(*c.to) - uint64_t(c.from)
                            : uint64_t(std::numeric_limits<int64_t>::max()) - uint64_t(c.from) + 1;
      const bool one = philox::random_one_word(range);
      EXPECT_EQ(state_of(g).second, off + uint64_t(one ? (n + 3) / 4 : (n + 1) / 2));
      const int64_t* p = t.data_ptr<int64_t>();
      for (int64_t i = 0; i < n; ++i) {
        uint64_t v;
        if (one) {
          philox::Words w = philox::draw_block(s, off, uint64_t(i / 4));
          v = philox::random32(w.w[i % 4], range);
        } else {
          philox::Words w = philox::draw_block(s, off, uint64_t(i / 2));
          v = philox::random64(w.w[2 * (i % 2)], w.w[2 * (i % 2) + 1], range);
        }
        ASSERT_EQ(p[i], int64_t(uint64_t(c.from) + v)) << "from " << c.from << " i " << i;
      }
    });
  }
}

TEST(Philox, Random64MatchesWideMultiply) {
  // The multiply-shift of a 64-bit word by a range below 2^64.
  EXPECT_EQ(philox::random64(0, 0x80000000u, 10), 5u);
  EXPECT_EQ(philox::random64(0xFFFFFFFFu, 0xFFFFFFFFu, 3), 2u);
  EXPECT_EQ(philox::random64(123, 456, 0), (uint64_t(456) << 32) | 123);
  EXPECT_EQ(philox::random32(0xFFFFFFFFu, uint64_t(1) << 32), 0xFFFFFFFFu);
}

// Box-Muller through different math libraries: equal to a few ulps.
TEST(Philox, NormalMatchesCpuClosely) {
  for_cases([](uint64_t seed, int64_t skip, int64_t n) {
    Generator g = make_gen(seed, skip);
    auto [s, off] = state_of(g);
    Tensor t = empty({n});
    t.normal_(0.5, 2.0, g);
    EXPECT_EQ(state_of(g).second, off + uint64_t((n + 3) / 4));
    const float* p = t.data_ptr<float>();
    for (int64_t i = 0; i < n; ++i) {
      philox::Words w = philox::draw_block(s, off, uint64_t(i / 4));
      float want = philox::normal_float(philox::normal_float_in(w, int(i % 4)), 0.5f, 2.0f);
      ASSERT_NEAR(p[i], want, 1e-5 * (1 + std::fabs(want))) << "seed " << seed << " i " << i;
    }
  });
  Generator g = make_gen(8, 1);
  auto [s, off] = state_of(g);
  const int64_t n = 4001;
  Tensor t = empty({n}, TensorOptions(kDouble));
  t.normal_(-1.0, 0.25, g);
  const double* p = t.data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) {
    philox::Words w = philox::draw_block(s, off, uint64_t(i / 2));
    double want = philox::normal_double(philox::normal_double_in(w, int(i % 2)), -1.0, 0.25);
    ASSERT_NEAR(p[i], want, 1e-13 * (1 + std::fabs(want))) << i;
  }
}

TEST(Philox, ExponentialMatchesCpuClosely) {
  const int64_t n = 5003;
  Generator g = make_gen(17, 2);
  auto [s, off] = state_of(g);
  Tensor t = empty({n});
  t.exponential_(1.5, g);
  const float* p = t.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) {
    philox::Words w = philox::draw_block(s, off, uint64_t(i / 4));
    float want = philox::exponential_float(w.w[i % 4], 1.5f);
    ASSERT_NEAR(p[i], want, 1e-5 * (1 + want)) << i;
  }
  Generator g2 = make_gen(17, 2);
  auto [s2, off2] = state_of(g2);
  Tensor d = empty({n}, TensorOptions(kDouble));
  d.exponential_(0.5, g2);
  const double* q = d.data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) {
    philox::Words w = philox::draw_block(s2, off2, uint64_t(i / 2));
    double want = philox::exponential_double(w.w[2 * (i % 2)], w.w[2 * (i % 2) + 1], 0.5);
    ASSERT_NEAR(q[i], want, 1e-13 * (1 + want)) << i;
  }
}

}  // namespace
