// Zeroing one side of a triangle of each matrix of a batch, on any element strides: Cholesky's
// unused triangle in a column-major workspace and tril / triu's row-major copies.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda/cuda_context.h"
#include "cuda/linalg_kernels.h"

namespace ember::cuda {
namespace {

constexpr int kThreads = 256;

struct alignas(16) Bytes16 {
  uint64_t lo, hi;
};

// Zeroing is byte-wise (all-zero bytes are zero in every dtype): one element type per size.
template <class E>
__global__ void zero_outside_kernel(E* p, int64_t total, int64_t rows, int64_t cols, int64_t bs,
                                    int64_t rs, int64_t cs, int64_t k, bool lower) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += step) {
    const int64_t j = idx % cols;
    const int64_t i = (idx / cols) % rows;
    const int64_t b = idx / (cols * rows);
    const bool keep = lower ? j <= i + k : j >= i + k;
    if (!keep) p[b * bs + i * rs + j * cs] = E{};
  }
}

template <class E>
void launch(void* p, int64_t total, int64_t rows, int64_t cols, int64_t bs, int64_t rs, int64_t cs,
            int64_t k, bool lower) {
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, 65535);
  zero_outside_kernel<E><<<unsigned(blocks), kThreads, 0, current_raw_stream()>>>(
      static_cast<E*>(p), total, rows, cols, bs, rs, cs, k, lower);
  EMBER_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void zero_outside_triangle(void* p, size_t item, int64_t batch, int64_t rows, int64_t cols,
                           int64_t bs, int64_t rs, int64_t cs, int64_t k, bool lower) {
  const int64_t total = batch * rows * cols;
  if (total == 0) return;
  switch (item) {
    case 1:
      return launch<uint8_t>(p, total, rows, cols, bs, rs, cs, k, lower);
    case 2:
      return launch<uint16_t>(p, total, rows, cols, bs, rs, cs, k, lower);
    case 4:
      return launch<uint32_t>(p, total, rows, cols, bs, rs, cs, k, lower);
    case 8:
      return launch<uint64_t>(p, total, rows, cols, bs, rs, cs, k, lower);
    case 16:
      return launch<Bytes16>(p, total, rows, cols, bs, rs, cs, k, lower);
    default:
      EMBER_THROW(::ember::Error, "[triangle] unsupported element size ", item);
  }
}

}  // namespace ember::cuda
