// ember_bench: the elementwise workloads of elementwise_workloads.h on ember.
// Run: build/release/bench/ember_bench --benchmark_filter=add/16M
// bench/side_by_side.py runs it next to torch_bench and PyTorch from Python.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "autograd_workloads.h"
#include "elementwise_workloads.h"
#include "ember/ember.h"

namespace {

struct EmberBackend {
  using Tensor = ember::Tensor;
  using NoGrad = ember::NoGradGuard;
  static Tensor randn(const std::vector<int64_t>& sizes) {
    return ember::randn(sizes, ember::dtype(ember::kFloat));
  }
  static Tensor sum_dim(const Tensor& t, int64_t d) { return t.sum(ember::IntArrayRef{d}); }
  static void set_threads(int n) { ember::set_num_threads(n); }
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("library", std::string("ember ") + ember::kVersion);
  benchmark::AddCustomContext("cpu_capability", ember::cpu_capability());
  ember_bench::register_elementwise<EmberBackend>();
  ember_bench::register_autograd<EmberBackend>();
  benchmark::RunSpecifiedBenchmarks();
  ember_bench::release_inputs();
  benchmark::Shutdown();
  return 0;
}
