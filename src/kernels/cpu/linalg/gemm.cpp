// GEMM glue (see gemm.h). Float and complex go to OpenBLAS; integers use the blocked kernel
// in int_gemm.cpp.
#include "kernels/cpu/linalg/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/parallel_internal.h"
#include "ember/parallel.h"
#include "ember/version.h"

namespace ember::cpu {
namespace {

CBLAS_TRANSPOSE cblas_op(Op o) {
  switch (o) {
    case Op::N:
      return CblasNoTrans;
    case Op::T:
      return CblasTrans;
    case Op::C:
      return CblasConjTrans;
    case Op::R:
      return CblasConjNoTrans;
  }
  return CblasNoTrans;
}

// The thread count OpenBLAS was last given; -1 before the first call.
std::atomic<int> g_blas_threads{-1};

}  // namespace

void set_blas_threads(int n) {
  if (g_blas_threads.load(std::memory_order_relaxed) == n) return;
  openblas_set_num_threads(n);
  g_blas_threads.store(n, std::memory_order_relaxed);
}

void sync_blas_threads() { set_blas_threads(get_num_threads()); }

void blas_gemm(ScalarType dt, Op opa, Op opb, int64_t m, int64_t n, int64_t k, const Scalar& alpha,
               const void* a, int64_t lda, const void* b, int64_t ldb, const Scalar& beta, void* c,
               int64_t ldc) {
  const CBLAS_TRANSPOSE ta = cblas_op(opa), tb = cblas_op(opb);
  const int M = int(m), N = int(n), K = int(k);
  switch (dt) {
    case ScalarType::Float:
      cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, alpha.to<float>(), static_cast<const float*>(a),
                  int(lda), static_cast<const float*>(b), int(ldb), beta.to<float>(),
                  static_cast<float*>(c), int(ldc));
      return;
    case ScalarType::Double:
      cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, alpha.to<double>(), static_cast<const double*>(a),
                  int(lda), static_cast<const double*>(b), int(ldb), beta.to<double>(),
                  static_cast<double*>(c), int(ldc));
      return;
    case ScalarType::ComplexFloat: {
      const complex<float> al = alpha.to<complex<float>>(), be = beta.to<complex<float>>();
      cblas_cgemm(CblasRowMajor, ta, tb, M, N, K, &al, a, int(lda), b, int(ldb), &be, c, int(ldc));
      return;
    }
    case ScalarType::ComplexDouble: {
      const complex<double> al = alpha.to<complex<double>>(), be = beta.to<complex<double>>();
      cblas_zgemm(CblasRowMajor, ta, tb, M, N, K, &al, a, int(lda), b, int(ldb), &be, c, int(ldc));
      return;
    }
    default:
      EMBER_THROW(Error, "[gemm] unsupported dtype ", dtype_name(dt));
  }
}

void blas_gemv(ScalarType dt, Op opa, int64_t m, int64_t n, const Scalar& alpha, const void* a,
               int64_t lda, const void* x, int64_t incx, const Scalar& beta, void* y,
               int64_t incy) {
  const CBLAS_TRANSPOSE ta = cblas_op(opa);
  const int M = int(m), N = int(n);
  // Note: BLAS reads negative increments from the far end; callers pass positive strides.
  switch (dt) {
    case ScalarType::Float:
      cblas_sgemv(CblasRowMajor, ta, M, N, alpha.to<float>(), static_cast<const float*>(a),
                  int(lda), static_cast<const float*>(x), int(incx), beta.to<float>(),
                  static_cast<float*>(y), int(incy));
      return;
    case ScalarType::Double:
      cblas_dgemv(CblasRowMajor, ta, M, N, alpha.to<double>(), static_cast<const double*>(a),
                  int(lda), static_cast<const double*>(x), int(incx), beta.to<double>(),
                  static_cast<double*>(y), int(incy));
      return;
    case ScalarType::ComplexFloat: {
      const complex<float> al = alpha.to<complex<float>>(), be = beta.to<complex<float>>();
      cblas_cgemv(CblasRowMajor, ta, M, N, &al, a, int(lda), x, int(incx), &be, y, int(incy));
      return;
    }
    case ScalarType::ComplexDouble: {
      const complex<double> al = alpha.to<complex<double>>(), be = beta.to<complex<double>>();
      cblas_zgemv(CblasRowMajor, ta, M, N, &al, a, int(lda), x, int(incx), &be, y, int(incy));
      return;
    }
    default:
      EMBER_THROW(Error, "[gemv] unsupported dtype ", dtype_name(dt));
  }
}

}  // namespace ember::cpu
