// stream_triad: the machine's memory bandwidth, STREAM's triad a[i] = b[i] + s * c[i] on float32
// arrays of 16M elements (the footprint of the 16M add benchmark: 3 x 64 MiB), with OpenMP.
// Usage: stream_triad [threads] [elements] [repetitions]
// Prints one JSON object: bytes counted as STREAM does (3 arrays per pass, no write-allocate),
// and the cost of the first touch of fresh pages (wall time per 4 KiB page, all threads).

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  const int64_t n = argc > 2 ? std::atoll(argv[2]) : (int64_t(1) << 24);
  const int reps = argc > 3 ? std::atoi(argv[3]) : 20;
  if (threads < 1 || n < 1 || reps < 1) {
    std::fprintf(stderr, "usage: stream_triad [threads>=1] [elements>=1] [repetitions>=1]\n");
    return 2;
  }
  omp_set_num_threads(threads);
  auto alloc = [n] { return std::unique_ptr<float[]>(new float[size_t(n)]); };
  auto a = alloc(), b = alloc(), c = alloc();
  // First touch by the threads that will use the pages, as STREAM does. Timed too: it is what
  // an op pays when it writes into freshly mapped memory (no caching allocator).
  auto f0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    a[i] = 0.f;
    b[i] = 1.f;
    c[i] = 2.f;
  }
  const double first_touch_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - f0).count();
  const double pages = 3.0 * double(n) * sizeof(float) / 4096.0;
  const float s = 3.f;
  std::vector<double> secs;
  for (int r = 0; r < reps + 1; ++r) {  // the first pass is a warm-up
    auto t0 = std::chrono::steady_clock::now();
    float* __restrict pa = a.get();
    const float* __restrict pb = b.get();
    const float* __restrict pc = c.get();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) pa[i] = pb[i] + s * pc[i];
    auto t1 = std::chrono::steady_clock::now();
    if (r > 0) secs.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  // Check the result so the loop cannot be dropped.
  double check = 0;
  for (int64_t i = 0; i < n; i += 4096) check += a[i];
  if (check != 7.0 * double((n + 4095) / 4096)) {
    std::fprintf(stderr, "stream_triad: wrong result\n");
    return 1;
  }
  std::sort(secs.begin(), secs.end());
  const double bytes = 3.0 * double(n) * sizeof(float);
  std::printf(
      "{\"threads\": %d, \"elements\": %lld, \"bytes\": %.0f, \"best_gbs\": %.3f, "
      "\"median_gbs\": %.3f, \"repetitions\": %d, \"first_touch_gbs\": %.3f, "
      "\"first_touch_us_per_page\": %.3f}\n",
      threads, static_cast<long long>(n), bytes, bytes / secs.front() / 1e9,
      bytes / secs[secs.size() / 2] / 1e9, reps, bytes / first_touch_s / 1e9,
      first_touch_s * 1e6 / pages);
  return 0;
}
