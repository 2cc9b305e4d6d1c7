// Random numbers: Philox known answers, reproducibility (seeds, states, thread counts),
// distribution sanity on 1e6 samples, permutations, multinomial and error checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <thread>
#include <vector>

#include "ember/ember.h"

using namespace ember;

namespace {

template <class T>
std::vector<T> values(const Tensor& t) {
  Tensor c = t.contiguous();
  const T* p = c.data_ptr<T>();
  return std::vector<T>(p, p + c.numel());
}

struct Moments {
  double mean = 0, var = 0, min = INFINITY, max = -INFINITY;
};

Moments moments(const Tensor& t) {
  std::vector<double> v = values<double>(t.to(kDouble));
  Moments m;
  for (double x : v) {
    m.mean += x;
    m.min = std::min(m.min, x);
    m.max = std::max(m.max, x);
  }
  m.mean /= double(v.size());
  for (double x : v) m.var += (x - m.mean) * (x - m.mean);
  m.var /= double(v.size() - 1);
  return m;
}

// Restores the intra-op thread count when a test changes it.
struct ThreadGuard {
  int saved = get_num_threads();
  ~ThreadGuard() { set_num_threads(saved); }
};

template <class F>
void expect_runtime_error(F&& f) {
  try {
    f();
    ADD_FAILURE() << "expected an ember::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime) << e.what();
  }
}

constexpr int64_t kN = 1000000;

}  // namespace

TEST(Random, PhiloxKnownAnswers) {
  // Random123 kat_vectors, philox4x32_10.
  uint32_t out[4];
  Philox4x32::block(0, 0, 0, out);
  EXPECT_EQ(out[0], 0x6627e8d5u);
  EXPECT_EQ(out[1], 0xe169c58du);
  EXPECT_EQ(out[2], 0xbc57ac4cu);
  EXPECT_EQ(out[3], 0x9b00dbd8u);
  Philox4x32::block(~0ull, ~0ull, ~0ull, out);
  EXPECT_EQ(out[0], 0x408f276du);
  EXPECT_EQ(out[1], 0x41c83b0eu);
  EXPECT_EQ(out[2], 0xa20bc7c6u);
  EXPECT_EQ(out[3], 0x6d5451fdu);
  // counter = 243f6a88 85a308d3 13198a2e 03707344, key = a4093822 299f31d0 (words low first).
  Philox4x32::block(0x299f31d0a4093822ull, 0x85a308d3243f6a88ull, 0x0370734413198a2eull, out);
  EXPECT_EQ(out[0], 0xd16cfe09u);
  EXPECT_EQ(out[1], 0x94fdccebu);
  EXPECT_EQ(out[2], 0x5001e420u);
  EXPECT_EQ(out[3], 0x24126ea1u);
}

TEST(Random, ElementsMapToPhiloxCounters) {
  // randint(0, 2^32) returns raw Philox words: element i is word i % 4 of block offset + i / 4
  // (Note [Reproducible random streams]). Checks the batched SIMD Philox against the scalar one.
  Generator g;
  const uint64_t seed = 0x1234567890abcdefull;
  g.manual_seed(seed);
  uint64_t offset = 0;
  for (int64_t n : {1, 7, 64, 1001, 70001}) {
    std::vector<int64_t> v = values<int64_t>(randint(0, int64_t(1) << 32, {n}, g));
    for (int64_t i = 0; i < n; ++i) {
      uint32_t w[4];
      Philox4x32::block(seed, offset + uint64_t(i / 4), 0, w);
      ASSERT_EQ(uint64_t(v[size_t(i)]), w[i % 4]) << "n=" << n << " i=" << i;
    }
    offset += uint64_t((n + 3) / 4);
  }
  // The 128-bit counter carries into its high word.
  uint64_t st[2] = {seed, ~0ull - 2};
  g.set_state(from_blob(st, {16}, kByte).clone());
  std::vector<int64_t> v = values<int64_t>(randint(0, int64_t(1) << 32, {40}, g));
  for (int64_t i = 0; i < 40; ++i) {
    uint64_t lo = ~0ull - 2 + uint64_t(i / 4);
    uint32_t w[4];
    Philox4x32::block(seed, lo, lo < ~0ull - 2 ? 1 : 0, w);
    ASSERT_EQ(uint64_t(v[size_t(i)]), w[i % 4]) << i;
  }
}

