// CPU kernel of softmax / log_softmax: the parallel split over rows or column blocks, running the
// fused loops of the selected CPU capability (softmax_kernels.cpp, Note [Fused softmax]).
#include <algorithm>

#include "core/parallel_internal.h"
#include "kernels/cpu/kernel_registry.h"
#include "kernels/cpu/nn/softmax.h"
#include "kernels/stubs/softmax.h"

namespace ember {

EMBER_DEFINE_KERNEL(softmax_stub);

namespace cpu {
SoftmaxKernels g_softmax_kernels;
const SoftmaxKernels& softmax_kernels() {
  (void)kernels();  // registers every family of the selected capability, softmax included
  return g_softmax_kernels;
}

namespace {

constexpr int64_t kGrain = 32768;     // elements per task
constexpr int64_t kInnerBlock = 256;  // inner columns per task along a non-last dim

template <class T>
void run_softmax(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool log,
                 SoftmaxLastDimFn<T> lastdim, SoftmaxInnerFn<T> vertical) {
  if (inner == 1) {
    parallel_for(0, outer, std::max<int64_t>(1, kGrain / n),
                 [&](int64_t b, int64_t e) { lastdim(x, y, b, e, n, log); });
    return;
  }
  const int64_t blocks = (inner + kInnerBlock - 1) / kInnerBlock;
  parallel_for(0, outer * blocks, std::max<int64_t>(1, kGrain / (n * kInnerBlock)),
               [&](int64_t b, int64_t e) {
                 for (int64_t t = b; t < e; ++t) {
                   const int64_t o = t / blocks, c = (t % blocks) * kInnerBlock;
                   vertical(x, y, o, o + 1, n, inner, c, std::min(inner, c + kInnerBlock), log);
                 }
               });
}

void softmax_cpu(const Tensor& x, Tensor& out, int64_t dim, bool log) {
  const int64_t n = x.dim() == 0 ? 1 : x.size(dim);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < dim) outer *= x.size(d);
    if (d > dim) inner *= x.size(d);
  }
  const SoftmaxKernels& k = softmax_kernels();
  if (x.dtype() == kFloat)
    run_softmax<float>(x.data_ptr<float>(), out.data_ptr<float>(), outer, n, inner, log,
                       k.lastdim_f, k.inner_f);
  else
    run_softmax<double>(x.data_ptr<double>(), out.data_ptr<double>(), outer, n, inner, log,
                        k.lastdim_d, k.inner_d);
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(softmax_stub, kCPU, cpu::softmax_cpu);

}  // namespace ember
