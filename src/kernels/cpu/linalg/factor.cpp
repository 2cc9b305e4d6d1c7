// Factorization kernels (kernels/stubs/linalg.h): Cholesky (potrf), LU (getrf) and its pivots
// as permutations, QR (geqrf + orgqr/ungqr) and householder_product (orgqr/ungqr).
#include "kernels/cpu/linalg/lapack.h"
#include "kernels/stubs/linalg.h"

namespace ember {

EMBER_DEFINE_KERNEL(linalg_cholesky_stub);
EMBER_DEFINE_KERNEL(linalg_lu_factor_stub);
EMBER_DEFINE_KERNEL(linalg_qr_stub);
EMBER_DEFINE_KERNEL(linalg_householder_product_stub);
EMBER_DEFINE_KERNEL(linalg_lu_pivots_stub);

namespace cpu {
namespace {

using namespace linalg_impl;

void cholesky_cpu(Tensor& L, bool upper, std::vector<int>& infos) {
  const int64_t n = L.size(-1), batch = matrix_batch(L);
  EMBER_DISPATCH_LINALG_TYPES(L.dtype(), "linalg.cholesky", [&] {
    scalar_t* a = ptr<scalar_t>(L);
    for_each_matrix(batch, double(n) * n * n / 3, [&](int64_t b) {
      scalar_t* m = a + b * n * n;
      infos[size_t(b)] = lapack::potrf(upper ? 'U' : 'L', int(n), m, int(n));
      zero_triangle(m, n, n, n, /*lower=*/upper);
    });
  });
}

void lu_factor_cpu(Tensor& LU, Tensor& pivots, std::vector<int>& infos) {
  const int64_t m = LU.size(-2), n = LU.size(-1), k = std::min(m, n), batch = matrix_batch(LU);
  EMBER_DISPATCH_LINALG_TYPES(LU.dtype(), "linalg.lu_factor", [&] {
    scalar_t* a = ptr<scalar_t>(LU);
    lapack_int* p = ptr<lapack_int>(pivots);
    for_each_matrix(batch, double(m) * n * k, [&](int64_t b) {
      infos[size_t(b)] = lapack::getrf(int(m), int(n), a + b * m * n, int(m), p + b * k);
    });
  });
}

void qr_cpu(Tensor& W, Tensor& R, Tensor& Q, int64_t n, bool compute_q) {
  const int64_t m = W.size(-2), wcols = W.size(-1), k = std::min(m, n), batch = matrix_batch(W);
  const int64_t rrows = R.size(-2), qcols = compute_q ? Q.size(-1) : 0;
  EMBER_DISPATCH_LINALG_TYPES(W.dtype(), "linalg.qr", [&] {
    scalar_t* w = ptr<scalar_t>(W);
    scalar_t* r = ptr<scalar_t>(R);
    scalar_t* q = compute_q ? ptr<scalar_t>(Q) : nullptr;
    for_each_matrix(batch, 2.0 * m * n * k, [&](int64_t b) {
      scalar_t* wb = w + b * m * wcols;
      std::vector<scalar_t> tau(static_cast<size_t>(k));
      lapack::geqrf(int(m), int(n), wb, int(m), tau.data());
      scalar_t* rb = r + b * rrows * n;
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = 0; i <= std::min(j, rrows - 1); ++i) rb[i + j * rrows] = wb[i + j * m];
      }
      if (q) {
        lapack::orgqr(int(m), int(qcols), int(k), wb, int(m), tau.data());
        std::copy(wb, wb + m * qcols, q + b * m * qcols);
      }
    });
  });
}

void householder_product_cpu(Tensor& Q, const Tensor& tau) {
  const int64_t m = Q.size(-2), n = Q.size(-1), k = tau.size(-1), batch = matrix_batch(Q);
  EMBER_DISPATCH_LINALG_TYPES(Q.dtype(), "linalg.householder_product", [&] {
    scalar_t* q = ptr<scalar_t>(Q);
    const scalar_t* t = ptr<scalar_t>(tau);
    for_each_matrix(batch, 2.0 * m * n * k, [&](int64_t b) {
      lapack::orgqr(int(m), int(n), int(k), q + b * m * n, int(m), t + b * k);
    });
  });
}

void lu_pivots_cpu(const Tensor& pivots, Tensor& P, const char* op) {
  const int64_t m = P.size(-1), k = pivots.size(-1), batch = matrix_batch(P);
  const int32_t* pv = ptr<int32_t>(pivots);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < k; ++i) {
      const int32_t p = pv[b * k + i];
      EMBER_CHECK(p >= 1 && p <= m, "[", op, "] pivot ", p, " out of range [1, ", m, "]");
    }
  }
  EMBER_DISPATCH_ALL_TYPES(P.dtype(), op, [&] {
    scalar_t* pm = ptr<scalar_t>(P);
    std::vector<int64_t> perm(static_cast<size_t>(m));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < m; ++i) perm[size_t(i)] = i;
      for (int64_t i = 0; i < k; ++i) std::swap(perm[size_t(i)], perm[size_t(pv[b * k + i] - 1)]);
      // A = P L U: row i of L U is row perm[i] of A, so P[perm[i], i] = 1.
      for (int64_t i = 0; i < m; ++i) pm[b * m * m + perm[size_t(i)] * m + i] = scalar_t(1);
    }
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(linalg_cholesky_stub, kCPU, cpu::cholesky_cpu);
EMBER_REGISTER_KERNEL(linalg_lu_factor_stub, kCPU, cpu::lu_factor_cpu);
EMBER_REGISTER_KERNEL(linalg_qr_stub, kCPU, cpu::qr_cpu);
EMBER_REGISTER_KERNEL(linalg_householder_product_stub, kCPU, cpu::householder_product_cpu);
EMBER_REGISTER_KERNEL(linalg_lu_pivots_stub, kCPU, cpu::lu_pivots_cpu);

}  // namespace ember
