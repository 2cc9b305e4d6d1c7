// Exhaustive accuracy check of gelu's erf form for float32 (Note [gelu erf form] in
// src/kernels/cpu/elementwise/math_functors.h): every one of the 2^32 floats through the vector
// and the scalar forms of math::gelu_erf_f32, against a float64 reference x erfc(-x / sqrt 2) / 2.
// Prints the max error in ULP, where it occurs, the max per binade of |x|, and the count of
// special values (NaN, inf, signed zeros) that differ from the reference and of inputs where the
// scalar and vector forms give different bits (both must be 0). Optionally times the vector form
// on 1M warm float32 elements (no allocation, no threads: the kernel alone).
//
// Not a CMake target: it includes a per-capability kernel header, so it is compiled once per
// kernel set, by hand (from the repository root; -DEMBER_CPU_CAP names the namespace):
//   F="-O3 -std=c++20 -fopenmp -DEMBER_LAYER_KERNELS -Isrc -Iinclude bench/gelu_accuracy.cpp"
//   g++ $F -DEMBER_CPU_CAP=cap_avx2 -mavx2 -mfma -mf16c -o /tmp/gelu_acc_avx2 -lsleef
//   g++ $F -DEMBER_CPU_CAP=cap_default -o /tmp/gelu_acc_default -lsleef
//   OMP_NUM_THREADS=2 /tmp/gelu_acc_avx2 [stride] [--bench]
// (the flags are those CMake gives the avx2 and default kernel files; add -mavx512f -mavx512bw
// -mavx512vl -mavx512dq for the avx512 set on a CPU that has it). stride > 1 checks every
// stride-th float only (a quick look); the default 1 is all of them: ~5 minutes on 2 cores.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ember/dtype.h"
namespace ember::cpu {
using ember::complex;  // what the kernel files get from kernel_layer.h's includers
}
#include "kernels/cpu/elementwise/math_functors.h"

#define GELU_ACC_STR2(x) #x
#define GELU_ACC_STR(x) GELU_ACC_STR2(x)

