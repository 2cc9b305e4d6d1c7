// torch_bench: the elementwise workloads of elementwise_workloads.h on libtorch (Debian's
// libtorch-dev 1.13), from the same source text as ember_bench. Gives the PyTorch C++ column of
// bench/side_by_side.py, in particular the C++ per-op overhead (add_1elem).

#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "autograd_workloads.h"
#include "elementwise_workloads.h"

namespace {

struct TorchBackend {
  using Tensor = torch::Tensor;
  using NoGrad = torch::NoGradGuard;
  static Tensor randn(const std::vector<int64_t>& sizes) {
    return torch::randn(sizes, torch::dtype(torch::kFloat));
  }
  static Tensor sum_dim(const Tensor& t, int64_t d) { return t.sum(at::IntArrayRef{d}); }
  static void set_threads(int n) { at::set_num_threads(n); }
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("library", std::string("libtorch ") + TORCH_VERSION);
  // Default grad mode (no InferenceMode guard), as a libtorch user and the Python column run.
  ember_bench::register_elementwise<TorchBackend>();
  ember_bench::register_autograd<TorchBackend>();
  benchmark::RunSpecifiedBenchmarks();
  ember_bench::release_inputs();
  benchmark::Shutdown();
  return 0;
}
