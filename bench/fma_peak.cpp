// fma_peak: the machine's float32 FMA peak, the limit that GEMM and the convolution benchmarks
// print their "% of peak" against. Every thread runs independent FMA chains on 256-bit (AVX2+FMA)
// and, where the CPU has it, 512-bit (AVX-512F) registers: enough chains to cover the FMA
// latency on every port, no loads or stores, so the loop runs at the issue rate of the FMA units.
// Usage: fma_peak [threads,...] [seconds per repetition]   (default: 1,<all CPUs> and 0.1 s)
// Prints one JSON object per (ISA, thread count): GFLOP/s counted as 2 per FMA lane, the best
// and the median of 7 repetitions after a warm-up. best_gflops / median_gflops sum each
// thread's rate on its own CPU clock, so other processes on the machine do not lower them (the
// limit, as if each thread had its core); wall_best_gflops / wall_median_gflops divide by the
// wall time and equal them on an idle machine.

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

// 12 chains of 8 lanes: Zen 3/4 and Intel cores issue two 256-bit FMAs per cycle with a latency
// of 4-5 cycles, so 8-10 chains keep both ports busy; 12 leave room for a slower core.
__attribute__((target("avx2,fma"))) float chains_avx2(int64_t iters) {
  constexpr int kChains = 12;
  __m256 acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = _mm256_set1_ps(float(j) * 1e-3f);
  // x < 1 and a small y keep every chain near y / (1 - x): no overflow, no denormals.
  const __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(1e-3f);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int j = 0; j < kChains; ++j) acc[j] = _mm256_fmadd_ps(acc[j], x, y);
  }
  __m256 s = acc[0];
  for (int j = 1; j < kChains; ++j) s = _mm256_add_ps(s, acc[j]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0];
}
constexpr double kFlopsPerIterAvx2 = 12.0 * 8 * 2;

// 24 chains of 16 lanes: two 512-bit FMA ports (Intel server cores) or one double-pumped port
// (Zen 4) both stay busy, and 24 of the 32 registers leave the loop free of spills.
__attribute__((target("avx512f"))) float chains_avx512(int64_t iters) {
  constexpr int kChains = 24;
  __m512 acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = _mm512_set1_ps(float(j) * 1e-3f);
  const __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(1e-3f);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 24
    for (int j = 0; j < kChains; ++j) acc[j] = _mm512_fmadd_ps(acc[j], x, y);
  }
  __m512 s = acc[0];
  for (int j = 1; j < kChains; ++j) s = _mm512_add_ps(s, acc[j]);
  float out[16];
  _mm512_storeu_ps(out, s);
  return out[0];
}
constexpr double kFlopsPerIterAvx512 = 24.0 * 16 * 2;

using Chains = float (*)(int64_t);

/// Seconds on this thread's CPU clock: a neighbour's load takes time slices away from a thread,
/// not FMA throughput from the slices it gets.
double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

struct Rates {
  double wall, cpu;  // GFLOP/s over the wall time, and summed over threads on their CPU times
};

/// Every thread runs `iters` iterations of `f` at once.
Rates timed(Chains f, int threads, int64_t iters, double flops_per_iter, float* sink) {
  double wall = 0, cpu = 0;
#pragma omp parallel num_threads(threads) reduction(+ : cpu)
  {
#pragma omp barrier
    std::chrono::steady_clock::time_point t0;
#pragma omp master
    t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_now();
    const float r = f(iters);
    cpu += flops_per_iter * double(iters) / (cpu_now() - c0) / 1e9;
#pragma omp barrier
#pragma omp master
    {
      wall = flops_per_iter * double(iters) * threads / 1e9 /
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      *sink += r;
    }
  }
  return {wall, cpu};
}

void measure(const char* isa, int bits, Chains f, double flops_per_iter, int threads,
             double target_s) {
  float sink = 0;
  // Calibrate the iteration count to about target_s per repetition (this also warms up).
  int64_t iters = 1 << 16;
  for (;;) {
    const double gf = timed(f, threads, iters, flops_per_iter, &sink).wall;
    const double s = flops_per_iter * double(iters) * threads / 1e9 / gf;
    if (s >= target_s / 4 || iters > (int64_t(1) << 40)) {
      iters = std::max<int64_t>(1, int64_t(double(iters) * target_s / std::max(s, 1e-9)));
      break;
    }
    iters *= 4;
  }
  std::vector<double> wall, cpu;
  for (int r = 0; r < 7; ++r) {
    const Rates g = timed(f, threads, iters, flops_per_iter, &sink);
    wall.push_back(g.wall);
    cpu.push_back(g.cpu);
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  std::printf(
      "{\"isa\": \"%s\", \"bits\": %d, \"dtype\": \"float32\", \"threads\": %d, "
      "\"best_gflops\": %.2f, \"median_gflops\": %.2f, \"wall_best_gflops\": %.2f, "
      "\"wall_median_gflops\": %.2f, \"check\": %.3g}\n",
      isa, bits, threads, cpu.back(), cpu[cpu.size() / 2], wall.back(), wall[wall.size() / 2],
      double(sink));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> threads;
  if (argc > 1) {
    std::string list = argv[1];
    for (size_t pos = 0; pos <= list.size();) {
      const size_t end = std::min(list.find(',', pos), list.size());
      const int t = std::atoi(list.substr(pos, end - pos).c_str());
      if (t < 1) {
        std::fprintf(stderr, "usage: fma_peak [threads>=1,...] [seconds>0]\n");
        return 2;
      }
      threads.push_back(t);
      pos = end + 1;
    }
  } else {
    threads = {1};
    if (omp_get_num_procs() > 1) threads.push_back(omp_get_num_procs());
  }
  const double target_s = argc > 2 ? std::atof(argv[2]) : 0.1;
  if (!(target_s > 0)) {
    std::fprintf(stderr, "usage: fma_peak [threads>=1,...] [seconds>0]\n");
    return 2;
  }
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 = __builtin_cpu_supports("avx512f");
  if (!avx2) {
    std::fprintf(stderr, "fma_peak: this CPU has no AVX2+FMA\n");
    return 1;
  }
  for (int t : threads) {
    measure("avx2", 256, chains_avx2, kFlopsPerIterAvx2, t, target_s);
    if (avx512) measure("avx512", 512, chains_avx512, kFlopsPerIterAvx512, t, target_s);
  }
  return 0;
}
