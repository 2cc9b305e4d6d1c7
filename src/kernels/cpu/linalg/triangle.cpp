// tril / triu (kernels/stubs/linalg.h): the off-triangle part of each row of a contiguous copy
// is cleared with one memset (all-zero bytes are zero in every dtype).
#include <algorithm>
#include <cstring>

#include "core/parallel_internal.h"
#include "kernels/stubs/linalg.h"

namespace ember {

EMBER_DEFINE_KERNEL(triangle_stub);

namespace cpu {
namespace {

void triangle_cpu(Tensor& out, int64_t k, bool lower) {
  const int64_t rows = out.size(-2), cols = out.size(-1);
  const int64_t n_rows = out.numel() / cols;  // every row of every matrix
  const size_t item = out.itemsize();
  char* base = static_cast<char*>(out.data_ptr());
  parallel_for(0, n_rows, 2048, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t i = r % rows;
      char* row = base + size_t(r * cols) * item;
      if (lower) {
        // keep j <= i + k
        const int64_t start = std::clamp<int64_t>(i + k + 1, 0, cols);
        std::memset(row + size_t(start) * item, 0, size_t(cols - start) * item);
      } else {
        // keep j >= i + k
        const int64_t stop = std::clamp<int64_t>(i + k, 0, cols);
        std::memset(row, 0, size_t(stop) * item);
      }
    }
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(triangle_stub, kCPU, cpu::triangle_cpu);

}  // namespace ember
