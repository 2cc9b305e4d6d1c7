// The linalg kernels on CUDA (kernels/stubs/linalg.h) through cuSOLVER and cuBLAS: Cholesky
// (potrf), LU (getrf), solve (getrf + getrs), lu_solve (getrs), triangular solves (trsm), eigh
// (syevd / heevd), SVD (gesvdj), QR (geqrf + orgqr / ungqr), det and slogdet from getrf, the
// workspaces' batched product, the info tensor and tril / triu.
//
// Note [cuSOLVER infos]
// The stubs return LAPACK's infos on the host (the op bodies raise from them, with the CPU's
// exception types and messages), so each factorization copies its device info array back and
// waits for the stream: these kernels synchronise, and raise inside a CUDA graph capture
// (check_not_capturing). cuSOLVER's devInfo follows LAPACK's meaning (potrf: the order of the
// leading minor that is not positive-definite; getrf: the first zero pivot U[i, i]). Batches run
// one matrix per call on the current stream; workspaces come from scratch().
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <vector>

#include "cuda/cuda_blas_util.h"
#include "cuda/cuda_context.h"
#include "cuda/linalg_kernels.h"
#include "ember/cuda.h"
#include "kernels/stubs/linalg.h"
#include "ops/device_kernels.h"

namespace ember::cuda {
namespace {

using cf = std::complex<float>;
using cd = std::complex<double>;

// ---- typed wrappers: host element types (std::complex shares cuComplex's layout) ----

cuComplex* dv(cf* p) { return reinterpret_cast<cuComplex*>(p); }
cuDoubleComplex* dv(cd* p) { return reinterpret_cast<cuDoubleComplex*>(p); }
const cuComplex* dv(const cf* p) { return reinterpret_cast<const cuComplex*>(p); }
const cuDoubleComplex* dv(const cd* p) { return reinterpret_cast<const cuDoubleComplex*>(p); }
float* dv(float* p) { return p; }
double* dv(double* p) { return p; }
const float* dv(const float* p) { return p; }
const double* dv(const double* p) { return p; }

#define EMBER_SOLVER_4(X) X(float, S) X(double, D) X(cf, C) X(cd, Z)

#define EMBER_POTRF(T, P)                                                                         \
  cusolverStatus_t potrf_buf(cusolverDnHandle_t h, cublasFillMode_t u, int n, T* a, int lda,      \
                             int* lw) {                                                           \
    return cusolverDn##P##potrf_bufferSize(h, u, n, dv(a), lda, lw);                              \
  }                                                                                               \
  cusolverStatus_t potrf(cusolverDnHandle_t h, cublasFillMode_t u, int n, T* a, int lda, T* w,    \
                         int lw, int* info) {                                                     \
    return cusolverDn##P##potrf(h, u, n, dv(a), lda, dv(w), lw, info);                            \
  }                                                                                               \
  cusolverStatus_t getrf_buf(cusolverDnHandle_t h, int m, int n, T* a, int lda, int* lw) {        \
    return cusolverDn##P##getrf_bufferSize(h, m, n, dv(a), lda, lw);                              \
  }                                                                                               \
  cusolverStatus_t getrf(cusolverDnHandle_t h, int m, int n, T* a, int lda, T* w, int* piv,       \
                         int* info) {                                                             \
    return cusolverDn##P##getrf(h, m, n, dv(a), lda, dv(w), piv, info);                           \
  }                                                                                               \
  cusolverStatus_t getrs(cusolverDnHandle_t h, cublasOperation_t t, int n, int k, const T* a,     \
                         int lda, const int* piv, T* b, int ldb, int* info) {                     \
    return cusolverDn##P##getrs(h, t, n, k, dv(a), lda, piv, dv(b), ldb, info);                   \
  }                                                                                               \
  cublasStatus_t trsm(cublasHandle_t h, cublasSideMode_t s, cublasFillMode_t u,                   \
                      cublasOperation_t t, cublasDiagType_t d, int m, int n, const T* al,         \
                      const T* a, int lda, T* b, int ldb) {                                       \
    return cublas##P##trsm(h, s, u, t, d, m, n, dv(al), dv(a), lda, dv(b), ldb);                  \
  }                                                                                               \
  cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, \
                      int k, const T* al, const T* a, int lda, long long sa, const T* b, int ldb, \
                      long long sb, const T* be, T* c, int ldc, long long sc, int batch) {        \
    return cublas##P##gemmStridedBatched(h, ta, tb, m, n, k, dv(al), dv(a), lda, sa, dv(b), ldb,  \
                                         sb, dv(be), dv(c), ldc, sc, batch);                      \
  }
EMBER_SOLVER_4(EMBER_POTRF)
#undef EMBER_POTRF
#undef EMBER_SOLVER_4

