// CUDA kernels of gather and scatter / scatter_add / scatter_reduce. Gather runs a thread per
// index element. Scatter runs a thread per line of the index along `dim`: entries that can hit
// one destination differ only in their coordinate along dim, so each destination belongs to one
// thread, which combines its entries in index order: the CPU's result, deterministic, for every
// reduction and dtype without atomics (Note [Deterministic index accumulation]).
#include <cstring>

#include "ember/cuda.h"
#include "ember/dispatch_type.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_functors.cuh"
#include "kernels/cuda/index_check.cuh"
#include "kernels/cuda/index_loop.cuh"
#include "kernels/stubs/index.h"
#include "ops/device_kernels.h"

namespace ember {
namespace cuda {
namespace {

/// The index shape with the element strides of the index (contiguous), self and the other
/// operand (out of gather, src of scatter; 0 strides for a scatter value).
struct GatherGeom {
  int nd = 0;
  int dim = 0;
  int64_t dim_size = 0;  // self.size(dim): the range of the index values
  int64_t sizes[kIndexDims] = {};
  int64_t index_st[kIndexDims] = {};
  int64_t self_st[kIndexDims] = {};
  int64_t other_st[kIndexDims] = {};
};

GatherGeom make_geom(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& other,
                     const char* op) {
  EMBER_CHECK_T(NotImplementedError, index.dim() <= kIndexDims, "[", op, "] more than ", kIndexDims,
                " dims are not supported on cuda");
  GatherGeom g;
  g.nd = int(index.dim());
  g.dim = int(dim);
  g.dim_size = self.size(dim);
  int64_t st = 1;
  for (int64_t d = index.dim() - 1; d >= 0; --d) {
    g.sizes[d] = index.size(d);
    g.index_st[d] = st;
    st *= index.size(d);
    g.self_st[d] = self.stride(d);
    g.other_st[d] = other.defined() ? other.stride(d) : 0;
  }
  return g;
}

template <class T>
__global__ void gather_kernel(T* out, const T* self, const int64_t* index, int64_t n,
                              GatherGeom g) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += step) {
    int64_t rem = e, oo = 0, os = 0;
    for (int d = g.nd - 1; d >= 0; --d) {
      int64_t c = rem % g.sizes[d];
      rem /= g.sizes[d];
      oo += c * g.other_st[d];
      if (d != g.dim) os += c * g.self_st[d];
    }
    int64_t v = index[e];
    if (v >= 0 && v < g.dim_size) out[oo] = self[os + v * g.self_st[g.dim]];
  }
}

// self op= v as the CPU's reduce_into (16-bit floats in float; NaN propagates through max/min).
template <class T>
__device__ void reduce_into(T& a, T b, ScatterOp op) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case ScatterOp::Assign:
        a = b;
        return;
      case ScatterOp::Sum:
      case ScatterOp::Max:
        a = a || b;
        return;
      case ScatterOp::Prod:
      case ScatterOp::Min:
        a = a && b;
        return;
    }
  } else {
    using C = opmath_t<T>;
    C x = convert<C>(a), y = convert<C>(b);
    switch (op) {
      case ScatterOp::Assign:
        a = b;
        return;
      case ScatterOp::Sum:
        a = convert<T>(static_cast<C>(x + y));
        return;
      case ScatterOp::Prod:
        a = convert<T>(static_cast<C>(x * y));
        return;
      case ScatterOp::Max:
      case ScatterOp::Min:
        if constexpr (!is_complex_v<T>) {
          if constexpr (std::is_floating_point_v<C>) {
            if (y != y) {
              a = b;
              return;
            }
            if (x != x) return;
          }
          C r = op == ScatterOp::Max ? (x < y ? y : x) : (y < x ? y : x);
          a = convert<T>(r);
        }
        return;
    }
  }
}

