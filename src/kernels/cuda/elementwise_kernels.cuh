#pragma once
// The generic CUDA elementwise loop: out = f(in...) with the inputs in one compute dtype, each
// element converted to opmath_t and the result converted to the output's dtype (the CPU's
// elementwise_loop in kernels/cpu/elementwise/loops.h, on the device). Two kernels per
// instantiation: a vectorised one for linear operands (16-byte loads; a stride-0 operand is
// read once) and a strided one with 32-bit offsets (Note [32-bit elementwise indexing]).
// Family files (elementwise_<family>.cu) pick the functor and dtypes of each op.

#include <cstdint>
#include <type_traits>

#include "core/op_table.h"
#include "core/scalar_traits.h"
#include "ember/dtype.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_functors.cuh"
#include "kernels/cuda/launch_math.h"

namespace ember::cuda {

/// One elementwise call as the backend hands it to the family launchers: data pointers, the
/// coalesced geometry (operand 0 = out, then the inputs), the inputs' compute dtype and the
/// output dtype.
struct EwArgs {
  ScalarType in_dtype = ScalarType::Undefined;
  ScalarType out_dtype = ScalarType::Undefined;
  int nin = 0;
  void* out = nullptr;
  const void* in[3] = {};
  Geometry<4> g;
  const OpParams* params = nullptr;
};

// Family launchers (false: op or dtype not handled there).
bool launch_ew_unary(OpId op, const EwArgs& a);
bool launch_ew_unary_float(OpId op, const EwArgs& a);
bool launch_ew_unary_complex(OpId op, const EwArgs& a);
bool launch_ew_predicate(OpId op, const EwArgs& a);
bool launch_ew_binary(OpId op, const EwArgs& a);
bool launch_ew_compare(OpId op, const EwArgs& a);
bool launch_ew_minmax(OpId op, const EwArgs& a);
bool launch_ew_activation(OpId op, const EwArgs& a);
bool launch_ew_special(OpId op, const EwArgs& a);
/// where(cond, a, b) on element bits (inputs: bool cond, then a and b of the output's dtype).
bool launch_ew_where(const EwArgs& a);

/// The SM count of the current device (cached per device).
int current_sm_count();

namespace ew {

// V elements loaded as one (a 16-byte load at most); a lone element keeps its own alignment.
template <class T, int V>
struct alignas(V == 1 ? alignof(T) : sizeof(T) * V) Pack {
  T v[V];
};

template <class T, int N>
struct InPtrs {
  const T* p[N];
};

template <class C, int N, class F>
__device__ __forceinline__ auto call(const F& f, const C (&x)[N]) {
  if constexpr (N == 1)
    return f(x[0]);
  else if constexpr (N == 2)
    return f(x[0], x[1]);
  else
    return f(x[0], x[1], x[2]);
}

template <int V, class O, class T, int N, class F>
__global__ void __launch_bounds__(kBlockSize)
    vec_kernel(O* out, InPtrs<T, N> in, uint32_t bcast, uint32_t n, F f) {
  using C = opmath_t<T>;
  const uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t step = blockDim.x * gridDim.x;
  C scalar[N];
  for (int k = 0; k < N; ++k) scalar[k] = (bcast >> (k + 1)) & 1 ? convert<C>(in.p[k][0]) : C();
  const uint32_t nv = n / V;
  for (uint32_t v = tid; v < nv; v += step) {
    C x[V][N];
    for (int k = 0; k < N; ++k) {
      if ((bcast >> (k + 1)) & 1) {
#pragma unroll
        for (int j = 0; j < V; ++j) x[j][k] = scalar[k];
      } else {
        Pack<T, V> p = reinterpret_cast<const Pack<T, V>*>(in.p[k])[v];
#pragma unroll
        for (int j = 0; j < V; ++j) x[j][k] = convert<C>(p.v[j]);
      }
    }
    Pack<O, V> r;
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = convert<O>(call<C, N>(f, x[j]));
    reinterpret_cast<Pack<O, V>*>(out)[v] = r;
  }
  for (uint32_t i = nv * V + tid; i < n; i += step) {
    C x[N];
    for (int k = 0; k < N; ++k) x[k] = (bcast >> (k + 1)) & 1 ? scalar[k] : convert<C>(in.p[k][i]);
    out[i] = convert<O>(call<C, N>(f, x));
  }
}

template <class O, class T, int N, class F>
__global__ void __launch_bounds__(kBlockSize)
    strided_kernel(O* out, InPtrs<T, N> in, Offsets32<N + 1> oc, uint32_t n, F f) {
  using C = opmath_t<T>;
  const uint32_t step = blockDim.x * gridDim.x;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    int32_t off[N + 1];
    oc.get(i, off);
    C x[N];
    for (int k = 0; k < N; ++k) x[k] = convert<C>(in.p[k][off[k + 1]]);
    out[off[0]] = convert<O>(call<C, N>(f, x));
  }
}

constexpr int kBlocksPerSm = 16;  // 4 waves of full occupancy at 256 threads per block

/// Launches out = f(in...) over a.g on the current stream: O the output's device element type,
/// T the inputs', N inputs.
template <class O, class T, int N, class F>
void launch(const EwArgs& a, const F& f, const char* name) {
  Geometry<N + 1> g;
  g.ndim = a.g.ndim;
  g.numel = a.g.numel;
  for (int d = 0; d < kMaxDims; ++d) {
    g.sizes[d] = a.g.sizes[d];
    for (int k = 0; k <= N; ++k) g.strides[k][d] = a.g.strides[k][d];
  }
  const int sms = current_sm_count();
  cudaStream_t stream = current_raw_stream();
  launch::split_32bit(g, [&](const int64_t(&base)[N + 1], const Geometry<N + 1>& sub) {
    O* out = static_cast<O*>(a.out) + base[0];
    InPtrs<T, N> in;
    for (int k = 0; k < N; ++k) in.p[k] = static_cast<const T*>(a.in[k]) + base[k + 1];
    const uint32_t n = uint32_t(sub.numel);
    uint32_t bcast = 0;
    if (launch::is_flat(sub, bcast)) {
      constexpr int kVec =
          launch::max_vector_width(int(sizeof(O) > sizeof(T) ? sizeof(O) : sizeof(T)));
      const void* ptrs[N + 1];
      int sizes[N + 1];
      ptrs[0] = out;
      sizes[0] = int(sizeof(O));
      for (int k = 0; k < N; ++k) {
        ptrs[k + 1] = in.p[k];
        sizes[k + 1] = int(sizeof(T));
      }
      if (launch::vector_width(kVec, ptrs, sizes, N + 1, bcast) == kVec) {
        const unsigned grid =
            launch::grid_size((n + kVec - 1) / kVec, kBlockSize, sms, kBlocksPerSm);
        vec_kernel<kVec, O, T, N><<<grid, kBlockSize, 0, stream>>>(out, in, bcast, n, f);
        check_launch(name);
        return;
      }
    }
    const unsigned grid = launch::grid_size(n, kBlockSize, sms, kBlocksPerSm);
    strided_kernel<O, T, N>
        <<<grid, kBlockSize, 0, stream>>>(out, in, launch::to_offsets32(sub), n, f);
    check_launch(name);
  });
}

template <class... Ts>
struct TypeList {};
using IntTypes = TypeList<uint8_t, int8_t, int16_t, int32_t, int64_t>;
using FloatTypes = TypeList<Half, BFloat16, float, double>;
using BF16Float = TypeList<BFloat16, float, double>;
using FloatOnly = TypeList<float, double>;
using ComplexTypes = TypeList<complex<float>, complex<double>>;
using BoolType = TypeList<bool>;

template <class T>
using out_same = T;
template <class T>
using out_bool = bool;
template <class T>
using out_real = typename real_of<T>::type;

/// Runs functor F<opmath_t<T>> with N inputs if a.in_dtype is one of the host types of
/// `lists`; false otherwise. OutSel maps the host input type to the host output type.
template <template <class> class F, int N, template <class> class OutSel = out_same, class... Lists>
bool run(const EwArgs& a, const char* name, Lists...) {
  bool done = false;
  auto one = [&]<class... Ts>(TypeList<Ts...>) {
    (
        [&] {
          if (done || a.in_dtype != scalar_type_of<Ts>) return;
          using T = device_t<Ts>;
          using O = device_t<OutSel<Ts>>;
          if (a.out_dtype != scalar_type_of<OutSel<Ts>>) return;
          launch<O, T, N>(a, F<opmath_t<T>>(*a.params), name);
          done = true;
        }(),
        ...);
  };
  (one(Lists{}), ...);
  return done;
}

}  // namespace ew
}  // namespace ember::cuda
