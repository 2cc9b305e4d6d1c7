// CUDA kernels of nonzero, masked_select and masked_scatter_: the position of each true mask
// element among the true ones is an exclusive prefix sum (cub::DeviceScan), after which every
// element moves independently. The count of true elements sizes the results, so it is read back
// to the host (check_not_capturing first, Note [CUDA kernels and streams]).
#include <cub/device/device_scan.cuh>

#include "ember/cuda.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_functors.cuh"
#include "kernels/cuda/index_check.cuh"
#include "kernels/cuda/index_loop.cuh"
#include "kernels/stubs/index.h"
#include "ops/device_kernels.h"

namespace ember {
namespace cuda {
namespace {

/// Row-major coordinates of a linear index over `sizes`, and an operand's element offset.
struct Shape {
  int nd = 0;
  int64_t sizes[kIndexDims] = {};
  int64_t strides[kIndexDims] = {};
  __device__ int64_t offset(int64_t i) const {
    int64_t off = 0;
    for (int d = nd - 1; d >= 0; --d) {
      off += (i % sizes[d]) * strides[d];
      i /= sizes[d];
    }
    return off;
  }
};

Shape shape_of(const Tensor& t, const char* op) {
  EMBER_CHECK_T(NotImplementedError, t.dim() <= kIndexDims, "[", op, "] more than ", kIndexDims,
                " dims are not supported on cuda");
  Shape s;
  s.nd = int(t.dim());
  for (int64_t d = 0; d < t.dim(); ++d) {
    s.sizes[d] = t.size(d);
    s.strides[d] = t.stride(d);
  }
  return s;
}

__global__ void mask_to_long(const bool* mask, int64_t n, int64_t* out) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    out[i] = mask[i] ? 1 : 0;
}

/// The exclusive prefix sum of the n-element contiguous bool `mask` (device memory of n int64)
/// and the total count (read back).
struct MaskScan {
  DataPtr pos;
  int64_t count = 0;
};

MaskScan scan_mask(const bool* mask, int64_t n, const char* op) {
  MaskScan r;
  if (n == 0) return r;
  check_not_capturing(op);
  cudaStream_t stream = current_raw_stream();
  DataPtr flags = scratch(size_t(n) * sizeof(int64_t));
  r.pos = scratch(size_t(n) * sizeof(int64_t));
  auto* f = static_cast<int64_t*>(flags.get());
  auto* p = static_cast<int64_t*>(r.pos.get());
  mask_to_long<<<grid_for(n), kBlockSize, 0, stream>>>(mask, n, f);
  check_launch(op);
  size_t temp_bytes = 0;
  EMBER_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, f, p, n, stream));
  DataPtr temp = scratch(temp_bytes);
  EMBER_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), temp_bytes, f, p, n, stream));
  int64_t last[2];
  read_device(&last[0], p + (n - 1));
  read_device(&last[1], f + (n - 1));
  r.count = last[0] + last[1];
  return r;
}

__global__ void count_kernel(const bool* mask, int64_t n, unsigned long long* count) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  unsigned long long c = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) c += mask[i];
  if (c) atomicAdd(count, c);
}

__global__ void nonzero_kernel(const bool* mask, const int64_t* pos, int64_t n, Shape s,
                               int64_t* out) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    if (!mask[i]) continue;
    int64_t* row = out + pos[i] * s.nd;
    int64_t rem = i;
    for (int d = s.nd - 1; d >= 0; --d) {
      row[d] = rem % s.sizes[d];
      rem /= s.sizes[d];
    }
  }
}

template <class T>
__global__ void masked_select_kernel(T* out, int64_t ostride, const T* self, Shape s,
                                     const bool* mask, const int64_t* pos, int64_t n) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    if (mask[i]) out[pos[i] * ostride] = self[s.offset(i)];
}

template <class T>
__global__ void masked_scatter_kernel(T* self, Shape s, const T* source, const bool* mask,
                                      const int64_t* pos, int64_t n) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    if (mask[i]) self[s.offset(i)] = source[pos[i]];
}

void check_mask(const Tensor& mask, const Tensor& self, const char* op) {
  EMBER_CHECK(mask.device() == self.device() && mask.dtype() == kBool && mask.is_contiguous(), "[",
              op, "] expected a contiguous bool mask on ", self.device(), ", got ", mask.dtype(),
              " on ", mask.device());
}

// ---- the stubs' CUDA kernels ----

