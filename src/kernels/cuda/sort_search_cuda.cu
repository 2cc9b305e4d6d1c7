// CUDA kernel of searchsorted / bucketize: a thread per value, a binary search in the sequence
// row that serves it with the CPU kernel's comparisons (NaN values land past every element).
#include "ember/cuda.h"
#include "ember/dispatch_type.h"
#include "kernels/common/search_scalar.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_functors.cuh"
#include "kernels/cuda/index_check.cuh"
#include "kernels/stubs/search.h"
#include "ops/device_kernels.h"

namespace ember {
namespace cuda {
namespace {

template <class T, class O>
__global__ void search_kernel(const T* seq, const int64_t* sort, int64_t len, bool one_row,
                              const T* vals, int64_t per_row, int64_t n_vals, bool right, O* out) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n_vals; i += step) {
    const int64_t row = one_row ? 0 : i / per_row;
    const T* s = seq + row * len;
    const int64_t* so = sort ? sort + row * len : nullptr;
    const T v = vals[i];
    const int64_t lo = scalar::sorted_position(len, v, right, [&](int64_t mid, T& m) {
      int64_t at = mid;
      if (so) {
        at = so[mid];
        if (at < 0 || at >= len)
          return false;  // unchecked during a capture (Note [Device value checks])
      }
      m = s[at];
      return true;
    });
    out[i] = O(lo);
  }
}

void searchsorted_cuda(const Tensor& seq, const Tensor& values, const Tensor& sorter, Tensor& out,
                       bool right) {
  DeviceGuard g(seq.device());
  EMBER_CHECK(values.device() == seq.device() && out.device() == seq.device() &&
                  (!sorter.defined() || sorter.device() == seq.device()),
              "[searchsorted] expected every tensor on ", seq.device());
  const int64_t len = seq.size(-1), n_vals = values.numel();
  if (n_vals == 0) return;
  const int64_t* so = sorter.defined() ? static_cast<const int64_t*>(sorter.data_ptr()) : nullptr;
  if (so) {
    int64_t v;
    if (first_out_of_range(so, sorter.numel(), OutOfRange{0, len, false, 0}, "searchsorted", &v))
      EMBER_THROW(IndexError, "[searchsorted] sorter index ", v,
                  " is out of range for a sequence of length ", len);
  }
  const bool one_row = seq.dim() == 1;
  const int64_t per_row = one_row ? n_vals : values.size(-1);
  const bool out32 = out.dtype() == kInt;
  EMBER_DISPATCH_REAL_TYPES(seq.dtype(), "searchsorted", [&] {
    using T = device_t<scalar_t>;
    const T* s = static_cast<const T*>(seq.data_ptr());
    const T* v = static_cast<const T*>(values.data_ptr());
    if (out32)
      search_kernel<<<grid_for(n_vals), kBlockSize, 0, current_raw_stream()>>>(
          s, so, len, one_row, v, per_row, n_vals, right, static_cast<int32_t*>(out.data_ptr()));
    else
      search_kernel<<<grid_for(n_vals), kBlockSize, 0, current_raw_stream()>>>(
          s, so, len, one_row, v, per_row, n_vals, right, static_cast<int64_t*>(out.data_ptr()));
  });
  check_launch("searchsorted");
}

}  // namespace
}  // namespace cuda

EMBER_REGISTER_KERNEL(searchsorted_stub, kCUDA, cuda::searchsorted_cuda);

namespace {
[[maybe_unused]] const bool g_register_search = [] {
  using S = ScalarType;
  for (OpId op : {OpId::searchsorted, OpId::searchsorted_1, OpId::searchsorted_out, OpId::bucketize,
                  OpId::bucketize_1, OpId::bucketize_out})
    register_kernel(
        kCUDA, op,
        {S::Byte, S::Char, S::Short, S::Int, S::Long, S::Half, S::BFloat16, S::Float, S::Double});
  return true;
}();
}  // namespace

}  // namespace ember
