#pragma once
// The small CUDA kernels behind the cuSOLVER / cuBLAS linalg code of src/cuda/linalg.cpp
// (src/kernels/cuda/linalg_*.cu). All run on current_raw_stream().

#include <cstddef>
#include <cstdint>

namespace ember::cuda {

/// Zeroes, in each of `batch` rows×cols matrices at `p` (elements of `item` bytes; element
/// (b, i, j) at b*bs + i*rs + j*cs), the elements outside the lower (`lower`: j <= i + k) or
/// upper (j >= i + k) triangle.
void zero_outside_triangle(void* p, size_t item, int64_t batch, int64_t rows, int64_t cols,
                           int64_t bs, int64_t rs, int64_t cs, int64_t k, bool lower);

}  // namespace ember::cuda
