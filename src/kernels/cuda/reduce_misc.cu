// CUDA prod, all / any / count_nonzero and var / std (kernels/stubs/reduce.h) on the reduction
// engine (Note [CUDA reductions] in reduce_plan.h). var / std keep Welford's (count, mean, M2)
// in double per lane and merge lanes and pieces with Chan's formula, as the CPU kernel.
#include <type_traits>

#include "core/kernel_stub.h"
#include "ember/cuda.h"
#include "kernels/common/reduce_logical.h"
#include "kernels/cuda/reduce_engine.cuh"
#include "kernels/stubs/reduce.h"
#include "ops/device_kernels.h"

namespace ember {
namespace cuda {
namespace {

// ---- prod ----

template <class T, class O>
struct ProdOp {
  using acc_t = std::conditional_t<std::is_integral_v<T>, int64_t, opmath_t<T>>;
  O* out;
  __device__ acc_t mul(acc_t a, acc_t b) const {
    if constexpr (std::is_integral_v<acc_t>)
      return acc_t(uint64_t(a) * uint64_t(b));  // wraps, as the CPU kernel
    else
      return a * b;
  }
  __device__ acc_t init() const { return acc_t(1); }
  __device__ acc_t step(acc_t a, T x, int64_t) const {
    if constexpr (std::is_same_v<T, bool>)
      return mul(a, acc_t(x ? 1 : 0));
    else
      return mul(a, convert<acc_t>(x));
  }
  __device__ acc_t combine(acc_t a, acc_t b) const { return mul(a, b); }
  __device__ void write(int64_t o, acc_t a) const { out[o] = convert<O>(a); }
};

void prod_cuda(const Tensor& self, uint64_t mask, Tensor& out) {
  DeviceGuard guard(out.device());
  const bool ok = dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, int64_t>) {
      if (out.dtype() == kLong) {
        run_reduce<T>(self, mask, ProdOp<T, int64_t>{dptr<int64_t>(out)}, "prod");
        return;
      }
    }
    run_reduce<T>(self, mask, ProdOp<T, T>{dptr<T>(out)}, "prod");
  });
  EMBER_CHECK_T(NotImplementedError, ok, "[prod] not implemented for cuda ",
                dtype_name(self.dtype()));
}

// ---- all / any / count_nonzero ----

template <class T>
__device__ __forceinline__ bool nonzero(T x) {
  return convert<bool>(x);
}

// kKind: 0 all, 1 any, 2 count_nonzero.
template <class T, class O, int kKind>
struct LogicalOp {
  using acc_t = scalar::logical_acc_t<kKind>;
  O* out;
  __device__ acc_t init() const { return kKind == 0; }
  __device__ acc_t step(acc_t a, T x, int64_t) const {
    return scalar::logical_step<kKind>(a, nonzero(x));
  }
  __device__ acc_t combine(acc_t a, acc_t b) const { return scalar::logical_combine<kKind>(a, b); }
  __device__ void write(int64_t o, acc_t a) const { out[o] = O(a); }
};

template <int kKind>
void logical_cuda(const Tensor& self, uint64_t mask, Tensor& out) {
  constexpr const char* name = kKind == 0 ? "all" : kKind == 1 ? "any" : "count_nonzero";
  DeviceGuard guard(out.device());
  const bool ok = dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using O = std::conditional_t<kKind == 2, int64_t,
                                 std::conditional_t<std::is_same_v<T, uint8_t>, uint8_t, bool>>;
    run_reduce<T>(self, mask, LogicalOp<T, O, kKind>{dptr<O>(out)}, name);
  });
  EMBER_CHECK_T(NotImplementedError, ok, "[", name, "] not implemented for cuda ",
                dtype_name(self.dtype()));
}

// ---- var / std ----

template <class T>
struct RealOf {
  using type = T;
};
template <class V>
struct RealOf<::cuda::std::complex<V>> {
  using type = V;
};

template <class T>
struct VarOp {
  static constexpr bool kComplex = is_complex_v<T>;
  using M = std::conditional_t<kComplex, c64, double>;
  struct acc_t {
    M mean;
    double m2;
    double n;
  };
  using R = typename RealOf<T>::type;  // the real output type
  R* out;
  T* means;  // var_mean / std_mean (may be null)
  double correction;
  bool take_sqrt;

