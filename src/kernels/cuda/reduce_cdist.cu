// CUDA p-norm distances between rows (cdist_stub of kernels/stubs/stats.h): one thread per
// output, reducing its M coordinate differences in order with the CPU kernel's per-coordinate
// maps (p = 0 counts differing coordinates, NaN staying NaN; p = inf passes NaN over).
#include "core/kernel_stub.h"
#include "ember/cuda.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/stubs/stats.h"
#include "ops/device_kernels.h"

namespace ember {
namespace cuda {
namespace {

// kind: 0 (p = 0), 1, 2, 3 (p = inf), 4 (any other p).
template <class T, int kKind>
__global__ void cdist_kernel(const T* __restrict__ x1, const T* __restrict__ x2, T* out, int64_t B,
                             int64_t P, int64_t R, int64_t M, T p, T inv_p) {
  const int64_t total = B * P * R;
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += step) {
    const int64_t j = t % R, i = (t / R) % P, b = t / (R * P);
    const T* a = x1 + (b * P + i) * M;
    const T* c = x2 + (b * R + j) * M;
    T acc = 0;
    for (int64_t k = 0; k < M; ++k) {
      const T d = a[k] - c[k];
      const T ad = fabs(d);
      if constexpr (kKind == 0)
        acc += ad > T(0) ? T(1) : ad;
      else if constexpr (kKind == 1)
        acc += ad;
      else if constexpr (kKind == 2)
        acc += d * d;
      else if constexpr (kKind == 3)
        acc = ad > acc ? ad : acc;
      else
        acc += pow(ad, p);
    }
    if constexpr (kKind == 2)
      acc = sqrt(acc);
    else if constexpr (kKind == 4)
      acc = pow(acc, inv_p);
    out[t] = acc;
  }
}

template <class T>
void launch_cdist(const Tensor& x1, const Tensor& x2, double p, Tensor& out) {
  const int64_t B = x1.size(0), P = x1.size(1), M = x1.size(2), R = x2.size(1);
  const int64_t total = B * P * R;
  if (total == 0) return;
  const T* a = static_cast<const T*>(x1.data_ptr());
  const T* b = static_cast<const T*>(x2.data_ptr());
  T* o = static_cast<T*>(out.data_ptr());
  cudaStream_t s = current_raw_stream();
  const unsigned g = grid_for(total);
  const T tp = T(p), inv = T(1.0 / p);
  if (p == 0)
    cdist_kernel<T, 0><<<g, kBlockSize, 0, s>>>(a, b, o, B, P, R, M, tp, inv);
  else if (p == 1)
    cdist_kernel<T, 1><<<g, kBlockSize, 0, s>>>(a, b, o, B, P, R, M, tp, inv);
  else if (p == 2)
    cdist_kernel<T, 2><<<g, kBlockSize, 0, s>>>(a, b, o, B, P, R, M, tp, inv);
  else if (p == __builtin_inf())
    cdist_kernel<T, 3><<<g, kBlockSize, 0, s>>>(a, b, o, B, P, R, M, tp, inv);
  else
    cdist_kernel<T, 4><<<g, kBlockSize, 0, s>>>(a, b, o, B, P, R, M, tp, inv);
  check_launch("cdist");
}

void cdist_cuda(const Tensor& x1, const Tensor& x2, double p, Tensor& out) {
  DeviceGuard guard(out.device());
  EMBER_CHECK(x1.is_contiguous() && x2.is_contiguous() && out.is_contiguous(),
              "[cdist] cuda kernel expects contiguous tensors");
  if (x1.dtype() == kFloat)
    launch_cdist<float>(x1, x2, p, out);
  else if (x1.dtype() == kDouble)
    launch_cdist<double>(x1, x2, p, out);
  else
    EMBER_THROW(NotImplementedError, "[cdist] not implemented for cuda ", dtype_name(x1.dtype()));
}

[[maybe_unused]] const bool registered = [] {
  using S = ScalarType;
  register_kernel(kCUDA, OpId::_cdist_forward, {S::Float, S::Double});
  return true;
}();

}  // namespace
}  // namespace cuda

EMBER_REGISTER_KERNEL(cdist_stub, kCUDA, cuda::cdist_cuda);

}  // namespace ember
