// Max pooling on CUDA: one thread per output element walks its window (regular or adaptive)
// exactly as the CPU kernel does, so values and indices match it; the backward scatters by
// atomics, or per plane in order in deterministic mode.
#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/pool_launch.h"

namespace ember::cuda {
namespace {

template <class T>
struct Acc {
  using type = float;
  __device__ static float load(T v) { return float(v); }
  __device__ static T store(float v) { return T(v); }
};
template <>
struct Acc<double> {
  using type = double;
  __device__ static double load(double v) { return v; }
  __device__ static double store(double v) { return v; }
};
template <>
struct Acc<__nv_bfloat16> {
  using type = float;
  __device__ static float load(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 store(float v) { return __float2bfloat16_rn(v); }
};

/// The taps of output `o` along dim `j`: first input offset, count and step.
__device__ inline void window(const PoolGeom& g, int j, int64_t o, int64_t& first, int64_t& count,
                              int64_t& step) {
  const int64_t in = g.in[j];
  if (g.adaptive) {
    const int64_t out = g.out[j];
    first = (o * in) / out;
    count = ((o + 1) * in + out - 1) / out - first;
    step = 1;
    return;
  }
  const int64_t d = g.d[j];
  int64_t start = o * g.s[j] - g.p[j];
  const int64_t end = min(start + (g.k[j] - 1) * d + 1, in);
  if (start < 0) start += (-start + d - 1) / d * d;  // first tap >= 0
  first = start;
  count = end > start ? (end - start + d - 1) / d : 0;
  step = d;
}

template <class T>
__global__ void max_pool_kernel(const T* __restrict__ x, T* __restrict__ y,
                                int64_t* __restrict__ idx, PoolGeom g, int64_t total) {
  using A = typename Acc<T>::type;
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t step_all = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step_all) {
    const int64_t p = i / out_plane, o = i % out_plane;
    const int64_t ow = o % g.out[2], oh = (o / g.out[2]) % g.out[1], od = o / (g.out[2] * g.out[1]);
    int64_t fd, cd, sd, fh, ch, sh, fw, cw, sw;
    window(g, 0, od, fd, cd, sd);
    window(g, 1, oh, fh, ch, sh);
    window(g, 2, ow, fw, cw, sw);
    const T* xp = x + p * in_plane;
    A maxv = -INFINITY;
    int64_t maxi = (fd * g.in[1] + fh) * g.in[2] + fw;
    for (int64_t a = 0; a < cd; ++a) {
      const int64_t id = fd + a * sd;
      for (int64_t b = 0; b < ch; ++b) {
        const int64_t row = (id * g.in[1] + fh + b * sh) * g.in[2];
        for (int64_t c = 0; c < cw; ++c) {
          const int64_t at = row + fw + c * sw;
          const A v = Acc<T>::load(xp[at]);
          if (v > maxv || isnan(v)) maxv = v, maxi = at;
        }
      }
    }
    // A window of padding only reads nothing: -inf and an index past the plane (as the CPU).
    idx[i] = maxi;
    y[i] = cd > 0 && ch > 0 && cw > 0 ? xp[maxi] : Acc<T>::store(A(-INFINITY));
  }
}

template <class T>
__global__ void max_pool_backward_atomic(const T* __restrict__ gy, const int64_t* __restrict__ idx,
                                         T* __restrict__ gx, int64_t in_plane, int64_t out_plane,
                                         int64_t total) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t at = idx[i];
    if (uint64_t(at) < uint64_t(in_plane)) atomicAdd(gx + (i / out_plane) * in_plane + at, gy[i]);
  }
}

template <class T>
__global__ void max_pool_backward_ordered(const T* __restrict__ gy, const int64_t* __restrict__ idx,
                                          T* __restrict__ gx, int64_t planes, int64_t in_plane,
                                          int64_t out_plane) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < planes; p += step) {
    T* gp = gx + p * in_plane;
    const T* g = gy + p * out_plane;
    const int64_t* ip = idx + p * out_plane;
    for (int64_t o = 0; o < out_plane; ++o)
      if (uint64_t(ip[o]) < uint64_t(in_plane))
        gp[ip[o]] = Acc<T>::store(Acc<T>::load(gp[ip[o]]) + Acc<T>::load(g[o]));
  }
}

template <class F>
bool dispatch_pool(ScalarType dt, const F& f) {
  switch (dt) {
    case ScalarType::Float:
      f(float{});
      return true;
    case ScalarType::Double:
      f(double{});
      return true;
    case ScalarType::BFloat16:
      f(__nv_bfloat16{});
      return true;
    default:
      return false;
  }
}

}  // namespace

bool launch_max_pool(ScalarType dt, const void* x, void* y, int64_t* idx, const PoolGeom& g) {
  const int64_t total = g.planes * g.out[0] * g.out[1] * g.out[2];
  return dispatch_pool(dt, [&](auto tag) {
    using T = decltype(tag);
    if (total == 0) return;
    max_pool_kernel<T><<<grid_for(total), kBlockSize, 0, current_raw_stream()>>>(
        static_cast<const T*>(x), static_cast<T*>(y), idx, g, total);
    check_launch("max_pool");
  });
}

bool launch_max_pool_backward(ScalarType dt, const void* gy, const int64_t* idx, void* gx,
                              int64_t planes, int64_t in_plane, int64_t out_plane,
                              bool deterministic) {
  return dispatch_pool(dt, [&](auto tag) {
    using T = decltype(tag);
    cudaStream_t stream = current_raw_stream();
    if (planes * in_plane == 0) return;
    EMBER_CUDA_CHECK(cudaMemsetAsync(gx, 0, size_t(planes * in_plane) * sizeof(T), stream));
    const int64_t total = planes * out_plane;
    if (total == 0) return;
    if (deterministic) {
      max_pool_backward_ordered<T><<<grid_for(planes), kBlockSize, 0, stream>>>(
          static_cast<const T*>(gy), idx, static_cast<T*>(gx), planes, in_plane, out_plane);
    } else {
      max_pool_backward_atomic<T><<<grid_for(total), kBlockSize, 0, stream>>>(
          static_cast<const T*>(gy), idx, static_cast<T*>(gx), in_plane, out_plane, total);
    }
    check_launch("max_pool_backward");
  });
}

}  // namespace ember::cuda
