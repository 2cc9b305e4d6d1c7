// demo: a short tour of ember's C++ API (`make demo` builds and runs it).
// A libtorch program ports by replacing `torch::` with `ember::`.

#include <iostream>

#include "ember/ember.h"

using ember::indexing::None;
using ember::indexing::Slice;

namespace {
void section(const char* title) { std::cout << "\n== " << title << " ==\n"; }
// libtorch prints a 1-D tensor as a column; as a {1, n} row it reads better here.
ember::Tensor row(const ember::Tensor& t) { return t.unsqueeze(0); }
}  // namespace

int main() {
  std::cout << "ember " << ember::kVersion << " | CPU kernels: " << ember::cpu_capability()
            << " | intra-op threads: " << ember::get_num_threads() << "\n";

  section("tensors and views");
  // arange gives int64 for integer arguments (as PyTorch); ask for float32 here.
  ember::Tensor x = ember::arange(12, ember::kFloat).view({3, 4});
  std::cout << "x = arange(12).view({3, 4})\n" << x << "\n";
  ember::Tensor xt = x.t();  // a view: same storage, strides swapped
  std::cout << "x.t(): sizes " << xt.sizes() << ", strides " << xt.strides() << ", contiguous "
            << std::boolalpha << xt.is_contiguous() << "\n";
  // x[:, 1::2] and x[-1]: views too.
  std::cout << "x.index({Slice(), Slice(1, None, 2)})\n"
            << x.index({Slice(), Slice(1, None, 2)}) << "\n";
  std::cout << "x[-1] (a row of x)\n" << row(x[-1]) << "\n";

  section("broadcasting arithmetic");
  ember::Tensor col = ember::tensor({100.f, 200.f, 300.f}).view({3, 1});
  std::cout << "x + col  ({3, 4} + {3, 1})\n" << x + col << "\n";
  std::cout << "(x - 5) * 0.5\n" << (x - 5) * 0.5 << "\n";

  section("activations");
  ember::Tensor z = ember::linspace(-3, 3, 7);
  std::cout << "z = linspace(-3, 3, 7)\n" << row(z) << "\n";
  std::cout << "gelu(z)\n" << row(ember::gelu(z)) << "\n";
  std::cout << "sigmoid(z)\n" << row(ember::sigmoid(z)) << "\n";
  std::cout << "tanh(z).relu()\n" << row(z.tanh().relu()) << "\n";

  section("dtype promotion (torch.result_type rules)");
  ember::Tensor i = ember::arange(3);  // int64
  ember::Tensor f = ember::ones({3}, ember::kFloat);
  ember::Tensor h = ember::ones({3}, ember::kHalf);
  std::cout << i.dtype() << " + " << f.dtype() << " -> " << (i + f).dtype() << "\n";
  std::cout << i.dtype() << " * 2.5 (a Python-like scalar) -> " << (i * 2.5).dtype() << "\n";
  std::cout << h.dtype() << " + " << f.dtype() << " -> " << (h + f).dtype() << "\n";
  std::cout << i.dtype() << " / " << i.dtype() << " -> " << (i / i).dtype() << " (true division)\n";

  section("random numbers with a seed");
  ember::manual_seed(42);
  ember::Tensor r1 = ember::randn({2, 3});
  ember::manual_seed(42);
  ember::Tensor r2 = ember::randn({2, 3});
  std::cout << "randn({2, 3}) after manual_seed(42)\n" << r1 << "\n";
  std::cout << "same again after re-seeding: " << std::boolalpha << ember::equal(r1, r2) << "\n";

  section("errors are typed exceptions");
  try {
    ember::Tensor bad = ember::ones({2, 3}) + ember::ones({4});
    std::cout << "unexpected: no error, got " << bad.sizes() << "\n";
  } catch (const ember::Error& e) {
    std::cout << "ones({2, 3}) + ones({4}) threw: " << e.what() << "\n";
  }

  section("CPU caching allocator");
  {
    ember::Tensor big = ember::empty({1 << 20});  // 4 MiB
    ember::Tensor again = ember::empty({1 << 20});
  }
  ember::Tensor reused = ember::empty({1 << 20});  // served from the cache
  const ember::MemoryStats s = ember::cpu::memory_stats();
  std::cout << "allocated " << s.allocated << " B, reserved " << s.reserved << " B, peak "
            << s.peak_allocated << " B, " << s.num_allocs << " allocations of which "
            << s.num_cache_hits << " cache hits\n";
  return 0;
}
