// CUDA workloads of ember, one line each: `name value unit`. bench/cuda_side_by_side.py runs
// this program next to the same workloads on PyTorch and prints ratios.
//
//   cuda_bench [--data DIR] [--only PREFIX] [--profile-step N]
//
// Rows: GEMM in fp32, TF32 and bf16 (TFLOP/s); the device-to-device copy bandwidth and
// elementwise add/mul/gelu on 64M float32 elements (GB/s moved); softmax and layer_norm on
// 4096x4096 (us); the launch overhead of a one-element add (us); host<->device copies; a
// Fashion-MNIST CNN training epoch (the dataset from --data, or synthetic data of the same
// shape: the `fmnist_data` line says which); one training step eager and replayed from a CUDA
// Graph (us). --profile-step N profiles N eager training steps with the op profiler and prints
// its table (to stderr, so the rows stay machine-readable).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "ember/context.h"
#include "ember/cuda.h"
#include "ember/data.h"
#include "ember/ember.h"
#include "ember/nn.h"
#include "ember/nn_ops.h"
#include "ember/optim.h"
#include "ember/profiler.h"

using namespace ember;
namespace nn = ember::nn;

namespace {

std::string g_only;
int g_profile_steps = 0;

bool wanted(const std::string& name) { return g_only.empty() || name.rfind(g_only, 0) == 0; }

void row(const std::string& name, double value, const char* unit) {
  std::printf("%s %.4f %s\n", name.c_str(), value, unit);
  std::fflush(stdout);
}

// Median over 7 timed runs of `reps` calls (after one untimed call), in microseconds per call.
double median_us(const std::function<void()>& f, int reps) {
  f();
  cuda::synchronize();
  std::vector<double> t;
  for (int r = 0; r < 7; ++r) {
    auto s = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) f();
    cuda::synchronize();
    auto e = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::micro>(e - s).count() / reps);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

TensorOptions on_gpu(ScalarType dt) { return TensorOptions(dt).device(Device(kCUDA, 0)); }

void gemm_rows() {
  struct Mode {
    const char* name;
    ScalarType dtype;
    const char* precision;
  };
  for (Mode m : {Mode{"fp32", kFloat, "highest"}, Mode{"tf32", kFloat, "high"},
                 Mode{"bf16", kBFloat16, "highest"}}) {
    for (int64_t n : {4096, 8192}) {
      std::string name = std::string("gemm_") + m.name + "_" + std::to_string(n);
      if (!wanted(name)) continue;
      set_float32_matmul_precision(m.precision);
      Tensor a = randn({n, n}, on_gpu(kFloat)).to(m.dtype);
      Tensor b = randn({n, n}, on_gpu(kFloat)).to(m.dtype);
      double us = median_us([&] { (void)matmul(a, b); }, n >= 8192 ? 5 : 20);
      row(name, 2.0 * double(n) * double(n) * double(n) / (us * 1e-6) / 1e12, "TFLOP/s");
    }
  }
  set_float32_matmul_precision("highest");
}

void bandwidth_rows() {
  const int64_t n = int64_t(64) << 20;  // 64M float32 = 256 MiB per tensor
  const double bytes = double(n) * 4;
  Tensor a = empty({n}, on_gpu(kFloat)).fill_(1.5);
  Tensor b = empty({n}, on_gpu(kFloat)).fill_(-0.5);
  Tensor out = empty({n}, on_gpu(kFloat));
  // GB/s counts each element read and written once.
  if (wanted("copy_d2d_64M"))
    row("copy_d2d_64M", 2 * bytes / median_us([&] { out.copy_(a); }, 10) / 1e3, "GB/s");
  if (wanted("add_64M"))
    row("add_64M", 3 * bytes / median_us([&] { (void)add(a, b); }, 10) / 1e3, "GB/s");
  if (wanted("mul_64M"))
    row("mul_64M", 3 * bytes / median_us([&] { (void)mul(a, b); }, 10) / 1e3, "GB/s");
  if (wanted("gelu_64M"))
    row("gelu_64M", 2 * bytes / median_us([&] { (void)gelu(a); }, 10) / 1e3, "GB/s");
}

void row_ops() {
  Tensor x = randn({4096, 4096}, on_gpu(kFloat));
  Tensor w = ones({4096}, on_gpu(kFloat)), bias = zeros({4096}, on_gpu(kFloat));
  if (wanted("softmax_4096x4096"))
    row("softmax_4096x4096", median_us([&] { (void)softmax(x, -1); }, 20), "us");
  if (wanted("layer_norm_4096x4096"))
    row("layer_norm_4096x4096", median_us([&] { (void)layer_norm(x, {4096}, w, bias); }, 20), "us");
  Tensor one = ones({1}, on_gpu(kFloat));
  if (wanted("launch_add_1elem"))
    row("launch_add_1elem", median_us([&] { (void)add(one, one); }, 2000), "us");
  const int64_t n = int64_t(16) << 20;  // 64 MiB
  Tensor host = ones({n}, kFloat);
  Tensor pinned = cuda::pin_memory(host);
  Tensor dev = ones({n}, on_gpu(kFloat));
  const double bytes = double(n) * 4;
  if (wanted("h2d_pinned_64MB"))
    row("h2d_pinned_64MB", bytes / median_us([&] { (void)pinned.to(dev.device(), true); }, 5) / 1e3,
        "GB/s");
  if (wanted("d2h_64MB"))
    row("d2h_64MB", bytes / median_us([&] { (void)dev.to(Device(kCPU)); }, 5) / 1e3, "GB/s");
}

// The CNN of examples/fashion_mnist.cpp.
struct NetImpl : nn::Module {
  NetImpl()
      : conv1(register_module("conv1", nn::Conv2d(nn::Conv2dOptions(1, 32, 3)))),
        conv2(register_module("conv2", nn::Conv2d(nn::Conv2dOptions(32, 64, 3)))),
        fc1(register_module("fc1", nn::Linear(1600, 128))),
        fc2(register_module("fc2", nn::Linear(128, 10))) {}
  Tensor forward(const Tensor& x) {
    Tensor h = max_pool2d(relu(conv1(x)), {2, 2});
    h = max_pool2d(relu(conv2(h)), {2, 2});
    return fc2(relu(fc1(h.flatten(1))));
  }
  nn::Conv2d conv1, conv2;
  nn::Linear fc1, fc2;
};
EMBER_MODULE(Net);

// One epoch of batch-64 Adam training as examples/fashion_mnist.cpp --device cuda does it:
// batches gathered on the CPU, pinned, copied with non_blocking copies.
void epoch_rows(const std::string& root) {
  if (!wanted("fmnist")) return;
  Tensor images, labels;
  const bool real = std::filesystem::exists(root + "/train-images-idx3-ubyte.gz") ||
                    std::filesystem::exists(root + "/train-images-idx3-ubyte");
  if (real) {
    data::FashionMNIST ds(root, data::MNIST::Mode::kTrain);
    images = ds.images();
    labels = ds.targets();
  } else {
    manual_seed(0);
    images = rand({60000, 1, 28, 28});
    labels = randint(0, 10, {60000});
  }
  std::printf("fmnist_data %s\n", real ? "real" : "synthetic");
  images = (images - 0.2860) / 0.3530;
  manual_seed(0);
  Net model;
  model->to(Device(kCUDA, 0));
  optim::Adam opt(model->parameters(), optim::AdamOptions(1e-3));
  const int64_t n = images.size(0), bs = 64;
  auto run_epoch = [&] {
    Tensor perm = randperm(n);
    Tensor loss_sum = zeros({}, on_gpu(kFloat));
    for (int64_t i = 0; i < n; i += bs) {
      Tensor idx = perm.slice(0, i, std::min(n, i + bs));
      Tensor xb = cuda::pin_memory(images.index_select(0, idx)).to(Device(kCUDA, 0), true);
      Tensor yb = cuda::pin_memory(labels.index_select(0, idx)).to(Device(kCUDA, 0), true);
      opt.zero_grad();
      Tensor loss = cross_entropy(model(xb), yb);
      loss.backward();
      opt.step();
      loss_sum.add_(loss.detach());
    }
    return loss_sum.item<double>() / double((n + bs - 1) / bs);
  };
  run_epoch();  // warm-up: cuDNN algorithm choice, allocator growth
  cuda::synchronize();
  auto s = std::chrono::steady_clock::now();
  double mean_loss = run_epoch();
  cuda::synchronize();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count();
  row("fmnist_epoch", secs, "s");
  row("fmnist_epoch_loss", mean_loss, "mean");

  // One step on a static batch, eager and from a CUDA Graph (SGD with momentum: no host-side
  // step count, so the captured step is the same work each replay).
  Tensor x = images.slice(0, 0, bs).to(Device(kCUDA, 0));
  Tensor y = labels.slice(0, 0, bs).to(Device(kCUDA, 0));
  Net gmodel;
  gmodel->to(Device(kCUDA, 0));
  optim::SGD sgd(gmodel->parameters(), optim::SGDOptions(0.01).momentum(0.9));
  auto step = [&] {
    Tensor loss = cross_entropy(gmodel(x), y);
    loss.backward();
    sgd.step();
  };
  double eager = median_us(
      [&] {
        sgd.zero_grad();
        step();
      },
      50);
  row("fmnist_step_eager", eager, "us");
  if (g_profile_steps > 0) {
    cuda::synchronize();
    profiler::Profile prof;
    for (int i = 0; i < g_profile_steps; ++i) {
      sgd.zero_grad();
      step();
    }
    cuda::synchronize();
    prof.stop();
    std::fprintf(stderr, "%d eager steps:\n%s\n", g_profile_steps,
                 prof.key_averages().table("self_cpu_time_total", 40).c_str());
  }
  cuda::Stream side = cuda::getStreamFromPool();
  cuda::synchronize();
  {
    cuda::StreamGuard g(side);
    for (int i = 0; i < 3; ++i) {
      sgd.zero_grad();
      step();
    }
  }
  cuda::synchronize();
  sgd.zero_grad();  // the captured backward allocates the gradients from the graph's pool
  cuda::CUDAGraph graph;
  {
    cuda::StreamGuard g(side);
    graph.capture_begin();
    step();
    graph.capture_end();
  }
  cuda::synchronize();
  row("fmnist_step_graph", median_us([&] { graph.replay(); }, 50), "us");
}

}  // namespace

int main(int argc, char** argv) {
  std::string root = "/usr/share/datasets/fashion-mnist";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--data") == 0)
      root = argv[i + 1];
    else if (std::strcmp(argv[i], "--only") == 0)
      g_only = argv[i + 1];
    else if (std::strcmp(argv[i], "--profile-step") == 0)
      g_profile_steps = std::atoi(argv[i + 1]);
  }
  if (!cuda_is_available()) {
    std::printf("no CUDA device\n");
    return 0;
  }
  try {
    auto p = cuda::get_device_properties(0);
    std::printf("device %s\n", p.name.c_str());
    gemm_rows();
    bandwidth_rows();
    row_ops();
    epoch_rows(root);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuda_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