TEST(Random, SameSeedSameNumbers) {
  manual_seed(1234);
  Tensor a = rand({1000});
  Tensor b = randn({1000});
  manual_seed(1234);
  EXPECT_TRUE(rand({1000}).equal(a));
  EXPECT_TRUE(randn({1000}).equal(b));
  EXPECT_FALSE(rand({1000}).equal(a));  // the stream moved on
  manual_seed(4321);
  EXPECT_FALSE(rand({1000}).equal(a));
  EXPECT_EQ(default_generator().initial_seed(), 4321u);

  Generator g1, g2;
  g1.manual_seed(7);
  g2.manual_seed(7);
  EXPECT_TRUE(rand({100}, g1).equal(rand({100}, g2)));
  EXPECT_TRUE(randint(0, 1000, {50}, g1).equal(randint(0, 1000, {50}, g2)));
  Generator copy = g1;  // copies share state
  Tensor c1 = rand({10}, copy);
  EXPECT_TRUE(rand({10}, g2).equal(c1));
}

TEST(Random, IndependentOfThreadCount) {
  ThreadGuard guard;
  auto draw = [] {
    Generator g;
    g.manual_seed(99);
    std::vector<Tensor> out;
    out.push_back(rand({kN / 4 + 3}, g));
    out.push_back(randn({kN / 4 + 1}, g));
    out.push_back(randn({kN / 8 + 1}, g, kDouble));
    out.push_back(randint(-5, 17, {kN / 4}, g));
    out.push_back(empty({kN / 4}).exponential_(2.0, g));
    out.push_back(empty({kN / 4}).bernoulli_(0.3, g));
    out.push_back(randperm(1000, g));
    out.push_back(multinomial(ones({kN / 10}), 5, false, g));
    return out;
  };
  set_num_threads(1);
  std::vector<Tensor> one = draw();
  set_num_threads(2);
  std::vector<Tensor> two = draw();
  set_num_threads(4);
  std::vector<Tensor> four = draw();
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_TRUE(one[i].equal(two[i])) << "draw " << i;
    EXPECT_TRUE(one[i].equal(four[i])) << "draw " << i;
  }
}

TEST(Random, StateRoundTrip) {
  Generator g;
  g.manual_seed(42);
  rand({17}, g);
  Tensor state = g.get_state();
  EXPECT_EQ(state.dtype(), kByte);
  EXPECT_EQ(state.sizes(), IntArrayRef({16}));
  Tensor a = rand({100}, g);
  Tensor b = randn({33}, g);
  g.set_state(state);
  EXPECT_TRUE(rand({100}, g).equal(a));
  EXPECT_TRUE(randn({33}, g).equal(b));
  // The state is a copy, not a view of the generator.
  Tensor s2 = g.get_state();
  rand({5}, g);
  EXPECT_FALSE(s2.equal(g.get_state()));
  EXPECT_THROW(g.set_state(zeros({16}, kLong)), ValueError);
  EXPECT_THROW(g.set_state(zeros({15}, kByte)), ValueError);
  EXPECT_THROW(g.set_state(Tensor()), ValueError);
  // Default generator too.
  Tensor ds = default_generator().get_state();
  Tensor x = rand({8});
  default_generator().set_state(ds);
  EXPECT_TRUE(rand({8}).equal(x));
}

TEST(Random, SeedAndReserve) {
  Generator g;
  uint64_t s = g.seed();
  EXPECT_EQ(g.initial_seed(), s);
  g.manual_seed(5);
  auto [seed, first] = g.reserve(10);
  EXPECT_EQ(seed, 5u);
  EXPECT_EQ(first, 0u);
  EXPECT_EQ(g.reserve(3).second, 10u);
  // Concurrent reservations never overlap.
  g.manual_seed(6);
  std::vector<std::thread> threads;
  std::vector<std::vector<uint64_t>> firsts(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) firsts[size_t(t)].push_back(g.reserve(7).second);
    });
  for (auto& th : threads) th.join();
  std::set<uint64_t> all;
  for (auto& v : firsts) all.insert(v.begin(), v.end());
  EXPECT_EQ(all.size(), 4000u);
  EXPECT_EQ(g.reserve(0).second, 4000u * 7);
  EXPECT_EQ(default_generator().impl(), default_generator(Device(kCPU)).impl());
}

