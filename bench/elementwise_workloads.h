#pragma once
// The elementwise workloads, written once and compiled against two libraries: ember
// (bench_elementwise.cpp) and libtorch (torch_bench.cpp). Ops are called unqualified, so
// argument-dependent lookup picks `ember::add` or `at::add`: the same source text runs on both,
// which is also a check that ember's API is libtorch-shaped.
//
// A backend B provides: `using Tensor`, `randn(sizes)` (float32), `set_threads(n)`, `name` and
// `sum_dim(t, d)` (the spelling of a one-dim sum differs between the two libraries' overloads).
//
// Names are "<op>/<size>/<form>/nt:<threads>"; form is "fresh" (the op allocates its output) or
// "out" (`op_out(out, ...)` into a preallocated tensor). Bytes processed are bytes read + bytes
// written, so bytes_per_second in the JSON is memory traffic as STREAM counts it.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ember_bench {

// The inputs of the benchmark being run. Google Benchmark calls a benchmark function once per
// calibration step and once per repetition; building 16M-element random inputs each time cost
// more than the timing itself. The inputs live until a benchmark with another name runs, so at
// most one workload's tensors are alive at a time.
struct InputCache {
  std::string name;
  std::shared_ptr<void> body;
};
inline InputCache& input_cache() {
  static InputCache cache;
  return cache;
}
/// Frees the cached inputs; call before main returns, while the library is fully alive.
inline void release_inputs() { input_cache() = InputCache{}; }

// Times `body()`, where `body = setup()` is built outside the timing (see InputCache).
template <class B, class Setup>
void reg(const std::string& name, int threads, int64_t bytes, Setup setup) {
  using Body = decltype(setup());
  auto run = [=](benchmark::State& st) {
    // An op that throws (not implemented yet, a bug) marks this benchmark as failed; the
    // others still run and the JSON stays whole.
    try {
      B::set_threads(threads);
      InputCache& cache = input_cache();
      if (cache.name != name || !cache.body) {
        cache.body.reset();  // free the previous workload's inputs first
        cache.name = name;
        cache.body = std::make_shared<Body>(setup());
      }
      // Same name, same registration, same lambda type: the cast is exact.
      Body& body = *static_cast<Body*>(cache.body.get());
      body();  // warm-up: first touch of pages, caches, pools
      for (auto _ : st) body();
    } catch (const std::exception& e) {
      st.SkipWithError(e.what());
      return;
    }
    st.SetBytesProcessed(bytes * int64_t(st.iterations()));
    st.counters["nt"] = threads;
  };
  benchmark::RegisterBenchmark(name.c_str(), run)
      ->UseRealTime()  // intra-op threads run outside the timing thread
      ->Unit(benchmark::kMicrosecond);
}

template <class T>
void sink(T& t) {
  void* p = t.data_ptr();
  benchmark::DoNotOptimize(p);
  benchmark::ClobberMemory();
}

