// CUDA kernels of sort (and so argsort / msort), topk and kthvalue: the CPU's unsigned sort keys
// (Note [Sort keys] in src/kernels/cpu/sort/sort.cpp: NaN largest, -0.0 == +0.0, descending as
// ~key) sorted with their positions by CUB's stable segmented radix sort, one segment per row, then
// the values gathered at the sorted positions. The same keys and a stable sort give the CPU's
// order.
#include <cub/device/device_segmented_radix_sort.cuh>

#include <climits>

#include "core/tensor_util.h"
#include "ember/cuda.h"
#include "ember/dispatch_type.h"
#include "kernels/common/sort_keys.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_functors.cuh"
#include "kernels/stubs/sort.h"
#include "ops/device_kernels.h"

namespace ember {
namespace cuda {
namespace {

using scalar::KeyOf;

// The CPU's keys (kernels/common/sort_keys.h).
template <class T>
__device__ KeyOf<T> sort_key(T v) {
  if constexpr (std::is_integral_v<T>) {
    return scalar::integer_sort_key(v);
  } else {
    using F = std::conditional_t<std::is_same_v<T, double>, double, float>;
    return scalar::float_sort_key<KeyOf<T>>(convert<F>(v));
  }
}

template <class T>
__global__ void make_keys(const T* rows, int64_t total, int64_t n, bool descending, KeyOf<T>* keys,
                          int64_t* pos) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    KeyOf<T> k = sort_key(rows[i]);
    keys[i] = descending ? ~k : k;
    pos[i] = i % n;
  }
}

__global__ void row_offsets(int* off, int64_t rows, int64_t n) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r <= rows; r += step)
    off[r] = int(r * n);
}

template <class T>
__global__ void gather_rows(T* values, const T* rows, const int64_t* idx, int64_t total,
                            int64_t n) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step)
    values[i] = rows[i - i % n + idx[i]];
}

void sort_cuda(const Tensor& rows, Tensor& values, Tensor& indices, bool descending) {
  DeviceGuard g(rows.device());
  EMBER_CHECK(values.is_cuda() && indices.is_cuda(), "[sort] expected cuda outputs");
  const int64_t total = rows.numel();
  if (total == 0) return;
  const int64_t n = rows.size(-1), nrows = total / n;
  EMBER_CHECK_T(NotImplementedError, total <= INT_MAX, "[sort] more than 2^31 - 1 elements are ",
                "not supported on cuda, got ", total);
  cudaStream_t stream = current_raw_stream();
  DataPtr offs = scratch(size_t(nrows + 1) * sizeof(int));
  int* off = static_cast<int*>(offs.get());
  row_offsets<<<grid_for(nrows + 1), kBlockSize, 0, stream>>>(off, nrows, n);
  check_launch("sort");
  bool ok = dispatch_dtype(rows.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_complex_v<T>) {
      EMBER_THROW(NotImplementedError, "[sort] not implemented for complex");
    } else {
      using K = KeyOf<T>;
      DataPtr kin = scratch(size_t(total) * sizeof(K)), kout = scratch(size_t(total) * sizeof(K));
      DataPtr pin = scratch(size_t(total) * sizeof(int64_t));
      int64_t* pout = static_cast<int64_t*>(indices.data_ptr());
      make_keys<<<grid_for(total), kBlockSize, 0, stream>>>(
          static_cast<const T*>(rows.data_ptr()), total, n, descending, static_cast<K*>(kin.get()),
          static_cast<int64_t*>(pin.get()));
      check_launch("sort");
      size_t temp_bytes = 0;
      EMBER_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(
          nullptr, temp_bytes, static_cast<const K*>(kin.get()), static_cast<K*>(kout.get()),
          static_cast<const int64_t*>(pin.get()), pout, int(total), int(nrows), off, off + 1, 0,
          int(sizeof(K) * 8), stream));
      DataPtr temp = scratch(temp_bytes);
      EMBER_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(
          temp.get(), temp_bytes, static_cast<const K*>(kin.get()), static_cast<K*>(kout.get()),
          static_cast<const int64_t*>(pin.get()), pout, int(total), int(nrows), off, off + 1, 0,
          int(sizeof(K) * 8), stream));
      gather_rows<<<grid_for(total), kBlockSize, 0, stream>>>(
          static_cast<T*>(values.data_ptr()), static_cast<const T*>(rows.data_ptr()), pout, total,
          n);
      check_launch("sort");
    }
  });
  EMBER_CHECK_T(NotImplementedError, ok, "[sort] not implemented for cuda ", rows.dtype());
}

// topk: the first k of the stable sort in topk's direction (NaN largest). The values are the
// CPU's; among equal values the CPU's selection algorithm may pick other positions (topk leaves
// ties unspecified), and sorted=False returns them sorted too.
void topk_cuda(const Tensor& rows, Tensor& values, Tensor& indices, int64_t k, bool largest,
               bool sorted) {
  DeviceGuard g(rows.device());
  Tensor sv = empty_tensor(rows.sizes(), rows.dtype(), rows.device());
  Tensor si = empty_tensor(rows.sizes(), kLong, rows.device());
  sort_cuda(rows, sv, si, largest);
  values.copy_(sv.narrow(-1, 0, k));
  indices.copy_(si.narrow(-1, 0, k));
}

// kthvalue: position k - 1 of the stable ascending sort (NaN largest). Among equal values the
// CPU's selection may report another position of the same value.
void kthvalue_cuda(const Tensor& rows, Tensor& values, Tensor& indices, int64_t k) {
  DeviceGuard g(rows.device());
  Tensor sv = empty_tensor(rows.sizes(), rows.dtype(), rows.device());
  Tensor si = empty_tensor(rows.sizes(), kLong, rows.device());
  sort_cuda(rows, sv, si, false);
  values.copy_(sv.select(-1, k - 1));
  indices.copy_(si.select(-1, k - 1));
}

}  // namespace
}  // namespace cuda

EMBER_REGISTER_KERNEL(sort_stub, kCUDA, cuda::sort_cuda);
EMBER_REGISTER_KERNEL(topk_stub, kCUDA, cuda::topk_cuda);
EMBER_REGISTER_KERNEL(kthvalue_stub, kCUDA, cuda::kthvalue_cuda);

namespace {
[[maybe_unused]] const bool g_register_sort = [] {
  using S = ScalarType;
  for (OpId op : {OpId::sort, OpId::sort_1, OpId::sort_out, OpId::argsort, OpId::argsort_1,
                  OpId::msort, OpId::topk, OpId::topk_out})
    register_kernel(kCUDA, op,
                    {S::Bool, S::Byte, S::Char, S::Short, S::Int, S::Long, S::Half, S::BFloat16,
                     S::Float, S::Double});
  register_kernel(kCUDA, OpId::kthvalue,
                  {S::Byte, S::Char, S::Short, S::Int, S::Long, S::BFloat16, S::Float, S::Double});
  return true;
}();
}  // namespace

}  // namespace ember
