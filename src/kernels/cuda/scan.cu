// CUDA cumsum, cumprod, logcumsumexp, cummax and cummin (kernels/stubs/scan.h) over a contiguous
// (outer, n, inner) block.
//
// Note [CUDA scans]
// Many lines: each line is scanned in order by one thread, in the CPU kernel's accumulation type
// (double for float32, float for float16 / bfloat16, int64 for integers, complex128 for
// complex64), so results round exactly as on the CPU; along a non-last dim neighbouring threads
// take neighbouring lines, so loads coalesce. A few long contiguous lines (sums, products,
// logcumsumexp of real types): one block per line runs CUB's BlockScan over tiles, carrying the
// running prefix from tile to tile: the same accumulation type, a different (fixed) order
// (float16 / bfloat16 / float32 / float64 / int32 / int64).
// cummax / cummin always take the sequential path (their index rule is order dependent).
#include <cub/block/block_scan.cuh>
#include <cuda/std/limits>
#include <type_traits>

#include "core/kernel_stub.h"
#include "ember/cuda.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_functors.cuh"
#include "kernels/stubs/scan.h"
#include "ops/device_kernels.h"

namespace ember {
namespace cuda {
namespace {

template <class T>
struct AccOf {
  using type = std::conditional_t<std::is_integral_v<T>, int64_t, opmath_t<T>>;
};
template <>
struct AccOf<float> {
  using type = double;
};
template <>
struct AccOf<c32> {
  using type = c64;
};

template <class T, bool kProd>
struct SumProdOp {
  using acc_t = typename AccOf<T>::type;
  __device__ static acc_t init() { return acc_t(kProd ? 1 : 0); }
  __device__ static acc_t load(T x) { return convert<acc_t>(x); }
  __device__ static acc_t combine(acc_t a, acc_t b) {
    if constexpr (std::is_integral_v<acc_t>) {
      const uint64_t ua = uint64_t(a), ub = uint64_t(b);  // wraps, as the CPU kernel
      return acc_t(kProd ? ua * ub : ua + ub);
    } else {
      return kProd ? a * b : a + b;
    }
  }
  __device__ static T store(acc_t a) { return convert<T>(a); }
};

// The CPU kernel's log-add-exp step (NaN propagates; equal infinities stay as they are), with
// std::min / std::max's argument order.
template <class T>
struct LogSumExpOp {
  using acc_t = typename AccOf<T>::type;
  __device__ static acc_t init() { return -::cuda::std::numeric_limits<acc_t>::infinity(); }
  __device__ static acc_t load(T x) { return convert<acc_t>(x); }
  __device__ static acc_t combine(acc_t y, acc_t x) {
    const acc_t mn = y != y ? y : (y < x ? y : x);
    const acc_t mx = y != y ? y : (x < y ? y : x);
    if (mn != mx || isfinite(mn)) return log1p(exp(mn - mx)) + mx;
    return x;
  }
  __device__ static T store(acc_t a) { return convert<T>(a); }
};

// One thread per line (Note [CUDA scans]).
template <class Op, class T>
__global__ void scan_lines_kernel(const T* in, T* out, int64_t outer, int64_t n, int64_t inner) {
  using A = typename Op::acc_t;
  const int64_t lines = outer * inner;
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < lines; t += step) {
    const int64_t base = (t / inner) * n * inner + t % inner;
    A a = Op::init();
    for (int64_t j = 0; j < n; ++j) {
      const int64_t k = base + j * inner;
      a = Op::combine(a, Op::load(in[k]));
      out[k] = Op::store(a);
    }
  }
}

constexpr int kScanThreads = 256;
constexpr int kScanItems = 4;

template <class Op>
struct CombineFn {
  template <class A>
  __device__ A operator()(const A& a, const A& b) const {
    return Op::combine(a, b);
  }
};

// One block per contiguous line: BlockScan over tiles, carrying the prefix.
template <class Op, class T>
__global__ void scan_long_lines_kernel(const T* in, T* out, int64_t n) {
  using A = typename Op::acc_t;
  using Scan = cub::BlockScan<A, kScanThreads>;
  __shared__ typename Scan::TempStorage tmp;
  const T* x = in + int64_t(blockIdx.x) * n;
  T* y = out + int64_t(blockIdx.x) * n;
  A carry = Op::init();
  constexpr int64_t kTile = int64_t(kScanThreads) * kScanItems;
  for (int64_t base = 0; base < n; base += kTile) {
    A items[kScanItems];
    const int64_t first = base + int64_t(threadIdx.x) * kScanItems;
#pragma unroll
    for (int k = 0; k < kScanItems; ++k)
      items[k] = first + k < n ? Op::load(x[first + k]) : Op::init();
    A total;
    Scan(tmp).InclusiveScan(items, items, CombineFn<Op>{}, total);
#pragma unroll
    for (int k = 0; k < kScanItems; ++k)
      if (first + k < n) y[first + k] = Op::store(Op::combine(carry, items[k]));
    carry = Op::combine(carry, total);
    __syncthreads();  // tmp is reused by the next tile
  }
}

template <class Op, class T>
void launch_scan(const Tensor& self, Tensor& out, int64_t dim, const char* name) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d < dim) outer *= self.size(d);
    if (d > dim) inner *= self.size(d);
  }
  const int64_t n = self.dim() == 0 ? 1 : self.size(dim);
  if (outer == 0 || n == 0 || inner == 0) return;
  const T* in = static_cast<const T*>(self.data_ptr());
  T* o = static_cast<T*>(out.data_ptr());
  cudaStream_t stream = current_raw_stream();
  // The block-scan path is instantiated for the common dtypes only (compile time); the others
  // scan long lines on the sequential path.
  constexpr bool kBlockScan = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                              std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16> ||
                              std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>;
  if constexpr (kBlockScan) {
    if (inner == 1 && n >= 4096 && outer <= 65535) {
      scan_long_lines_kernel<Op, T><<<unsigned(outer), kScanThreads, 0, stream>>>(in, o, n);
      check_launch(name);
      return;
    }
  }
  scan_lines_kernel<Op, T>
      <<<grid_for(outer * inner), kBlockSize, 0, stream>>>(in, o, outer, n, inner);
  check_launch(name);
}

