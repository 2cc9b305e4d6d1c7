// The diagonal sum of trace (kernels/stubs/blas.h).
#include "ember/dispatch_type.h"
#include "kernels/stubs/blas.h"

namespace ember {

EMBER_DEFINE_KERNEL(trace_stub);

namespace cpu {
namespace {

/// Sum of `n` elements `step` apart: int64 (wrapping) for integers, double or complex<double>
/// accumulation otherwise.
template <class T>
Scalar diag_sum(const T* p, int64_t n, int64_t step) {
  if constexpr (std::is_same_v<T, complex<float>> || std::is_same_v<T, complex<double>>) {
    complex<double> s = 0;
    for (int64_t i = 0; i < n; ++i) s += complex<double>(p[i * step]);
    return Scalar(s);
  } else if constexpr (std::is_integral_v<T>) {
    uint64_t s = 0;
    for (int64_t i = 0; i < n; ++i) s += uint64_t(int64_t(p[i * step]));
    return Scalar(int64_t(s));
  } else {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += double(p[i * step]);
    return Scalar(s);
  }
}

Scalar trace_cpu(const Tensor& x) {
  const int64_t nd = std::min(x.size(0), x.size(1)), step = x.stride(0) + x.stride(1);
  Scalar r;
  EMBER_DISPATCH_ALL_TYPES(x.dtype(), "trace",
                           [&] { r = diag_sum(x.data_ptr<scalar_t>(), nd, step); });
  return r;
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(trace_stub, kCPU, cpu::trace_cpu);

}  // namespace ember