template <class B>
void register_elementwise() {
  using T = typename B::Tensor;
  using UnaryFn = T (*)(const T&);
  using UnaryOutFn = void (*)(T&, const T&);
  using BinaryFn = T (*)(const T&, const T&);
  using BinaryOutFn = void (*)(T&, const T&, const T&);
  struct Unary {
    const char* name;
    UnaryFn fresh;
    UnaryOutFn out;  // nullptr: no out= form
  };
  struct Binary {
    const char* name;
    BinaryFn fresh;
    BinaryOutFn out;
  };
  const Binary binaries[] = {
      {"add", [](const T& a, const T& b) -> T { return add(a, b); },
       [](T& o, const T& a, const T& b) { add_out(o, a, b); }},
      {"mul", [](const T& a, const T& b) -> T { return mul(a, b); },
       [](T& o, const T& a, const T& b) { mul_out(o, a, b); }},
  };
  const Unary unaries[] = {
      {"exp", [](const T& x) -> T { return exp(x); }, [](T& o, const T& x) { exp_out(o, x); }},
      {"tanh", [](const T& x) -> T { return tanh(x); }, [](T& o, const T& x) { tanh_out(o, x); }},
      {"sigmoid", [](const T& x) -> T { return sigmoid(x); },
       [](T& o, const T& x) { sigmoid_out(o, x); }},
      // gelu has no out= form in either library; repeated in-place gelu_ would drift into
      // denormals, so only the allocating form is timed.
      {"gelu", [](const T& x) -> T { return gelu(x); }, nullptr},
  };
  const std::pair<const char*, int64_t> sizes[] = {{"1M", int64_t(1) << 20},
                                                   {"16M", int64_t(1) << 24}};
  const int thread_counts[] = {1, 2};
  const int64_t f = 4;  // sizeof(float)

  for (const auto& op : binaries) {
    for (const auto& [label, n] : sizes) {
      for (int nt : thread_counts) {
        std::string base = std::string(op.name) + "/" + label;
        reg<B>(base + "/fresh/nt:" + std::to_string(nt), nt, 3 * n * f, [n = n, fn = op.fresh] {
          return [a = B::randn({n}), b = B::randn({n}), fn] {
            T c = fn(a, b);
            sink(c);
          };
        });
        reg<B>(base + "/out/nt:" + std::to_string(nt), nt, 3 * n * f, [n = n, fn = op.out] {
          return [a = B::randn({n}), b = B::randn({n}), c = B::randn({n}), fn]() mutable {
            fn(c, a, b);
            sink(c);
          };
        });
      }
    }
  }
  for (const auto& op : unaries) {
    for (const auto& [label, n] : sizes) {
      for (int nt : thread_counts) {
        std::string base = std::string(op.name) + "/" + label;
        reg<B>(base + "/fresh/nt:" + std::to_string(nt), nt, 2 * n * f, [n = n, fn = op.fresh] {
          return [a = B::randn({n}), fn] {
            T c = fn(a);
            sink(c);
          };
        });
        if (!op.out) continue;
        reg<B>(base + "/out/nt:" + std::to_string(nt), nt, 2 * n * f, [n = n, fn = op.out] {
          return [a = B::randn({n}), c = B::randn({n}), fn]() mutable {
            fn(c, a);
            sink(c);
          };
        });
      }
    }
  }

  // Reductions of 16M elements (read once, one element written) and of a 4096 x 4096 matrix
  // over either dim: memory-bound, so their limit is the read bandwidth.
  const int64_t m = 4096;
  const int64_t n16 = int64_t(1) << 24;
  for (int nt : thread_counts) {
    const std::string suffix = "/nt:" + std::to_string(nt);
    reg<B>("sum/16M/fresh" + suffix, nt, n16 * f, [n16] {
      return [a = B::randn({n16})] {
        T c = sum(a);
        sink(c);
      };
    });
    reg<B>("mean/16M/fresh" + suffix, nt, n16 * f, [n16] {
      return [a = B::randn({n16})] {
        T c = mean(a);
        sink(c);
      };
    });
    reg<B>("amax/16M/fresh" + suffix, nt, n16 * f, [n16] {
      return [a = B::randn({n16})] {
        T c = amax(a);
        sink(c);
      };
    });
    for (int d : {0, 1}) {
      reg<B>("sum_dim" + std::to_string(d) + "/4096x4096/fresh" + suffix, nt, (m * m + m) * f,
             [m, d] {
               return [a = B::randn({m, m}), d] {
                 T c = B::sum_dim(a, d);
                 sink(c);
               };
             });
    }
  }
  for (int nt : thread_counts) {
    const std::string suffix = "/nt:" + std::to_string(nt);
    // Row vector broadcast along dim 0: reads m*m + m, writes m*m.
    reg<B>("add_bcast/4096x4096+4096/fresh" + suffix, nt, (2 * m * m + m) * f, [m] {
      return [a = B::randn({m, m}), b = B::randn({m})] {
        T c = add(a, b);
        sink(c);
      };
    });
    reg<B>("add_bcast/4096x4096+4096/out" + suffix, nt, (2 * m * m + m) * f, [m] {
      return [a = B::randn({m, m}), b = B::randn({m}), c = B::randn({m, m})]() mutable {
        add_out(c, a, b);
        sink(c);
      };
    });
    // Both inputs transposed: the loop engine should walk memory in storage order.
    reg<B>("add_transposed/4096x4096/fresh" + suffix, nt, 3 * m * m * f, [m] {
      return [a = B::randn({m, m}), b = B::randn({m, m})] {
        T c = a.t() + b.t();
        sink(c);
      };
    });
    // One element: the per-op overhead (validation, promotion, allocation, dispatch).
    reg<B>("add_1elem/1/fresh" + suffix, nt, 3 * f, [] {
      return [a = B::randn({1}), b = B::randn({1})] {
        T c = add(a, b);
        sink(c);
      };
    });
    // A Python-number operand (`a + 1`): the number is wrapped as a 0-dim tensor on the way.
    reg<B>("add_scalar_1elem/1/fresh" + suffix, nt, 2 * f, [] {
      return [a = B::randn({1})] {
        T c = a + 1;
        sink(c);
      };
    });
    reg<B>("add_1elem/1/out" + suffix, nt, 3 * f, [] {
      return [a = B::randn({1}), b = B::randn({1}), c = B::randn({1})]() mutable {
        add_out(c, a, b);
        sink(c);
      };
    });
  }
}

}  // namespace ember_bench
