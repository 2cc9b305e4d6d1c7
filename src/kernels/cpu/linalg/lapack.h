#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Shared pieces of the CPU linalg kernels: the dtype dispatch over the four LAPACK types, the
// batch loop over column-major workspaces (Note [Linalg workspaces] in
// src/ops/linalg/linalg_util.h) and overloaded LAPACK/BLAS wrappers (one name per routine family,
// resolved by the element type).

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <type_traits>

#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>
// cblas.h after lapacke.h: it must not define the complex types first.
#include <cblas.h>

#include "core/parallel_internal.h"
#include "core/scalar_traits.h"
#include "ember/dispatch_type.h"
#include "ember/tensor.h"

namespace ember::cpu::linalg_impl {

/// The real type of T (T itself when T is real).
template <class T>
using real_t = typename real_of<T>::type;
/// Complex conjugate that keeps real types real (std::conj(double) is complex).
template <class T>
T conj_val(T x) {
  if constexpr (is_complex_v<T>) {
    return std::conj(x);
  } else {
    return x;
  }
}

/// Dispatch over the four LAPACK dtypes.
#define EMBER_DISPATCH_LINALG_TYPES(TYPE, NAME, ...)  \
  [&] {                                               \
    switch (TYPE) {                                   \
      EMBER_PRIVATE_CASE(Float, float, __VA_ARGS__)   \
      EMBER_PRIVATE_CASE(Double, double, __VA_ARGS__) \
      EMBER_PRIVATE_CASES_COMPLEX(__VA_ARGS__)        \
      EMBER_PRIVATE_DISPATCH_DEFAULT(TYPE, NAME)      \
    }                                                 \
  }()

/// Typed pointer to element 0 of a workspace.
template <class T>
T* ptr(const Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

/// Product of all dims but the last two.
inline int64_t matrix_batch(const Tensor& a) {
  int64_t n = 1;
  for (int64_t d = 0; d + 2 < a.dim(); ++d) n *= a.size(d);
  return n;
}

/// Runs f(b) for each batch element b, in parallel when the work (`cost` flops a matrix) is large.
template <class F>
void for_each_matrix(int64_t batch, double cost, const F& f) {
  const int64_t grain = cost >= 32768 ? 1 : int64_t(32768 / (cost < 1 ? 1 : cost));
  parallel_for(0, batch, grain, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) f(b);
  });
}

/// Zeroes the strictly lower (`lower` = true) or strictly upper part of a column-major m×n matrix.
template <class T>
void zero_triangle(T* a, int64_t m, int64_t n, int64_t lda, bool lower) {
  for (int64_t j = 0; j < n; ++j) {
    if (lower) {
      for (int64_t i = j + 1; i < m; ++i) a[i + j * lda] = T(0);
    } else {
      for (int64_t i = 0; i < std::min(j, m); ++i) a[i + j * lda] = T(0);
    }
  }
}