TEST(Random, UniformStatistics) {
  Generator g;
  g.manual_seed(1);
  for (ScalarType dt : {kFloat, kDouble}) {
    Moments m = moments(rand({kN}, g, dt));
    EXPECT_NEAR(m.mean, 0.5, 0.002);
    EXPECT_NEAR(m.var, 1.0 / 12, 0.001);
    EXPECT_GE(m.min, 0.0);
    EXPECT_LT(m.max, 1.0);
  }
  Moments u = moments(empty({kN}, kDouble).uniform_(-2, 6, g));
  EXPECT_NEAR(u.mean, 2.0, 0.02);
  EXPECT_NEAR(u.var, 64.0 / 12, 0.03);
  EXPECT_GE(u.min, -2.0);
  EXPECT_LT(u.max, 6.0);
  for (ScalarType dt : {kHalf, kBFloat16}) {
    Moments h = moments(rand({100000}, g, dt));
    EXPECT_NEAR(h.mean, 0.5, 0.01);
    EXPECT_GE(h.min, 0.0);
    EXPECT_LE(h.max, 1.0);  // rounding to 16 bits may reach 1
  }
}

TEST(Random, NormalStatistics) {
  Generator g;
  g.manual_seed(2);
  for (ScalarType dt : {kFloat, kDouble}) {
    Moments m = moments(randn({kN}, g, dt));
    EXPECT_NEAR(m.mean, 0.0, 0.005);
    EXPECT_NEAR(m.var, 1.0, 0.005);
  }
  Moments n = moments(normal(3.0, 2.0, {kN}, g));
  EXPECT_NEAR(n.mean, 3.0, 0.01);
  EXPECT_NEAR(n.var, 4.0, 0.02);
  // Odd sizes use the first half of the last Box-Muller pair.
  EXPECT_EQ(randn({7}, g).numel(), 7);
  // Complex: each part has variance 1/2.
  Tensor c = randn({kN / 2}, g, kComplexFloat);
  EXPECT_EQ(c.dtype(), kComplexFloat);
  Moments re = moments(c.real());
  Moments im = moments(c.imag());
  EXPECT_NEAR(re.var, 0.5, 0.005);
  EXPECT_NEAR(im.var, 0.5, 0.005);
  EXPECT_NEAR(re.mean, 0.0, 0.005);
}

TEST(Random, ExponentialBernoulliRandint) {
  Generator g;
  g.manual_seed(3);
  Moments e = moments(empty({kN}).exponential_(2.0, g));
  EXPECT_NEAR(e.mean, 0.5, 0.003);
  EXPECT_NEAR(e.var, 0.25, 0.004);
  EXPECT_GE(e.min, 0.0);
  EXPECT_TRUE(std::isinf(empty({3}).exponential_(0.0, g).data_ptr<float>()[0]));

  Moments b = moments(empty({kN}).bernoulli_(0.3, g));
  EXPECT_NEAR(b.mean, 0.3, 0.002);
  std::vector<float> bv = values<float>(empty({1000}).bernoulli_(0.5, g));
  for (float x : bv) EXPECT_TRUE(x == 0.0f || x == 1.0f);
  EXPECT_EQ(moments(empty({100}, kBool).bernoulli_(1.0, g)).min, 1.0);
  EXPECT_EQ(moments(empty({100}, kLong).bernoulli_(0.0, g)).max, 0.0);

  // Tensor p, broadcast over rows: column 0 never, column 2 always.
  Tensor p = tensor({0.0, 0.5, 1.0});
  Moments cols0 = moments(empty({1000, 3}).bernoulli_(p, g).select(1, 0));
  Moments cols2 = moments(empty({1000, 3}).bernoulli_(p, g).select(1, 2));
  EXPECT_EQ(cols0.max, 0.0);
  EXPECT_EQ(cols2.min, 1.0);
  Tensor bt = bernoulli(full({kN}, 0.25), g);
  EXPECT_EQ(bt.dtype(), kFloat);
  EXPECT_NEAR(moments(bt).mean, 0.25, 0.002);
  EXPECT_EQ(bernoulli(ones({4}, kDouble), 0.5, g).dtype(), kDouble);
  EXPECT_EQ(full({4}, 1.0).bernoulli(g).sizes(), IntArrayRef({4}));

  Tensor r = randint(-3, 5, {kN}, g);
  EXPECT_EQ(r.dtype(), kLong);
  Moments rm = moments(r);
  EXPECT_EQ(rm.min, -3.0);
  EXPECT_EQ(rm.max, 4.0);
  EXPECT_NEAR(rm.mean, 0.5, 0.01);
  EXPECT_EQ(randint(10, {4}, kInt).dtype(), kInt);
  EXPECT_EQ(randint(0, 10, {4}, kShort).dtype(), kShort);  // libtorch's (low, high, size, opts)
  EXPECT_LT(moments(randint(3, {100}, g)).max, 3.0);
  EXPECT_EQ(randperm(4, kInt).dtype(), kInt);
  Moments big =
      moments(randint(0, int64_t(1) << 40, {100000}, g).to(kDouble) / double(int64_t(1) << 40));
  EXPECT_NEAR(big.mean, 0.5, 0.01);
  Moments u8 = moments(empty({10000}, kByte).random_(0, std::nullopt, g));
  EXPECT_EQ(u8.min, 0.0);
  EXPECT_EQ(u8.max, 255.0);
  Moments i8 = moments(empty({10000}, kChar).random_(100, std::nullopt, g));
  EXPECT_EQ(i8.min, 100.0);
  EXPECT_EQ(i8.max, 127.0);
  Moments bl = moments(empty({1000}, kBool).random_(0, 2, g).to(kFloat));
  EXPECT_EQ(bl.min, 0.0);
  EXPECT_EQ(bl.max, 1.0);
  Moments full64 =
      moments(empty({1000}, kLong).random_(std::numeric_limits<int64_t>::min(), std::nullopt, g));
  EXPECT_LT(full64.min, 0.0);
  EXPECT_GT(full64.max, 0.0);
}

