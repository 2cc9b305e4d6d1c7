// Spectral decomposition kernels (kernels/stubs/linalg.h): gesdd, syevd / heevd and geev.
#include "kernels/cpu/linalg/lapack.h"
#include "kernels/stubs/linalg.h"

namespace ember {

EMBER_DEFINE_KERNEL(linalg_svd_stub);
EMBER_DEFINE_KERNEL(linalg_eigh_stub);
EMBER_DEFINE_KERNEL(linalg_eig_stub);

namespace cpu {
namespace {

using namespace linalg_impl;

void svd_cpu(Tensor& W, Tensor& S, Tensor& U, Tensor& Vh, bool uv, bool full,
             std::vector<int>& infos) {
  const int64_t m = W.size(-2), n = W.size(-1), k = std::min(m, n), batch = matrix_batch(W);
  const int64_t ucols = full ? m : k, vrows = full ? n : k;
  EMBER_DISPATCH_LINALG_TYPES(W.dtype(), "linalg.svd", [&] {
    using R = real_t<scalar_t>;
    scalar_t* w = ptr<scalar_t>(W);
    R* s = ptr<R>(S);
    scalar_t* u = uv ? ptr<scalar_t>(U) : nullptr;
    scalar_t* v = uv ? ptr<scalar_t>(Vh) : nullptr;
    for_each_matrix(batch, 4.0 * m * n * k, [&](int64_t b) {
      scalar_t dummy(0);
      infos[size_t(b)] = lapack::gesdd(uv ? (full ? 'A' : 'S') : 'N', int(m), int(n), w + b * m * n,
                                       int(m), s + b * k, uv ? u + b * m * ucols : &dummy, int(m),
                                       uv ? v + b * vrows * n : &dummy, int(uv ? vrows : 1));
    });
  });
}

void eigh_cpu(Tensor& V, Tensor& w, bool vectors, bool upper, std::vector<int>& infos) {
  const int64_t n = V.size(-1), batch = matrix_batch(V);
  const char ul = upper ? 'U' : 'L';
  EMBER_DISPATCH_LINALG_TYPES(V.dtype(), "linalg.eigh", [&] {
    using R = real_t<scalar_t>;
    scalar_t* v = ptr<scalar_t>(V);
    R* wp = ptr<R>(w);
    for_each_matrix(batch, 9.0 * n * n * n, [&](int64_t b) {
      infos[size_t(b)] =
          lapack::syevd(vectors ? 'V' : 'N', ul, int(n), v + b * n * n, int(n), wp + b * n);
    });
  });
}

// geev: the real routine returns conjugate pairs as (re, im) columns; complex is direct.
template <class T>
int geev(bool vectors, int n, T* a, std::complex<real_t<T>>* w, std::complex<real_t<T>>* v) {
  using R = real_t<T>;
  using C = std::complex<R>;
  const char jobvr = vectors ? 'V' : 'N';
  if constexpr (is_complex_v<T>) {
    C dummy(0);
    if constexpr (std::is_same_v<R, float>) {
      return LAPACKE_cgeev(LAPACK_COL_MAJOR, 'N', jobvr, n, a, n, w, &dummy, 1,
                           vectors ? v : &dummy, vectors ? n : 1);
    } else {
      return LAPACKE_zgeev(LAPACK_COL_MAJOR, 'N', jobvr, n, a, n, w, &dummy, 1,
                           vectors ? v : &dummy, vectors ? n : 1);
    }
  } else {
    std::vector<R> wr(static_cast<size_t>(n)), wi(static_cast<size_t>(n));
    std::vector<R> vr(vectors ? static_cast<size_t>(n) * size_t(n) : 1);
    R dummy = 0;
    int info;
    if constexpr (std::is_same_v<R, float>) {
      info = LAPACKE_sgeev(LAPACK_COL_MAJOR, 'N', jobvr, n, a, n, wr.data(), wi.data(), &dummy, 1,
                           vr.data(), vectors ? n : 1);
    } else {
      info = LAPACKE_dgeev(LAPACK_COL_MAJOR, 'N', jobvr, n, a, n, wr.data(), wi.data(), &dummy, 1,
                           vr.data(), vectors ? n : 1);
    }
    if (info != 0) return info;
    for (int j = 0; j < n; ++j) w[j] = C(wr[size_t(j)], wi[size_t(j)]);
    if (vectors) {
      for (int j = 0; j < n; ++j) {
        if (wi[size_t(j)] != 0 && j + 1 < n) {
          for (int i = 0; i < n; ++i) {
            const R re = vr[size_t(i + j * n)], im = vr[size_t(i + (j + 1) * n)];
            v[i + j * n] = C(re, im);
            v[i + (j + 1) * n] = C(re, -im);
          }
          ++j;
        } else {
          for (int i = 0; i < n; ++i) v[i + j * n] = C(vr[size_t(i + j * n)], 0);
        }
      }
    }
    return 0;
  }
}

void eig_cpu(Tensor& W, Tensor& w, Tensor& V, bool vectors, std::vector<int>& infos) {
  const int64_t n = W.size(-1), batch = matrix_batch(W);
  EMBER_DISPATCH_LINALG_TYPES(W.dtype(), "linalg.eig", [&] {
    using C = std::complex<real_t<scalar_t>>;
    scalar_t* a = ptr<scalar_t>(W);
    C* wp = ptr<C>(w);
    C* vp = vectors ? ptr<C>(V) : nullptr;
    for_each_matrix(batch, 10.0 * n * n * n, [&](int64_t b) {
      infos[size_t(b)] = geev<scalar_t>(vectors, int(n), a + b * n * n, wp + b * n,
                                        vectors ? vp + b * n * n : nullptr);
    });
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(linalg_svd_stub, kCPU, cpu::svd_cpu);
EMBER_REGISTER_KERNEL(linalg_eigh_stub, kCPU, cpu::eigh_cpu);
EMBER_REGISTER_KERNEL(linalg_eig_stub, kCPU, cpu::eig_cpu);

}  // namespace ember
