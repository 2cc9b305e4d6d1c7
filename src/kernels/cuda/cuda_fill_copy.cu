// CUDA fill and copy kernels: fill by element size, strided same-dtype copies and casts between
// all dtypes (the device half of copy_ / to(); see copy() in cuda_backend.cu).
#include <cstring>

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_functors.cuh"
#include "kernels/cuda/elementwise_binary.cuh"
#include "kernels/cuda/elementwise_kernels.cuh"

namespace ember::cuda {
namespace {

template <class T>
struct FillApply {
  T* out;
  FillOp<T> op;
  __device__ void operator()(const int64_t (&off)[1]) const { out[off[0]] = op(); }
};

}  // namespace

bool launch_fill(ScalarType dt, void* out, const Geometry<1>& g, const unsigned char (&value)[16]) {
  if (dt == ScalarType::ComplexHalf) return false;
  // The value is converted on the host (Scalar::to), so the kernel only stores bits.
  return dispatch_size(elementSize(dt), [&](auto tag) {
    using T = typename decltype(tag)::type;
    FillApply<T> f{static_cast<T*>(out), {}};
    memcpy(&f.op.v, value, sizeof(T));
    launch_elementwise(g, f, "fill");
  });
}

bool launch_cast(ScalarType dst_dt, void* dst, ScalarType src_dt, const void* src,
                 const Geometry<2>& g) {
  if (dst_dt == ScalarType::ComplexHalf || src_dt == ScalarType::ComplexHalf) return false;
  // The generic loop (vectorised when linear, 32-bit offsets), with an identity functor.
  EwArgs a;
  a.in_dtype = src_dt;
  a.out_dtype = dst_dt;
  a.nin = 1;
  a.out = dst;
  a.in[0] = src;
  a.g.ndim = g.ndim;
  a.g.numel = g.numel;
  for (int d = 0; d < kMaxDims; ++d) {
    a.g.sizes[d] = g.sizes[d];
    a.g.strides[0][d] = g.strides[0][d];
    a.g.strides[1][d] = g.strides[1][d];
  }
  const OpParams params;
  a.params = &params;
  if (dst_dt == src_dt) {
    // Same dtype: move bits, one kernel per element size.
    return dispatch_size(elementSize(dst_dt), [&](auto tag) {
      using T = typename decltype(tag)::type;
      ew::launch<T, T, 1>(a, ew::Identity<T>(params), "copy");
    });
  }
  return dispatch_dtype(dst_dt, [&](auto to_tag) {
    using To = typename decltype(to_tag)::type;
    dispatch_dtype(src_dt, [&](auto from_tag) {
      using From = typename decltype(from_tag)::type;
      if constexpr (!std::is_same_v<To, From>)
        ew::launch<To, From, 1>(a, ew::Identity<opmath_t<From>>(params), "cast");
    });
  });
}

}  // namespace ember::cuda