// The Hermitian eigensolver: syevd for real types, heevd for complex ones (real eigenvalues).
#define EMBER_EVD(T, R, name)                                                                      \
  cusolverStatus_t evd_buf(cusolverDnHandle_t h, cusolverEigMode_t j, cublasFillMode_t u, int n,   \
                           T* a, int lda, R* w, int* lw) {                                         \
    return cusolverDn##name##_bufferSize(h, j, u, n, dv(a), lda, w, lw);                           \
  }                                                                                                \
  cusolverStatus_t evd(cusolverDnHandle_t h, cusolverEigMode_t j, cublasFillMode_t u, int n, T* a, \
                       int lda, R* w, T* work, int lw, int* info) {                                \
    return cusolverDn##name(h, j, u, n, dv(a), lda, w, dv(work), lw, info);                        \
  }
// QR: geqrf and orgqr (real) / ungqr (complex).
#define EMBER_QR(T, P, Q)                                                                         \
  cusolverStatus_t geqrf_buf(cusolverDnHandle_t h, int m, int n, T* a, int lda, int* lw) {        \
    return cusolverDn##P##geqrf_bufferSize(h, m, n, dv(a), lda, lw);                              \
  }                                                                                               \
  cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, T* a, int lda, T* tau, T* w, int lw, \
                         int* info) {                                                             \
    return cusolverDn##P##geqrf(h, m, n, dv(a), lda, dv(tau), dv(w), lw, info);                   \
  }                                                                                               \
  cusolverStatus_t orgqr_buf(cusolverDnHandle_t h, int m, int n, int k, const T* a, int lda,      \
                             const T* tau, int* lw) {                                             \
    return cusolverDn##P##Q##_bufferSize(h, m, n, k, dv(a), lda, dv(tau), lw);                    \
  }                                                                                               \
  cusolverStatus_t orgqr(cusolverDnHandle_t h, int m, int n, int k, T* a, int lda, const T* tau,  \
                         T* w, int lw, int* info) {                                               \
    return cusolverDn##P##Q(h, m, n, k, dv(a), lda, dv(tau), dv(w), lw, info);                    \
  }
EMBER_QR(float, S, orgqr)
EMBER_QR(double, D, orgqr)
EMBER_QR(cf, C, ungqr)
EMBER_QR(cd, Z, ungqr)
#undef EMBER_QR

// The Jacobi SVD (gesvdj): V, not Vᴴ; geam forms the conjugate transpose.
#define EMBER_SVDJ(T, R, P)                                                                        \
  cusolverStatus_t gesvdj_buf(cusolverDnHandle_t h, cusolverEigMode_t j, int econ, int m, int n,   \
                              T* a, int lda, R* s, T* u, int ldu, T* v, int ldv, int* lw,          \
                              gesvdjInfo_t p) {                                                    \
    return cusolverDn##P##gesvdj_bufferSize(h, j, econ, m, n, dv(a), lda, s, dv(u), ldu, dv(v),    \
                                            ldv, lw, p);                                           \
  }                                                                                                \
  cusolverStatus_t gesvdj(cusolverDnHandle_t h, cusolverEigMode_t j, int econ, int m, int n, T* a, \
                          int lda, R* s, T* u, int ldu, T* v, int ldv, T* w, int lw, int* info,    \
                          gesvdjInfo_t p) {                                                        \
    return cusolverDn##P##gesvdj(h, j, econ, m, n, dv(a), lda, s, dv(u), ldu, dv(v), ldv, dv(w),   \
                                 lw, info, p);                                                     \
  }                                                                                                \
  cublasStatus_t geam(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,  \
                      const T* al, const T* a, int lda, const T* be, const T* b, int ldb, T* c,    \
                      int ldc) {                                                                   \
    return cublas##P##geam(h, ta, tb, m, n, dv(al), dv(a), lda, dv(be), dv(b), ldb, dv(c), ldc);   \
  }
EMBER_SVDJ(float, float, S)
EMBER_SVDJ(double, double, D)
EMBER_SVDJ(cf, float, C)
EMBER_SVDJ(cd, double, Z)
#undef EMBER_SVDJ

EMBER_EVD(float, float, Ssyevd)
EMBER_EVD(double, double, Dsyevd)
EMBER_EVD(cf, float, Cheevd)
EMBER_EVD(cd, double, Zheevd)
#undef EMBER_EVD

template <class T>
constexpr bool kComplex = std::is_same_v<T, cf> || std::is_same_v<T, cd>;