TEST(Random, NonContiguousTargetsMatchContiguous) {
  // Element i in logical (row-major) order gets the same number whatever the layout.
  Generator g;
  g.manual_seed(11);
  Tensor want = rand({4, 6}, g);
  g.manual_seed(11);
  Tensor base = empty({6, 4});
  Tensor target = base.t();  // 4x6, strides (1, 4)
  target.uniform_(0, 1, g);
  EXPECT_TRUE(target.equal(want));
  uint32_t v = base._version();
  g.manual_seed(11);
  Tensor strided = empty({4, 12}).slice(1, 0, std::nullopt, 2);
  strided.uniform_(0, 1, g);
  EXPECT_TRUE(strided.equal(want));
  target.normal_(0, 1, g);
  EXPECT_GT(base._version(), v);
  // rand_like keeps the layout of a transposed input and still matches logically.
  g.manual_seed(11);
  Tensor like = empty_like(target);
  like.uniform_(0, 1, g);
  EXPECT_TRUE(like.equal(want));
}

TEST(Random, LikeFactories) {
  Tensor d = empty({3, 2}, kDouble);
  EXPECT_EQ(rand_like(d).dtype(), kDouble);
  EXPECT_EQ(randn_like(d).sizes(), IntArrayRef({3, 2}));
  EXPECT_EQ(rand_like(d, kHalf).dtype(), kHalf);
  expect_runtime_error([] { rand_like(zeros({2}, kLong)); });
  expect_runtime_error([] { randn_like(zeros({2}, kInt)); });
  EXPECT_TRUE(rand({2}, TensorOptions().requires_grad(true)).requires_grad());
}

TEST(Random, Randperm) {
  Generator g;
  g.manual_seed(5);
  for (int64_t n : {0, 1, 2, 10, 1000, 100001}) {
    Tensor p = randperm(n, g);
    EXPECT_EQ(p.dtype(), kLong);
    std::vector<int64_t> v = values<int64_t>(p);
    std::sort(v.begin(), v.end());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(v[size_t(i)], i);
  }
  // Not the identity, and seed-dependent.
  g.manual_seed(5);
  Tensor a = randperm(50, g);
  EXPECT_FALSE(a.equal(arange(50)));
  g.manual_seed(6);
  EXPECT_FALSE(randperm(50, g).equal(a));
  EXPECT_EQ(randperm(5, g, kFloat).dtype(), kFloat);
  EXPECT_EQ(moments(randperm(256, g, kByte)).max, 255.0);
  expect_runtime_error([] { randperm(257, std::nullopt, kByte); });
  expect_runtime_error([] { randperm(2050, std::nullopt, kHalf); });
  expect_runtime_error([] { randperm(-1); });
  expect_runtime_error([] { randperm(3, std::nullopt, kBool); });
  // Each position is roughly uniform: the mean of element 0 over many permutations.
  double sum0 = 0;
  for (int i = 0; i < 2000; ++i) sum0 += double(randperm(10, g).data_ptr<int64_t>()[0]);
  EXPECT_NEAR(sum0 / 2000, 4.5, 0.3);
}

