// CUDA kernels of the index checks, index_select, take / put, the index_{copy,add,fill} family,
// advanced indexing and masked_fill: each builds one index loop (index_loop.cuh). Copies move
// raw element bytes (one instantiation per element size).
//
// Note [CUDA index writes]
// Entries that write through repeated indices: accumulation (index_add_, put_ / index_put_ with
// accumulate) uses atomic adds, so float sums may differ in the last bits from run to run; a
// plain write (index_copy_, put_, index_put_) keeps one of the repeated entries. With
// use_deterministic_algorithms(true), or for a dtype without an atomic add, one thread per
// non-indexed position runs the entries in index order: the CPU's result exactly (the last
// entry wins, sums in index order; Note [Deterministic index accumulation]).
#include <cstring>

#include "core/tensor_util.h"
#include "ember/context.h"
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

bool first_out_of_range(const int64_t* p, int64_t n, OutOfRange r, const char* name, int64_t* v) {
  int64_t pos = first_bad(p, n, r, name);
  if (pos < 0) return false;
  read_device(v, p + pos);
  return true;
}

namespace {

// ---- kernels ----

// Entry-parallel copy: thread per (entry, rest position).
template <class T>
__global__ void index_copy_parallel(T* dst, const T* src, IndexLoopDev l) {
  const int64_t total = l.n * l.rest.numel;
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += step) {
    int64_t od, os;
    if (l.offsets(t / l.rest.numel, t % l.rest.numel, od, os)) dst[od] = src[os];
  }
}

// Position-serial copy: thread per rest position, entries in order (the last write wins).
template <class T>
__global__ void index_copy_serial(T* dst, const T* src, IndexLoopDev l) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < l.rest.numel; r += step)
    for (int64_t i = 0; i < l.n; ++i) {
      int64_t od, os;
      if (l.offsets(i, r, od, os)) dst[od] = src[os];
    }
}

template <class T>
__global__ void index_fill_kernel(T* dst, T v, IndexLoopDev l) {
  const int64_t total = l.n * l.rest.numel;
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += step) {
    int64_t od, os;
    if (l.offsets(t / l.rest.numel, t % l.rest.numel, od, os)) dst[od] = v;
  }
}

// a + alpha * b as the CPU's add_scaled (16-bit floats in float; bool: a || (b && alpha)).
template <class T>
__device__ T add_scaled(T a, T b, opmath_t<T> alpha, bool unit) {
  using C = opmath_t<T>;
  if constexpr (std::is_same_v<T, bool>) {
    return a || (b && alpha);
  } else {
    C x = convert<C>(a), y = convert<C>(b);
    return convert<T>(static_cast<C>(unit ? x + y : x + alpha * y));
  }
}

template <class T>
__global__ void index_accumulate_serial(T* dst, const T* src, IndexLoopDev l, opmath_t<T> alpha,
                                        bool unit) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < l.rest.numel; r += step)
    for (int64_t i = 0; i < l.n; ++i) {
      int64_t od, os;
      if (l.offsets(i, r, od, os)) dst[od] = add_scaled(dst[od], src[os], alpha, unit);
    }
}

template <class T>
inline constexpr bool kHasAtomicAdd =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, __half> ||
    std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>;

template <class T>
__device__ void atomic_add(T* p, T v) {
  if constexpr (std::is_same_v<T, int64_t>)
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  else
    atomicAdd(p, v);
}

template <class T>
__global__ void index_accumulate_atomic(T* dst, const T* src, IndexLoopDev l, opmath_t<T> alpha,
                                        bool unit) {
  using C = opmath_t<T>;
  const int64_t total = l.n * l.rest.numel;
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += step) {
    int64_t od, os;
    if (!l.offsets(t / l.rest.numel, t % l.rest.numel, od, os)) continue;
    if constexpr (kHasAtomicAdd<T>) {
      C y = convert<C>(src[os]);
      atomic_add(dst + od, convert<T>(static_cast<C>(unit ? y : alpha * y)));
    }
  }
}

// ---- host side ----

void check_on(const Tensor& t, const Tensor& self, const char* op, const char* what) {
  EMBER_CHECK(t.device() == self.device(), "[", op, "] expected ", what, " on ", self.device(),
              " (where self is), but got it on ", t.device());
}

// The value of a 0-dim tensor as element bytes (read back when it lives on the device).
template <class T>
T scalar_value(const Tensor& value) {
  T v;
  static_assert(sizeof(T) <= 16);
  if (value.is_cuda())
    read_device(&v, static_cast<const T*>(value.data_ptr()));
  else
    std::memcpy(&v, value.data_ptr(), sizeof(T));
  return v;
}

