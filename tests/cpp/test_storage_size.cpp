// Impossible sizes fail before allocating (Note [Checked storage sizes]): factories, views,
// repeat, arange, pad, histc and the pools raise ember::Error (RuntimeError) with
// "Storage size calculation overflowed" or "out of memory: tried to allocate N bytes". The
// tests run under an address-space limit a few GiB above the process's current size, so a
// regression that allocates fails here instead of waking the OOM killer.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <fstream>
#include <string>

#include "ember/ember.h"

using namespace ember;

namespace {

int64_t vm_size_bytes() {
  std::ifstream f("/proc/self/statm");
  int64_t pages = 0;
  f >> pages;
  return pages * 4096;
}

/// RLIMIT_AS = current size + 4 GiB while alive.
struct AddressSpaceLimit {
  rlimit saved{};
  bool ok = false;
  AddressSpaceLimit() {
    if (getrlimit(RLIMIT_AS, &saved) != 0) return;
    rlimit lim = saved;
    const rlim_t want = rlim_t(vm_size_bytes() + (int64_t(4) << 30));
    if (saved.rlim_cur != RLIM_INFINITY && saved.rlim_cur < want) return;
    lim.rlim_cur = want;
    ok = setrlimit(RLIMIT_AS, &lim) == 0;
  }
  ~AddressSpaceLimit() {
    if (ok) setrlimit(RLIMIT_AS, &saved);
  }
};

/// Runs f, which must throw exactly ember::Error of the Runtime kind whose message holds
/// `prefix` and `text`.
template <class F>
void expect_runtime_error(F&& f, const std::string& prefix, const std::string& text) {
  try {
    f();
    ADD_FAILURE() << "no error; expected " << prefix << " ... " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime) << e.what();
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg;
    EXPECT_NE(msg.find(text), std::string::npos) << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not an ember::Error: " << e.what();
  }
}

const char* kOverflow = "Storage size calculation overflowed with sizes=";
const char* kOom = "out of memory: tried to allocate ";

constexpr int64_t k40 = int64_t(1) << 40;

}  // namespace

TEST(StorageSize, FactoriesOverflowAndOutOfMemory) {
  AddressSpaceLimit limit;
  expect_runtime_error([] { empty({int64_t(1) << 62}); }, "[empty]", kOverflow);
  expect_runtime_error(
      [] {
        zeros({int64_t(1) << 31, int64_t(1) << 31, 4});
      },
      "[zeros]", "Storage size calculation overflowed with sizes=[2147483648, 2147483648, 4]");
  // 4 TiB: more than the machine holds, refused before the allocator is asked.
  expect_runtime_error([] { ones({k40}); }, "[ones]",
                       "out of memory: tried to allocate 4398046511104 bytes");
  expect_runtime_error([] { full({k40}, 1.0); }, "[full]", kOom);
  expect_runtime_error([] { empty_strided({k40, k40}, {1, 1}); }, "[empty_strided]", kOom);
  expect_runtime_error(
      [] {
        empty_strided({int64_t(1) << 62, 4}, {4, 1});
      },
      "[empty_strided]", kOverflow);
  expect_runtime_error([] { arange(int64_t(1) << 62); }, "[arange]", kOverflow);
  expect_runtime_error([] { arange(k40); }, "[arange]",
                       "out of memory: tried to allocate 8796093022208 bytes");
  expect_runtime_error([] { linspace(0, 1, k40); }, "[linspace]", kOom);
  // A size product that wraps to exactly zero is still an overflow.
  expect_runtime_error(
      [] {
        empty({int64_t(1) << 32, int64_t(1) << 32}, kByte);
      },
      "[empty]", kOverflow);
  // Zero-size tensors of huge dims allocate nothing and are fine.
  EXPECT_EQ(empty({0, k40, k40}).numel(), 0);
}

