#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernels of the matrix products (src/ops/linalg/blas_ops.cpp): one strided batched GEMM that
// every product funnels into, and the diagonal sum of trace.

#include <algorithm>
#include <climits>
#include <cstdint>

#include "core/kernel_stub.h"
#include "ember/scalar.h"
#include "ember/tensor.h"

namespace ember {

/// Element strides of one operand of a batched product: batch, row and column dims.
struct MatStrides {
  int64_t bs, rs, cs;
};

/// How a BLAS reads a rows×cols operand with element strides (rs, cs) in place: row-major as is
/// (`transposed` false) or as the transpose of a row-major matrix, with leading dim `ld`. Size-1
/// dims accept any stride; `ok` is false when neither layout fits.
struct BlasLayout {
  bool ok;
  bool transposed;
  int64_t ld;
};
inline BlasLayout blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  constexpr int64_t kMax = INT_MAX;
  if ((cols == 1 || cs == 1) && (rows == 1 || (rs >= std::max<int64_t>(1, cols) && rs <= kMax)))
    return {true, false, rows == 1 ? std::max<int64_t>(1, cols) : rs};
  if ((rows == 1 || rs == 1) && (cols == 1 || (cs >= std::max<int64_t>(1, rows) && cs <= kMax)))
    return {true, true, cols == 1 ? std::max<int64_t>(1, rows) : cs};
  return {false, false, 0};
}

/// C[i] = beta * C[i] + alpha * A[i]·B[i] for i < batch, A[i] m×k and B[i] k×n read from `a` and
/// `b` (element 0 at their data pointers) on the strides given, C[i] written in place at
/// c + i * cbs with row stride crs (unit column stride, or n == 1; crs >= n). One dtype
/// everywhere: an integer dtype or float/double/complex; for the latter both operands fit a
/// blas_layout and a conj bit on an operand is folded into its BLAS op. batch, m, n, k >= 1
/// and below 2^31.
EMBER_DECLARE_KERNEL(strided_gemm_stub,
                     void(const Tensor& a, MatStrides sa, const Tensor& b, MatStrides sb,
                          const Tensor& c, int64_t cbs, int64_t crs, int64_t batch, int64_t m,
                          int64_t n, int64_t k, const Scalar& beta, const Scalar& alpha));

/// The sum of the main diagonal of the matrix `x` (no conj bit; any strides): int64 (wrapping)
/// for integers, double or complex<double> accumulation otherwise. Not for bool.
EMBER_DECLARE_KERNEL(trace_stub, Scalar(const Tensor& x));

}  // namespace ember
