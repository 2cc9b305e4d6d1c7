// Solver kernels (kernels/stubs/linalg.h): getrf + getrs, trsm, getrs from packed factors, the
// least-squares drivers (gels, gelsy, gelsd, gelss) and potrs / potri.
#include <string>

#include "kernels/cpu/linalg/lapack.h"
#include "kernels/stubs/linalg.h"

namespace ember {

EMBER_DEFINE_KERNEL(linalg_solve_stub);
EMBER_DEFINE_KERNEL(linalg_triangular_solve_stub);
EMBER_DEFINE_KERNEL(linalg_lu_solve_stub);
EMBER_DEFINE_KERNEL(linalg_lstsq_stub);
EMBER_DEFINE_KERNEL(linalg_lstsq_residuals_stub);
EMBER_DEFINE_KERNEL(linalg_cholesky_solve_stub);
EMBER_DEFINE_KERNEL(linalg_cholesky_inverse_stub);

namespace cpu {
namespace {

using namespace linalg_impl;

void solve_cpu(Tensor& LU, Tensor& X, bool transpose, std::vector<int>& infos) {
  const int64_t n = LU.size(-1), k = X.size(-1), batch = matrix_batch(LU);
  EMBER_DISPATCH_LINALG_TYPES(LU.dtype(), "linalg.solve", [&] {
    scalar_t* a = ptr<scalar_t>(LU);
    scalar_t* x = ptr<scalar_t>(X);
    for_each_matrix(batch, double(n) * n * (n + k), [&](int64_t b) {
      std::vector<lapack_int> piv(static_cast<size_t>(n));
      scalar_t* ab = a + b * n * n;
      infos[size_t(b)] = lapack::getrf(int(n), int(n), ab, int(n), piv.data());
      // Solved even when U is singular: the _ex result then holds LAPACK's inf/nan, as
      // PyTorch's.
      if (k > 0) {
        lapack::getrs(transpose ? 'T' : 'N', int(n), int(k), ab, int(n), piv.data(), x + b * n * k,
                      int(n));
      }
    });
  });
}

void triangular_solve_cpu(const Tensor& A, Tensor& X, bool upper, bool left, bool unit,
                          bool trans) {
  const int64_t n = A.size(-1), m = X.size(-2), k = X.size(-1), batch = matrix_batch(X);
  EMBER_DISPATCH_LINALG_TYPES(A.dtype(), "linalg.solve_triangular", [&] {
    const scalar_t* a = ptr<scalar_t>(A);
    scalar_t* x = ptr<scalar_t>(X);
    for_each_matrix(batch, double(n) * n * (left ? k : m), [&](int64_t b) {
      lapack::trsm(left ? CblasLeft : CblasRight, upper ? CblasUpper : CblasLower,
                   trans ? CblasTrans : CblasNoTrans, unit ? CblasUnit : CblasNonUnit, int(m),
                   int(k), a + b * n * n, int(n), x + b * m * k, int(m));
    });
  });
}

void lu_solve_cpu(const Tensor& LU, const Tensor& pivots, Tensor& X, bool conj_trans,
                  const char* op) {
  const int64_t n = LU.size(-1), k = X.size(-1), batch = matrix_batch(X);
  const int32_t* pv = ptr<int32_t>(pivots);
  for (int64_t i = 0; i < pivots.numel(); ++i) {
    EMBER_CHECK(pv[i] >= 1 && pv[i] <= n, "[", op, "] pivot ", pv[i], " out of range [1, ", n, "]");
  }
  EMBER_DISPATCH_LINALG_TYPES(LU.dtype(), op, [&] {
    const scalar_t* a = ptr<scalar_t>(LU);
    scalar_t* x = ptr<scalar_t>(X);
    for_each_matrix(batch, 2.0 * n * n * k, [&](int64_t b) {
      lapack::getrs(conj_trans ? 'C' : 'N', int(n), int(k), a + b * n * n, int(n), pv + b * n,
                    x + b * n * k, int(n));
    });
  });
}

void lstsq_cpu(Tensor& A, Tensor& X, Tensor& rank, Tensor& sv, LstsqDriver drv, double rc,
               std::vector<int>& infos) {
  const int64_t m = A.size(-2), n = A.size(-1), k = X.size(-1), mn = X.size(-2);
  const int64_t kmin = std::min(m, n), batch = matrix_batch(A);
  const bool has_rank = drv != LstsqDriver::Gels;
  const bool has_sv = drv == LstsqDriver::Gelsd || drv == LstsqDriver::Gelss;
  EMBER_DISPATCH_LINALG_TYPES(A.dtype(), "linalg.lstsq", [&] {
    using R = real_t<scalar_t>;
    scalar_t* a = ptr<scalar_t>(A);
    scalar_t* x = ptr<scalar_t>(X);
    int64_t* rk = has_rank ? ptr<int64_t>(rank) : nullptr;
    R* s = has_sv ? ptr<R>(sv) : nullptr;
    for_each_matrix(batch, 2.0 * m * n * (n + k), [&](int64_t b) {
      scalar_t* ab = a + b * m * n;
      scalar_t* xb = x + b * mn * k;
      lapack_int r = 0;
      int info = 0;
      if (drv == LstsqDriver::Gels) {
        info = lapack::gels('N', int(m), int(n), int(k), ab, int(m), xb, int(mn));
      } else if (drv == LstsqDriver::Gelsy) {
        std::vector<lapack_int> jpvt(size_t(n), 0);
        info =
            lapack::gelsy(int(m), int(n), int(k), ab, int(m), xb, int(mn), jpvt.data(), R(rc), &r);
      } else if (drv == LstsqDriver::Gelsd) {
        info =
            lapack::gelsd(int(m), int(n), int(k), ab, int(m), xb, int(mn), s + b * kmin, R(rc), &r);
      } else {
        info =
            lapack::gelss(int(m), int(n), int(k), ab, int(m), xb, int(mn), s + b * kmin, R(rc), &r);
      }
      infos[size_t(b)] = info;
      if (rk) rk[b] = r;
    });
  });
}

void lstsq_residuals_cpu(const Tensor& X, int64_t n, Tensor& residuals) {
  const int64_t m = X.size(-2), k = X.size(-1), batch = matrix_batch(X);
  EMBER_DISPATCH_LINALG_TYPES(X.dtype(), "linalg.lstsq", [&] {
    using R = real_t<scalar_t>;
    const scalar_t* x = ptr<scalar_t>(X);
    R* res = ptr<R>(residuals);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t j = 0; j < k; ++j) {
        R acc = 0;
        for (int64_t i = n; i < m; ++i) acc += std::norm(x[b * m * k + j * m + i]);
        res[b * k + j] = acc;
      }
    }
  });
}

void cholesky_solve_cpu(const Tensor& L, Tensor& X, bool upper) {
  const int64_t n = L.size(-1), k = X.size(-1), batch = matrix_batch(X);
  EMBER_DISPATCH_LINALG_TYPES(L.dtype(), "cholesky_solve", [&] {
    const scalar_t* l = ptr<scalar_t>(L);
    scalar_t* x = ptr<scalar_t>(X);
    for_each_matrix(batch, 2.0 * n * n * k, [&](int64_t b) {
      lapack::potrs(upper ? 'U' : 'L', int(n), int(k), l + b * n * n, int(n), x + b * n * k,
                    int(n));
    });
  });
}

void cholesky_inverse_cpu(Tensor& X, bool upper, std::vector<int>& infos) {
  const int64_t n = X.size(-1), batch = matrix_batch(X);
  EMBER_DISPATCH_LINALG_TYPES(X.dtype(), "cholesky_inverse", [&] {
    scalar_t* x = ptr<scalar_t>(X);
    for_each_matrix(batch, 2.0 * n * n * n, [&](int64_t b) {
      scalar_t* xb = x + b * n * n;
      infos[size_t(b)] = lapack::potri(upper ? 'U' : 'L', int(n), xb, int(n));
      // potri fills one triangle of the Hermitian inverse: mirror it.
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = j + 1; i < n; ++i) {
          if (upper) {
            xb[i + j * n] = conj_val(xb[j + i * n]);
          } else {
            xb[j + i * n] = conj_val(xb[i + j * n]);
          }
        }
      }
    });
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(linalg_solve_stub, kCPU, cpu::solve_cpu);
EMBER_REGISTER_KERNEL(linalg_triangular_solve_stub, kCPU, cpu::triangular_solve_cpu);
EMBER_REGISTER_KERNEL(linalg_lu_solve_stub, kCPU, cpu::lu_solve_cpu);
EMBER_REGISTER_KERNEL(linalg_lstsq_stub, kCPU, cpu::lstsq_cpu);
EMBER_REGISTER_KERNEL(linalg_lstsq_residuals_stub, kCPU, cpu::lstsq_residuals_cpu);
EMBER_REGISTER_KERNEL(linalg_cholesky_solve_stub, kCPU, cpu::cholesky_solve_cpu);
EMBER_REGISTER_KERNEL(linalg_cholesky_inverse_stub, kCPU, cpu::cholesky_inverse_cpu);

}  // namespace ember
