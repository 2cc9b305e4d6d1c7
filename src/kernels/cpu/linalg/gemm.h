#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// GEMM glue: float/complex through OpenBLAS's cblas, integers through a cache-blocked kernel.
// Callers (kernels/cpu/blas/strided_gemm.cpp, conv_im2col.cpp) pass tidy arguments: every dim
// >= 1 except k (k == 0 scales C by beta), leading dims valid for the layout. float16/bfloat16
// are converted by the ops (src/ops/linalg/blas_ops.cpp).

#include <cstdint>

#include "ember/dtype.h"
#include "ember/scalar.h"

namespace ember::cpu {

/// How an operand is read: as stored, transposed, conjugate-transposed, or conjugated.
enum class Op : uint8_t { N, T, C, R };

/// C = alpha * op(A) · op(B) + beta * C, row-major with leading dims (C has unit column stride).
/// op(A) is m×k, op(B) is k×n. beta == 0 overwrites C (NaN in C ignored). dtype: float, double,
/// complex<float>, complex<double>.
void blas_gemm(ScalarType dt, Op opa, Op opb, int64_t m, int64_t n, int64_t k, const Scalar& alpha,
               const void* a, int64_t lda, const void* b, int64_t ldb, const Scalar& beta, void* c,
               int64_t ldc);

/// blas_gemm through OpenBLAS at every size, never ember's packed kernel (Note [GEMM choice]):
/// for the float32 products of bfloat16/float16 operands, whose float32 sums then match torch's.
void openblas_gemm(ScalarType dt, Op opa, Op opb, int64_t m, int64_t n, int64_t k,
                   const Scalar& alpha, const void* a, int64_t lda, const void* b, int64_t ldb,
                   const Scalar& beta, void* c, int64_t ldc);

/// y = alpha * op(A) · x + beta * y with A row-major m×n (op N or T or C), element strides for
/// x and y. beta == 0 overwrites y.
void blas_gemv(ScalarType dt, Op opa, int64_t m, int64_t n, const Scalar& alpha, const void* a,
               int64_t lda, const void* x, int64_t incx, const Scalar& beta, void* y, int64_t incy);

/// Integer GEMM on arbitrary element strides (rs = row stride, cs = column stride), wrapping
/// arithmetic as PyTorch: C = alpha * A·B + beta * C; beta == 0 overwrites C. dtype: uint8,
/// int8, int16, int32, int64.
void int_gemm(ScalarType dt, int64_t m, int64_t n, int64_t k, int64_t alpha, const void* a,
              int64_t rsa, int64_t csa, const void* b, int64_t rsb, int64_t csb, int64_t beta,
              void* c, int64_t rsc, int64_t csc);

/// Sets OpenBLAS's thread count (its OpenMP pool) when it differs from the current one.
void set_blas_threads(int n);

/// Runs `f` with BLAS on ember::get_num_threads() threads.
void sync_blas_threads();

}  // namespace ember::cpu