// Thread per line of the index along dim; entries of a line in index order.
template <class T>
__global__ void scatter_kernel(T* self, const T* src, T value, const int64_t* index, int64_t lines,
                               GatherGeom g, ScatterOp op) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  const int64_t len = g.sizes[g.dim];
  for (int64_t line = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; line < lines; line += step) {
    int64_t rem = line, oi = 0, os = 0, oo = 0;
    for (int d = g.nd - 1; d >= 0; --d) {
      if (d == g.dim) continue;
      int64_t c = rem % g.sizes[d];
      rem /= g.sizes[d];
      oi += c * g.index_st[d];
      os += c * g.self_st[d];
      oo += c * g.other_st[d];
    }
    for (int64_t k = 0; k < len; ++k) {
      int64_t v = index[oi + k * g.index_st[g.dim]];
      if (v < 0 || v >= g.dim_size) continue;
      T x = src ? src[oo + k * g.other_st[g.dim]] : value;
      reduce_into(self[os + v * g.self_st[g.dim]], x, op);
    }
  }
}

void gather_cuda(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index) {
  DeviceGuard guard(self.device());
  EMBER_CHECK(index.device() == self.device(), "[gather] expected index on ", self.device(),
              ", got ", index.device());
  const int64_t n = index.numel();
  if (n == 0) return;
  GatherGeom g = make_geom(self, dim, index, out, "gather");
  dispatch_size(self.element_size(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    gather_kernel<<<grid_for(n), kBlockSize, 0, current_raw_stream()>>>(
        static_cast<T*>(out.data_ptr()), static_cast<const T*>(self.data_ptr()),
        static_cast<const int64_t*>(index.data_ptr()), n, g);
  });
  check_launch("gather");
}

void scatter_cuda(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                  const Tensor& value, ScatterOp op) {
  DeviceGuard guard(self.device());
  EMBER_CHECK(index.device() == self.device(), "[scatter] expected index on ", self.device(),
              ", got ", index.device());
  EMBER_CHECK(!src.defined() || src.device() == self.device(), "[scatter] expected src on ",
              self.device(), ", got ", src.device());
  const int64_t n = index.numel();
  if (n == 0) return;
  const int64_t lines = n / index.size(dim);
  GatherGeom g = make_geom(self, dim, index, src, "scatter");
  bool ok = dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v{};
    if (!src.defined()) {
      if (value.is_cuda())
        read_device(&v, static_cast<const T*>(value.data_ptr()));
      else
        std::memcpy(static_cast<void*>(&v), value.data_ptr(), sizeof(T));
    }
    scatter_kernel<<<grid_for(lines), kBlockSize, 0, current_raw_stream()>>>(
        static_cast<T*>(self.data_ptr()),
        src.defined() ? static_cast<const T*>(src.data_ptr()) : nullptr, v,
        static_cast<const int64_t*>(index.data_ptr()), lines, g, op);
  });
  EMBER_CHECK_T(NotImplementedError, ok, "[scatter] not implemented for cuda ", self.dtype());
  check_launch("scatter");
}

}  // namespace
}  // namespace cuda

EMBER_REGISTER_KERNEL(gather_stub, kCUDA, cuda::gather_cuda);
EMBER_REGISTER_KERNEL(scatter_stub, kCUDA, cuda::scatter_cuda);

namespace {
[[maybe_unused]] const bool g_register_scatter = [] {
  using S = ScalarType;
  for (OpId op : {OpId::gather_out, OpId::gather, OpId::take_along_dim_out, OpId::take_along_dim,
                  OpId::scatter_, OpId::scatter__1, OpId::scatter__2, OpId::scatter__3,
                  OpId::scatter_add_, OpId::scatter, OpId::scatter_1, OpId::scatter_2,
                  OpId::scatter_3, OpId::scatter_add, OpId::scatter_reduce_, OpId::scatter_reduce})
    register_kernel(kCUDA, op,
                    {S::Bool, S::Byte, S::Char, S::Short, S::Int, S::Long, S::Half, S::BFloat16,
                     S::Float, S::Double, S::ComplexFloat, S::ComplexDouble});
  return true;
}();
}  // namespace

}  // namespace ember
