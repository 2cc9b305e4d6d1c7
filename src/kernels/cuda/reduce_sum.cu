// CUDA sum, nansum and mean (kernels/stubs/reduce.h) on the reduction engine (Note [CUDA
// reductions] in reduce_plan.h). Integers and bool accumulate in int64, half / bfloat16 in
// float32, everything else in its own type; mean rounds the sum to the dtype, then divides (as
// the CPU kernel).
#include <type_traits>

#include "core/kernel_stub.h"
#include "ember/cuda.h"
#include "kernels/cuda/reduce_engine.cuh"
#include "kernels/stubs/reduce.h"
#include "ops/device_kernels.h"

namespace ember {
namespace cuda {
namespace {

template <class T>
using sum_acc_t = std::conditional_t<std::is_integral_v<T>, int64_t, opmath_t<T>>;

template <class T, class O, bool kNan, bool kMean>
struct SumOp {
  using acc_t = sum_acc_t<T>;
  O* out;
  double count;
  __device__ acc_t init() const { return acc_t(0); }
  __device__ acc_t step(acc_t a, T x, int64_t) const {
    if constexpr (std::is_same_v<T, bool>) {
      return a + (x ? 1 : 0);
    } else if constexpr (std::is_integral_v<T>) {
      return a + acc_t(x);
    } else {
      const acc_t v = convert<acc_t>(x);
      if constexpr (kNan && !is_complex_v<acc_t>) {
        if (v != v) return a;
      }
      return a + v;
    }
  }
  __device__ acc_t combine(acc_t a, acc_t b) const { return a + b; }
  __device__ void write(int64_t o, acc_t a) const {
    if constexpr (kMean) {
      using M = opmath_t<O>;
      out[o] = convert<O>(static_cast<M>(convert<M>(convert<O>(a)) / M(count)));
    } else {
      out[o] = convert<O>(a);
    }
  }
};

template <bool kNan, bool kMean>
void sum_family(const Tensor& self, uint64_t mask, Tensor& out, const char* name) {
  DeviceGuard guard(out.device());
  const double count = double(mask_count(self, mask));
  const bool ok = dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kMean && !std::is_floating_point_v<opmath_t<T>> && !is_complex_v<T>) {
      EMBER_THROW(NotImplementedError, "[", name, "] not implemented for cuda ",
                  dtype_name(self.dtype()));
    } else if constexpr (kNan && !std::is_floating_point_v<opmath_t<T>>) {
      EMBER_THROW(NotImplementedError, "[", name, "] not implemented for cuda ",
                  dtype_name(self.dtype()));
    } else {
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, int64_t>) {
        if (out.dtype() == kLong) {
          run_reduce<T>(self, mask, SumOp<T, int64_t, kNan, kMean>{dptr<int64_t>(out), count},
                        name);
          return;
        }
      }
      EMBER_CHECK(out.dtype() == self.dtype(), "[", name, "] cuda kernel got output dtype ",
                  dtype_name(out.dtype()), " for input ", dtype_name(self.dtype()));
      run_reduce<T>(self, mask, SumOp<T, T, kNan, kMean>{dptr<T>(out), count}, name);
    }
  });
  EMBER_CHECK_T(NotImplementedError, ok, "[", name, "] not implemented for cuda ",
                dtype_name(self.dtype()));
}

void sum_cuda(const Tensor& self, uint64_t mask, Tensor& out) {
  sum_family<false, false>(self, mask, out, "sum");
}
void nansum_cuda(const Tensor& self, uint64_t mask, Tensor& out) {
  sum_family<true, false>(self, mask, out, "nansum");
}
void mean_cuda(const Tensor& self, uint64_t mask, Tensor& out) {
  sum_family<false, true>(self, mask, out, "mean");
}

[[maybe_unused]] const bool registered = [] {
  using S = ScalarType;
  for (OpId op : {OpId::sum, OpId::sum_1, OpId::sum_out}) register_kernel_all_dtypes(kCUDA, op);
  for (OpId op : {OpId::nansum, OpId::nansum_out})
    register_kernel(kCUDA, op,
                    {S::Bool, S::Byte, S::Char, S::Short, S::Int, S::Long, S::Half, S::BFloat16,
                     S::Float, S::Double});
  // mean's input may be any dtype when dtype= names a floating one.
  for (OpId op : {OpId::mean, OpId::mean_1, OpId::mean_out}) register_kernel_all_dtypes(kCUDA, op);
  return true;
}();

}  // namespace
}  // namespace cuda

EMBER_REGISTER_KERNEL(sum_stub, kCUDA, cuda::sum_cuda);
EMBER_REGISTER_KERNEL(nansum_stub, kCUDA, cuda::nansum_cuda);
EMBER_REGISTER_KERNEL(mean_stub, kCUDA, cuda::mean_cuda);

}  // namespace ember
