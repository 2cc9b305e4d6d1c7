// CPU kernel of softmax / log_softmax: the parallel split over rows or column blocks, running the
// fused loops of the selected CPU capability (softmax_kernels.cpp, Note [Fused softmax]).
#include <algorithm>
#include <vector>

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

// bfloat16/float16 run the float32 loops on float32 copies of one block of rows (or of one
// (n, columns) block along a non-last dim) at a time, converted by the vector casts: float32
// accumulation and one rounding, with no float32 copy of the whole tensor.
void run_softmax_reduced(const Tensor& x, Tensor& out, int64_t outer, int64_t n, int64_t inner,
                         bool log, const SoftmaxKernels& k) {
  const ScalarType dt = x.dtype();
  const ElementwiseFn to_f = kernels().get_cast(dt, kFloat);
  const ElementwiseFn from_f = kernels().get_cast(kFloat, dt);
  const int64_t isz = int64_t(elementSize(dt));
  const char* xp = static_cast<const char*>(x.data_ptr());
  char* yp = static_cast<char*>(out.data_ptr());
  // len contiguous elements from src to dst through a cast loop
  auto cvt = [](ElementwiseFn fn, const void* src, int64_t ss, void* dst, int64_t ds, int64_t len) {
    char* data[2] = {static_cast<char*>(dst), static_cast<char*>(const_cast<void*>(src))};
    const int64_t st[2] = {ds, ss};
    fn(data, st, len, OpParams{});
  };
  if (inner == 1) {
    const int64_t rows = std::max<int64_t>(1, kGrain / n);
    parallel_for(0, outer, rows, [&](int64_t b, int64_t e) {
      std::vector<float> buf(size_t(std::min(e - b, rows) * n));
      for (int64_t r = b; r < e; r += rows) {
        const int64_t re = std::min(e, r + rows), len = (re - r) * n;
        cvt(to_f, xp + r * n * isz, isz, buf.data(), 4, len);
        k.lastdim_f(buf.data(), buf.data(), 0, re - r, n, log);
        cvt(from_f, buf.data(), 4, yp + r * n * isz, isz, len);
      }
    });
    return;
  }
  const int64_t blocks = (inner + kInnerBlock - 1) / kInnerBlock;
  parallel_for(0, outer * blocks, std::max<int64_t>(1, kGrain / (n * kInnerBlock)),
               [&](int64_t b, int64_t e) {
                 std::vector<float> buf(size_t(n * kInnerBlock));
                 for (int64_t t = b; t < e; ++t) {
                   const int64_t o = t / blocks, c = (t % blocks) * kInnerBlock;
                   const int64_t w = std::min(inner, c + kInnerBlock) - c;
                   for (int64_t j = 0; j < n; ++j)
                     cvt(to_f, xp + ((o * n + j) * inner + c) * isz, isz, buf.data() + j * w, 4, w);
                   k.inner_f(buf.data(), buf.data(), 0, 1, n, w, 0, w, log);
                   for (int64_t j = 0; j < n; ++j)
                     cvt(from_f, buf.data() + j * w, 4, yp + ((o * n + j) * inner + c) * isz, isz,
                         w);
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
  if (x.dtype() == kBFloat16 || x.dtype() == kHalf)
    run_softmax_reduced(x, out, outer, n, inner, log, k);
  else if (x.dtype() == kFloat)
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
