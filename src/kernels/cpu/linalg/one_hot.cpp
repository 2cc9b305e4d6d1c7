// one_hot (kernels/stubs/linalg.h): the class range of the indices, then one 1 per row.
#include <algorithm>

#include "core/parallel_internal.h"
#include "kernels/stubs/linalg.h"

namespace ember {

EMBER_DEFINE_KERNEL(one_hot_bounds_stub);
EMBER_DEFINE_KERNEL(one_hot_stub);

namespace cpu {
namespace {

std::pair<int64_t, int64_t> one_hot_bounds_cpu(const Tensor& idx) {
  const int64_t* p = idx.data_ptr<int64_t>();
  const int64_t n = idx.numel();
  if (n == 0) return {0, -1};
  return {*std::min_element(p, p + n), *std::max_element(p, p + n)};
}

void one_hot_cpu(const Tensor& idx, Tensor& out, int64_t num_classes) {
  const int64_t* p = idx.data_ptr<int64_t>();
  int64_t* o = out.data_ptr<int64_t>();
  parallel_for(0, idx.numel(), 32768, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) o[i * num_classes + p[i]] = 1;
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(one_hot_bounds_stub, kCPU, cpu::one_hot_bounds_cpu);
EMBER_REGISTER_KERNEL(one_hot_stub, kCPU, cpu::one_hot_cpu);

}  // namespace ember
