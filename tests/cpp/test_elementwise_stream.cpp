// Streaming stores in the elementwise loop (Note [Streaming stores] in
// kernels/cpu/elementwise/streaming.h) and the per-family kernel sets (Note [Per-family
// capability] in kernels/cpu/capability.cpp).
//
// Streaming changes only the store instruction, so the oracle is the same op with streaming
// off: results must be bit-identical, for every dtype, misaligned and odd-sized outputs (plain
// stores before the first vector boundary and after the last whole vector), broadcast and
// strided inputs, on 1 and 2 threads.
// The plain-loop oracle of the arithmetic itself is checked on float too.
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "kernels/cpu/capability.h"
#include "kernels/cpu/elementwise/streaming.h"

using namespace ember;

namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

// Sets the streaming threshold (and the thread count) for a scope.
struct StreamingThreshold {
  int64_t prev;
  int threads;
  StreamingThreshold(int64_t bytes, int nt)
      : prev(cpu::set_streaming_store_threshold(bytes)), threads(get_num_threads()) {
    set_num_threads(nt);
  }
  ~StreamingThreshold() {
    cpu::set_streaming_store_threshold(prev);
    set_num_threads(threads);
  }
};

bool same_bytes(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes()) return false;
  Tensor ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), size_t(ca.numel()) * ca.itemsize()) == 0;
}

// Random values of `dt` (finite, in range of every integer type's cast).
Tensor values(int64_t n, ScalarType dt) {
  Tensor r = randn({n}, dtype(kDouble)) * 50.0;
  if (dt == kBool) return r.floor().to(kBool);  // about 1 in 50 false
  if (dt == kComplexFloat || dt == kComplexDouble) {
    Tensor z = r.to(kComplexDouble);
    return (z + z.flip({0}) * Scalar(std::complex<double>(0, 1))).to(dt);
  }
  return r.to(dt);
}

// Runs `f` with streaming on (threshold 0: every dense run of >= 4 KiB streams) and off.
void expect_unchanged(const std::function<Tensor()>& f, const std::string& what) {
  for (int nt : {1, 2}) {
    Tensor off, on;
    {
      StreamingThreshold s(kNever, nt);
      off = f();
    }
    {
      StreamingThreshold s(0, nt);
      on = f();
    }
    EXPECT_TRUE(same_bytes(on, off)) << what << " nt=" << nt;
  }
}

const ScalarType kAllTypes[] = {kBool, kByte,     kChar,  kShort,  kInt,          kLong,
                                kHalf, kBFloat16, kFloat, kDouble, kComplexFloat, kComplexDouble};

}  // namespace

TEST(StreamingStores, BinaryEveryDtypeAlignmentAndTail) {
  // 100003 elements: not a multiple of any vector width or block; offsets 1 and 3 move the
  // output off the vector boundary.
  const int64_t n = 100003;
  for (ScalarType dt : kAllTypes) {
    const Tensor a = values(n + 8, dt), b = values(n + 8, dt);
    for (int64_t off : {0, 1, 3}) {
      const std::string what = std::string(toString(dt)) + " offset " + std::to_string(off);
      expect_unchanged(
          [&] {
            Tensor out = zeros({n + 8}, dtype(dt));
            Tensor o = out.slice(0, off, off + n);
            add_out(o, a.slice(0, 0, n), b.slice(0, 8 - off, 8 - off + n));
            return out;
          },
          "add_out " + what);
      if (dt != kBool)
        expect_unchanged([&] { return mul(a.slice(0, off, off + n), b.slice(0, 0, n)); },
                         "mul " + what);
    }
  }
}

TEST(StreamingStores, UnaryCastsFillAndBroadcast) {
  const int64_t n = 300001;
  const Tensor x = values(n, kFloat);
  expect_unchanged([&] { return exp(x); }, "exp");
  expect_unchanged([&] { return gelu(x); }, "gelu");
  expect_unchanged([&] { return x.to(kHalf); }, "float -> half");
  expect_unchanged([&] { return x.to(kBFloat16).to(kDouble); }, "float -> bfloat16 -> double");
  expect_unchanged([&] { return x.clone(); }, "clone");
  expect_unchanged([&] { return full({n}, 2.5, dtype(kFloat)); }, "fill");
  // Scalar and row broadcasts (rows of 5000 floats: runs of 20 KB), strided inputs, and a
  // transposed output layout.
  const Tensor m = values(200 * 5000, kFloat).view({200, 5000});
  const Tensor row = values(5000, kFloat);
  expect_unchanged([&] { return add(m, row, 0.5); }, "row broadcast");
  expect_unchanged([&] { return mul(m, full({}, 3.0, dtype(kFloat))); }, "scalar broadcast");
  expect_unchanged([&] { return add(m.t(), m.t()); }, "transposed");
  const Tensor big = values(2 * n, kDouble);
  expect_unchanged([&] { return add(big.slice(0, 0, std::nullopt, 2), 1.0); }, "strided input");
  // Zero-size and 0-dim tensors never reach the streaming path, and stay right.
  expect_unchanged([&] { return add(empty({0}), empty({0})); }, "zero-size");
  expect_unchanged([&] { return add(full({}, 1.0), full({}, 2.0)); }, "0-dim");
}

