// Reductions under 2 threads, run thousands of times: each result must equal the one-thread
// result (reductions do not depend on the thread count) and, for any/all/count_nonzero, the
// hand-derived value. Shapes are picked to reach every parallel path of the reduce engine:
// one long group split into chunks, few outputs with long groups, the vertical (column) path
// and one output per task.

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "ember/ember.h"

using namespace ember;

namespace {

struct ThreadCount {
  int saved = get_num_threads();
  explicit ThreadCount(int n) { set_num_threads(n); }
  ~ThreadCount() { set_num_threads(saved); }
};

bool same(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) return false;
  // equal() treats NaN as unequal; compare NaN positions separately.
  if (a.is_floating_point()) {
    Tensor na = isnan(a), nb = isnan(b);
    if (!equal(na, nb)) return false;
    return equal(where(na, zeros_like(a), a), where(nb, zeros_like(b), b));
  }
  return equal(a, b);
}

using ReduceFn = std::function<Tensor(const Tensor&)>;

void stress(const std::string& name, const Tensor& x, const ReduceFn& f, int iters) {
  Tensor ref;
  {
    ThreadCount one(1);
    ref = f(x);
  }
  ThreadCount two(2);
  for (int i = 0; i < iters; ++i) {
    Tensor r = f(x);
    ASSERT_TRUE(same(r, ref)) << name << " differs from the 1-thread result at iteration " << i
                              << " for input sizes " << x.sizes();
  }
}

}  // namespace

// The reproducer: all() of an all-true bool tensor once returned False about 1 time in 1,000.
TEST(ReduceThreads, AllAnyCountNonzeroBool) {
  ThreadCount two(2);
  const std::vector<std::vector<int64_t>> shapes = {{128, 784}, {3, 70001}, {70001}, {64, 1024}};
  for (const auto& s : shapes) {
    Tensor t = ones(s, kBool), f = zeros(s, kBool);
    const int64_t n = t.numel();
    Tensor last = zeros(s, kBool);
    last.view({-1})[n - 1].fill_(true);
    for (int i = 0; i < 3000; ++i) {
      ASSERT_TRUE(t.all().item<bool>()) << "all(ones) at iteration " << i << " sizes " << t.sizes();
      ASSERT_FALSE(f.any().item<bool>()) << "any(zeros) at iteration " << i;
      ASSERT_TRUE(last.any().item<bool>()) << "any(one true) at iteration " << i;
      ASSERT_FALSE(last.all().item<bool>()) << "all(one true) at iteration " << i;
      ASSERT_EQ(count_nonzero(t).item<int64_t>(), n) << "count_nonzero at iteration " << i;
    }
    if (s.size() == 2) {
      for (int i = 0; i < 300; ++i) {
        ASSERT_TRUE(t.all(1).all().item<bool>()) << "all(dim=1) at iteration " << i;
        ASSERT_TRUE(t.all(0).all().item<bool>()) << "all(dim=0) at iteration " << i;
        ASSERT_FALSE(f.any(1).any().item<bool>()) << "any(dim=1) at iteration " << i;
        ASSERT_FALSE(f.any(0).any().item<bool>()) << "any(dim=0) at iteration " << i;
      }
    }
  }
}

TEST(ReduceThreads, EveryReductionMatchesOneThread) {
  manual_seed(7);
  const std::vector<std::vector<int64_t>> shapes = {{128, 784}, {3, 70001}, {64, 1024}, {1000, 37}};
  const std::vector<std::pair<std::string, ReduceFn>> float_ops = {
      {"sum", [](const Tensor& x) { return x.sum(); }},
      {"sum(1)", [](const Tensor& x) { return x.sum({1}); }},
      {"sum(0)", [](const Tensor& x) { return x.sum({0}); }},
      {"mean", [](const Tensor& x) { return x.mean(); }},
      {"prod(1)", [](const Tensor& x) { return (x * 0.01 + 1).prod(1); }},
      {"amax", [](const Tensor& x) { return x.amax({1}); }},
      {"amin(0)", [](const Tensor& x) { return x.amin({0}); }},
      {"max", [](const Tensor& x) { return x.max(); }},
      {"argmax", [](const Tensor& x) { return x.argmax(); }},
      {"argmin(1)", [](const Tensor& x) { return x.argmin(1); }},
      {"var", [](const Tensor& x) { return x.var(); }},
      {"std(1)", [](const Tensor& x) { return x.std({1}, true); }},
      {"norm", [](const Tensor& x) { return x.norm(); }},
      {"logsumexp(1)", [](const Tensor& x) { return logsumexp(x, {1}); }},
      {"count_nonzero", [](const Tensor& x) { return count_nonzero(x > 0); }},
      {"any(gt)", [](const Tensor& x) { return (x > 4).any(); }},
      {"all(lt)", [](const Tensor& x) { return (x < 100).all(); }},
  };
  for (const auto& s : shapes) {
    Tensor x = randn(s, kFloat);
    for (const auto& [name, f] : float_ops) stress(name, x, f, 100);
    Tensor xi = randint(-5, 5, s, kLong);
    stress(
        "sum(int)", xi, [](const Tensor& t) { return t.sum(); }, 100);
    stress(
        "amax(int)", xi, [](const Tensor& t) { return t.amax({1}); }, 100);
  }
}
