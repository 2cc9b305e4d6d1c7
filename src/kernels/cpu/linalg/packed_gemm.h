#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// ember's own float32/float64 GEMM for the sizes where OpenBLAS's packing and threading cost more
// than the product (Note [Packed GEMM] in packed_gemm_kernels.cpp). Compiled once per CPU
// capability; blas_gemm (gemm.cpp) picks the capability in use and the size range.

#include <cstdint>

namespace ember::cpu {

/// Which loop nest of the packed GEMM runs (Note [Packed GEMM]): chosen by size, or forced (for
/// tests and comparisons).
enum class PackedPath : int {
  kAuto,     ///< the blocked nest from kBlockedMinWork multiply-adds on, else the in-place one
  kInPlace,  ///< operands read in place where that pays (small products)
  kBlocked,  ///< both operands packed, blocked for L1/L2/L3 (large products)
};

#define EMBER_PACKED_GEMM_DECLARE(cap)                                                            \
  namespace cap {                                                                                 \
  /** C = alpha * op(A)·op(B) + beta * C, row-major as blas_gemm: op(A) is m×k (A^T stored k×m \
      when ta), op(B) k×n (B^T stored n×k when tb), C m×n with unit column stride. beta == 0   \
      never reads C; alpha == 0 or k == 0 only scales C. Splits C across up to `threads` of       \
      ember's threads (runs inline inside a parallel region). Every dim >= 0. `path` forces a     \
      loop nest (results agree within rounding; not bit for bit between nests). */                \
  void packed_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,               \
                    const float* a, int64_t lda, const float* b, int64_t ldb, float beta,         \
                    float* c, int64_t ldc, int threads, PackedPath path = PackedPath::kAuto);     \
  void packed_dgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,              \
                    const double* a, int64_t lda, const double* b, int64_t ldb, double beta,      \
                    double* c, int64_t ldc, int threads, PackedPath path = PackedPath::kAuto);    \
  }
EMBER_PACKED_GEMM_DECLARE(cap_default)
EMBER_PACKED_GEMM_DECLARE(cap_avx2)
EMBER_PACKED_GEMM_DECLARE(cap_avx512)
#undef EMBER_PACKED_GEMM_DECLARE

}  // namespace ember::cpu
