// Kernels of the functions of matrices (kernels/stubs/linalg.h): det / slogdet from getrf, the
// thresholded scaling of pinv, matrix_rank's count, the matrix norms and cond's masking.
#include <limits>

#include "kernels/cpu/linalg/lapack.h"
#include "kernels/stubs/linalg.h"

namespace ember {

EMBER_DEFINE_KERNEL(linalg_det_stub);
EMBER_DEFINE_KERNEL(linalg_slogdet_stub);
EMBER_DEFINE_KERNEL(linalg_pinv_scale_stub);
EMBER_DEFINE_KERNEL(linalg_matrix_rank_stub);
EMBER_DEFINE_KERNEL(linalg_matrix_norm_stub);
EMBER_DEFINE_KERNEL(linalg_zero_failed_stub);

namespace cpu {
namespace {

using namespace linalg_impl;

// The product of U's diagonal (not sign * exp(log|det|)): exact for small integer matrices.
void det_cpu(Tensor& LU, Tensor& out) {
  const int64_t n = LU.size(-1), batch = matrix_batch(LU);
  EMBER_DISPATCH_LINALG_TYPES(LU.dtype(), "linalg.det", [&] {
    scalar_t* a = ptr<scalar_t>(LU);
    scalar_t* o = ptr<scalar_t>(out);
    for_each_matrix(batch, double(n) * n * n, [&](int64_t b) {
      scalar_t d(1);
      if (n > 0) {
        std::vector<lapack_int> piv(static_cast<size_t>(n));
        scalar_t* ab = a + b * n * n;
        lapack::getrf(int(n), int(n), ab, int(n), piv.data());
        for (int64_t i = 0; i < n; ++i) {
          d *= ab[i + i * n];
          if (piv[size_t(i)] != i + 1) d = -d;
        }
      }
      o[b] = d;
    });
  });
}

void slogdet_cpu(Tensor& LU, Tensor& sign, Tensor& logabs) {
  const int64_t n = LU.size(-1), batch = matrix_batch(LU);
  EMBER_DISPATCH_LINALG_TYPES(LU.dtype(), "linalg.slogdet", [&] {
    using R = real_t<scalar_t>;
    scalar_t* a = ptr<scalar_t>(LU);
    scalar_t* sg = ptr<scalar_t>(sign);
    R* la = ptr<R>(logabs);
    for_each_matrix(batch, double(n) * n * n, [&](int64_t b) {
      scalar_t s(1);
      R l = 0;
      if (n > 0) {
        std::vector<lapack_int> piv(static_cast<size_t>(n));
        scalar_t* ab = a + b * n * n;
        lapack::getrf(int(n), int(n), ab, int(n), piv.data());
        for (int64_t i = 0; i < n; ++i) {
          const scalar_t d = ab[i + i * n];
          const R ad = std::abs(d);
          if (piv[size_t(i)] != i + 1) s = -s;
          if (ad == 0) {
            s = scalar_t(0);
            l = -std::numeric_limits<R>::infinity();
          } else if (s != scalar_t(0)) {
            s *= d / ad;
            l += std::log(ad);
          }
        }
      }
      sg[b] = s;
      la[b] = l;
    });
  });
}

void pinv_scale_cpu(Tensor& X, const Tensor& vals, double at, double rt, bool hermitian) {
  const int64_t rows = X.size(-2), cols = X.size(-1), batch = matrix_batch(X);
  EMBER_DISPATCH_LINALG_TYPES(X.dtype(), "linalg.pinv", [&] {
    using R = real_t<scalar_t>;
    if (hermitian) {
      // The columns of the eigenvectors, by 1 / eigenvalue.
      const int64_t n = rows, k = cols;
      const R* wp = ptr<R>(vals);
      scalar_t* y = ptr<scalar_t>(X);
      for (int64_t b = 0; b < batch; ++b) {
        R mx = 0;
        for (int64_t i = 0; i < k; ++i) mx = std::max(mx, std::abs(wp[b * k + i]));
        const double tol = std::max(at, rt * double(mx));
        for (int64_t j = 0; j < k; ++j) {
          const R wv = wp[b * k + j];
          const R f = double(std::abs(wv)) > tol ? R(1) / wv : R(0);
          for (int64_t i = 0; i < n; ++i) y[b * n * k + j * n + i] *= f;
        }
      }
      return;
    }
    // The rows of Vh (k x n column-major), by 1 / singular value.
    const int64_t k = rows, n = cols;
    const R* s = ptr<R>(vals);
    scalar_t* v = ptr<scalar_t>(X);
    for (int64_t b = 0; b < batch; ++b) {
      const double tol = std::max(at, rt * double(s[b * k]));
      for (int64_t i = 0; i < k; ++i) {
        const R sv = s[b * k + i];
        const R f = double(sv) > tol ? R(1) / sv : R(0);
        for (int64_t j = 0; j < n; ++j) v[b * k * n + j * k + i] *= f;
      }
    }
  });
}

void matrix_rank_cpu(const Tensor& S, Tensor& out, double at, double rt) {
  const int64_t k = S.size(-1), batch = out.numel();
  const double* s = ptr<double>(S);
  int64_t* o = ptr<int64_t>(out);
  for (int64_t b = 0; b < batch; ++b) {
    double mx = 0;
    for (int64_t i = 0; i < k; ++i) mx = std::max(mx, std::abs(s[b * k + i]));
    const double tol = std::max(at, rt * mx);
    int64_t r = 0;
    for (int64_t i = 0; i < k; ++i) r += std::abs(s[b * k + i]) > tol;
    o[b] = r;
  }
}

void matrix_norm_cpu(const Tensor& x, Tensor& out, MatrixNormKind kind) {
  using NormKind = MatrixNormKind;
  const int64_t batch = out.numel();
  double* o = ptr<double>(out);
  if (kind == NormKind::Nuc || kind == NormKind::Two || kind == NormKind::NegTwo) {
    const double* s = ptr<double>(x);
    const int64_t k = x.size(-1);
    for (int64_t b = 0; b < batch; ++b) {
      const double* sb = s + b * k;
      if (kind == NormKind::Nuc) {
        double acc = 0;
        for (int64_t i = 0; i < k; ++i) acc += sb[i];
        o[b] = acc;
      } else {
        o[b] = kind == NormKind::Two ? sb[0] : sb[k - 1];
      }
    }
    return;
  }
  const int64_t m = x.size(-2), n = x.size(-1);
  const double* xp = ptr<double>(x);
  parallel_for(0, batch, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, m * n)),
               [&](int64_t b0, int64_t b1) {
                 std::vector<double> acc;
                 for (int64_t b = b0; b < b1; ++b) {
                   const double* xb = xp + b * m * n;
                   if (kind == NormKind::Fro) {
                     // Scaled sum of squares: no overflow for large entries.
                     double scale = 0, ssq = 1;
                     for (int64_t i = 0; i < m * n; ++i) {
                       const double v = xb[i];
                       if (v == 0) continue;
                       if (std::isnan(v) || std::isinf(v)) {
                         scale = v + scale * 0;
                         ssq = 1;
                         if (std::isnan(v)) break;
                         continue;
                       }
                       if (scale < v) {
                         ssq = 1 + ssq * (scale / v) * (scale / v);
                         scale = v;
                       } else {
                         ssq += (v / scale) * (v / scale);
                       }
                     }
                     o[b] = std::isinf(scale) || std::isnan(scale) ? scale : scale * std::sqrt(ssq);
                     continue;
                   }
                   const bool by_cols = kind == NormKind::One || kind == NormKind::NegOne;
                   const bool take_max = kind == NormKind::One || kind == NormKind::Inf;
                   const int64_t len = by_cols ? n : m;
                   acc.assign(size_t(len), 0.0);
                   for (int64_t i = 0; i < m; ++i) {
                     for (int64_t j = 0; j < n; ++j) acc[size_t(by_cols ? j : i)] += xb[i * n + j];
                   }
                   double r = acc[0];
                   for (int64_t i = 1; i < len; ++i) {
                     const double v = acc[size_t(i)];
                     if (std::isnan(v) || std::isnan(r)) {
                       r = NAN;
                     } else {
                       r = take_max ? std::max(r, v) : std::min(r, v);
                     }
                   }
                   o[b] = r;
                 }
               });
}

void zero_failed_cpu(Tensor& X, const Tensor& info) {
  const int64_t n = X.size(-1), batch = info.numel();
  const int32_t* ip = ptr<int32_t>(info);
  EMBER_DISPATCH_LINALG_TYPES(X.dtype(), "linalg.cond", [&] {
    scalar_t* x = ptr<scalar_t>(X);
    for (int64_t b = 0; b < batch; ++b) {
      if (ip[b] > 0) std::fill(x + b * n * n, x + (b + 1) * n * n, scalar_t(0));
    }
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(linalg_det_stub, kCPU, cpu::det_cpu);
EMBER_REGISTER_KERNEL(linalg_slogdet_stub, kCPU, cpu::slogdet_cpu);
EMBER_REGISTER_KERNEL(linalg_pinv_scale_stub, kCPU, cpu::pinv_scale_cpu);
EMBER_REGISTER_KERNEL(linalg_matrix_rank_stub, kCPU, cpu::matrix_rank_cpu);
EMBER_REGISTER_KERNEL(linalg_matrix_norm_stub, kCPU, cpu::matrix_norm_cpu);
EMBER_REGISTER_KERNEL(linalg_zero_failed_stub, kCPU, cpu::zero_failed_cpu);

}  // namespace ember