TEST(Random, MultinomialWithoutReplacement) {
  Generator g;
  g.manual_seed(8);
  Tensor probs = tensor({0.1, 0.2, 0.3, 0.4, 0.0, 1.0});
  for (int i = 0; i < 200; ++i) {
    Tensor s = multinomial(probs, 5, false, g);
    EXPECT_EQ(s.dtype(), kLong);
    std::vector<int64_t> v = values<int64_t>(s);
    std::set<int64_t> uniq(v.begin(), v.end());
    ASSERT_EQ(uniq.size(), 5u);
    EXPECT_EQ(uniq.count(4), 0u);  // zero probability, five non-zero categories
  }
  // All categories when n == size; zero-probability ones come last (PyTorch 1.13 allows this).
  std::vector<int64_t> all = values<int64_t>(multinomial(tensor({0.0, 1.0}), 2, false, g));
  EXPECT_EQ(all, (std::vector<int64_t>{1, 0}));
  // 2-D: one row per distribution.
  Tensor rows = multinomial(tensor({{1.0, 0.0, 0.0}, {0.0, 0.0, 1.0}}), 1, false, g);
  EXPECT_EQ(rows.sizes(), IntArrayRef({2, 1}));
  EXPECT_EQ(values<int64_t>(rows), (std::vector<int64_t>{0, 2}));
  // First draw frequency follows the weights.
  std::vector<int> counts(3, 0);
  Tensor w = tensor({1.0, 3.0, 6.0});
  for (int i = 0; i < 20000; ++i) ++counts[size_t(multinomial(w, 1, false, g).item<int64_t>())];
  EXPECT_NEAR(counts[0] / 20000.0, 0.1, 0.01);
  EXPECT_NEAR(counts[2] / 20000.0, 0.6, 0.015);
}

TEST(Random, MultinomialWithReplacement) {
  Generator g;
  g.manual_seed(9);
  Tensor probs = tensor({{2.0, 0.0, 6.0}, {0.0, 5.0, 0.0}});
  Tensor s = multinomial(probs, 100000, true, g);
  EXPECT_EQ(s.sizes(), IntArrayRef({2, 100000}));
  std::vector<int64_t> v = values<int64_t>(s);
  int64_t n0 = 0, n1 = 0;
  for (int64_t i = 0; i < 100000; ++i) {
    ASSERT_NE(v[size_t(i)], 1);  // zero probability never drawn
    n0 += v[size_t(i)] == 0;
  }
  for (int64_t i = 100000; i < 200000; ++i) n1 += v[size_t(i)] == 1;
  EXPECT_NEAR(n0 / 100000.0, 0.25, 0.006);
  EXPECT_EQ(n1, 100000);
  EXPECT_EQ(multinomial(tensor({1.0, 1.0}), 5, true, g).sizes(), IntArrayRef({5}));
}

TEST(Random, MultinomialErrors) {
  expect_runtime_error([] { multinomial(tensor({-1.0, 1.0}), 1); });
  expect_runtime_error([] { multinomial(tensor({0.0, 0.0}), 1); });
  expect_runtime_error([] { multinomial(tensor({0.0, 0.0}), 1, true); });
  expect_runtime_error([] { multinomial(tensor({0.0, 1.0}), 3); });
  expect_runtime_error([] { multinomial(tensor({0.0, 1.0}), 0, true); });
  expect_runtime_error([] { multinomial(ones({2, 2, 2}), 1); });
  expect_runtime_error([] { multinomial(tensor({1, 1}), 1); });
  expect_runtime_error([] { multinomial(tensor({double(INFINITY), 1.0}), 1); });
  expect_runtime_error([] { multinomial(tensor({std::nan(""), 1.0}), 1); });
}

