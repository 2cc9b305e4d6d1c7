// CUDA workloads of ember's current device backend (fill, add, broadcast add, strided copy,
// host/device copies), timed with cudaDeviceSynchronize around N repeats. Prints one line per
// workload: `name median_us`. bench/cuda_side_by_side.py runs it next to the same workloads on
// PyTorch and prints ratios.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "ember/ember.h"

using namespace ember;

namespace {

double median_us(const std::function<void()>& f, int reps) {
  f();
  cudaDeviceSynchronize();
  std::vector<double> t;
  for (int r = 0; r < 7; ++r) {
    auto s = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) f();
    cudaDeviceSynchronize();
    auto e = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::micro>(e - s).count() / reps);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main() {
  if (!cuda_is_available()) {
    std::printf("no CUDA device\n");
    return 0;
  }
  const Device dev("cuda");
  const int64_t n = int64_t(1) << 24;
  Tensor a = empty({n}, TensorOptions(kFloat).device(dev)).fill_(1.5);
  Tensor b = empty({n}, TensorOptions(kFloat).device(dev)).fill_(2.0);
  Tensor out = empty({n}, TensorOptions(kFloat).device(dev));
  Tensor m = empty({4096, 4096}, TensorOptions(kFloat).device(dev)).fill_(1.0);
  Tensor row = empty({4096}, TensorOptions(kFloat).device(dev)).fill_(3.0);
  Tensor host = ones({n}, kFloat);
  Tensor small = empty({16}, TensorOptions(kFloat).device(dev)).fill_(1.0);
  std::printf("fill_16M %.2f\n", median_us([&] { out.fill_(0.5); }, 50));
  std::printf("add_16M %.2f\n", median_us([&] { (void)add(a, b); }, 50));
  std::printf("add_out_16M %.2f\n", median_us([&] { add_out(out, a, b); }, 50));
  std::printf("add_bcast_4096x4096 %.2f\n", median_us([&] { (void)add(m, row); }, 50));
  std::printf("copy_transpose_4096x4096 %.2f\n", median_us([&] { (void)m.t().contiguous(); }, 20));
  std::printf("h2d_64MB %.2f\n", median_us([&] { (void)host.to(dev); }, 5));
  std::printf("d2h_64MB %.2f\n", median_us([&] { (void)a.to(Device(kCPU)); }, 5));
  std::printf("add_small_launch %.2f\n", median_us([&] { (void)add(small, small); }, 1000));
  return 0;
}
