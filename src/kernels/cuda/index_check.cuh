#pragma once
// Value checks of device data (index bounds, class targets, probabilities) for the CUDA kernels
// of indexing, embedding, losses and random sampling.
//
// Note [Device value checks]
// A CPU kernel raises on the first bad value it reads. On the device a check kernel records the
// position of the first bad value (atomicMin), the host reads that one position back (a
// synchronising read on the current stream) and raises the CPU's own error for it, so the
// exception type and message match the CPU's. During a CUDA graph capture the read-back would
// invalidate the capture: the check is skipped then, and the kernels that use the values skip
// an out-of-range entry instead of touching memory outside their tensors.

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/cuda_context.h"
#include "kernels/cuda/cuda_common.cuh"

namespace ember::cuda {

/// Whether the current stream is capturing a graph (device value checks are skipped then).
inline bool stream_capturing() {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  EMBER_CUDA_CHECK(cudaStreamIsCapturing(current_raw_stream(), &st));
  return st != cudaStreamCaptureStatusNone;
}

/// Copies n elements from device memory to the host on the current stream and waits.
template <class T>
void read_device(T* host, const T* dev, int64_t n = 1) {
  check_not_capturing("read of device values");
  EMBER_CUDA_CHECK(cudaMemcpyAsync(host, dev, size_t(n) * sizeof(T), cudaMemcpyDeviceToHost,
                                   current_raw_stream()));
  sync_current_stream();
}

template <class T, class Bad>
__global__ void first_bad_kernel(const T* p, int64_t n, Bad bad, unsigned long long* first) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    if (bad(p[i])) atomicMin(first, static_cast<unsigned long long>(i));
}

/// The position of the first of the n device values `p` for which bad(v) holds, or -1 (also
/// while capturing; Note [Device value checks]).
template <class T, class Bad>
int64_t first_bad(const T* p, int64_t n, Bad bad, const char* name) {
  if (n <= 0 || stream_capturing()) return -1;
  DataPtr flag = scratch(sizeof(unsigned long long));
  auto* f = static_cast<unsigned long long*>(flag.get());
  EMBER_CUDA_CHECK(cudaMemsetAsync(f, 0xFF, sizeof(unsigned long long), current_raw_stream()));
  first_bad_kernel<<<grid_for(n), kBlockSize, 0, current_raw_stream()>>>(p, n, bad, f);
  check_launch(name);
  unsigned long long h = 0;
  read_device(&h, f);
  return h == ~0ull ? -1 : int64_t(h);
}

/// bad(v) for an int64 value outside [lo, hi) that is not `ignore` (when has_ignore).
struct OutOfRange {
  int64_t lo, hi;
  bool has_ignore;
  int64_t ignore;
  __device__ bool operator()(int64_t v) const {
    return !(v >= lo && v < hi) && !(has_ignore && v == ignore);
  }
};

/// The first int64 device value outside [lo, hi) (and not `ignore`), read back; false if none.
bool first_out_of_range(const int64_t* p, int64_t n, OutOfRange r, const char* name, int64_t* v);

}  // namespace ember::cuda