namespace {

using namespace ember::cpu::EMBER_CPU_CAP;
constexpr int kL = kLanes<float>;

// The reference in double. erfc's argument error (2^-53 relative) costs x^2 2^-53 relative in
// the result: below 2^-45 for |x| < 16, far below the 0.01 ULP this check resolves.
double gelu_ref(float xf) {
  const double x = xf, ax = std::fabs(x);
  if (ax < 0x1p-30)
    return 0.5 * x + 0.3989422804014327 * x * x;  // erf(z) ~ 2z/sqrt(pi): z^2 < 2^-60
  if (x >= 16) return x;                          // Q(16) < 1e-57
  if (x <= -16 && !std::isinf(x)) return -0.0;    // |gelu(x)| < 1e-56: -0
  return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
}

// The float ULP at the exact value y: 2^(e - 23) for |y| in [2^e, 2^(e+1)), 2^-149 below 2^-126.
double ulp_f32(double y) {
  int e = 0;
  std::frexp(std::fabs(y), &e);
  return std::ldexp(1.0, std::max(e - 1, -126) - 23);
}

struct Stats {
  double worst = 0, worst_neg = 0, worst_pos = 0;
  float at = 0, at_neg = 0, at_pos = 0;
  double binade[2][64] = {};  // [x > 0][exponent of |x| + 40]
  long long special_wrong = 0, scalar_mismatch = 0, checked = 0;
  void merge(const Stats& o) {
    if (o.worst > worst) worst = o.worst, at = o.at;
    if (o.worst_neg > worst_neg) worst_neg = o.worst_neg, at_neg = o.at_neg;
    if (o.worst_pos > worst_pos) worst_pos = o.worst_pos, at_pos = o.at_pos;
    for (int s = 0; s < 2; ++s)
      for (int i = 0; i < 64; ++i) binade[s][i] = std::max(binade[s][i], o.binade[s][i]);
    special_wrong += o.special_wrong;
    scalar_mismatch += o.scalar_mismatch;
    checked += o.checked;
  }
};

void check(float x, float y, Stats& st) {
  ++st.checked;
  if (std::isnan(x)) {
    st.special_wrong += !std::isnan(y);
    return;
  }
  const double want = gelu_ref(x);
  if (std::isnan(want) || std::isinf(want)) {  // gelu(-inf) = -inf * 0 = NaN, gelu(inf) = inf
    st.special_wrong += std::isnan(want) ? !std::isnan(y) : y != want;
    return;
  }
  if (want == 0 && y == 0) {  // +-0 and x <= -16: the sign of x
    st.special_wrong += std::signbit(y) != std::signbit(x);
    return;
  }
  const double u = std::fabs(double(y) - want) / ulp_f32(want);
  if (u > st.worst) st.worst = u, st.at = x;
  if (x < 0 && u > st.worst_neg) st.worst_neg = u, st.at_neg = x;
  if (x > 0 && u > st.worst_pos) st.worst_pos = u, st.at_pos = x;
  int e = 0;
  std::frexp(x, &e);
  double& b = st.binade[x > 0][std::clamp(e + 40, 0, 63)];
  b = std::max(b, u);
}

Stats run(long long stride) {
  Stats total;
  const long long blocks = ((1LL << 32) + kL * stride - 1) / (kL * stride);
#pragma omp parallel
  {
    Stats st;
#pragma omp for schedule(dynamic, 256)
    for (long long blk = 0; blk < blocks; ++blk) {
      vfloat xv{};
      for (int i = 0; i < kL; ++i)
        xv[i] = std::bit_cast<float>(uint32_t(uint64_t(blk * kL + i) * uint64_t(stride)));
      const vfloat yv = math::gelu_erf_f32(xv);
      for (int i = 0; i < kL; ++i) {
        const float ys = math::gelu_erf_f32(xv[i]);
        st.scalar_mismatch += std::bit_cast<uint32_t>(ys) != std::bit_cast<uint32_t>(yv[i]);
        check(xv[i], yv[i], st);
      }
    }
#pragma omp critical
    total.merge(st);
  }
  return total;
}

void bench() {
  std::vector<float> in(1 << 20), out(1 << 20);
  uint32_t s = 12345;
  for (float& v : in) {  // ~N(0, 1): a sum of 12 uniforms
    float acc = 0;
    for (int k = 0; k < 12; ++k) {
      s = s * 1664525u + 1013904223u;
      acc += float(s >> 8) * (1.0f / 16777216.0f);
    }
    v = acc - 6.0f;
  }
  std::vector<double> ns;
  for (int r = 0; r < 41; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i + kL <= in.size(); i += kL)
      vstore(&out[i], math::gelu_erf_f32(vload<vfloat>(&in[i])));
    const auto t1 = std::chrono::steady_clock::now();
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / double(in.size()));
  }
  std::sort(ns.begin(), ns.end());
  std::printf(
      "kernel alone, 1M warm float32, 1 thread: median %.3f ns/element (min %.3f), 41 runs\n",
      ns[20], ns[0]);
}

}  // namespace

int main(int argc, char** argv) {
  long long stride = 1;
  bool do_bench = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--bench"))
      do_bench = true;
    else
      stride = std::max(1LL, std::atoll(argv[i]));
  }
  std::printf("gelu_erf_f32, kernel set %s (%d float lanes), every %lld-th float\n",
              GELU_ACC_STR(EMBER_CPU_CAP), kL, stride);
  if (do_bench) bench();
  const Stats st = run(stride);
  std::printf("checked %lld inputs: max %.4f ULP at x = %.9g\n", st.checked, st.worst, st.at);
  std::printf("  x < 0: max %.4f ULP at x = %.9g;  x > 0: max %.4f ULP at x = %.9g\n", st.worst_neg,
              st.at_neg, st.worst_pos, st.at_pos);
  std::printf("  special values wrong: %lld;  scalar != vector bits: %lld\n", st.special_wrong,
              st.scalar_mismatch);
  std::printf("  max ULP per binade of |x| (x < 0 | x > 0):\n");
  for (int e = -30; e <= 4; ++e)
    std::printf("    [2^%d, 2^%d): %.3f | %.3f\n", e - 1, e, st.binade[0][e + 40],
                st.binade[1][e + 40]);
  return st.special_wrong || st.scalar_mismatch ? 1 : 0;
}
