// The FFT engine's kernels on the workloads of bench/fft_side_by_side.py, timed from C++ (no
// Python, no op layer): median milliseconds per call at 1 and 2 threads.
//   fft_bench [rows...]   rows: fft_1m rfft_1m fft2_1k batch_4096x1024 prime_1048583
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "kernels/stubs/fft.h"

using namespace ember;

namespace {

Tensor filled(const std::vector<int64_t>& shape, ScalarType dt) {
  Tensor t = empty(shape, TensorOptions().dtype(dt));
  const int64_t count = t.numel() * (isComplexType(dt) ? 2 : 1);
  float* p = static_cast<float*>(t.data_ptr());
  uint32_t s = 12345;
  for (int64_t i = 0; i < count; ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = float(s >> 8) / float(1 << 24) - 0.5f;
  }
  return t;
}

double median_ms(const std::function<void()>& f) {
  f();  // plans, pages
  std::vector<double> t;
  const auto start = std::chrono::steady_clock::now();
  while (t.size() < 5 ||
         (t.size() < 50 &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 1.5)) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Row {
  std::string name;
  std::function<void()> run;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<Row> rows;
  const std::vector<int64_t> d0 = {0}, d1 = {1}, d01 = {0, 1};
  Tensor x1m = filled({1 << 20}, kComplexFloat), y1m = empty({1 << 20}, kComplexFloat);
  rows.push_back({"fft_1m", [&] { fft_c2c_stub(kCPU, x1m, y1m, IntArrayRef(d0), 1.0, true); }});
  Tensor r1m = filled({1 << 20}, kFloat), h1m = empty({(1 << 19) + 1}, kComplexFloat);
  rows.push_back({"rfft_1m", [&] { fft_r2c_stub(kCPU, r1m, h1m, IntArrayRef(d0), 1.0); }});
  Tensor x2 = filled({1024, 1024}, kComplexFloat), y2 = empty({1024, 1024}, kComplexFloat);
  rows.push_back({"fft2_1k", [&] { fft_c2c_stub(kCPU, x2, y2, IntArrayRef(d01), 1.0, true); }});
  Tensor xb = filled({4096, 1024}, kComplexFloat), yb = empty({4096, 1024}, kComplexFloat);
  rows.push_back(
      {"batch_4096x1024", [&] { fft_c2c_stub(kCPU, xb, yb, IntArrayRef(d1), 1.0, true); }});
  Tensor xp = filled({1048583}, kComplexFloat), yp = empty({1048583}, kComplexFloat);
  rows.push_back(
      {"prime_1048583", [&] { fft_c2c_stub(kCPU, xp, yp, IntArrayRef(d0), 1.0, true); }});
  std::printf("capability %s\n", cpu_capability());
  std::printf("%-18s %10s %10s\n", "row", "1 thr ms", "2 thr ms");
  for (const Row& r : rows) {
    bool want = argc < 2;
    for (int i = 1; i < argc; ++i) want |= r.name == argv[i];
    if (!want) continue;
    set_num_threads(1);
    const double t1 = median_ms(r.run);
    set_num_threads(2);
    const double t2 = median_ms(r.run);
    std::printf("%-18s %10.3f %10.3f\n", r.name.c_str(), t1, t2);
  }
  return 0;
}