// The alpha of T's compute type as the CPU's Scalar::to<AlphaT<T>>().
template <class C>
C alpha_as(const Scalar& s) {
  if constexpr (std::is_same_v<C, bool>)
    return s.toBool();
  else if constexpr (is_complex_v<C>)
    return C(typename C::value_type(s.toComplexDouble().real()),
             typename C::value_type(s.toComplexDouble().imag()));
  else if constexpr (std::is_floating_point_v<C>)
    return static_cast<C>(s.toDouble());
  else
    return static_cast<C>(s.toLong());
}

// Launches a copy: position-serial when entries address dst (they may repeat) and deterministic
// algorithms are requested, entry-parallel otherwise (Note [CUDA index writes]).
void launch_copy(void* dst, const void* src, size_t elsize, const IndexLoopDev& l, bool index_dst,
                 const char* name) {
  if (l.n == 0 || l.rest.numel == 0) return;
  const bool serial = index_dst && are_deterministic_algorithms_enabled();
  dispatch_size(elsize, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (serial)
      index_copy_serial<<<grid_for(l.rest.numel), kBlockSize, 0, current_raw_stream()>>>(
          static_cast<T*>(dst), static_cast<const T*>(src), l);
    else
      index_copy_parallel<<<grid_for(l.n * l.rest.numel), kBlockSize, 0, current_raw_stream()>>>(
          static_cast<T*>(dst), static_cast<const T*>(src), l);
  });
  check_launch(name);
}

void launch_accumulate(void* dst, const void* src, ScalarType dt, const IndexLoopDev& l,
                       const Scalar& alpha, const char* name) {
  if (l.n == 0 || l.rest.numel == 0) return;
  const bool deterministic = are_deterministic_algorithms_enabled();
  const bool unit = alpha.toComplexDouble() == complex<double>(1, 0);
  bool ok = dispatch_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = opmath_t<T>;
    const C a = alpha_as<C>(alpha);
    if constexpr (kHasAtomicAdd<T>) {
      if (!deterministic) {
        index_accumulate_atomic<<<grid_for(l.n * l.rest.numel), kBlockSize, 0,
                                  current_raw_stream()>>>(static_cast<T*>(dst),
                                                          static_cast<const T*>(src), l, a, unit);
        return;
      }
    }
    index_accumulate_serial<<<grid_for(l.rest.numel), kBlockSize, 0, current_raw_stream()>>>(
        static_cast<T*>(dst), static_cast<const T*>(src), l, a, unit);
  });
  EMBER_CHECK_T(NotImplementedError, ok, "[", name, "] not implemented for cuda ", dt);
  check_launch(name);
}

// The loop of entry i of `src` (along dim, stride istride) written to dst[.., index[i], ..].
IndexLoopDev along_dim(const Tensor& dst, int64_t dim, const Tensor& index, const Tensor& src,
                       const char* op) {
  IndexLoopDev l;
  l.n = index.numel();
  l.index_dst = true;
  l.ent.push(index, dst.size(dim), dst.stride(dim), op);
  l.istride = src.defined() ? src.stride(dim) : 0;
  for (int64_t d = 0; d < dst.dim(); ++d)
    if (d != dim) l.rest.push(dst.size(d), dst.stride(d), src.defined() ? src.stride(d) : 0, op);
  return l;
}

// ---- the stubs' CUDA kernels ----

void index_check_cuda(const Tensor& index, int64_t size, bool wrap, const char* op, int64_t dim,
                      bool runtime_error) {
  if (!index.is_cuda() || index.numel() == 0) {
    if (index.numel() > 0) index_check_stub(kCPU, index, size, wrap, op, dim, runtime_error);
    return;
  }
  DeviceGuard g(index.device());
  int64_t v;
  if (first_out_of_range(static_cast<const int64_t*>(index.data_ptr()), index.numel(),
                         OutOfRange{wrap ? -size : 0, size, false, 0}, op, &v)) {
    // The CPU's check of the bad value raises the CPU's error (Note [Device value checks]).
    Tensor one = empty_tensor({1}, kLong, Device(kCPU));
    one.data_ptr<int64_t>()[0] = v;
    index_check_stub(kCPU, one, size, wrap, op, dim, runtime_error);
  }
}

void index_select_cuda(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index) {
  DeviceGuard g(self.device());
  check_on(index, self, "index_select", "index");
  IndexLoopDev l;
  l.n = index.numel();
  l.ent.push(index, self.size(dim), self.stride(dim), "index_select");
  l.istride = out.stride(dim);
  for (int64_t d = 0; d < self.dim(); ++d)
    if (d != dim) l.rest.push(self.size(d), out.stride(d), self.stride(d), "index_select");
  launch_copy(out.data_ptr(), self.data_ptr(), self.element_size(), l, false, "index_select");
}

