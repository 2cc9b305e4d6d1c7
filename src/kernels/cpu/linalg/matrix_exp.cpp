// The matrix exponential (kernels/stubs/linalg.h): Padé scaling and squaring.
#include <limits>

#include "kernels/cpu/linalg/lapack.h"
#include "kernels/stubs/linalg.h"

namespace ember {

EMBER_DEFINE_KERNEL(linalg_matrix_exp_stub);

namespace cpu {
namespace {

using namespace linalg_impl;

// Note [matrix_exp]
// Scaling and squaring with diagonal Padé approximants (Higham, "The scaling and squaring method
// for the matrix exponential revisited", 2005): the degree m in {3, 5, 7, 9, 13} (double) or
// {3, 5, 7} (single) is the smallest whose θ_m bounds the 1-norm; larger norms are scaled by
// 2^-s into θ_max and the result squared s times. The rational function is (V - U)^-1 (V + U)
// with U holding the odd and V the even powers.

template <class T>
struct PadeWork {
  int n;
  std::vector<T> A, A2, A4, A6, A8, U, V, tmp;
  explicit PadeWork(int n_) : n(n_) {
    const size_t s = size_t(n) * size_t(n);
    for (auto* v : {&A, &A2, &A4, &A6, &A8, &U, &V, &tmp}) v->assign(s, T(0));
  }
  void mul(const std::vector<T>& x, const std::vector<T>& y, std::vector<T>& z) {
    lapack::gemm(CblasNoTrans, CblasNoTrans, n, n, n, T(1), x.data(), n, y.data(), n, T(0),
                 z.data(), n);
  }
};

template <class T>
void matrix_exp_one(T* a, int n) {
  using R = real_t<T>;
  constexpr bool single = std::is_same_v<R, float>;
  PadeWork<T> w(n);
  const size_t nn = size_t(n) * size_t(n);
  std::copy(a, a + nn, w.A.begin());
  double norm1 = 0;
  for (int j = 0; j < n; ++j) {
    double c = 0;
    for (int i = 0; i < n; ++i) c += double(std::abs(a[i + j * n]));
    norm1 = std::max(norm1, c);
  }
  if (std::isnan(norm1)) {
    std::fill(a, a + nn, T(std::numeric_limits<R>::quiet_NaN()));
    return;
  }
  static const double b3[] = {120, 60, 12, 1};
  static const double b5[] = {30240, 15120, 3360, 420, 30, 1};
  static const double b7[] = {17297280, 8648640, 1995840, 277200, 25200, 1512, 56, 1};
  static const double b9[] = {17643225600., 8821612800., 2075673600., 302702400., 30270240.,
                              2162160.,     110880.,     3960.,       90.,        1.};
  static const double b13[] = {64764752532480000.,
                               32382376266240000.,
                               7771770303897600.,
                               1187353796428800.,
                               129060195264000.,
                               10559470521600.,
                               670442572800.,
                               33522128640.,
                               1323241920.,
                               40840800.,
                               960960.,
                               16380.,
                               182.,
                               1.};
  const double theta_d[] = {1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1,
                            2.097847961257068e0, 5.371920351148152e0};
  const double theta_s[] = {4.258730016922831e-1, 1.880152677804762e0, 3.925724783138660e0};
  const int degrees[] = {3, 5, 7, 9, 13};
  const int n_deg = single ? 3 : 5;
  const double* theta = single ? theta_s : theta_d;
  int deg = -1;
  for (int i = 0; i + 1 < n_deg; ++i) {
    if (norm1 <= theta[i]) {
      deg = degrees[i];
      break;
    }
  }
  int s = 0;
  if (deg < 0) {
    deg = degrees[n_deg - 1];
    const double theta_max = theta[n_deg - 1];
    if (norm1 > theta_max) s = int(std::ceil(std::log2(norm1 / theta_max)));
    if (s > 0) {
      const R scale = R(std::ldexp(1.0, -s));
      for (auto& v : w.A) v *= scale;
    }
  }
  auto identity_add = [&](std::vector<T>& m, double c) {
    for (int i = 0; i < n; ++i) m[size_t(i) * size_t(n) + size_t(i)] += T(R(c));
  };
  auto axpy = [&](std::vector<T>& y, double c, const std::vector<T>& x) {
    for (size_t i = 0; i < nn; ++i) y[i] += T(R(c)) * x[i];
  };
  w.mul(w.A, w.A, w.A2);
  std::fill(w.U.begin(), w.U.end(), T(0));
  std::fill(w.V.begin(), w.V.end(), T(0));
  if (deg == 13) {
    w.mul(w.A2, w.A2, w.A4);
    w.mul(w.A4, w.A2, w.A6);
    const double* b = b13;
    // U = A [A6 (b13 A6 + b11 A4 + b9 A2) + b7 A6 + b5 A4 + b3 A2 + b1 I]
    std::fill(w.tmp.begin(), w.tmp.end(), T(0));
    axpy(w.tmp, b[13], w.A6);
    axpy(w.tmp, b[11], w.A4);
    axpy(w.tmp, b[9], w.A2);
    w.mul(w.A6, w.tmp, w.A8);  // A8 holds the product here
    axpy(w.A8, b[7], w.A6);
    axpy(w.A8, b[5], w.A4);
    axpy(w.A8, b[3], w.A2);
    identity_add(w.A8, b[1]);
    w.mul(w.A, w.A8, w.U);
    // V = A6 (b12 A6 + b10 A4 + b8 A2) + b6 A6 + b4 A4 + b2 A2 + b0 I
    std::fill(w.tmp.begin(), w.tmp.end(), T(0));
    axpy(w.tmp, b[12], w.A6);
    axpy(w.tmp, b[10], w.A4);
    axpy(w.tmp, b[8], w.A2);
    w.mul(w.A6, w.tmp, w.V);
    axpy(w.V, b[6], w.A6);
    axpy(w.V, b[4], w.A4);
    axpy(w.V, b[2], w.A2);
    identity_add(w.V, b[0]);
  } else {
    const double* b = deg == 3 ? b3 : deg == 5 ? b5 : deg == 7 ? b7 : b9;
    std::vector<const std::vector<T>*> pw = {nullptr, &w.A2};
    if (deg >= 5) {
      w.mul(w.A2, w.A2, w.A4);
      pw.push_back(&w.A4);
    }
    if (deg >= 7) {
      w.mul(w.A4, w.A2, w.A6);
      pw.push_back(&w.A6);
    }
    if (deg >= 9) {
      w.mul(w.A6, w.A2, w.A8);
      pw.push_back(&w.A8);
    }
    // tmp = sum_j b[2j+1] A^(2j); V = sum_j b[2j] A^(2j)
    std::fill(w.tmp.begin(), w.tmp.end(), T(0));
    identity_add(w.tmp, b[1]);
    identity_add(w.V, b[0]);
    for (size_t j = 1; j < pw.size(); ++j) {
      axpy(w.tmp, b[2 * j + 1], *pw[j]);
      axpy(w.V, b[2 * j], *pw[j]);
    }
    w.mul(w.A, w.tmp, w.U);
  }
  // Solve (V - U) X = (V + U).
  for (size_t i = 0; i < nn; ++i) {
    const T u = w.U[i], v = w.V[i];
    w.tmp[i] = v - u;
    w.A[i] = v + u;
  }
  std::vector<lapack_int> piv(static_cast<size_t>(n));
  lapack::getrf(n, n, w.tmp.data(), n, piv.data());
  lapack::getrs('N', n, n, w.tmp.data(), n, piv.data(), w.A.data(), n);
  for (int i = 0; i < s; ++i) {
    w.mul(w.A, w.A, w.A2);
    std::swap(w.A, w.A2);
  }
  std::copy(w.A.begin(), w.A.end(), a);
}

void matrix_exp_cpu(Tensor& X) {
  const int64_t n = X.size(-1), batch = matrix_batch(X);
  EMBER_DISPATCH_LINALG_TYPES(X.dtype(), "linalg.matrix_exp", [&] {
    scalar_t* x = ptr<scalar_t>(X);
    for_each_matrix(batch, 20.0 * n * n * n,
                    [&](int64_t b) { matrix_exp_one<scalar_t>(x + b * n * n, int(n)); });
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(linalg_matrix_exp_stub, kCPU, cpu::matrix_exp_cpu);

}  // namespace ember