/// Calls f(T{}) with T the host element type of a linalg dtype.
template <class F>
void dispatch(ScalarType dt, const char* op, F&& f) {
  switch (dt) {
    case kFloat:
      return f(float{});
    case kDouble:
      return f(double{});
    case kComplexFloat:
      return f(cf{});
    case kComplexDouble:
      return f(cd{});
    default:
      EMBER_THROW(NotImplementedError, "[", op, "] not implemented for cuda ", dtype_name(dt));
  }
}

/// The workspaces of one kernel call live on one CUDA device.
void check_tensors(const char* op, std::initializer_list<const Tensor*> ts) {
  const Tensor& first = **ts.begin();
  for (const Tensor* t : ts)
    EMBER_CHECK(t->is_cuda() && t->device() == first.device(), "[", op,
                "] expected all tensors to be on the same CUDA device, got ", t->device().str(),
                " and ", first.device().str());
}

void check_dim(int64_t d, const char* op) {
  EMBER_CHECK(d <= INT_MAX, "[", op, "] matrix dims must be below 2^31 on cuda, got ", d);
}

/// Matrices in a workspace (the product of its batch dims).
int64_t matrix_batch(const Tensor& t) {
  int64_t b = 1;
  for (int64_t d = 0; d + 2 < t.dim(); ++d) b *= t.size(d);
  return b;
}

