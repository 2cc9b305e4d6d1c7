// LDLᵀ (sytrf/hetrf + sytrs/hetrs), geqrf and ormqr/unmqr kernels (kernels/stubs/linalg_extra.h).
#include "kernels/stubs/linalg_extra.h"
#include "kernels/cpu/linalg/lapack.h"

namespace ember {

EMBER_DEFINE_KERNEL(linalg_ldl_factor_stub);
EMBER_DEFINE_KERNEL(linalg_ldl_solve_stub);
EMBER_DEFINE_KERNEL(linalg_geqrf_stub);
EMBER_DEFINE_KERNEL(linalg_ormqr_stub);

namespace cpu {
namespace {

using namespace linalg_impl;

// ---- LAPACK wrappers of this file (column-major). For real types hermitian and symmetric
// coincide; complex symmetric uses csytrf/zsytrf, Hermitian chetrf/zhetrf. ----
lapack_int sytrf(bool, lapack_int n, float* a, lapack_int lda, lapack_int* ipiv) {
  return LAPACKE_ssytrf(LAPACK_COL_MAJOR, 'L', n, a, lda, ipiv);
}
lapack_int sytrf(bool, lapack_int n, double* a, lapack_int lda, lapack_int* ipiv) {
  return LAPACKE_dsytrf(LAPACK_COL_MAJOR, 'L', n, a, lda, ipiv);
}
lapack_int sytrf(bool herm, lapack_int n, std::complex<float>* a, lapack_int lda,
                 lapack_int* ipiv) {
  return herm ? LAPACKE_chetrf(LAPACK_COL_MAJOR, 'L', n, a, lda, ipiv)
              : LAPACKE_csytrf(LAPACK_COL_MAJOR, 'L', n, a, lda, ipiv);
}
lapack_int sytrf(bool herm, lapack_int n, std::complex<double>* a, lapack_int lda,
                 lapack_int* ipiv) {
  return herm ? LAPACKE_zhetrf(LAPACK_COL_MAJOR, 'L', n, a, lda, ipiv)
              : LAPACKE_zsytrf(LAPACK_COL_MAJOR, 'L', n, a, lda, ipiv);
}

lapack_int sytrs(bool, lapack_int n, lapack_int k, const float* a, const lapack_int* ipiv,
                 float* b) {
  return LAPACKE_ssytrs(LAPACK_COL_MAJOR, 'L', n, k, a, n, ipiv, b, n);
}
lapack_int sytrs(bool, lapack_int n, lapack_int k, const double* a, const lapack_int* ipiv,
                 double* b) {
  return LAPACKE_dsytrs(LAPACK_COL_MAJOR, 'L', n, k, a, n, ipiv, b, n);
}
lapack_int sytrs(bool herm, lapack_int n, lapack_int k, const std::complex<float>* a,
                 const lapack_int* ipiv, std::complex<float>* b) {
  return herm ? LAPACKE_chetrs(LAPACK_COL_MAJOR, 'L', n, k, a, n, ipiv, b, n)
              : LAPACKE_csytrs(LAPACK_COL_MAJOR, 'L', n, k, a, n, ipiv, b, n);
}
lapack_int sytrs(bool herm, lapack_int n, lapack_int k, const std::complex<double>* a,
                 const lapack_int* ipiv, std::complex<double>* b) {
  return herm ? LAPACKE_zhetrs(LAPACK_COL_MAJOR, 'L', n, k, a, n, ipiv, b, n)
              : LAPACKE_zsytrs(LAPACK_COL_MAJOR, 'L', n, k, a, n, ipiv, b, n);
}

// ormqr (real) / unmqr (complex); the transpose of a complex Q is its conjugate transpose.
lapack_int ormqr(char side, char trans, lapack_int m, lapack_int n, lapack_int k, const float* a,
                 lapack_int lda, const float* tau, float* c, lapack_int ldc) {
  return LAPACKE_sormqr(LAPACK_COL_MAJOR, side, trans, m, n, k, a, lda, tau, c, ldc);
}
lapack_int ormqr(char side, char trans, lapack_int m, lapack_int n, lapack_int k, const double* a,
                 lapack_int lda, const double* tau, double* c, lapack_int ldc) {
  return LAPACKE_dormqr(LAPACK_COL_MAJOR, side, trans, m, n, k, a, lda, tau, c, ldc);
}
lapack_int ormqr(char side, char trans, lapack_int m, lapack_int n, lapack_int k,
                 const std::complex<float>* a, lapack_int lda, const std::complex<float>* tau,
                 std::complex<float>* c, lapack_int ldc) {
  return LAPACKE_cunmqr(LAPACK_COL_MAJOR, side, trans == 'T' ? 'C' : trans, m, n, k, a, lda, tau, c,
                        ldc);
}
lapack_int ormqr(char side, char trans, lapack_int m, lapack_int n, lapack_int k,
                 const std::complex<double>* a, lapack_int lda, const std::complex<double>* tau,
                 std::complex<double>* c, lapack_int ldc) {
  return LAPACKE_zunmqr(LAPACK_COL_MAJOR, side, trans == 'T' ? 'C' : trans, m, n, k, a, lda, tau, c,
                        ldc);
}

void ldl_factor_cpu(Tensor& LD, Tensor& pivots, bool hermitian, std::vector<int>& infos) {
  const int64_t n = LD.size(-1), batch = matrix_batch(LD);
  EMBER_DISPATCH_LINALG_TYPES(LD.dtype(), "linalg.ldl_factor", [&] {
    scalar_t* a = ptr<scalar_t>(LD);
    lapack_int* p = ptr<lapack_int>(pivots);
    for_each_matrix(batch, double(n) * n * n / 3, [&](int64_t b) {
      scalar_t* m = a + b * n * n;
      infos[size_t(b)] = sytrf(hermitian, int(n), m, int(n), p + b * n);
      zero_triangle(m, n, n, n, /*lower=*/false);
    });
  });
}

void ldl_solve_cpu(const Tensor& LD, const Tensor& pivots, Tensor& X, bool hermitian) {
  const int64_t n = LD.size(-1), k = X.size(-1), batch = matrix_batch(X);
  // sytrs indexes rows by the pivots: a value outside [1, n] (either sign) would read out of
  // bounds.
  const lapack_int* pv = static_cast<const lapack_int*>(pivots.data_ptr());
  for (int64_t i = 0; i < batch * n; ++i) {
    const int64_t p = pv[i] < 0 ? -int64_t(pv[i]) : int64_t(pv[i]);
    EMBER_CHECK(p >= 1 && p <= n, "[linalg.ldl_solve] pivot ", pv[i], " out of range [1, ", n,
                "] (or its negation)");
  }
  EMBER_DISPATCH_LINALG_TYPES(LD.dtype(), "linalg.ldl_solve", [&] {
    const scalar_t* a = ptr<scalar_t>(LD);
    const lapack_int* p = ptr<lapack_int>(pivots);
    scalar_t* x = ptr<scalar_t>(X);
    for_each_matrix(batch, double(n) * n * k, [&](int64_t b) {
      sytrs(hermitian, int(n), int(k), a + b * n * n, p + b * n, x + b * n * k);
    });
  });
}

void geqrf_cpu(Tensor& A, Tensor& tau) {
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n), batch = matrix_batch(A);
  EMBER_DISPATCH_LINALG_TYPES(A.dtype(), "geqrf", [&] {
    scalar_t* a = ptr<scalar_t>(A);
    scalar_t* t = ptr<scalar_t>(tau);
    for_each_matrix(batch, double(m) * n * k, [&](int64_t b) {
      lapack::geqrf(int(m), int(n), a + b * m * n, int(m), t + b * k);
    });
  });
}

void ormqr_cpu(const Tensor& A, const Tensor& tau, Tensor& C, bool left, bool transpose) {
  const int64_t mq = A.size(-2), acols = A.size(-1), k = tau.size(-1);
  const int64_t m = C.size(-2), n = C.size(-1), batch = matrix_batch(C);
  EMBER_DISPATCH_LINALG_TYPES(C.dtype(), "ormqr", [&] {
    const scalar_t* a = ptr<scalar_t>(A);
    const scalar_t* t = ptr<scalar_t>(tau);
    scalar_t* c = ptr<scalar_t>(C);
    for_each_matrix(batch, double(m) * n * k, [&](int64_t b) {
      ormqr(left ? 'L' : 'R', transpose ? 'T' : 'N', int(m), int(n), int(k), a + b * mq * acols,
            int(std::max<int64_t>(mq, 1)), t + b * k, c + b * m * n, int(m));
    });
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(linalg_ldl_factor_stub, kCPU, cpu::ldl_factor_cpu);
EMBER_REGISTER_KERNEL(linalg_ldl_solve_stub, kCPU, cpu::ldl_solve_cpu);
EMBER_REGISTER_KERNEL(linalg_geqrf_stub, kCPU, cpu::geqrf_cpu);
EMBER_REGISTER_KERNEL(linalg_ormqr_stub, kCPU, cpu::ormqr_cpu);

}  // namespace ember
