// The C++ twin of bench/per_sample_grads.py: ember::func transforms from C++ (Google Benchmark).
//   per-sample gradients of an MLP in-64-64-10 at batch 64 (in = 64, 784): vmap(grad) and a loop
//   the Hessian of a 32-dimensional tanh function, jacfwd(jacrev(f))
//   the forward of an ensemble of 8 MLPs: vmap over stacked parameters, and a loop
// Run: OMP_NUM_THREADS=2 build/release/bench/func_bench (bench/per_sample_grads.py prints the
// functorch column for the same workloads).

#include <benchmark/benchmark.h>

#include "ember/ember.h"
#include "ember/func.h"

using namespace ember;
using func::TensorList;

namespace {

struct Mlp {
  TensorList params;
  Tensor x, y;
  explicit Mlp(int64_t width, int64_t batch = 64) {
    manual_seed(0);
    params = {randn({64, width}) * 0.1, randn({64}) * 0.1,     randn({64, 64}) * 0.1,
              randn({64}) * 0.1,        randn({10, 64}) * 0.1, randn({10}) * 0.1};
    x = randn({batch, width});
    y = randint(0, 10, {batch});
  }
};

// loss(params..., x, y) for one sample (x: (in), y: ()).
TensorList loss(const TensorList& a) {
  Tensor h = relu(linear(a[6], a[0], a[1]));
  h = relu(linear(h, a[2], a[3]));
  Tensor out = linear(h, a[4], a[5]);
  return {cross_entropy(out.unsqueeze(0), a[7].unsqueeze(0))};
}

void BM_PerSampleGrads_VmapGrad(benchmark::State& st) {
  Mlp m(st.range(0));
  func::VmapOptions o;
  o.in_dims = {
      std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, 0, 0};
  func::Fn g = func::grad(loss, {0, 1, 2, 3, 4, 5});
  TensorList args = m.params;
  args.push_back(m.x);
  args.push_back(m.y);
  for (auto _ : st) benchmark::DoNotOptimize(func::vmap_call(g, args, o));
}
BENCHMARK(BM_PerSampleGrads_VmapGrad)->Arg(64)->Arg(784)->Unit(benchmark::kMillisecond);

void BM_PerSampleGrads_Loop(benchmark::State& st) {
  Mlp m(st.range(0));
  func::Fn g = func::grad(loss, {0, 1, 2, 3, 4, 5});
  for (auto _ : st) {
    for (int64_t i = 0; i < m.x.size(0); ++i) {
      TensorList args = m.params;
      args.push_back(m.x[i]);
      args.push_back(m.y[i]);
      benchmark::DoNotOptimize(g(args));
    }
  }
}
BENCHMARK(BM_PerSampleGrads_Loop)->Arg(64)->Arg(784)->Unit(benchmark::kMillisecond);

void BM_Hessian32(benchmark::State& st) {
  manual_seed(1);
  Tensor a = randn({32, 32}) * 0.2, x = randn({32});
  func::UnaryFn f = [&](const Tensor& v) { return tanh(matmul(a, v)).sum(); };
  for (auto _ : st) benchmark::DoNotOptimize(func::hessian(f)(x));
}
BENCHMARK(BM_Hessian32)->Unit(benchmark::kMillisecond);

void BM_Ensemble8(benchmark::State& st) {
  manual_seed(2);
  std::vector<nn::Sequential> models;
  std::vector<nn::Module*> ptrs;
  for (int k = 0; k < 8; ++k) {
    models.emplace_back(nn::Linear(64, 64), nn::ReLU(), nn::Linear(64, 10));
    ptrs.push_back(models.back().ptr().get());
  }
  Tensor x = randn({64, 64});
  NoGradGuard ng;
  if (st.range(0) == 0) {
    for (auto _ : st)
      for (auto& m : models) benchmark::DoNotOptimize(m->forward(x));
    return;
  }
  auto [params, buffers] = func::stack_module_state(ptrs);
  std::vector<std::string> names;
  TensorList stacked;
  for (auto& [k, v] : params) {
    names.push_back(k);
    stacked.push_back(v);
  }
  func::Fn one = [&](const TensorList& p) {
    std::map<std::string, Tensor> sub;
    for (size_t i = 0; i < names.size(); ++i) sub[names[i]] = p[i];
    return func::functional_call(*models[0], sub,
                                 [&] { return TensorList{models[0]->forward(x)}; });
  };
  for (auto _ : st) benchmark::DoNotOptimize(func::vmap_call(one, stacked));
}
BENCHMARK(BM_Ensemble8)->Arg(0)->Arg(1)->ArgNames({"vmap"})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