template <class T>
T* ptr(const Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

/// Device ints for one value per batch element.
DataPtr device_ints(int64_t count) {
  return scratch(size_t(std::max<int64_t>(count, 1)) * sizeof(int));
}

/// Copies `count` ints from the device to `host` and waits (Note [cuSOLVER infos]).
void read_ints(const void* dev, int* host, int64_t count) {
  if (count == 0) return;
  EMBER_CUDA_CHECK(cudaMemcpyAsync(host, dev, size_t(count) * sizeof(int), cudaMemcpyDeviceToHost,
                                   current_raw_stream()));
  sync_current_stream();
}

/// Writes host values into the contiguous device tensor `t` and waits (the host buffer dies
/// with the caller).
void write_host(const Tensor& t, const void* host, size_t bytes) {
  if (bytes == 0) return;
  EMBER_CUDA_CHECK(
      cudaMemcpyAsync(t.data_ptr(), host, bytes, cudaMemcpyHostToDevice, current_raw_stream()));
  sync_current_stream();
}

// ---- shared ----

void info_cuda(Tensor& info, const std::vector<int>& infos) {
  if (infos.empty()) return;
  DeviceGuard guard(info.device());
  check_not_capturing("linalg");
  write_host(info, infos.data(), infos.size() * sizeof(int));
}

void linalg_gemm_cuda(const Tensor& A, const Tensor& B, Tensor& C, bool adj_a, bool adj_b) {
  DeviceGuard guard(C.device());
  check_tensors("linalg", {&A, &B, &C});
  const int64_t m = C.size(-2), n = C.size(-1);
  const int64_t k = adj_a ? A.size(-2) : A.size(-1);
  const int64_t batch = matrix_batch(C);
  if (batch == 0 || m == 0 || n == 0 || k == 0) return;
  check_dim(m, "linalg");
  check_dim(n, "linalg");
  check_dim(k, "linalg");
  cublasHandle_t h = cublas_handle();
  set_math_mode(h, false);
  dispatch(A.dtype(), "linalg", [&](auto tag) {
    using T = decltype(tag);
    const cublasOperation_t adj = kComplex<T> ? CUBLAS_OP_C : CUBLAS_OP_T;
    const T one(1), zero(0);
    // Some cuBLAS versions put the batch on gridDim.z (at most 65535 per call).
    for (int64_t b0 = 0; b0 < batch; b0 += 65535) {
      const int nb = int(std::min<int64_t>(65535, batch - b0));
      check_cublas(
          gemm(h, adj_a ? adj : CUBLAS_OP_N, adj_b ? adj : CUBLAS_OP_N, int(m), int(n), int(k),
               &one, ptr<T>(A) + b0 * m * k, int(adj_a ? k : m), m * k, ptr<T>(B) + b0 * k * n,
               int(adj_b ? n : k), k * n, &zero, ptr<T>(C) + b0 * m * n, int(m), m * n, nb),
          "cublas gemmStridedBatched");
    }
  });
}

// ---- factorizations ----

void cholesky_cuda(Tensor& L, bool upper, std::vector<int>& infos) {
  DeviceGuard guard(L.device());
  check_not_capturing("linalg.cholesky");
  const int64_t n = L.size(-1), batch = matrix_batch(L);
  if (batch == 0 || n == 0) return;
  check_dim(n, "linalg.cholesky");
  DataPtr dinfo = device_ints(batch);
  int* info = static_cast<int*>(dinfo.get());
  cusolverDnHandle_t h = cusolver_handle();
  const cublasFillMode_t uplo = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  dispatch(L.dtype(), "linalg.cholesky", [&](auto tag) {
    using T = decltype(tag);
    T* a = ptr<T>(L);
    const int N = int(n);
    int lwork = 0;
    check_cusolver(potrf_buf(h, uplo, N, a, N, &lwork), "potrf_bufferSize");
    DataPtr work = scratch(size_t(std::max(lwork, 1)) * sizeof(T));
    for (int64_t b = 0; b < batch; ++b)
      check_cusolver(
          potrf(h, uplo, N, a + b * n * n, N, static_cast<T*>(work.get()), lwork, info + b),
          "potrf");
  });
  // Column-major: element (i, j) at i + j * n; keep the factor's triangle.
  zero_outside_triangle(L.data_ptr(), L.itemsize(), batch, n, n, n * n, 1, n, 0, !upper);
  read_ints(info, infos.data(), batch);
}

void lu_factor_cuda(Tensor& LU, Tensor& pivots, std::vector<int>& infos) {
  DeviceGuard guard(LU.device());
  check_tensors("linalg.lu_factor", {&LU, &pivots});
  check_not_capturing("linalg.lu_factor");
  const int64_t m = LU.size(-2), n = LU.size(-1), k = std::min(m, n), batch = matrix_batch(LU);
  if (batch == 0 || k == 0) return;
  check_dim(m, "linalg.lu_factor");
  check_dim(n, "linalg.lu_factor");
  DataPtr dinfo = device_ints(batch);
  int* info = static_cast<int*>(dinfo.get());
  cusolverDnHandle_t h = cusolver_handle();
  dispatch(LU.dtype(), "linalg.lu_factor", [&](auto tag) {
    using T = decltype(tag);
    T* a = ptr<T>(LU);
    int* piv = ptr<int>(pivots);
    int lwork = 0;
    check_cusolver(getrf_buf(h, int(m), int(n), a, int(m), &lwork), "getrf_bufferSize");
    DataPtr work = scratch(size_t(std::max(lwork, 1)) * sizeof(T));
    for (int64_t b = 0; b < batch; ++b)
      check_cusolver(getrf(h, int(m), int(n), a + b * m * n, int(m), static_cast<T*>(work.get()),
                           piv + b * k, info + b),
                     "getrf");
  });
  read_ints(info, infos.data(), batch);
}

void qr_cuda(Tensor& W, Tensor& R, Tensor& Q, int64_t n, bool compute_q) {
  DeviceGuard guard(W.device());
  check_tensors("linalg.qr", {&W, &R});
  if (compute_q) check_tensors("linalg.qr", {&W, &Q});
  const int64_t m = W.size(-2), wcols = W.size(-1), k = std::min(m, n), batch = matrix_batch(W);
  const int64_t rrows = R.size(-2), qcols = compute_q ? Q.size(-1) : 0;
  if (batch == 0 || k == 0) return;
  check_dim(m, "linalg.qr");
  check_dim(wcols, "linalg.qr");
  DataPtr dinfo = device_ints(1);
  int* info = static_cast<int*>(dinfo.get());
  cusolverDnHandle_t h = cusolver_handle();
  const cudaStream_t stream = current_raw_stream();
  dispatch(W.dtype(), "linalg.qr", [&](auto tag) {
    using T = decltype(tag);
    T* w = ptr<T>(W);
    T* r = ptr<T>(R);
    DataPtr dtau = scratch(size_t(k) * sizeof(T));
    T* tau = static_cast<T*>(dtau.get());
    int lw1 = 0, lw2 = 0;
    check_cusolver(geqrf_buf(h, int(m), int(n), w, int(m), &lw1), "geqrf_bufferSize");
    if (compute_q)
      check_cusolver(orgqr_buf(h, int(m), int(qcols), int(k), w, int(m), tau, &lw2),
                     "orgqr_bufferSize");
    DataPtr work = scratch(size_t(std::max({lw1, lw2, 1})) * sizeof(T));
    T* wk = static_cast<T*>(work.get());
    for (int64_t b = 0; b < batch; ++b) {
      T* wb = w + b * m * wcols;
      check_cusolver(geqrf(h, int(m), int(n), wb, int(m), tau, wk, lw1, info), "geqrf");
      // R: the top rrows (<= m) rows of the first n columns; below its diagonal is zeroed next.
      EMBER_CUDA_CHECK(cudaMemcpy2DAsync(r + b * rrows * n, size_t(rrows) * sizeof(T), wb,
                                         size_t(m) * sizeof(T), size_t(rrows) * sizeof(T),
                                         size_t(n), cudaMemcpyDeviceToDevice, stream));
      if (compute_q) {
        check_cusolver(orgqr(h, int(m), int(qcols), int(k), wb, int(m), tau, wk, lw2, info),
                       "orgqr");
        EMBER_CUDA_CHECK(cudaMemcpyAsync(ptr<T>(Q) + b * m * qcols, wb,
                                         size_t(m * qcols) * sizeof(T), cudaMemcpyDeviceToDevice,
                                         stream));
      }
    }
  });
  zero_outside_triangle(R.data_ptr(), R.itemsize(), batch, rrows, n, rrows * n, 1, rrows, 0,
                        /*lower=*/false);
}

// ---- solvers ----

void solve_cuda(Tensor& LU, Tensor& X, bool transpose, std::vector<int>& infos) {
  DeviceGuard guard(LU.device());
  check_tensors("linalg.solve", {&LU, &X});
  check_not_capturing("linalg.solve");
  const int64_t n = LU.size(-1), k = X.size(-1), batch = matrix_batch(LU);
  if (batch == 0 || n == 0) return;
  check_dim(n, "linalg.solve");
  check_dim(k, "linalg.solve");
  DataPtr dinfo = device_ints(batch), dinfo_rs = device_ints(1);
  DataPtr dpiv = device_ints(batch * n);
  int* info = static_cast<int*>(dinfo.get());
  int* piv = static_cast<int*>(dpiv.get());
  cusolverDnHandle_t h = cusolver_handle();
  dispatch(LU.dtype(), "linalg.solve", [&](auto tag) {
    using T = decltype(tag);
    T* a = ptr<T>(LU);
    T* x = ptr<T>(X);
    const int N = int(n);
    int lwork = 0;
    check_cusolver(getrf_buf(h, N, N, a, N, &lwork), "getrf_bufferSize");
    DataPtr work = scratch(size_t(std::max(lwork, 1)) * sizeof(T));
    for (int64_t b = 0; b < batch; ++b) {
      check_cusolver(
          getrf(h, N, N, a + b * n * n, N, static_cast<T*>(work.get()), piv + b * n, info + b),
          "getrf");
      // Solved even when U is singular, as the CPU kernel: the _ex result holds inf/nan.
      if (k > 0)
        check_cusolver(getrs(h, transpose ? CUBLAS_OP_T : CUBLAS_OP_N, N, int(k), a + b * n * n, N,
                             piv + b * n, x + b * n * k, N, static_cast<int*>(dinfo_rs.get())),
                       "getrs");
    }
  });
  read_ints(info, infos.data(), batch);
}

void triangular_solve_cuda(const Tensor& A, Tensor& X, bool upper, bool left, bool unit,
                           bool trans) {
  DeviceGuard guard(X.device());
  check_tensors("linalg.solve_triangular", {&A, &X});
  const int64_t n = A.size(-1), m = X.size(-2), k = X.size(-1), batch = matrix_batch(X);
  if (batch == 0 || m == 0 || k == 0 || n == 0) return;
  check_dim(m, "linalg.solve_triangular");
  check_dim(k, "linalg.solve_triangular");
  cublasHandle_t h = cublas_handle();
  set_math_mode(h, false);
  dispatch(A.dtype(), "linalg.solve_triangular", [&](auto tag) {
    using T = decltype(tag);
    const T one(1);
    const T* a = ptr<T>(A);
    T* x = ptr<T>(X);
    for (int64_t b = 0; b < batch; ++b)
      check_cublas(
          trsm(h, left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT,
               upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER,
               trans ? CUBLAS_OP_T : CUBLAS_OP_N, unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT,
               int(m), int(k), &one, a + b * n * n, int(n), x + b * m * k, int(m)),
          "cublas trsm");
  });
}

void lu_solve_cuda(const Tensor& LU, const Tensor& pivots, Tensor& X, bool conj_trans,
                   const char* op) {
  DeviceGuard guard(X.device());
  check_tensors(op, {&LU, &pivots, &X});
  check_not_capturing(op);
  const int64_t n = LU.size(-1), k = X.size(-1), batch = matrix_batch(X);
  if (batch == 0 || n == 0 || k == 0) return;
  check_dim(n, op);
  check_dim(k, op);
  // The pivots are checked on the host before anything is solved, as on the CPU.
  std::vector<int> hp(size_t(pivots.numel()));
  read_ints(pivots.data_ptr(), hp.data(), pivots.numel());
  for (int p : hp)
    EMBER_CHECK(p >= 1 && p <= n, "[", op, "] pivot ", p, " out of range [1, ", n, "]");
  DataPtr dinfo = device_ints(1);
  cusolverDnHandle_t h = cusolver_handle();
  dispatch(LU.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const cublasOperation_t t =
        conj_trans ? (kComplex<T> ? CUBLAS_OP_C : CUBLAS_OP_T) : CUBLAS_OP_N;
    const T* a = ptr<T>(LU);
    const int* piv = ptr<int>(pivots);
    T* x = ptr<T>(X);
    for (int64_t b = 0; b < batch; ++b)
      check_cusolver(getrs(h, t, int(n), int(k), a + b * n * n, int(n), piv + b * n, x + b * n * k,
                           int(n), static_cast<int*>(dinfo.get())),
                     "getrs");
  });
}

