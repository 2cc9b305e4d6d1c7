// CUDA softmax / log_softmax (kernels/stubs/softmax.h) of a contiguous float32 or float64 tensor
// (the op computes float16 / bfloat16 in float32). Along the last dim a row belongs to a warp
// (short rows) or a block (long rows): max, sum of exp(x - max), then the outputs, each reduced
// in a fixed tree. Along another dim each thread walks one column (neighbouring threads read
// neighbouring columns, so loads coalesce). The backward rules are composites of ember ops.
#include <cuda/std/limits>

#include "core/kernel_stub.h"
#include "ember/cuda.h"
#include "kernels/cuda/block_rows.cuh"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/stubs/softmax.h"
#include "ops/device_kernels.h"

namespace ember {
namespace cuda {
namespace {

// Reduces `v` over the x lanes of each row of the block (blockDim.x a power of two); every lane
// gets the result. `sh` holds blockDim.x * blockDim.y values.
template <class T, bool kMax>
__device__ T row_reduce(T v, T* sh) {
  const int me = threadIdx.y * blockDim.x + threadIdx.x;
  sh[me] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (int(threadIdx.x) < s) {
      const T a = sh[me], b = sh[me + s];
      sh[me] = kMax ? (b > a ? b : a) : a + b;
    }
    __syncthreads();
  }
  const T r = sh[threadIdx.y * blockDim.x];
  __syncthreads();  // sh is reused by the next reduction
  return r;
}

template <class T>
__global__ void softmax_lastdim_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows,
                                       int64_t n, bool log) {
  extern __shared__ __align__(16) unsigned char softmax_smem[];
  T* sh = reinterpret_cast<T*>(softmax_smem);
  const int64_t row = int64_t(blockIdx.x) * blockDim.y + threadIdx.y;
  const bool valid = row < rows;  // every thread still joins the reductions
  const T* xr = x + (valid ? row : 0) * n;
  T m = -::cuda::std::numeric_limits<T>::infinity();
  if (valid)
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) m = xr[j] > m ? xr[j] : m;
  m = row_reduce<T, true>(m, sh);
  T s = 0;
  if (valid)
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += exp(xr[j] - m);
  s = row_reduce<T, false>(s, sh);
  if (!valid) return;
  T* yr = y + row * n;
  if (log) {
    const T ls = ::log(s);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) yr[j] = xr[j] - m - ls;
  } else {
    const T inv = T(1) / s;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) yr[j] = exp(xr[j] - m) * inv;
  }
}

// Float32 rows of 4 * n4 elements, one per block, held in registers (block_rows.cuh): one read
// and one write of the row, where the kernel above reads it three times.
template <int K, bool kLog>
__global__ void __launch_bounds__(512)
    softmax_rows_vec(const float* __restrict__ x, float* __restrict__ y, int64_t n4) {
  __shared__ float sh[32];
  const int64_t row = blockIdx.x;
  const float4* xr = reinterpret_cast<const float4*>(x) + row * n4;
  float4 v[K];
  float m = -::cuda::std::numeric_limits<float>::infinity();
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int64_t i = threadIdx.x + int64_t(k) * blockDim.x;
    if (i < n4) {
      v[k] = xr[i];
      m = v[k].x > m ? v[k].x : m;
      m = v[k].y > m ? v[k].y : m;
      m = v[k].z > m ? v[k].z : m;
      m = v[k].w > m ? v[k].w : m;
    }
  }
  m = block_reduce(m, MaxOp{}, sh);
  float s = 0;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    if (threadIdx.x + int64_t(k) * blockDim.x < n4) {
      const float4 e = {expf(v[k].x - m), expf(v[k].y - m), expf(v[k].z - m), expf(v[k].w - m)};
      s += e.x + e.y + e.z + e.w;
      if (!kLog) v[k] = e;
    }
  }
  s = block_reduce(s, SumOp{}, sh);
  float4* yr = reinterpret_cast<float4*>(y) + row * n4;
  const float ls = kLog ? logf(s) : 0.f, inv = kLog ? 0.f : 1.f / s;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int64_t i = threadIdx.x + int64_t(k) * blockDim.x;
    if (i < n4) {
      const float4 a = v[k];
      yr[i] = kLog ? float4{a.x - m - ls, a.y - m - ls, a.z - m - ls, a.w - m - ls}
                   : float4{a.x * inv, a.y * inv, a.z * inv, a.w * inv};
    }
  }
}