TEST(StorageSize, ViewsOfImpossibleSizes) {
  AddressSpaceLimit limit;
  EXPECT_THROW(ones({1}).expand({k40, k40}), Error);
  EXPECT_THROW(empty({0}).view({int64_t(1) << 62, 4}), Error);
  EXPECT_THROW(ones({4}).reshape({int64_t(1) << 62, 4}), Error);
  EXPECT_THROW(ones({2, 2}).as_strided({k40, k40}, {0, 0}), Error);
  // Sizes whose product wraps to 0 are an overflow, not an empty tensor.
  EXPECT_THROW(empty({0}).view({int64_t(1) << 32, int64_t(1) << 32}), Error);
  EXPECT_EQ(ones({1}).expand({k40, 1}).numel(), k40);  // large but representable
}

TEST(StorageSize, RepeatPadHistc) {
  AddressSpaceLimit limit;
  Tensor x = ones({2, 2});
  expect_runtime_error([&] { x.repeat({k40, k40}); }, "[repeat]", kOverflow);
  // 2^33 * 2 x 2^31 * 2 = 2^66 elements: wraps to 0 without the check.
  expect_runtime_error(
      [&] {
        x.repeat({int64_t(1) << 33, int64_t(1) << 31});
      },
      "[repeat]", kOverflow);
  expect_runtime_error([&] { x.repeat({int64_t(1) << 62, 1}); }, "[repeat]", kOverflow);
  expect_runtime_error([&] { x.repeat({k40, 1}); }, "[repeat]", kOom);
  expect_runtime_error([&] { repeat_interleave(ones({3}), int64_t(1) << 62); },
                       "[repeat_interleave]", "Storage size calculation overflowed");
  expect_runtime_error(
      [&] {
        pad(ones({1, 1, 5}), {int64_t(1) << 62, int64_t(1) << 62});
      },
      "[pad]", "Storage size calculation overflowed");
  expect_runtime_error([&] { pad(ones({1, 1, 5}), {k40, 0}); }, "[pad]", kOom);
  expect_runtime_error([&] { histc(ones({4}), k40); }, "[histc]", kOom);
}

TEST(StorageSize, PoolsCheckOutputsBeforeTheirTables) {
  AddressSpaceLimit limit;
  Tensor x = randn({5, 2, 1, 5});
  // The reported case: the window tables grew until the OOM killer ended the process.
  expect_runtime_error(
      [&] {
        adaptive_max_pool2d(x, {k40, k40});
      },
      "[adaptive_max_pool2d]",
      "Storage size calculation overflowed with sizes=[5, 2, 1099511627776, "
      "1099511627776]");
  expect_runtime_error([&] { adaptive_max_pool2d(x, {k40, 1}); }, "[adaptive_max_pool2d]", kOom);
  expect_runtime_error(
      [&] {
        adaptive_avg_pool2d(x, {k40, k40});
      },
      "[adaptive_avg_pool2d]", kOverflow);
  expect_runtime_error([&] { adaptive_avg_pool2d(x, {k40, 1}); }, "[adaptive_avg_pool2d]", kOom);
  expect_runtime_error(
      [&] {
        adaptive_max_pool1d(randn({1, 1, 5}), {k40});
      },
      "[adaptive_max_pool1d]", kOom);
  expect_runtime_error(
      [&] {
        max_unpool1d(randn({1, 1, 2}), zeros({1, 1, 2}, kLong), {int64_t(1) << 62});
      },
      "[max_unpool1d]", kOverflow);
  // An empty batch needs no tables and no memory, as PyTorch.
  auto [y, i] = adaptive_max_pool2d(randn({0, 2, 1, 5}), {k40, k40});
  EXPECT_EQ(y.sizes(), IntArrayRef({0, 2, k40, k40}));
  EXPECT_EQ(i.numel(), 0);
}

TEST(StorageSize, HugePoolArgumentsDoNotHang) {
  // The first tap of a window with a huge padding was found by stepping one dilation at a time.
  Tensor x = randn({1, 1, 5});
  Tensor y = max_pool1d(x, {int64_t(1) << 62}, {int64_t(1) << 62}, {int64_t(1) << 61});
  EXPECT_EQ(y.sizes(), IntArrayRef({1, 1, 1}));
  EXPECT_EQ(y.item<float>(), x.max().item<float>());
  // A kernel and dilation whose product overflows int64 give "output size is too small".
  EXPECT_THROW(max_pool1d(x, {int64_t(1) << 40}, {1}, {0}, {int64_t(1) << 40}), Error);
}