// ---- spectral ----

void eigh_cuda(Tensor& V, Tensor& w, bool vectors, bool upper, std::vector<int>& infos) {
  DeviceGuard guard(V.device());
  check_tensors("linalg.eigh", {&V, &w});
  check_not_capturing("linalg.eigh");
  const int64_t n = V.size(-1), batch = matrix_batch(V);
  if (batch == 0 || n == 0) return;
  check_dim(n, "linalg.eigh");
  DataPtr dinfo = device_ints(batch);
  int* info = static_cast<int*>(dinfo.get());
  cusolverDnHandle_t h = cusolver_handle();
  const cusolverEigMode_t job = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const cublasFillMode_t uplo = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  dispatch(V.dtype(), "linalg.eigh", [&](auto tag) {
    using T = decltype(tag);
    using R = decltype(std::abs(T{}));
    T* a = ptr<T>(V);
    R* wp = ptr<R>(w);
    const int N = int(n);
    int lwork = 0;
    check_cusolver(evd_buf(h, job, uplo, N, a, N, wp, &lwork), "syevd_bufferSize");
    DataPtr work = scratch(size_t(std::max(lwork, 1)) * sizeof(T));
    for (int64_t b = 0; b < batch; ++b)
      check_cusolver(evd(h, job, uplo, N, a + b * n * n, N, wp + b * n, static_cast<T*>(work.get()),
                         lwork, info + b),
                     "syevd");
  });
  read_ints(info, infos.data(), batch);
}