template <class T>
__global__ void softmax_inner_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t outer,
                                     int64_t n, int64_t inner, bool log) {
  const int64_t total = outer * inner;
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += step) {
    const int64_t o = t / inner, i = t % inner;
    const T* xc = x + o * n * inner + i;
    T* yc = y + o * n * inner + i;
    T m = -::cuda::std::numeric_limits<T>::infinity();
    for (int64_t j = 0; j < n; ++j) m = xc[j * inner] > m ? xc[j * inner] : m;
    T s = 0;
    for (int64_t j = 0; j < n; ++j) s += exp(xc[j * inner] - m);
    if (log) {
      const T ls = ::log(s);
      for (int64_t j = 0; j < n; ++j) yc[j * inner] = xc[j * inner] - m - ls;
    } else {
      const T inv = T(1) / s;
      for (int64_t j = 0; j < n; ++j) yc[j * inner] = exp(xc[j * inner] - m) * inv;
    }
  }
}

template <class T>
void launch_softmax(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool log) {
  cudaStream_t stream = current_raw_stream();
  if constexpr (std::is_same_v<T, float>) {
    const VecRows vr = vec_rows(n / 4);
    if (inner == 1 && n >= 512 && n % 4 == 0 && vr.k && outer < (int64_t(1) << 31) &&
        aligned16({x, y})) {
      with_vec_k(vr.k, [&](auto k) {
        if (log)
          softmax_rows_vec<k(), true><<<unsigned(outer), vr.threads, 0, stream>>>(x, y, n / 4);
        else
          softmax_rows_vec<k(), false><<<unsigned(outer), vr.threads, 0, stream>>>(x, y, n / 4);
      });
      check_launch("softmax");
      return;
    }
  }
  if (inner == 1) {
    // Rows of up to 1024 elements get a warp each (4 rows per block), longer rows a block.
    const unsigned bx = n <= 1024 ? 32 : 512, by = n <= 1024 ? 4 : 1;
    const int64_t blocks = (outer + by - 1) / by;
    const size_t smem = sizeof(T) * bx * by;
    softmax_lastdim_kernel<T>
        <<<dim3(unsigned(blocks)), dim3(bx, by), smem, stream>>>(x, y, outer, n, log);
    check_launch("softmax");
    return;
  }
  softmax_inner_kernel<T>
      <<<grid_for(outer * inner), kBlockSize, 0, stream>>>(x, y, outer, n, inner, log);
  check_launch("softmax");
}

void softmax_cuda(const Tensor& x, Tensor& out, int64_t dim, bool log) {
  DeviceGuard guard(out.device());
  const int64_t n = x.dim() == 0 ? 1 : x.size(dim);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < dim) outer *= x.size(d);
    if (d > dim) inner *= x.size(d);
  }
  if (x.numel() == 0) return;
  EMBER_CHECK(x.is_contiguous() && out.is_contiguous() && out.dtype() == x.dtype(),
              "[softmax] cuda kernel expects contiguous tensors of one dtype");
  if (x.dtype() == kFloat)
    launch_softmax<float>(static_cast<const float*>(x.data_ptr()),
                          static_cast<float*>(out.data_ptr()), outer, n, inner, log);
  else if (x.dtype() == kDouble)
    launch_softmax<double>(static_cast<const double*>(x.data_ptr()),
                           static_cast<double*>(out.data_ptr()), outer, n, inner, log);
  else
    EMBER_THROW(NotImplementedError, "[", log ? "log_softmax" : "softmax",
                "] cuda kernel not implemented for ", dtype_name(x.dtype()),
                " (the op computes it in float32)");
}

// Any real input: dtype= may name the floating type the op converts it to.
[[maybe_unused]] const bool registered = [] {
  using S = ScalarType;
  for (OpId op : {OpId::softmax, OpId::softmax_out, OpId::log_softmax, OpId::log_softmax_out})
    register_kernel(kCUDA, op,
                    {S::Bool, S::Byte, S::Char, S::Short, S::Int, S::Long, S::Half, S::BFloat16,
                     S::Float, S::Double});
  return true;
}();

}  // namespace
}  // namespace cuda

EMBER_REGISTER_KERNEL(softmax_stub, kCUDA, cuda::softmax_cuda);

}  // namespace ember