void take_cuda(Tensor& out, const Tensor& self, const Tensor& index) {
  DeviceGuard g(self.device());
  check_on(index, self, "take", "index");
  IndexLoopDev l;
  l.n = index.numel();
  l.ent.push(index, self.numel(), 1, "take");  // self is contiguous
  l.istride = 1;
  launch_copy(out.data_ptr(), self.data_ptr(), self.element_size(), l, false, "take");
}

// The flat index of a (possibly strided) self, decomposed over its sizes.
void flat_entries(IndexLoopDev& l, const Tensor& self, const Tensor& index, const char* op) {
  l.ent.push(index, self.numel(), 1, op);
  if (self.is_contiguous()) return;
  EMBER_CHECK_T(NotImplementedError, self.dim() <= kIndexDims, "[", op, "] more than ", kIndexDims,
                " dims are not supported on cuda");
  l.ent.flat = true;
  l.ent.fnd = int(self.dim());
  for (int64_t d = 0; d < self.dim(); ++d) {
    l.ent.fsizes[d] = self.size(d);
    l.ent.fstrides[d] = self.stride(d);
  }
}

void put_cuda(Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  DeviceGuard g(self.device());
  check_on(index, self, "put_", "index");
  check_on(source, self, "put_", "source");
  IndexLoopDev l;
  l.n = index.numel();
  l.index_dst = true;
  l.istride = 1;
  flat_entries(l, self, index, "put_");
  if (accumulate)
    launch_accumulate(self.data_ptr(), source.data_ptr(), self.dtype(), l, Scalar(1), "put_");
  else
    launch_copy(self.data_ptr(), source.data_ptr(), self.element_size(), l, true, "put_");
}

void index_copy_cuda(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  DeviceGuard g(self.device());
  check_on(index, self, "index_copy_", "index");
  check_on(source, self, "index_copy_", "source");
  IndexLoopDev l = along_dim(self, dim, index, source, "index_copy_");
  launch_copy(self.data_ptr(), source.data_ptr(), self.element_size(), l, true, "index_copy_");
}

void index_add_cuda(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                    const Scalar& alpha) {
  DeviceGuard g(self.device());
  check_on(index, self, "index_add_", "index");
  check_on(source, self, "index_add_", "source");
  IndexLoopDev l = along_dim(self, dim, index, source, "index_add_");
  launch_accumulate(self.data_ptr(), source.data_ptr(), self.dtype(), l, alpha, "index_add_");
}

void index_fill_cuda(Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  DeviceGuard g(self.device());
  check_on(index, self, "index_fill_", "index");
  IndexLoopDev l = along_dim(self, dim, index, Tensor(), "index_fill_");
  if (l.n == 0 || l.rest.numel == 0) return;
  dispatch_size(self.element_size(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    index_fill_kernel<<<grid_for(l.n * l.rest.numel), kBlockSize, 0, current_raw_stream()>>>(
        static_cast<T*>(self.data_ptr()), scalar_value<T>(value), l);
  });
  check_launch("index_fill_");
}

// Advanced indexing: the entries enumerate the broadcast index shape; the result side is dense
// with the index dims at block_pos (Note [Advanced index placement]).
IndexLoopDev advanced_loop(const Tensor& self, const std::vector<Tensor>& indices,
                           IntArrayRef result_sizes, int64_t block_pos, bool index_dst,
                           const char* op) {
  IndexLoopDev l;
  l.index_dst = index_dst;
  int64_t index_dims = 0;
  bool first = true;
  for (size_t d = 0; d < indices.size(); ++d) {
    const Tensor& ix = indices[d];
    if (!ix.defined()) continue;
    check_on(ix, self, op, "indices");
    if (first) {
      l.n = ix.numel();
      index_dims = ix.dim();
      first = false;
    }
    l.ent.push(ix, self.size(int64_t(d)), self.stride(int64_t(d)), op);
  }
  DimVector st(result_sizes.size(), 1);
  for (int64_t d = int64_t(result_sizes.size()) - 2; d >= 0; --d)
    st[size_t(d)] = st[size_t(d + 1)] * result_sizes[size_t(d + 1)];
  l.istride = index_dims > 0 ? st[size_t(block_pos + index_dims - 1)] : 0;
  int64_t k = 0;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (size_t(d) < indices.size() && indices[size_t(d)].defined()) continue;
    const int64_t rs = st[size_t(k < block_pos ? k : k + index_dims)];
    if (index_dst)
      l.rest.push(self.size(d), self.stride(d), rs, op);
    else
      l.rest.push(self.size(d), rs, self.stride(d), op);
    ++k;
  }
  return l;
}

