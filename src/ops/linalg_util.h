#pragma once
#include "ops/op_layer.h"  // Note [Layer includes]
// Shared pieces of the linalg ops: input checks, column-major batch workspaces, the batch loop,
// info-to-error translation and overloaded LAPACK/BLAS wrappers (one name per routine family,
// resolved by the element type).
//
// Note [Linalg workspaces]
// LAPACK wants column-major matrices. Every op copies each input matrix into a fresh tensor whose
// last two dims have strides (1, m) (`colmajor_copy`): its data is a row of column-major matrices,
// one every m*n elements, which LAPACK overwrites in place. Results are returned in that layout
// (PyTorch's linalg does the same), so no copy back is needed. The batch loop runs matrices in
// parallel; OpenBLAS's OpenMP build runs single-threaded inside a parallel region.

#include <cmath>
#include <complex>
#include <string>
#include <vector>

#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>
// cblas.h after lapacke.h: it must not define the complex types first.
#include <cblas.h>

#include "core/parallel_internal.h"
#include "core/tensor_util.h"
#include "ember/dispatch_type.h"
#include "ember/factory.h"
#include "ember/linalg.h"
#include "ember/ops.h"

namespace ember::linalg_detail {

template <class T>
struct real_of {
  using type = T;
};
template <class T>
struct real_of<std::complex<T>> {
  using type = T;
};
template <class T>
using real_t = typename real_of<T>::type;
template <class T>
constexpr bool is_complex_v = !std::is_same_v<T, real_t<T>>;
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

// ---- checks ----

/// float32/float64/complex64/complex128 only, with PyTorch's two messages (both RuntimeError).
void check_dtype(const Tensor& a, const char* op, const char* arg = "input");
/// At least 2 dims.
void check_matrix(const Tensor& a, const char* op, const char* arg = "A");
/// At least 2 dims and square.
void check_square(const Tensor& a, const char* op, const char* arg = "A");
/// CPU only.
void check_cpu(const Tensor& a, const char* op);

// ---- shapes and workspaces ----

/// Product of all dims but the last two.
int64_t batch_count(const Tensor& a);
/// The leading (batch) dims.
DimVector batch_shape(const Tensor& a);
/// `batch` followed by `tail`.
DimVector cat_shape(IntArrayRef batch, std::initializer_list<int64_t> tail);
/// A fresh tensor of `shape` whose last two dims are column-major (see Note [Linalg workspaces]).
Tensor colmajor_empty(IntArrayRef shape, ScalarType dt);
/// A column-major copy of `a` (conj resolved, cast to `dt`), broadcast to `shape` when given.
Tensor colmajor_copy(const Tensor& a, ScalarType dt);
Tensor colmajor_copy(const Tensor& a, ScalarType dt, IntArrayRef shape);
/// A fresh contiguous copy (row-major; for vectors of results such as eigenvalues).
Tensor fresh_copy(const Tensor& a);
/// Typed pointer to element 0 of a fresh workspace.
template <class T>
T* ptr(const Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

/// Runs f(b) for each batch element b, in parallel when the work (`cost` flops a matrix) is large.
template <class F>
void for_each_matrix(int64_t batch, double cost, const F& f) {
  const int64_t grain = cost >= 32768 ? 1 : int64_t(32768 / (cost < 1 ? 1 : cost));
  parallel_for(0, batch, grain, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) f(b);
  });
}

/// Turns LAPACK infos into a LinAlgError (or `Err`, where PyTorch raises a plain RuntimeError)
/// naming the first failing batch element: the message is "[op] (Batch element b): " + what(info)
/// (no batch prefix for a single matrix).
template <class Err = LinAlgError, class What>
void raise_infos(const std::vector<int>& infos, bool batched, const char* op, const What& what) {
  for (size_t b = 0; b < infos.size(); ++b) {
    if (infos[b] == 0) continue;
    EMBER_CHECK(infos[b] > 0, "[", op, "] internal LAPACK error: argument ", -infos[b],
                " has an illegal value");
    std::string prefix = std::string("[") + op + "] ";
    if (batched) prefix += "(Batch element " + std::to_string(b) + "): ";
    throw Err(prefix + what(infos[b]));
  }
}
/// The first batch element (of `batch` matrices, `per` elements each, in a workspace) holding a
/// NaN or inf, or -1 when all are finite.
template <class T>
int64_t first_nonfinite(const T* p, int64_t batch, int64_t per) {
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = b * per; i < (b + 1) * per; ++i) {
      if (!std::isfinite(std::real(p[i])) || !std::isfinite(std::imag(p[i]))) return b;
    }
  }
  return -1;
}
/// The info tensor of the `_ex` variants: int32 of the batch shape.
Tensor info_tensor(const std::vector<int>& infos, IntArrayRef batch);

/// Machine epsilon of a real or complex dtype's value type.
double eps_of(ScalarType dt);

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

/// Batched column-major product C[b] = op(A[b]) op(B[b]) of workspaces (batch dims equal).
Tensor batched_gemm(const Tensor& A, const Tensor& B, bool adj_a = false, bool adj_b = false);

}  // namespace ember::linalg_detail

// Derivative formulas shared by the linalg ops (PyTorch's FunctionsManual). All are written
// with recorded ember ops, so a backward under create_graph can be differentiated again.
namespace ember::linalg_ad {

/// The conjugate transpose of the last two dims.
Tensor mH(const Tensor& t);
/// The gradient of prod over `dim` that stays finite with zeros in `inp`.
Tensor prod_safe_zeros_backward(const Tensor& grad, const Tensor& inp, int64_t dim);
/// A = U diag(S) Vh (reduced): the gradient from those of U, S, Vh (any may be undefined).
Tensor svd_backward(const Tensor& gU, const Tensor& gS, const Tensor& gVh, const Tensor& U,
                    const Tensor& S, const Tensor& Vh);
/// A V = V diag(L): the gradient from those of L and V (hermitian: eigh).
Tensor eig_backward(const Tensor& gL, const Tensor& gV, const Tensor& L, const Tensor& V,
                    bool hermitian);
/// A = P L U: the gradient from those of L and U.
Tensor lu_backward(const Tensor& gL, const Tensor& gU, const Tensor& P, const Tensor& L,
                   const Tensor& U, bool pivot);
/// The gradient of pinv(A) from that of its result.
Tensor pinv_backward(const Tensor& grad, const Tensor& pinvA, const Tensor& A);
/// Q = H_0 ⋯ H_{k-1} I[:, :n], H_i = I - tau_i v_i v_iᴴ: the gradients of A (its strictly lower
/// triangle holds the v_i) and of tau from that of Q.
std::tuple<Tensor, Tensor> householder_product_backward(const Tensor& grad, const Tensor& A,
                                                        const Tensor& tau);

}  // namespace ember::linalg_ad
