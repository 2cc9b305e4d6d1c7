// The max-pooling kernel entries on CUDA (kernels/stubs/pool.h): geometry from the tensors, the
// loops in src/kernels/cuda/pool.cu. Average pooling is made of other ops (Note [Separable
// average pooling]); its ops are registered here because their bodies run on device tensors.
#include "kernels/stubs/pool.h"
#include "cuda/cuda_context.h"
#include "ember/context.h"
#include "ember/cuda.h"
#include "kernels/cuda/pool_launch.h"
#include "ops/device_kernels.h"

namespace ember::cuda {
namespace {

void check_pool_dtype(ScalarType dt, const char* op) {
  EMBER_CHECK_T(NotImplementedError, dt == kFloat || dt == kDouble || dt == kBFloat16, "[", op,
                "] not implemented for cuda ", dtype_name(dt),
                " (supported: float32, float64, bfloat16)");
}

/// The geometry of batched x (N, C, in...) pooled to y (N, C, out...), right-aligned in 3 dims.
PoolGeom pool_geom(const Tensor& x, const Tensor& y) {
  PoolGeom g;
  const int nd = int(x.dim()) - 2;
  EMBER_INTERNAL_ASSERT(nd >= 1 && nd <= 3 && y.dim() == x.dim(), "[max_pool] bad ranks");
  g.planes = x.size(0) * x.size(1);
  for (int i = 0; i < nd; ++i) {
    g.in[3 - nd + i] = x.size(2 + i);
    g.out[3 - nd + i] = y.size(2 + i);
  }
  return g;
}

void max_pool_cuda(const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, Tensor& y, Tensor& indices) {
  DeviceGuard guard(y.device());
  check_pool_dtype(x.dtype(), "max_pool");
  PoolGeom g = pool_geom(x, y);
  const int nd = int(x.dim()) - 2;
  for (int i = 0; i < nd; ++i) {
    const int j = 3 - nd + i;
    g.k[j] = kernel_size[size_t(i)], g.s[j] = stride[size_t(i)];
    g.p[j] = padding[size_t(i)], g.d[j] = dilation[size_t(i)];
  }
  launch_max_pool(x.dtype(), x.data_ptr(), y.data_ptr(), indices.data_ptr<int64_t>(), g);
}

void adaptive_max_pool_cuda(const Tensor& x, Tensor& y, Tensor& indices) {
  DeviceGuard guard(y.device());
  check_pool_dtype(x.dtype(), "adaptive_max_pool");
  PoolGeom g = pool_geom(x, y);
  g.adaptive = true;
  launch_max_pool(x.dtype(), x.data_ptr(), y.data_ptr(), indices.data_ptr<int64_t>(), g);
}

void max_pool_backward_cuda(const Tensor& grad, const Tensor& indices, Tensor& grad_input) {
  DeviceGuard guard(grad_input.device());
  check_pool_dtype(grad.dtype(), "max_pool_backward");
  const int64_t planes = grad_input.size(0) * grad_input.size(1);
  if (planes == 0) return;
  launch_max_pool_backward(grad.dtype(), grad.data_ptr(), indices.data_ptr<int64_t>(),
                           grad_input.data_ptr(), planes, grad_input.numel() / planes,
                           grad.numel() / planes, are_deterministic_algorithms_enabled());
}

[[maybe_unused]] const bool registered = [] {
  for (OpId id : {OpId::max_pool1d_with_indices, OpId::max_pool2d_with_indices,
                  OpId::max_pool3d_with_indices, OpId::max_pool1d, OpId::max_pool2d,
                  OpId::max_pool3d, OpId::adaptive_max_pool1d, OpId::adaptive_max_pool2d,
                  OpId::adaptive_max_pool3d, OpId::avg_pool1d, OpId::avg_pool2d, OpId::avg_pool3d,
                  OpId::adaptive_avg_pool1d, OpId::adaptive_avg_pool2d, OpId::adaptive_avg_pool3d})
    register_kernel(kCUDA, id, {kFloat, kDouble, kBFloat16});
  return true;
}();

}  // namespace
}  // namespace ember::cuda

namespace ember {
EMBER_REGISTER_KERNEL(max_pool_stub, kCUDA, cuda::max_pool_cuda);
EMBER_REGISTER_KERNEL(adaptive_max_pool_stub, kCUDA, cuda::adaptive_max_pool_cuda);
EMBER_REGISTER_KERNEL(max_pool_backward_stub, kCUDA, cuda::max_pool_backward_cuda);
}  // namespace ember