/// Destroys a gesvdj parameter object at scope exit.
struct GesvdjParams {
  gesvdjInfo_t p = nullptr;
  GesvdjParams() { check_cusolver(cusolverDnCreateGesvdjInfo(&p), "cusolverDnCreateGesvdjInfo"); }
  ~GesvdjParams() { (void)cusolverDnDestroyGesvdjInfo(p); }
  GesvdjParams(const GesvdjParams&) = delete;
  GesvdjParams& operator=(const GesvdjParams&) = delete;
};

// gesvdj (one-sided Jacobi) rather than gesvd: it takes m < n directly and returns the reduced
// factors. Its info is positive when the sweeps did not converge, which the op body reports as
// LAPACK's.
void svd_cuda(Tensor& W, Tensor& S, Tensor& U, Tensor& Vh, bool uv, bool full,
              std::vector<int>& infos) {
  DeviceGuard guard(W.device());
  check_tensors("linalg.svd", {&W, &S});
  if (uv) check_tensors("linalg.svd", {&W, &U, &Vh});
  check_not_capturing("linalg.svd");
  const int64_t m = W.size(-2), n = W.size(-1), k = std::min(m, n), batch = matrix_batch(W);
  const int64_t ucols = full ? m : k, vrows = full ? n : k;
  if (batch == 0 || k == 0) return;
  check_dim(m, "linalg.svd");
  check_dim(n, "linalg.svd");
  DataPtr dinfo = device_ints(batch);
  int* info = static_cast<int*>(dinfo.get());
  cusolverDnHandle_t h = cusolver_handle();
  const cusolverEigMode_t job = uv ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const int econ = uv && full ? 0 : 1;
  GesvdjParams params;
  dispatch(W.dtype(), "linalg.svd", [&](auto tag) {
    using T = decltype(tag);
    using R = decltype(std::abs(T{}));
    T* a = ptr<T>(W);
    R* s = ptr<R>(S);
    // U straight into its workspace; V (n×vrows) into scratch, then Vh = Vᴴ. Without vectors
    // both are scratch that gesvdj does not read.
    DataPtr ubuf = uv ? DataPtr() : scratch(size_t(m * k) * sizeof(T));
    DataPtr vbuf = scratch(size_t(n * (uv ? vrows : k)) * sizeof(T));
    T* u = uv ? ptr<T>(U) : static_cast<T*>(ubuf.get());
    T* v = static_cast<T*>(vbuf.get());
    const int64_t ustride = uv ? m * ucols : 0;
    int lwork = 0;
    check_cusolver(gesvdj_buf(h, job, econ, int(m), int(n), a, int(m), s, u, int(m), v, int(n),
                              &lwork, params.p),
                   "gesvdj_bufferSize");
    DataPtr work = scratch(size_t(std::max(lwork, 1)) * sizeof(T));
    cublasHandle_t hb = uv ? cublas_handle() : nullptr;
    const T one(1), zero(0);
    for (int64_t b = 0; b < batch; ++b) {
      check_cusolver(
          gesvdj(h, job, econ, int(m), int(n), a + b * m * n, int(m), s + b * k, u + b * ustride,
                 int(m), v, int(n), static_cast<T*>(work.get()), lwork, info + b, params.p),
          "gesvdj");
      if (uv) {
        T* vh = ptr<T>(Vh) + b * vrows * n;
        check_cublas(geam(hb, kComplex<T> ? CUBLAS_OP_C : CUBLAS_OP_T, CUBLAS_OP_N, int(vrows),
                          int(n), &one, v, int(n), &zero, vh, int(vrows), vh, int(vrows)),
                     "cublas geam");
      }
    }
  });
  read_ints(info, infos.data(), batch);
}