int64_t nonzero_count_cuda(const Tensor& mask) {
  DeviceGuard g(mask.device());
  const int64_t n = mask.numel();
  if (n == 0) return 0;
  check_not_capturing("nonzero");
  DataPtr c = scratch(sizeof(unsigned long long));
  auto* cp = static_cast<unsigned long long*>(c.get());
  EMBER_CUDA_CHECK(cudaMemsetAsync(cp, 0, sizeof(unsigned long long), current_raw_stream()));
  count_kernel<<<grid_for(n), kBlockSize, 0, current_raw_stream()>>>(
      static_cast<const bool*>(mask.data_ptr()), n, cp);
  check_launch("nonzero");
  unsigned long long h = 0;
  read_device(&h, cp);
  return int64_t(h);
}

void nonzero_cuda(Tensor& out, const Tensor& mask) {
  DeviceGuard g(mask.device());
  check_mask(mask, out, "nonzero");
  const int64_t n = mask.numel();
  if (n == 0 || out.numel() == 0) return;
  const bool* m = static_cast<const bool*>(mask.data_ptr());
  MaskScan sc = scan_mask(m, n, "nonzero");
  Shape s = shape_of(mask, "nonzero");
  nonzero_kernel<<<grid_for(n), kBlockSize, 0, current_raw_stream()>>>(
      m, static_cast<const int64_t*>(sc.pos.get()), n, s, static_cast<int64_t*>(out.data_ptr()));
  check_launch("nonzero");
}

void masked_select_cuda(Tensor& out, const Tensor& self, const Tensor& mask) {
  DeviceGuard g(self.device());
  check_mask(mask, self, "masked_select");
  EMBER_CHECK(out.device() == self.device(), "[masked_select] expected out on ", self.device());
  const int64_t n = mask.numel();
  if (n == 0 || out.numel() == 0) return;
  const bool* m = static_cast<const bool*>(mask.data_ptr());
  MaskScan sc = scan_mask(m, n, "masked_select");
  Shape s = shape_of(self, "masked_select");
  dispatch_size(self.element_size(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    masked_select_kernel<<<grid_for(n), kBlockSize, 0, current_raw_stream()>>>(
        static_cast<T*>(out.data_ptr()), out.stride(0), static_cast<const T*>(self.data_ptr()), s,
        m, static_cast<const int64_t*>(sc.pos.get()), n);
  });
  check_launch("masked_select");
}

void masked_scatter_cuda(Tensor& self, const Tensor& mask, const Tensor& source) {
  DeviceGuard g(self.device());
  check_mask(mask, self, "masked_scatter_");
  EMBER_CHECK(source.device() == self.device() && source.is_contiguous(),
              "[masked_scatter_] expected a contiguous source on ", self.device());
  const int64_t n = mask.numel();
  if (n == 0) return;
  const bool* m = static_cast<const bool*>(mask.data_ptr());
  MaskScan sc = scan_mask(m, n, "masked_scatter_");
  EMBER_CHECK(sc.count <= source.numel(),
              "[masked_scatter_] masked_scatter: expected "
              "source to have at least as many elements as the ones in mask (",
              sc.count, "), got ", source.numel());
  if (sc.count == 0) return;
  Shape s = shape_of(self, "masked_scatter_");
  dispatch_size(self.element_size(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    masked_scatter_kernel<<<grid_for(n), kBlockSize, 0, current_raw_stream()>>>(
        static_cast<T*>(self.data_ptr()), s, static_cast<const T*>(source.data_ptr()), m,
        static_cast<const int64_t*>(sc.pos.get()), n);
  });
  check_launch("masked_scatter_");
}

}  // namespace
}  // namespace cuda

EMBER_REGISTER_KERNEL(nonzero_count_stub, kCUDA, cuda::nonzero_count_cuda);
EMBER_REGISTER_KERNEL(nonzero_stub, kCUDA, cuda::nonzero_cuda);
EMBER_REGISTER_KERNEL(masked_select_stub, kCUDA, cuda::masked_select_cuda);
EMBER_REGISTER_KERNEL(masked_scatter_stub, kCUDA, cuda::masked_scatter_cuda);

namespace {
[[maybe_unused]] const bool g_register_masked = [] {
  using S = ScalarType;
  for (OpId op : {OpId::masked_select_out, OpId::masked_select, OpId::masked_scatter_,
                  OpId::masked_scatter, OpId::nonzero_out, OpId::nonzero, OpId::nonzero_numpy})
    register_kernel(kCUDA, op,
                    {S::Bool, S::Byte, S::Char, S::Short, S::Int, S::Long, S::Half, S::BFloat16,
                     S::Float, S::Double, S::ComplexFloat, S::ComplexDouble});
  return true;
}();
}  // namespace

}  // namespace ember