TEST(StreamingStores, MatchesPlainLoop) {
  // The arithmetic itself against a plain loop, with streaming forced, on 2 threads.
  StreamingThreshold s(0, 2);
  const int64_t n = (int64_t(1) << 20) + 5;
  const Tensor a = values(n, kFloat), b = values(n, kFloat);
  Tensor out = empty({n + 1}, dtype(kFloat)).slice(0, 1, n + 1);  // misaligned by 4 bytes
  add_out(out, a, b, 2.0);
  const float *pa = a.data_ptr<float>(), *pb = b.data_ptr<float>(), *po = out.data_ptr<float>();
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) bad += po[i] != pa[i] + 2.0f * pb[i];
  EXPECT_EQ(bad, 0);
}

TEST(StreamingStores, ThresholdSetting) {
  const int64_t prev = cpu::set_streaming_store_threshold(12345);
  EXPECT_EQ(cpu::streaming_store_threshold(), 12345);
  EXPECT_EQ(cpu::set_streaming_store_threshold(prev), 12345);
  EXPECT_EQ(cpu::streaming_store_threshold(), prev);
  // Outside an op nothing streams.
  EXPECT_FALSE(cpu::streaming_output());
  {
    cpu::StreamingOutputScope on(true);
    EXPECT_TRUE(cpu::streaming_output());
  }
  EXPECT_FALSE(cpu::streaming_output());
}

TEST(FamilyCapability, Rules) {
  using cpu::choose_family_capability;
  // No override: the process's set.
  EXPECT_STREQ(choose_family_capability("arith", "avx512", nullptr, ""), "avx512");
  EXPECT_STREQ(choose_family_capability("arith", "avx2", "", "amd-zen4"), "avx2");
  // An override picks a lower set for the named family only.
  EXPECT_STREQ(choose_family_capability("arith", "avx512", "arith=avx2", ""), "avx2");
  EXPECT_STREQ(choose_family_capability("copy", "avx512", "arith=avx2", ""), "avx512");
  EXPECT_STREQ(choose_family_capability("copy", "avx512", "arith=avx2,copy=default", ""),
               "default");
  // Never above the process's set (EMBER_CPU_CAPABILITY or the CPU caps it).
  EXPECT_STREQ(choose_family_capability("arith", "avx2", "arith=avx512", ""), "avx2");
  EXPECT_STREQ(choose_family_capability("arith", "default", "arith=avx2", ""), "default");
  // Malformed specs are a ValueError naming the item.
  for (const char* bad : {"arith", "arith=sse", "=avx2", "arith:avx2", "arithh=avx2"}) {
    try {
      choose_family_capability("arith", "avx2", bad, "");
      ADD_FAILURE() << "expected ValueError for '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Value) << bad;
      EXPECT_NE(std::string(e.what()).find("EMBER_CPU_FAMILY_CAPABILITY"), std::string::npos);
    }
  }
  EXPECT_THROW(choose_family_capability("arith", "avx3", nullptr, ""), Error);
}

TEST(FamilyCapability, RegisteredSets) {
  // Every family reports a set no higher than the process's; unknown names give nullptr.
  auto rank = [](const std::string& s) { return s == "avx512" ? 2 : s == "avx2" ? 1 : 0; };
  for (const char* f : {"copy", "arith", "compare", "unary", "activation", "reduce", "softmax",
                        "bessel", "special"}) {
    const char* c = cpu::family_capability(f);
    ASSERT_NE(c, nullptr) << f;
    EXPECT_LE(rank(c), rank(cpu_capability())) << f;
  }
  EXPECT_EQ(cpu::family_capability("no_such_family"), nullptr);
}