/// The first batch element of a workspace holding NaN or inf, scanned on the host (it precedes
/// an SVD, whose cost dwarfs the copy).
int64_t first_nonfinite_cuda(const Tensor& w) {
  DeviceGuard guard(w.device());
  check_not_capturing("linalg");
  const int64_t batch = matrix_batch(w), per = w.size(-2) * w.size(-1);
  if (batch == 0 || per == 0) return -1;
  int64_t bad = -1;
  dispatch(w.dtype(), "linalg", [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> h(size_t(batch * per));
    EMBER_CUDA_CHECK(cudaMemcpyAsync(h.data(), w.data_ptr(), h.size() * sizeof(T),
                                     cudaMemcpyDeviceToHost, current_raw_stream()));
    sync_current_stream();
    for (int64_t i = 0; i < batch * per && bad < 0; ++i) {
      const T x = h[size_t(i)];
      if (!std::isfinite(std::real(x)) || !std::isfinite(std::imag(x))) bad = i / per;
    }
  });
  return bad;
}

// ---- det / slogdet ----

/// getrf of each n×n matrix of `LU` in place; the diagonals of U (n per matrix) and the pivots
/// are copied to the host.
template <class T>
void lu_diagonals(Tensor& LU, const char* op, std::vector<T>& diag, std::vector<int>& piv) {
  const int64_t n = LU.size(-1), batch = matrix_batch(LU);
  check_dim(n, op);
  DataPtr dinfo = device_ints(1), dpiv = device_ints(batch * n);
  cusolverDnHandle_t h = cusolver_handle();
  T* a = ptr<T>(LU);
  const int N = int(n);
  int lwork = 0;
  check_cusolver(getrf_buf(h, N, N, a, N, &lwork), "getrf_bufferSize");
  DataPtr work = scratch(size_t(std::max(lwork, 1)) * sizeof(T));
  for (int64_t b = 0; b < batch; ++b)
    check_cusolver(getrf(h, N, N, a + b * n * n, N, static_cast<T*>(work.get()),
                         static_cast<int*>(dpiv.get()) + b * n, static_cast<int*>(dinfo.get())),
                   "getrf");
  diag.resize(size_t(batch * n));
  piv.resize(size_t(batch * n));
  // Element (i, i) of matrix b sits at b*n*n + i*(n + 1): one strided copy per matrix.
  for (int64_t b = 0; b < batch; ++b)
    EMBER_CUDA_CHECK(cudaMemcpy2DAsync(diag.data() + b * n, sizeof(T), a + b * n * n,
                                       size_t(n + 1) * sizeof(T), sizeof(T), size_t(n),
                                       cudaMemcpyDeviceToHost, current_raw_stream()));
  read_ints(dpiv.get(), piv.data(), batch * n);
}

void det_cuda(Tensor& LU, Tensor& out) {
  DeviceGuard guard(out.device());
  check_tensors("linalg.det", {&LU, &out});
  check_not_capturing("linalg.det");
  const int64_t n = LU.size(-1), batch = matrix_batch(LU);
  if (batch == 0) return;
  dispatch(LU.dtype(), "linalg.det", [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> diag, res(size_t(batch), T(1));
    std::vector<int> piv;
    if (n > 0) {
      lu_diagonals<T>(LU, "linalg.det", diag, piv);
      for (int64_t b = 0; b < batch; ++b) {
        T d(1);
        for (int64_t i = 0; i < n; ++i) {
          d *= diag[size_t(b * n + i)];
          if (piv[size_t(b * n + i)] != i + 1) d = -d;
        }
        res[size_t(b)] = d;
      }
    }
    write_host(out, res.data(), res.size() * sizeof(T));
  });
}

