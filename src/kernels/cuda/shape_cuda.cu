// CUDA kernel of the index-map copies (kernels/stubs/shape.h, Note [Index-map copies]): flip,
// roll, repeat, repeat_interleave's gathers and the reflect / replicate / circular pads. The
// maps are built on the host by the op; they travel to the device in one pinned buffer, so the
// copy does not wait for the host. Also the host read of int64 values (kernels/stubs/core.h).
#include <cstring>
#include <vector>

#include "core/kernel_stub.h"
#include "ember/cuda.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/stubs/core.h"
#include "kernels/stubs/shape.h"
#include "ops/device_kernels.h"

namespace ember {
namespace cuda {
namespace {

constexpr int kMapDims = 16;

// Output sizes, source element strides and where each dim's map starts in the map buffer (-1:
// the identity), passed by value.
struct MapGeom {
  int nd = 0;
  int64_t size[kMapDims] = {};
  int64_t sstride[kMapDims] = {};
  int64_t map_at[kMapDims] = {};
};

struct Bytes16 {
  uint64_t a, b;
};

template <class E>
__global__ void map_copy_kernel(E* __restrict__ out, const E* __restrict__ src,
                                const int64_t* __restrict__ maps, MapGeom g, int64_t n) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t rem = i, off = 0;
    for (int d = g.nd - 1; d >= 0; --d) {
      const int64_t c = rem % g.size[d];
      rem /= g.size[d];
      off += (g.map_at[d] >= 0 ? maps[g.map_at[d] + c] : c) * g.sstride[d];
    }
    out[i] = src[off];
  }
}

template <class E>
void launch(Tensor& out, const Tensor& src, const int64_t* maps, const MapGeom& g) {
  const int64_t n = out.numel();
  map_copy_kernel<E><<<grid_for(n), kBlockSize, 0, current_raw_stream()>>>(
      static_cast<E*>(out.data_ptr()), static_cast<const E*>(src.data_ptr()), maps, g, n);
  check_launch("map_copy");
}

void map_copy_cuda(Tensor& out, const Tensor& src, const std::vector<std::vector<int64_t>>& maps) {
  DeviceGuard guard(out.device());
  const int64_t nd = out.dim();
  EMBER_CHECK_T(NotImplementedError, nd <= kMapDims, "[map_copy] the cuda kernel takes at most ",
                kMapDims, " dims (got ", nd, ")");
  // The pinned buffer is read by the copy below: a graph replay would read it after it is reused.
  check_not_capturing("map_copy");
  MapGeom g;
  g.nd = int(nd);
  size_t total = 0;
  for (int64_t d = 0; d < nd; ++d) {
    g.size[d] = out.size(d);
    g.sstride[d] = src.stride(d);
    const bool mapped = d < int64_t(maps.size()) && !maps[size_t(d)].empty();
    g.map_at[d] = mapped ? int64_t(total) : -1;
    if (mapped) total += maps[size_t(d)].size();
  }
  const size_t bytes = total * sizeof(int64_t);
  DataPtr host = pinned_allocator()->allocate(bytes);
  for (int64_t d = 0; d < nd; ++d)
    if (g.map_at[d] >= 0)
      std::memcpy(static_cast<int64_t*>(host.get()) + g.map_at[d], maps[size_t(d)].data(),
                  maps[size_t(d)].size() * sizeof(int64_t));
  DataPtr dev = scratch(bytes);
  const cudaStream_t stream = current_raw_stream();
  EMBER_CUDA_CHECK(cudaMemcpyAsync(dev.get(), host.get(), bytes, cudaMemcpyHostToDevice, stream));
  pinned_record_use(host.get(), stream);
  const int64_t* m = static_cast<const int64_t*>(dev.get());
  switch (out.itemsize()) {
    case 1:
      return launch<uint8_t>(out, src, m, g);
    case 2:
      return launch<uint16_t>(out, src, m, g);
    case 4:
      return launch<uint32_t>(out, src, m, g);
    case 8:
      return launch<uint64_t>(out, src, m, g);
    default:
      return launch<Bytes16>(out, src, m, g);
  }
}

// The values of a contiguous int64 tensor on the host (repeat counts, split points): a
// synchronising read.
std::vector<int64_t> int64_values_cuda(const Tensor& t) {
  DeviceGuard guard(t.device());
  std::vector<int64_t> v(size_t(t.numel()));
  if (v.empty()) return v;
  check_not_capturing("read of device values");
  EMBER_CUDA_CHECK(cudaMemcpyAsync(v.data(), t.data_ptr(), v.size() * sizeof(int64_t),
                                   cudaMemcpyDeviceToHost, current_raw_stream()));
  sync_current_stream();
  return v;
}

}  // namespace
}  // namespace cuda

EMBER_REGISTER_KERNEL(map_copy_stub, kCUDA, cuda::map_copy_cuda);
EMBER_REGISTER_KERNEL(int64_values_stub, kCUDA, cuda::int64_values_cuda);

namespace {
// The ops whose bodies reach the device only through the two kernels above (and through ops
// checked on their own).
[[maybe_unused]] const bool g_register_shape = [] {
  for (OpId op : {OpId::flip, OpId::roll, OpId::repeat, OpId::repeat_interleave,
                  OpId::repeat_interleave_1, OpId::repeat_interleave_2})
    register_kernel_all_dtypes(kCUDA, op);
  return true;
}();
}  // namespace

}  // namespace ember