// ---- LAPACK wrappers (column-major) ----
namespace lapack {
#define EMBER_LAPACK_4(name, sig_s, args)                                             \
  inline lapack_int name(sig_s(float)) { return LAPACKE_s##name args; }               \
  inline lapack_int name(sig_s(double)) { return LAPACKE_d##name args; }              \
  inline lapack_int name(sig_s(std::complex<float>)) { return LAPACKE_c##name args; } \
  inline lapack_int name(sig_s(std::complex<double>)) { return LAPACKE_z##name args; }

#define SIG_GETRF(T) lapack_int m, lapack_int n, T *a, lapack_int lda, lapack_int *ipiv
EMBER_LAPACK_4(getrf, SIG_GETRF, (LAPACK_COL_MAJOR, m, n, a, lda, ipiv))
#define SIG_GETRI(T) lapack_int n, T *a, lapack_int lda, const lapack_int *ipiv
EMBER_LAPACK_4(getri, SIG_GETRI, (LAPACK_COL_MAJOR, n, a, lda, ipiv))
#define SIG_GETRS(T)                                                                             \
  char trans, lapack_int n, lapack_int nrhs, const T *a, lapack_int lda, const lapack_int *ipiv, \
      T *b, lapack_int ldb
EMBER_LAPACK_4(getrs, SIG_GETRS, (LAPACK_COL_MAJOR, trans, n, nrhs, a, lda, ipiv, b, ldb))
#define SIG_POTRF(T) char uplo, lapack_int n, T *a, lapack_int lda
EMBER_LAPACK_4(potrf, SIG_POTRF, (LAPACK_COL_MAJOR, uplo, n, a, lda))
EMBER_LAPACK_4(potri, SIG_POTRF, (LAPACK_COL_MAJOR, uplo, n, a, lda))
#define SIG_POTRS(T) \
  char uplo, lapack_int n, lapack_int nrhs, const T *a, lapack_int lda, T *b, lapack_int ldb
EMBER_LAPACK_4(potrs, SIG_POTRS, (LAPACK_COL_MAJOR, uplo, n, nrhs, a, lda, b, ldb))
#define SIG_GEQRF(T) lapack_int m, lapack_int n, T *a, lapack_int lda, T *tau
EMBER_LAPACK_4(geqrf, SIG_GEQRF, (LAPACK_COL_MAJOR, m, n, a, lda, tau))
#define SIG_GELS(T)                                                                    \
  char trans, lapack_int m, lapack_int n, lapack_int nrhs, T *a, lapack_int lda, T *b, \
      lapack_int ldb
EMBER_LAPACK_4(gels, SIG_GELS, (LAPACK_COL_MAJOR, trans, m, n, nrhs, a, lda, b, ldb))
#undef SIG_GETRF
#undef SIG_GETRI
#undef SIG_GETRS
#undef SIG_POTRF
#undef SIG_POTRS
#undef SIG_GEQRF
#undef SIG_GELS
#undef EMBER_LAPACK_4

// orgqr (real) / ungqr (complex): Q from geqrf's reflectors.
inline lapack_int orgqr(lapack_int m, lapack_int n, lapack_int k, float* a, lapack_int lda,
                        const float* tau) {
  return LAPACKE_sorgqr(LAPACK_COL_MAJOR, m, n, k, a, lda, tau);
}
inline lapack_int orgqr(lapack_int m, lapack_int n, lapack_int k, double* a, lapack_int lda,
                        const double* tau) {
  return LAPACKE_dorgqr(LAPACK_COL_MAJOR, m, n, k, a, lda, tau);
}
inline lapack_int orgqr(lapack_int m, lapack_int n, lapack_int k, std::complex<float>* a,
                        lapack_int lda, const std::complex<float>* tau) {
  return LAPACKE_cungqr(LAPACK_COL_MAJOR, m, n, k, a, lda, tau);
}
inline lapack_int orgqr(lapack_int m, lapack_int n, lapack_int k, std::complex<double>* a,
                        lapack_int lda, const std::complex<double>* tau) {
  return LAPACKE_zungqr(LAPACK_COL_MAJOR, m, n, k, a, lda, tau);
}

// gesdd: the singular values go to a real array.
inline lapack_int gesdd(char jobz, lapack_int m, lapack_int n, float* a, lapack_int lda, float* s,
                        float* u, lapack_int ldu, float* vt, lapack_int ldvt) {
  return LAPACKE_sgesdd(LAPACK_COL_MAJOR, jobz, m, n, a, lda, s, u, ldu, vt, ldvt);
}
inline lapack_int gesdd(char jobz, lapack_int m, lapack_int n, double* a, lapack_int lda, double* s,
                        double* u, lapack_int ldu, double* vt, lapack_int ldvt) {
  return LAPACKE_dgesdd(LAPACK_COL_MAJOR, jobz, m, n, a, lda, s, u, ldu, vt, ldvt);
}
inline lapack_int gesdd(char jobz, lapack_int m, lapack_int n, std::complex<float>* a,
                        lapack_int lda, float* s, std::complex<float>* u, lapack_int ldu,
                        std::complex<float>* vt, lapack_int ldvt) {
  return LAPACKE_cgesdd(LAPACK_COL_MAJOR, jobz, m, n, a, lda, s, u, ldu, vt, ldvt);
}
inline lapack_int gesdd(char jobz, lapack_int m, lapack_int n, std::complex<double>* a,
                        lapack_int lda, double* s, std::complex<double>* u, lapack_int ldu,
                        std::complex<double>* vt, lapack_int ldvt) {
  return LAPACKE_zgesdd(LAPACK_COL_MAJOR, jobz, m, n, a, lda, s, u, ldu, vt, ldvt);
}

// syevd (real symmetric) / heevd (complex Hermitian).
inline lapack_int syevd(char jobz, char uplo, lapack_int n, float* a, lapack_int lda, float* w) {
  return LAPACKE_ssyevd(LAPACK_COL_MAJOR, jobz, uplo, n, a, lda, w);
}
inline lapack_int syevd(char jobz, char uplo, lapack_int n, double* a, lapack_int lda, double* w) {
  return LAPACKE_dsyevd(LAPACK_COL_MAJOR, jobz, uplo, n, a, lda, w);
}
inline lapack_int syevd(char jobz, char uplo, lapack_int n, std::complex<float>* a, lapack_int lda,
                        float* w) {
  return LAPACKE_cheevd(LAPACK_COL_MAJOR, jobz, uplo, n, a, lda, w);
}
inline lapack_int syevd(char jobz, char uplo, lapack_int n, std::complex<double>* a, lapack_int lda,
                        double* w) {
  return LAPACKE_zheevd(LAPACK_COL_MAJOR, jobz, uplo, n, a, lda, w);
}

// gelsy / gelsd / gelss (rank-revealing least squares).
#define EMBER_GELSY(P, T, R)                                                                       \
  inline lapack_int gelsy(lapack_int m, lapack_int n, lapack_int nrhs, T* a, lapack_int lda, T* b, \
                          lapack_int ldb, lapack_int* jpvt, R rcond, lapack_int* rank) {           \
    return LAPACKE_##P##gelsy(LAPACK_COL_MAJOR, m, n, nrhs, a, lda, b, ldb, jpvt, rcond, rank);    \
  }                                                                                                \
  inline lapack_int gelsd(lapack_int m, lapack_int n, lapack_int nrhs, T* a, lapack_int lda, T* b, \
                          lapack_int ldb, R* s, R rcond, lapack_int* rank) {                       \
    return LAPACKE_##P##gelsd(LAPACK_COL_MAJOR, m, n, nrhs, a, lda, b, ldb, s, rcond, rank);       \
  }                                                                                                \
  inline lapack_int gelss(lapack_int m, lapack_int n, lapack_int nrhs, T* a, lapack_int lda, T* b, \
                          lapack_int ldb, R* s, R rcond, lapack_int* rank) {                       \
    return LAPACKE_##P##gelss(LAPACK_COL_MAJOR, m, n, nrhs, a, lda, b, ldb, s, rcond, rank);       \
  }
EMBER_GELSY(s, float, float)
EMBER_GELSY(d, double, double)
EMBER_GELSY(c, std::complex<float>, float)
EMBER_GELSY(z, std::complex<double>, double)
#undef EMBER_GELSY

// trsm (BLAS): op(A) X = alpha B or X op(A) = alpha B, column-major.
inline void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE tr, CBLAS_DIAG diag, int m,
                 int n, const float* a, int lda, float* b, int ldb) {
  cblas_strsm(CblasColMajor, side, uplo, tr, diag, m, n, 1.0f, a, lda, b, ldb);
}
inline void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE tr, CBLAS_DIAG diag, int m,
                 int n, const double* a, int lda, double* b, int ldb) {
  cblas_dtrsm(CblasColMajor, side, uplo, tr, diag, m, n, 1.0, a, lda, b, ldb);
}
inline void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE tr, CBLAS_DIAG diag, int m,
                 int n, const std::complex<float>* a, int lda, std::complex<float>* b, int ldb) {
  const std::complex<float> one(1);
  cblas_ctrsm(CblasColMajor, side, uplo, tr, diag, m, n, &one, a, lda, b, ldb);
}
inline void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE tr, CBLAS_DIAG diag, int m,
                 int n, const std::complex<double>* a, int lda, std::complex<double>* b, int ldb) {
  const std::complex<double> one(1);
  cblas_ztrsm(CblasColMajor, side, uplo, tr, diag, m, n, &one, a, lda, b, ldb);
}

// gemm (BLAS): C = alpha op(A) op(B) + beta C, column-major.
inline void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha,
                 const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  cblas_sgemm(CblasColMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, double alpha,
                 const double* a, int lda, const double* b, int ldb, double beta, double* c,
                 int ldc) {
  cblas_dgemm(CblasColMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
                 std::complex<float> alpha, const std::complex<float>* a, int lda,
                 const std::complex<float>* b, int ldb, std::complex<float> beta,
                 std::complex<float>* c, int ldc) {
  cblas_cgemm(CblasColMajor, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}
inline void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
                 std::complex<double> alpha, const std::complex<double>* a, int lda,
                 const std::complex<double>* b, int ldb, std::complex<double> beta,
                 std::complex<double>* c, int ldc) {
  cblas_zgemm(CblasColMajor, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}
}  // namespace lapack

}  // namespace ember::cpu::linalg_impl