TEST(Random, NormalTensorForms) {
  Generator g;
  g.manual_seed(10);
  Tensor mean = tensor({0.0, 100.0});
  Tensor out = normal(mean.view({2, 1}), full({1, 3}, 0.01), g);
  EXPECT_EQ(out.sizes(), IntArrayRef({2, 3}));
  EXPECT_EQ(out.dtype(), kFloat);
  std::vector<float> v = values<float>(out);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(v[size_t(i)], 0.0, 0.1);
  for (int i = 3; i < 6; ++i) EXPECT_NEAR(v[size_t(i)], 100.0, 0.1);
  EXPECT_EQ(normal(zeros({2}, kDouble), ones({2}), g).dtype(), kDouble);
  EXPECT_EQ(normal(zeros({2}), ones({2}, kDouble), g).dtype(), kFloat);
  Moments m = moments(normal(full({kN / 4}, 5.0), 0.5, g));
  EXPECT_NEAR(m.mean, 5.0, 0.01);
  EXPECT_NEAR(m.var, 0.25, 0.005);
  Moments m2 = moments(normal(-1.0, full({kN / 4}, 2.0, kDouble), g));
  EXPECT_NEAR(m2.mean, -1.0, 0.02);
  EXPECT_NEAR(m2.var, 4.0, 0.05);
  expect_runtime_error([] { normal(zeros({2}), tensor({1.0, -1.0})); });
  expect_runtime_error([] { normal(0.0, -1.0, {2}); });
  expect_runtime_error([] { normal(zeros({2}, kLong), ones({2})); });
  expect_runtime_error([] { normal(zeros({2}), ones({3})); });
}

TEST(Random, DtypeAndArgumentErrors) {
  expect_runtime_error([] { rand({2}, kLong); });
  expect_runtime_error([] { randn({2}, kBool); });
  EXPECT_EQ(rand({2}, kComplexDouble).dtype(), kComplexDouble);
  expect_runtime_error([] { zeros({2}, kLong).uniform_(); });
  expect_runtime_error([] { zeros({2}, kLong).normal_(); });
  expect_runtime_error([] { zeros({2}, kLong).exponential_(); });
  expect_runtime_error([] { zeros({2}, kComplexFloat).exponential_(); });
  expect_runtime_error([] { zeros({2}).uniform_(1, 0); });
  expect_runtime_error([] { zeros({2}).uniform_(-3e38, 3e38); });
  expect_runtime_error([] { zeros({2}).uniform_(0, INFINITY); });
  expect_runtime_error([] { zeros({2}).normal_(0, -1); });
  expect_runtime_error([] { zeros({2}).exponential_(-1); });
  expect_runtime_error([] { zeros({2}).bernoulli_(1.5); });
  expect_runtime_error([] { zeros({2}).bernoulli_(tensor({0.5, 2.0})); });
  expect_runtime_error([] { zeros({2}).bernoulli_(tensor({1, 0})); });
  expect_runtime_error([] { zeros({3}).bernoulli_(tensor({0.5, 0.5})); });
  expect_runtime_error([] { bernoulli(tensor({1, 0})); });
  expect_runtime_error([] { zeros({2}, kLong).random_(5, 3); });
  expect_runtime_error([] { zeros({2}, kByte).random_(0, 300); });
  expect_runtime_error([] { zeros({2}, kChar).random_(-200, 5); });
  expect_runtime_error([] { zeros({2}, kChar).random_(200, std::nullopt); });
  expect_runtime_error([] { zeros({2}, kBool).random_(0, 3); });
  expect_runtime_error([] { zeros({2}, kComplexFloat).random_(0, 5); });
  expect_runtime_error([] { randint(5, 3, {2}); });
  // Empty tensors draw nothing (arguments are still checked, as PyTorch).
  expect_runtime_error([] { empty({0}).uniform_(1, 0); });
  EXPECT_EQ(rand({0}).numel(), 0);
  EXPECT_EQ(empty({0}).normal_().numel(), 0);
}

// Reduced-precision uniforms use the significand's bits only: every draw is a multiple of
// 2^-11 (half) or 2^-8 (bfloat16) in [0, 1), so none rounds up to 1.
TEST(Random, ReducedPrecisionUniformStaysBelowOne) {
  for (auto [dt, bits] : {std::pair{kHalf, 11}, std::pair{kBFloat16, 8}}) {
    Generator g;
    g.manual_seed(1);
    Tensor x = rand({20000}, g, TensorOptions(dt)).to(kDouble);
    const double* p = x.data_ptr<double>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      ASSERT_GE(p[i], 0.0);
      ASSERT_LT(p[i], 1.0) << "dtype " << dt << " element " << i;
      const double scaled = p[i] * double(1 << bits);
      ASSERT_EQ(scaled, std::floor(scaled)) << "dtype " << dt << " element " << i;
    }
  }
}
