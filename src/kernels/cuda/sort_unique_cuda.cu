// CUDA kernels of unique and unique_consecutive: the values in order (unique: CUDA's stable
// sort, sort_cuda.cu), a flag where a run of equal values starts (NaN never equals, so each NaN
// is its own element), an inclusive prefix sum of the flags (cub::DeviceScan) giving each
// element its output slot, then independent writes. The unique count sizes the outputs, so it is
// read back (check_not_capturing first).
//
// unique on CUDA is always sorted, as PyTorch's CUDA unique: the CPU's sorted=False hash order
// and its NaN quirks (Note [Unique order]) are CPU-only; for sorted=True and NaN-free input both
// devices give the same values, inverse and counts.
#include <cub/device/device_scan.cuh>

#include "core/tensor_util.h"
#include "ember/cuda.h"
#include "ember/dispatch_type.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_functors.cuh"
#include "kernels/cuda/index_check.cuh"
#include "kernels/stubs/sort.h"
#include "ops/device_kernels.h"

namespace ember {
namespace cuda {
namespace {

template <class T>
__device__ bool same_value(T a, T b) {
  using C = opmath_t<T>;
  return convert<C>(a) == convert<C>(b);
}

template <class T>
__global__ void run_starts(const T* v, int64_t n, int64_t* flags) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    flags[i] = (i == 0 || !same_value(v[i], v[i - 1])) ? 1 : 0;
}

// slot[i] = (inclusive count of run starts up to i) - 1. `pos` maps sorted element i to its
// input position (nullptr: the identity).
template <class T>
__global__ void unique_write(const T* v, const int64_t* flags, const int64_t* slot1,
                             const int64_t* pos, int64_t n, T* out, int64_t* inv,
                             unsigned long long* cnt) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t s = slot1[i] - 1;
    if (flags[i]) out[s] = v[i];
    if (inv) inv[pos ? pos[i] : i] = s;
    if (cnt) atomicAdd(cnt + s, 1ull);
  }
}

// Runs of `v` (n contiguous values on the device) into out / inverse / counts.
void unique_runs(const Tensor& x, const Tensor& v, const int64_t* pos, bool want_inverse,
                 bool want_counts, Tensor& out, Tensor& inverse, Tensor& counts, const char* op) {
  const int64_t n = v.numel();
  const Device dev = x.device();
  inverse = want_inverse ? empty_tensor(x.sizes(), kLong, dev) : empty_tensor({0}, kLong, dev);
  counts = empty_tensor({0}, kLong, dev);
  if (n == 0) {
    out = empty_tensor({0}, x.dtype(), dev);
    return;
  }
  check_not_capturing(op);
  cudaStream_t stream = current_raw_stream();
  DataPtr flags = scratch(size_t(n) * sizeof(int64_t)), slot = scratch(size_t(n) * sizeof(int64_t));
  auto* f = static_cast<int64_t*>(flags.get());
  auto* s = static_cast<int64_t*>(slot.get());
  bool ok = dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_complex_v<T>) {
      EMBER_THROW(NotImplementedError, "[", op, "] not implemented for complex");
    } else {
      run_starts<<<grid_for(n), kBlockSize, 0, stream>>>(static_cast<const T*>(v.data_ptr()), n, f);
      check_launch(op);
      size_t temp_bytes = 0;
      EMBER_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, f, s, n, stream));
      DataPtr temp = scratch(temp_bytes);
      EMBER_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp.get(), temp_bytes, f, s, n, stream));
      int64_t nu = 0;
      read_device(&nu, s + (n - 1));
      out = empty_tensor({nu}, x.dtype(), dev);
      unsigned long long* c = nullptr;
      if (want_counts) {
        counts = empty_tensor({nu}, kLong, dev);
        c = static_cast<unsigned long long*>(counts.data_ptr());
        EMBER_CUDA_CHECK(cudaMemsetAsync(c, 0, size_t(nu) * sizeof(int64_t), stream));
      }
      unique_write<<<grid_for(n), kBlockSize, 0, stream>>>(
          static_cast<const T*>(v.data_ptr()), f, s, pos, n, static_cast<T*>(out.data_ptr()),
          want_inverse ? static_cast<int64_t*>(inverse.data_ptr()) : nullptr, c);
      check_launch(op);
    }
  });
  EMBER_CHECK_T(NotImplementedError, ok, "[", op, "] not implemented for cuda ", x.dtype());
}

void unique_cuda(const Tensor& x, bool /*sorted*/, bool return_inverse, bool return_counts,
                 Tensor& out, Tensor& inverse, Tensor& counts) {
  DeviceGuard g(x.device());
  const int64_t n = x.numel();
  Tensor sv = x, si;
  if (n > 0) {
    Tensor rows = x.reshape({1, n});
    sv = empty_tensor({1, n}, x.dtype(), x.device());
    si = empty_tensor({1, n}, kLong, x.device());
    sort_stub(kCUDA, rows, sv, si, false);
  }
  // The CPU kernel gives the inverse whenever counts are asked for too.
  unique_runs(x, sv, si.defined() ? static_cast<const int64_t*>(si.data_ptr()) : nullptr,
              return_inverse || return_counts, return_counts, out, inverse, counts, "unique");
}

void unique_consecutive_cuda(const Tensor& x, bool return_inverse, bool return_counts, Tensor& out,
                             Tensor& inverse, Tensor& counts) {
  DeviceGuard g(x.device());
  unique_runs(x, x.contiguous(), nullptr, return_inverse, return_counts, out, inverse, counts,
              "unique_consecutive");
}

}  // namespace
}  // namespace cuda

EMBER_REGISTER_KERNEL(unique_stub, kCUDA, cuda::unique_cuda);
EMBER_REGISTER_KERNEL(unique_consecutive_stub, kCUDA, cuda::unique_consecutive_cuda);

namespace {
[[maybe_unused]] const bool g_register_unique = [] {
  using S = ScalarType;
  for (OpId op : {OpId::_unique2, OpId::unique_consecutive})
    register_kernel(
        kCUDA, op,
        {S::Bool, S::Byte, S::Char, S::Short, S::Int, S::Long, S::BFloat16, S::Float, S::Double});
  return true;
}();
}  // namespace

}  // namespace ember