void slogdet_cuda(Tensor& LU, Tensor& sign, Tensor& logabs) {
  DeviceGuard guard(sign.device());
  check_tensors("linalg.slogdet", {&LU, &sign, &logabs});
  check_not_capturing("linalg.slogdet");
  const int64_t n = LU.size(-1), batch = matrix_batch(LU);
  if (batch == 0) return;
  dispatch(LU.dtype(), "linalg.slogdet", [&](auto tag) {
    using T = decltype(tag);
    using R = decltype(std::abs(T{}));
    std::vector<T> diag, sg(size_t(batch), T(1));
    std::vector<R> la(size_t(batch), R(0));
    std::vector<int> piv;
    if (n > 0) {
      lu_diagonals<T>(LU, "linalg.slogdet", diag, piv);
      for (int64_t b = 0; b < batch; ++b) {
        T s(1);
        R l = 0;
        for (int64_t i = 0; i < n; ++i) {
          const T d = diag[size_t(b * n + i)];
          const R ad = std::abs(d);
          if (piv[size_t(b * n + i)] != i + 1) s = -s;
          if (ad == 0) {
            s = T(0);
            l = -std::numeric_limits<R>::infinity();
          } else if (s != T(0)) {
            s *= d / ad;
            l += std::log(ad);
          }
        }
        sg[size_t(b)] = s;
        la[size_t(b)] = l;
      }
    }
    write_host(sign, sg.data(), sg.size() * sizeof(T));
    write_host(logabs, la.data(), la.size() * sizeof(R));
  });
}

// ---- tril / triu ----

void triangle_cuda(Tensor& out, int64_t k, bool lower) {
  DeviceGuard guard(out.device());
  const int64_t rows = out.size(-2), cols = out.size(-1);
  if (out.numel() == 0) return;
  // Contiguous row-major matrices.
  zero_outside_triangle(out.data_ptr(), out.itemsize(), out.numel() / (rows * cols), rows, cols,
                        rows * cols, cols, 1, k, lower);
}

}  // namespace

EMBER_REGISTER_KERNEL(linalg_info_stub, kCUDA, info_cuda);
EMBER_REGISTER_KERNEL(linalg_gemm_stub, kCUDA, linalg_gemm_cuda);
EMBER_REGISTER_KERNEL(linalg_cholesky_stub, kCUDA, cholesky_cuda);
EMBER_REGISTER_KERNEL(linalg_lu_factor_stub, kCUDA, lu_factor_cuda);
EMBER_REGISTER_KERNEL(linalg_qr_stub, kCUDA, qr_cuda);
EMBER_REGISTER_KERNEL(linalg_solve_stub, kCUDA, solve_cuda);
EMBER_REGISTER_KERNEL(linalg_triangular_solve_stub, kCUDA, triangular_solve_cuda);
EMBER_REGISTER_KERNEL(linalg_lu_solve_stub, kCUDA, lu_solve_cuda);
EMBER_REGISTER_KERNEL(linalg_eigh_stub, kCUDA, eigh_cuda);
EMBER_REGISTER_KERNEL(linalg_svd_stub, kCUDA, svd_cuda);
EMBER_REGISTER_KERNEL(linalg_first_nonfinite_stub, kCUDA, first_nonfinite_cuda);
EMBER_REGISTER_KERNEL(linalg_det_stub, kCUDA, det_cuda);
EMBER_REGISTER_KERNEL(linalg_slogdet_stub, kCUDA, slogdet_cuda);
EMBER_REGISTER_KERNEL(triangle_stub, kCUDA, triangle_cuda);

namespace {
// The ops whose bodies reach only the kernels above (and device-neutral tensor ops).
[[maybe_unused]] const bool g_register_linalg = [] {
  const auto dts = {kFloat, kDouble, kComplexFloat, kComplexDouble};
  for (OpId op : {OpId::linalg_cholesky,
                  OpId::linalg_cholesky_ex,
                  OpId::linalg_lu_factor,
                  OpId::linalg_lu_factor_ex,
                  OpId::linalg_solve,
                  OpId::linalg_solve_ex,
                  OpId::linalg_inv,
                  OpId::linalg_inv_ex,
                  OpId::linalg_solve_triangular,
                  OpId::triangular_solve,
                  OpId::linalg_lu_solve,
                  OpId::linalg_det,
                  OpId::linalg_slogdet,
                  OpId::logdet,
                  OpId::linalg_eigh,
                  OpId::linalg_eigvalsh,
                  OpId::linalg_qr,
                  OpId::linalg_svd,
                  OpId::linalg_svdvals,
                  OpId::svd})
    register_kernel(kCUDA, op, dts);
  for (OpId op : {OpId::tril, OpId::triu, OpId::tril_, OpId::triu_})
    register_kernel_all_dtypes(kCUDA, op);
  return true;
}();
}  // namespace

}  // namespace ember::cuda
