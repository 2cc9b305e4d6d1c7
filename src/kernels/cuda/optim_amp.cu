// CUDA kernels of gradient scaling (kernels/stubs/amp.h): the inf/NaN check with unscaling and
// the loss-scale update (Note [Loss scale update] in kernels/cpu/amp/amp.cpp). The scale, the
// found_inf flag and the growth tracker stay on the device: nothing synchronises with the host,
// so GradScaler's step can be captured in a CUDA graph.
#include <type_traits>

#include "core/kernel_stub.h"
#include "ember/cuda.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_functors.cuh"
#include "kernels/stubs/amp.h"
#include "ops/device_kernels.h"

namespace ember {
namespace cuda {
namespace {

// Every thread that sees a non-finite value stores 1 into found_inf: the same value from any
// number of threads, so the result does not depend on their order.
template <class T>
__global__ void unscale_kernel(T* p, int64_t n, float* found_inf, const float* inv_scale) {
  using M = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const float inv = *inv_scale;
  bool found = false;
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const M v = convert<M>(p[i]);
    found |= !isfinite(v);
    if (inv != 1.0f) p[i] = convert<T>(static_cast<M>(v * M(inv)));
  }
  if (found) *found_inf = 1.0f;
}

void non_finite_check_and_unscale_cuda(Tensor& t, Tensor& found_inf, const Tensor& inv_scale) {
  DeviceGuard guard(t.device());
  const int64_t n = t.numel();
  if (n == 0) return;
  EMBER_CHECK(t.is_contiguous(),
              "[_amp_foreach_non_finite_check_and_unscale_] cuda kernel "
              "expects a contiguous tensor");
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    unscale_kernel<T><<<grid_for(n), kBlockSize, 0, current_raw_stream()>>>(
        static_cast<T*>(t.data_ptr()), n, static_cast<float*>(found_inf.data_ptr()),
        static_cast<const float*>(inv_scale.data_ptr()));
    check_launch("_amp_foreach_non_finite_check_and_unscale_");
  };
  switch (t.dtype()) {
    case kHalf:
      run(TypeTag<__half>{});
      break;
    case kBFloat16:
      run(TypeTag<__nv_bfloat16>{});
      break;
    case kFloat:
      run(TypeTag<float>{});
      break;
    case kDouble:
      run(TypeTag<double>{});
      break;
    default:
      EMBER_THROW(NotImplementedError,
                  "[_amp_foreach_non_finite_check_and_unscale_] not implemented for cuda ",
                  dtype_name(t.dtype()));
  }
}

__global__ void update_scale_kernel(float* s, int32_t* tracker, const float* found_inf,
                                    double growth_factor, double backoff_factor,
                                    int64_t growth_interval) {
  if (*found_inf != 0.0f) {
    *s = static_cast<float>(*s * backoff_factor);
    *tracker = 0;
    return;
  }
  const int64_t successful = int64_t(*tracker) + 1;
  if (successful == growth_interval) {
    const float grown = static_cast<float>(*s * growth_factor);
    if (isfinite(grown)) *s = grown;
    *tracker = 0;
  } else {
    *tracker = static_cast<int32_t>(successful);
  }
}

void update_scale_cuda(Tensor& scale, Tensor& growth_tracker, const Tensor& found_inf,
                       double growth_factor, double backoff_factor, int64_t growth_interval) {
  DeviceGuard guard(scale.device());
  update_scale_kernel<<<1, 1, 0, current_raw_stream()>>>(
      static_cast<float*>(scale.data_ptr()), static_cast<int32_t*>(growth_tracker.data_ptr()),
      static_cast<const float*>(found_inf.data_ptr()), growth_factor, backoff_factor,
      growth_interval);
  check_launch("_amp_update_scale_");
}

[[maybe_unused]] const bool registered = [] {
  using S = ScalarType;
  register_kernel(kCUDA, OpId::_amp_foreach_non_finite_check_and_unscale_,
                  {S::Half, S::BFloat16, S::Float, S::Double});
  register_kernel(kCUDA, OpId::_amp_update_scale_, {S::Float});
  return true;
}();

}  // namespace
}  // namespace cuda

EMBER_REGISTER_KERNEL(amp_non_finite_check_and_unscale_stub, kCUDA,
                      cuda::non_finite_check_and_unscale_cuda);
EMBER_REGISTER_KERNEL(amp_update_scale_stub, kCUDA, cuda::update_scale_cuda);

}  // namespace ember