void advanced_index_cuda(Tensor& out, const Tensor& self, const std::vector<Tensor>& indices,
                         int64_t block_pos) {
  DeviceGuard g(self.device());
  IndexLoopDev l = advanced_loop(self, indices, out.sizes(), block_pos, false, "index");
  launch_copy(out.data_ptr(), self.data_ptr(), self.element_size(), l, false, "index");
}

void advanced_index_put_cuda(Tensor& self, const std::vector<Tensor>& indices, int64_t block_pos,
                             const Tensor& values, bool accumulate) {
  DeviceGuard g(self.device());
  check_on(values, self, "index_put_", "values");
  IndexLoopDev l = advanced_loop(self, indices, values.sizes(), block_pos, true, "index_put_");
  if (accumulate)
    launch_accumulate(self.data_ptr(), values.data_ptr(), self.dtype(), l, Scalar(1), "index_put_");
  else
    launch_copy(self.data_ptr(), values.data_ptr(), self.element_size(), l, true, "index_put_");
}

// ---- masked_fill ----

template <class T>
struct MaskedFill {
  T* self;
  const bool* mask;
  T v;
  __device__ void operator()(const int64_t (&off)[2]) const {
    if (mask[off[1]]) self[off[0]] = v;
  }
};

void masked_fill_cuda(Tensor& self, const Tensor& mask, const Tensor& value) {
  DeviceGuard g(self.device());
  check_on(mask, self, "masked_fill_", "mask");
  if (self.numel() == 0) return;
  Geometry<2> geo;
  geo.numel = self.numel();
  if (self.is_contiguous()) {
    geo.ndim = 1;
    geo.sizes[0] = geo.numel;
    geo.strides[0][0] = geo.strides[1][0] = 1;
  } else {
    EMBER_CHECK_T(NotImplementedError, self.dim() <= kMaxDims, "[masked_fill_] more than ",
                  kMaxDims, " dims of a non-contiguous tensor are not supported on cuda");
    // The mask is contiguous of self's shape: walk self's dims with both strides.
    int64_t mst = 1;
    for (int64_t d = self.dim() - 1; d >= 0; --d) {
      geo.sizes[d] = self.size(d);
      geo.strides[0][d] = self.stride(d);
      geo.strides[1][d] = mst;
      mst *= self.size(d);
    }
    geo.ndim = int(self.dim());
  }
  dispatch_size(self.element_size(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    MaskedFill<T> f{static_cast<T*>(self.data_ptr()), static_cast<const bool*>(mask.data_ptr()),
                    scalar_value<T>(value)};
    launch_elementwise(geo, f, "masked_fill_");
  });
}

}  // namespace
}  // namespace cuda

EMBER_REGISTER_KERNEL(index_check_stub, kCUDA, cuda::index_check_cuda);
EMBER_REGISTER_KERNEL(index_select_stub, kCUDA, cuda::index_select_cuda);
EMBER_REGISTER_KERNEL(take_stub, kCUDA, cuda::take_cuda);
EMBER_REGISTER_KERNEL(put_stub, kCUDA, cuda::put_cuda);
EMBER_REGISTER_KERNEL(index_copy_stub, kCUDA, cuda::index_copy_cuda);
EMBER_REGISTER_KERNEL(index_add_stub, kCUDA, cuda::index_add_cuda);
EMBER_REGISTER_KERNEL(index_fill_stub, kCUDA, cuda::index_fill_cuda);
EMBER_REGISTER_KERNEL(advanced_index_stub, kCUDA, cuda::advanced_index_cuda);
EMBER_REGISTER_KERNEL(advanced_index_put_stub, kCUDA, cuda::advanced_index_put_cuda);
EMBER_REGISTER_KERNEL(masked_fill_stub, kCUDA, cuda::masked_fill_cuda);

namespace {
[[maybe_unused]] const bool g_register_index = [] {
  using S = ScalarType;
  for (OpId op : {OpId::index_select_out,
                  OpId::index_select,
                  OpId::take_out,
                  OpId::take,
                  OpId::put_,
                  OpId::put,
                  OpId::index_copy_,
                  OpId::index_copy,
                  OpId::index_add_,
                  OpId::index_add,
                  OpId::index_fill_,
                  OpId::index_fill__1,
                  OpId::index_fill,
                  OpId::index_fill_1,
                  OpId::masked_fill,
                  OpId::masked_fill_1,
                  OpId::masked_fill_,
                  OpId::masked_fill__1,
                  OpId::index_put_,
                  OpId::index_put,
                  OpId::index_1,
                  OpId::index_put__1,
                  OpId::index_put__2})
    register_kernel(kCUDA, op,
                    {S::Bool, S::Byte, S::Char, S::Short, S::Int, S::Long, S::Half, S::BFloat16,
                     S::Float, S::Double, S::ComplexFloat, S::ComplexDouble});
  return true;
}();
}  // namespace

}  // namespace ember
