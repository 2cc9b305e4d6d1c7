// CUDA amax / amin, max(dim) / min(dim) and argmax / argmin (kernels/stubs/reduce.h) on the
// reduction engine (Note [CUDA reductions] in reduce_plan.h): NaN wins, an index result points
// at the first occurrence (ties are broken by index, since the lanes' partials interleave).
#include <cuda/std/limits>
#include <type_traits>

#include "core/kernel_stub.h"
#include "ember/cuda.h"
#include "kernels/cuda/reduce_engine.cuh"
#include "kernels/stubs/reduce.h"
#include "ops/device_kernels.h"

namespace ember {
namespace cuda {
namespace {

// Compare type: bool stays bool, 16-bit floats compare as float.
template <class T>
using cmp_t = std::conditional_t<std::is_same_v<T, bool>, bool, opmath_t<T>>;

// Whether x beats the current best (Max: larger; NaN beats every number).
template <bool Max, class M>
__device__ __forceinline__ bool better(M x, M best) {
  if constexpr (std::is_floating_point_v<M>) {
    if (best != best) return false;
    if (x != x) return true;
  }
  return Max ? x > best : x < best;
}

template <bool Max, class M>
__device__ __forceinline__ M extreme_init() {
  if constexpr (std::is_same_v<M, bool>)
    return !Max;
  else if constexpr (std::is_floating_point_v<M>)
    return Max ? -::cuda::std::numeric_limits<M>::infinity()
               : ::cuda::std::numeric_limits<M>::infinity();
  else
    return Max ? ::cuda::std::numeric_limits<M>::lowest() : ::cuda::std::numeric_limits<M>::max();
}

template <class T, bool Max>
struct ExtremeOp {
  using acc_t = cmp_t<T>;
  T* out;
  __device__ acc_t init() const { return extreme_init<Max, acc_t>(); }
  __device__ acc_t step(acc_t a, T x, int64_t) const {
    const acc_t v = convert<acc_t>(x);
    return better<Max>(v, a) ? v : a;
  }
  __device__ acc_t combine(acc_t a, acc_t b) const { return better<Max>(b, a) ? b : a; }
  __device__ void write(int64_t o, acc_t a) const { out[o] = convert<T>(a); }
};

template <class M>
struct ValueIndex {
  M v;
  int64_t i;
};

// Index kNone marks "no element yet": any real element beats or ties it and wins the tie.
constexpr int64_t kNone = INT64_MAX;

template <class T, bool Max>
struct ArgOp {
  using M = cmp_t<T>;
  using acc_t = ValueIndex<M>;
  T* values;         // max(dim) / min(dim): the values (null for argmax / argmin)
  int64_t* indices;  // the indices
  __device__ acc_t init() const { return {extreme_init<Max, M>(), kNone}; }
  __device__ acc_t step(acc_t a, T x, int64_t r) const {
    const M v = convert<M>(x);
    // Elements come in increasing index order within a lane: an equal value never takes over.
    if (a.i == kNone || better<Max>(v, a.v)) return {v, r};
    return a;
  }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    if (b.i == kNone) return a;
    if (a.i == kNone) return b;
    if (better<Max>(b.v, a.v)) return b;
    if (better<Max>(a.v, b.v)) return a;
    return b.i < a.i ? b : a;  // equal, or both NaN: the first index
  }
  __device__ void write(int64_t o, acc_t a) const {
    if (values) values[o] = convert<T>(a.v);
    indices[o] = a.i == kNone ? 0 : a.i;
  }
};

template <class F>
void real_dispatch(const Tensor& self, const char* name, F&& f) {
  const bool ok = dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_complex_v<T>)
      EMBER_THROW(NotImplementedError, "[", name, "] not implemented for cuda ",
                  dtype_name(self.dtype()));
    else
      f(tag);
  });
  EMBER_CHECK_T(NotImplementedError, ok, "[", name, "] not implemented for cuda ",
                dtype_name(self.dtype()));
}

template <bool Max>
void extreme_cuda(const Tensor& self, uint64_t mask, Tensor& out) {
  const char* name = Max ? "amax" : "amin";
  DeviceGuard guard(out.device());
  real_dispatch(self, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_reduce<T>(self, mask, ExtremeOp<T, Max>{dptr<T>(out)}, name);
  });
}

template <bool Max>
void extreme_dim_cuda(const Tensor& self, uint64_t mask, Tensor& values, Tensor& indices) {
  const char* name = Max ? "max" : "min";
  DeviceGuard guard(values.device());
  real_dispatch(self, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_reduce<T>(self, mask, ArgOp<T, Max>{dptr<T>(values), dptr<int64_t>(indices)}, name);
  });
}

template <bool Max>
void arg_cuda(const Tensor& self, uint64_t mask, Tensor& out) {
  const char* name = Max ? "argmax" : "argmin";
  DeviceGuard guard(out.device());
  real_dispatch(self, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_reduce<T>(self, mask, ArgOp<T, Max>{nullptr, dptr<int64_t>(out)}, name);
  });
}

[[maybe_unused]] const bool registered = [] {
  using S = ScalarType;
  for (OpId op : {OpId::max, OpId::min, OpId::max_1, OpId::min_1, OpId::amax, OpId::amin,
                  OpId::argmax, OpId::argmin})
    register_kernel(kCUDA, op,
                    {S::Bool, S::Byte, S::Char, S::Short, S::Int, S::Long, S::Half, S::BFloat16,
                     S::Float, S::Double});
  return true;
}();

}  // namespace
}  // namespace cuda

EMBER_REGISTER_KERNEL(amax_stub, kCUDA, cuda::extreme_cuda<true>);
EMBER_REGISTER_KERNEL(amin_stub, kCUDA, cuda::extreme_cuda<false>);
EMBER_REGISTER_KERNEL(max_dim_stub, kCUDA, cuda::extreme_dim_cuda<true>);
EMBER_REGISTER_KERNEL(min_dim_stub, kCUDA, cuda::extreme_dim_cuda<false>);
EMBER_REGISTER_KERNEL(argmax_stub, kCUDA, cuda::arg_cuda<true>);
EMBER_REGISTER_KERNEL(argmin_stub, kCUDA, cuda::arg_cuda<false>);

}  // namespace ember
