// CUDA binary elementwise kernels (add), broadcast through zero strides.
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_functors.cuh"

namespace ember::cuda {
namespace {

template <class T, class Op>
struct BinaryApply {
  T* out;
  const T* a;
  const T* b;
  Op op;
  __device__ void operator()(const int64_t (&off)[3]) const {
    out[off[0]] = op(a[off[1]], b[off[2]]);
  }
};

// The alpha of `T`'s compute type, converted as Scalar::to<C>() does on the CPU.
template <class C>
C scalar_as(const ScalarArg& s) {
  if constexpr (std::is_same_v<C, bool>)
    return s.b;
  else if constexpr (is_complex_v<C>)
    return C(typename C::value_type(s.d), typename C::value_type(s.im));
  else if constexpr (std::is_floating_point_v<C>)
    return static_cast<C>(s.d);
  else
    return static_cast<C>(s.i);
}

}  // namespace

bool launch_add(ScalarType dt, void* out, const void* a, const void* b, const Geometry<3>& g,
                const ScalarArg& alpha) {
  return dispatch_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Op = AddOp<T>;
    BinaryApply<T, Op> f{static_cast<T*>(out), static_cast<const T*>(a), static_cast<const T*>(b),
                         Op{scalar_as<typename Op::C>(alpha)}};
    launch_elementwise(g, f, "add");
  });
}

}  // namespace ember::cuda