  __device__ static double sq(M d) {
    if constexpr (kComplex)
      return d.real() * d.real() + d.imag() * d.imag();
    else
      return d * d;
  }
  __device__ acc_t init() const { return {M(0), 0.0, 0.0}; }
  __device__ acc_t step(acc_t a, T x0, int64_t) const {
    const M x = convert<M>(x0);
    a.n += 1;
    const M delta = x - a.mean;
    a.mean += delta / a.n;
    if constexpr (kComplex) {
      const M d2 = x - a.mean;
      a.m2 += delta.real() * d2.real() + delta.imag() * d2.imag();
    } else {
      a.m2 += delta * (x - a.mean);
    }
    return a;
  }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const double n = a.n + b.n;
    const M delta = b.mean - a.mean;
    return {a.mean + delta * (b.n / n), a.m2 + b.m2 + sq(delta) * (a.n * b.n / n), n};
  }
  __device__ void write(int64_t o, acc_t a) const {
    const double div = fmax(0.0, a.n - correction);
    const double v = a.m2 / div;
    out[o] = convert<R>(take_sqrt ? sqrt(v) : v);
    if (means) {
      const M m = a.n == 0 ? M(__longlong_as_double(0x7ff8000000000000ll)) : a.mean;
      means[o] = convert<T>(m);
    }
  }
};

void std_var_cuda(const Tensor& self, uint64_t mask, Tensor& out, Tensor& mean, double correction,
                  bool take_sqrt) {
  const char* name = take_sqrt ? "std" : "var";
  DeviceGuard guard(out.device());
  const bool ok = dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_floating_point_v<opmath_t<T>> && !is_complex_v<T>) {
      EMBER_THROW(NotImplementedError, "[", name, "] not implemented for cuda ",
                  dtype_name(self.dtype()));
    } else {
      using Op = VarOp<T>;
      Op f{dptr<typename Op::R>(out), mean.defined() ? dptr<T>(mean) : nullptr, correction,
           take_sqrt};
      run_reduce<T>(self, mask, f, name);
    }
  });
  EMBER_CHECK_T(NotImplementedError, ok, "[", name, "] not implemented for cuda ",
                dtype_name(self.dtype()));
}

[[maybe_unused]] const bool registered = [] {
  using S = ScalarType;
  for (OpId op : {OpId::prod, OpId::prod_1, OpId::prod_out, OpId::all, OpId::all_1, OpId::any,
                  OpId::any_1, OpId::count_nonzero})
    register_kernel_all_dtypes(kCUDA, op);
  // var / std and the ops composed of reductions and elementwise kernels.
  for (OpId op :
       {OpId::var, OpId::var_1, OpId::var_2, OpId::std, OpId::std_1, OpId::std_2, OpId::var_mean,
        OpId::var_mean_1, OpId::var_mean_2, OpId::std_mean, OpId::std_mean_1, OpId::std_mean_2})
    register_kernel(kCUDA, op,
                    {S::Half, S::BFloat16, S::Float, S::Double, S::ComplexFloat, S::ComplexDouble});
  for (OpId op : {OpId::linalg_vector_norm, OpId::norm, OpId::norm_1})
    register_kernel(kCUDA, op,
                    {S::Half, S::BFloat16, S::Float, S::Double, S::ComplexFloat, S::ComplexDouble});
  register_kernel(kCUDA, OpId::logsumexp,
                  {S::Bool, S::Byte, S::Char, S::Short, S::Int, S::Long, S::Half, S::BFloat16,
                   S::Float, S::Double});
  return true;
}();

}  // namespace
}  // namespace cuda

EMBER_REGISTER_KERNEL(prod_stub, kCUDA, cuda::prod_cuda);
EMBER_REGISTER_KERNEL(all_stub, kCUDA, cuda::logical_cuda<0>);
EMBER_REGISTER_KERNEL(any_stub, kCUDA, cuda::logical_cuda<1>);
EMBER_REGISTER_KERNEL(count_nonzero_stub, kCUDA, cuda::logical_cuda<2>);
EMBER_REGISTER_KERNEL(std_var_stub, kCUDA, cuda::std_var_cuda);

}  // namespace ember