template <bool kProd>
void sum_prod_cuda(const Tensor& self, Tensor& out, int64_t dim) {
  const char* name = kProd ? "cumprod" : "cumsum";
  DeviceGuard guard(out.device());
  const bool ok = dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>)
      EMBER_THROW(NotImplementedError, "[", name, "] cuda kernel not implemented for bool");
    else
      launch_scan<SumProdOp<T, kProd>, T>(self, out, dim, name);
  });
  EMBER_CHECK_T(NotImplementedError, ok, "[", name, "] not implemented for cuda ",
                dtype_name(self.dtype()));
}

void logcumsumexp_cuda(const Tensor& self, Tensor& out, int64_t dim) {
  DeviceGuard guard(out.device());
  const bool ok = dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_floating_point_v<opmath_t<T>>)
      EMBER_THROW(NotImplementedError, "[logcumsumexp] not implemented for cuda ",
                  dtype_name(self.dtype()));
    else
      launch_scan<LogSumExpOp<T>, T>(self, out, dim, "logcumsumexp");
  });
  EMBER_CHECK_T(NotImplementedError, ok, "[logcumsumexp] not implemented for cuda ",
                dtype_name(self.dtype()));
}

// Whether x replaces the running extremum cur (the CPU rule: a NaN always does; otherwise ties
// move the index to the latest occurrence).
template <bool kMax, class T>
__device__ __forceinline__ bool takes(T xt, T curt) {
  if constexpr (std::is_integral_v<T>) {
    return kMax ? xt >= curt : xt <= curt;
  } else {
    using F = opmath_t<T>;
    const F x = convert<F>(xt), cur = convert<F>(curt);
    return x != x || (cur == cur && (kMax ? x >= cur : x <= cur));
  }
}

template <bool kMax, class T>
__global__ void cum_extreme_kernel(const T* in, T* out, int64_t* idx, int64_t outer, int64_t n,
                                   int64_t inner) {
  const int64_t lines = outer * inner;
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < lines; t += step) {
    const int64_t base = (t / inner) * n * inner + t % inner;
    T cur = in[base];
    int64_t ci = 0;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t k = base + j * inner;
      const T v = in[k];
      if (takes<kMax>(v, cur)) {
        cur = v;
        ci = j;
      }
      out[k] = cur;
      idx[k] = ci;
    }
  }
}

template <bool kMax>
void cum_extreme_cuda(const Tensor& self, Tensor& values, Tensor& indices, int64_t dim) {
  const char* name = kMax ? "cummax" : "cummin";
  DeviceGuard guard(values.device());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d < dim) outer *= self.size(d);
    if (d > dim) inner *= self.size(d);
  }
  const int64_t n = self.dim() == 0 ? 1 : self.size(dim);
  if (outer == 0 || n == 0 || inner == 0) return;
  const bool ok = dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_complex_v<T>) {
      EMBER_THROW(NotImplementedError, "[", name, "] not implemented for cuda ",
                  dtype_name(self.dtype()));
    } else {
      cum_extreme_kernel<kMax, T><<<grid_for(outer * inner), kBlockSize, 0, current_raw_stream()>>>(
          static_cast<const T*>(self.data_ptr()), static_cast<T*>(values.data_ptr()),
          static_cast<int64_t*>(indices.data_ptr()), outer, n, inner);
      check_launch(name);
    }
  });
  EMBER_CHECK_T(NotImplementedError, ok, "[", name, "] not implemented for cuda ",
                dtype_name(self.dtype()));
}

[[maybe_unused]] const bool registered = [] {
  using S = ScalarType;
  // Integer and bool inputs are promoted to int64 by the op (or converted to dtype=).
  for (OpId op : {OpId::cumsum, OpId::cumsum_out, OpId::cumsum_, OpId::cumprod, OpId::cumprod_out,
                  OpId::cumprod_})
    register_kernel_all_dtypes(kCUDA, op);
  for (OpId op : {OpId::cummax, OpId::cummin, OpId::cummax_out, OpId::cummin_out})
    register_kernel(kCUDA, op,
                    {S::Bool, S::Byte, S::Char, S::Short, S::Int, S::Long, S::Half, S::BFloat16,
                     S::Float, S::Double});
  for (OpId op : {OpId::logcumsumexp, OpId::logcumsumexp_out})
    register_kernel(kCUDA, op, {S::Half, S::BFloat16, S::Float, S::Double});
  return true;
}();

}  // namespace
}  // namespace cuda

EMBER_REGISTER_KERNEL(cumsum_stub, kCUDA, cuda::sum_prod_cuda<false>);
EMBER_REGISTER_KERNEL(cumprod_stub, kCUDA, cuda::sum_prod_cuda<true>);
EMBER_REGISTER_KERNEL(logcumsumexp_stub, kCUDA, cuda::logcumsumexp_cuda);
EMBER_REGISTER_KERNEL(cummax_stub, kCUDA, cuda::cum_extreme_cuda<true>);
EMBER_REGISTER_KERNEL(cummin_stub, kCUDA, cuda::cum_extreme_cuda<false>);

}  // namespace ember
