// Fused normalization loops (norm_cpu.h). The row primitives are compiled twice with GCC's
// target_clones (AVX2+FMA and baseline) and picked by the loader, so this file needs no entry in
// the per-capability kernel registry. Reductions use `omp simd` so float data accumulates in
// double vector lanes without -ffast-math; the statistics of a channel are shifted by its first
// element, which keeps the one-pass variance accurate when |mean| >> std.
#include "kernels/cpu/nn/norm_cpu.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/parallel_internal.h"

namespace ember::cpu {

namespace {

#define EMBER_NORM_CLONES __attribute__((target_clones("arch=haswell", "default")))

// ---- row primitives: one definition per dtype, each cloned per ISA ----
#define EMBER_NORM_ROWS(T)                                                                         \
  EMBER_NORM_CLONES void row_shift_sums(const T* x, int64_t n, double k, double* s, double* q) {   \
    double a = 0, b = 0;                                                                           \
    _Pragma("omp simd reduction(+ : a, b)") for (int64_t i = 0; i < n; ++i) {                      \
      const double d = double(x[i]) - k;                                                           \
      a += d;                                                                                      \
      b += d * d;                                                                                  \
    }                                                                                              \
    *s += a;                                                                                       \
    *q += b;                                                                                       \
  }                                                                                                \
  EMBER_NORM_CLONES void row_affine(const T* x, T* y, int64_t n, T a, T b) {                       \
    _Pragma("omp simd") for (int64_t i = 0; i < n; ++i) y[i] = x[i] * a + b;                       \
  }                                                                                                \
  EMBER_NORM_CLONES void row_grad_sums(const T* g, const T* x, int64_t n, double m, double* sg,    \
                                       double* sgx) {                                              \
    double a = 0, b = 0;                                                                           \
    _Pragma("omp simd reduction(+ : a, b)") for (int64_t i = 0; i < n; ++i) {                      \
      const double gi = double(g[i]);                                                              \
      a += gi;                                                                                     \
      b += gi * (double(x[i]) - m);                                                                \
    }                                                                                              \
    *sg += a;                                                                                      \
    *sgx += b;                                                                                     \
  }                                                                                                \
  EMBER_NORM_CLONES void row_bwd(const T* g, const T* x, T* dx, int64_t n, T a, T b, T d) {        \
    _Pragma("omp simd") for (int64_t i = 0; i < n; ++i) dx[i] = g[i] * a + x[i] * b + d;           \
  }                                                                                                \
  EMBER_NORM_CLONES double row_sum(const T* x, int64_t n) {                                        \
    double a = 0;                                                                                  \
    _Pragma("omp simd reduction(+ : a)") for (int64_t i = 0; i < n; ++i) a += double(x[i]);        \
    return a;                                                                                      \
  }                                                                                                \
  EMBER_NORM_CLONES double row_sqdev(const T* x, int64_t n, double m) {                            \
    double a = 0;                                                                                  \
    _Pragma("omp simd reduction(+ : a)") for (int64_t i = 0; i < n; ++i) {                         \
      const double d = double(x[i]) - m;                                                           \
      a += d * d;                                                                                  \
    }                                                                                              \
    return a;                                                                                      \
  }                                                                                                \
  EMBER_NORM_CLONES void row_norm_affine(const T* x, const T* w, const T* b, T* y, int64_t n, T m, \
                                         T r) {                                                    \
    if (w && b) {                                                                                  \
      _Pragma("omp simd") for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) * r * w[i] + b[i];     \
    } else if (w) {                                                                                \
      _Pragma("omp simd") for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) * r * w[i];            \
    } else if (b) {                                                                                \
      _Pragma("omp simd") for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) * r + b[i];            \
    } else {                                                                                       \
      _Pragma("omp simd") for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) * r;                   \
    }                                                                                              \
  }                                                                                                \
  /* sums of g*w and g*w*(x - m) over a row (w may be null) */                                     \
  EMBER_NORM_CLONES void row_ln_sums(const T* g, const T* x, const T* w, int64_t n, double m,      \
                                     double* s1, double* s2) {                                     \
    double a = 0, b = 0;                                                                           \
    if (w) {                                                                                       \
      _Pragma("omp simd reduction(+ : a, b)") for (int64_t i = 0; i < n; ++i) {                    \
        const double gw = double(g[i]) * double(w[i]);                                             \
        a += gw;                                                                                   \
        b += gw * (double(x[i]) - m);                                                              \
      }                                                                                            \
    } else {                                                                                       \
      _Pragma("omp simd reduction(+ : a, b)") for (int64_t i = 0; i < n; ++i) {                    \
        const double gw = double(g[i]);                                                            \
        a += gw;                                                                                   \
        b += gw * (double(x[i]) - m);                                                              \
      }                                                                                            \
    }                                                                                              \
    *s1 = a;                                                                                       \
    *s2 = b;                                                                                       \
  }                                                                                                \
  /* dx = r * (g*w - c1) - (x - m) * c2 */                                                         \
  EMBER_NORM_CLONES void row_ln_dx(const T* g, const T* x, const T* w, T* dx, int64_t n, T m, T r, \
                                   T c1, T c2) {                                                   \
    if (w) {                                                                                       \
      _Pragma("omp simd") for (int64_t i = 0; i < n; ++i) dx[i] =                                  \
          r * (g[i] * w[i] - c1) - (x[i] - m) * c2;                                                \
    } else {                                                                                       \
      _Pragma("omp simd") for (int64_t i = 0; i < n; ++i) dx[i] =                                  \
          r * (g[i] - c1) - (x[i] - m) * c2;                                                       \
    }                                                                                              \
  }                                                                                                \
  /* dw += g * (x - m) * r, db += g (double accumulators) */                                       \
  EMBER_NORM_CLONES void row_ln_wb(const T* g, const T* x, int64_t n, double m, double r,          \
                                   double* dw, double* db) {                                       \
    if (dw) {                                                                                      \
      _Pragma("omp simd") for (int64_t i = 0; i < n; ++i) dw[i] +=                                 \
          double(g[i]) * (double(x[i]) - m) * r;                                                   \
    }                                                                                              \
    if (db) {                                                                                      \
      _Pragma("omp simd") for (int64_t i = 0; i < n; ++i) db[i] += double(g[i]);                   \
    }                                                                                              \
  }

EMBER_NORM_ROWS(float)
EMBER_NORM_ROWS(double)
#undef EMBER_NORM_ROWS

constexpr int64_t kGrain = 32768;

int num_threads() { return std::max(1, detail::g_num_threads); }

}  // namespace

// ---- batch norm ----

template <class T>
void bn_stats(const T* x, int64_t N, int64_t C, int64_t S, double* mean, double* var) {
  const double M = double(N * S);
  parallel_for(0, C, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, N * S)),
               [&](int64_t c0, int64_t c1) {
                 for (int64_t c = c0; c < c1; ++c) {
                   if (N * S == 0) {
                     mean[c] = var[c] = std::nan("");
                     continue;
                   }
                   const double k = double(x[c * S]);
                   double s = 0, q = 0;
                   for (int64_t n = 0; n < N; ++n)
                     row_shift_sums(x + (n * C + c) * S, S, k, &s, &q);
                   const double d = s / M;
                   mean[c] = k + d;
                   var[c] = std::max(0.0, q / M - d * d);
                 }
               });
}

template <class T>
void bn_apply(const T* x, T* y, int64_t N, int64_t C, int64_t S, const double* scale,
              const double* shift) {
  parallel_for(0, N * C, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, S)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   const int64_t c = r % C;
                   row_affine(x + r * S, y + r * S, S, T(scale[c]), T(shift[c]));
                 }
               });
}

template <class T>
void bn_grad_sums(const T* g, const T* x, int64_t N, int64_t C, int64_t S, const double* mean,
                  double* sum_g, double* sum_gx) {
  parallel_for(0, C, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, N * S)),
               [&](int64_t c0, int64_t c1) {
                 for (int64_t c = c0; c < c1; ++c) {
                   double a = 0, b = 0;
                   for (int64_t n = 0; n < N; ++n) {
                     const int64_t off = (n * C + c) * S;
                     row_grad_sums(g + off, x + off, S, mean[c], &a, &b);
                   }
                   sum_g[c] = a;
                   sum_gx[c] = b;
                 }
               });
}

template <class T>
void bn_backward_apply(const T* g, const T* x, T* dx, int64_t N, int64_t C, int64_t S,
                       const double* a, const double* b, const double* d) {
  parallel_for(0, N * C, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, S)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   const int64_t c = r % C;
                   row_bwd(g + r * S, x + r * S, dx + r * S, S, T(a[c]), T(b[c]), T(d[c]));
                 }
               });
}

// ---- layer norm ----

template <class T>
void ln_forward(const T* x, const T* w, const T* b, T* y, int64_t M, int64_t D, double eps, T* mean,
                T* rstd) {
  parallel_for(0, M, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, D)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   const T* xr = x + r * D;
                   // Two passes over a row that stays in cache: exact mean, then deviations.
                   const double m = D ? row_sum(xr, D) / double(D) : std::nan("");
                   const double v = D ? row_sqdev(xr, D, m) / double(D) : std::nan("");
                   const double rs = 1.0 / std::sqrt(v + eps);
                   mean[r] = T(m);
                   rstd[r] = T(rs);
                   row_norm_affine(xr, w, b, y + r * D, D, T(m), T(rs));
                 }
               });
}

template <class T>
void ln_backward(const T* g, const T* x, const T* mean, const T* rstd, const T* w, int64_t M,
                 int64_t D, T* dx, T* dw, T* db) {
  if (dx) {
    parallel_for(0, M, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, D)),
                 [&](int64_t r0, int64_t r1) {
                   for (int64_t r = r0; r < r1; ++r) {
                     const T* gr = g + r * D;
                     const T* xr = x + r * D;
                     const double m = double(mean[r]), rs = double(rstd[r]);
                     double s1, s2;
                     row_ln_sums(gr, xr, w, D, m, &s1, &s2);
                     // dx = rs * (gw - mean(gw) - xhat * mean(gw * xhat)).
                     const double c1 = s1 / double(D);
                     const double c2 = rs * rs * rs * s2 / double(D);
                     row_ln_dx(gr, xr, w, dx + r * D, D, T(m), T(rs), T(c1), T(c2));
                   }
                 });
  }
  if (dw || db) {
    // Column sums over rows: one double buffer per thread, then a fixed-order combine.
    const int nt = num_threads();
    const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(nt, M));
    std::vector<double> acc(size_t(chunks) * size_t(2 * D), 0.0);
    const int64_t per = (M + chunks - 1) / chunks;
    parallel_for(0, chunks, 1, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        double* aw = dw ? acc.data() + t * 2 * D : nullptr;
        double* ab = db ? acc.data() + t * 2 * D + D : nullptr;
        for (int64_t r = t * per; r < std::min(M, (t + 1) * per); ++r)
          row_ln_wb(g + r * D, x + r * D, D, double(mean[r]), double(rstd[r]), aw, ab);
      }
    });
    for (int64_t j = 0; j < D; ++j) {
      double sw = 0, sb = 0;
      for (int64_t t = 0; t < chunks; ++t) {
        sw += acc[size_t(t * 2 * D + j)];
        sb += acc[size_t(t * 2 * D + D + j)];
      }
      if (dw) dw[j] = T(sw);
      if (db) db[j] = T(sb);
    }
  }
}

// ---- group norm ----

template <class T>
void gn_forward(const T* x, const T* w, const T* b, T* y, int64_t N, int64_t C, int64_t S,
                int64_t G, double eps, T* mean, T* rstd) {
  const int64_t cpg = C / G, D = cpg * S;
  parallel_for(0, N * G, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, D)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   const T* xr = x + r * D;
                   const double m = D ? row_sum(xr, D) / double(D) : std::nan("");
                   const double v = D ? row_sqdev(xr, D, m) / double(D) : std::nan("");
                   const double rs = 1.0 / std::sqrt(v + eps);
                   mean[r] = T(m);
                   rstd[r] = T(rs);
                   const int64_t c0 = (r % G) * cpg;
                   for (int64_t j = 0; j < cpg; ++j) {
                     const double a = rs * (w ? double(w[c0 + j]) : 1.0);
                     const double sh = (b ? double(b[c0 + j]) : 0.0) - m * a;
                     row_affine(xr + j * S, y + r * D + j * S, S, T(a), T(sh));
                   }
                 }
               });
}

template <class T>
void gn_backward(const T* g, const T* x, const T* mean, const T* rstd, const T* w, int64_t N,
                 int64_t C, int64_t S, int64_t G, T* dx, T* dw, T* db) {
  const int64_t cpg = C / G, D = cpg * S;
  // Per (n, c): sum of g * x and of g.
  std::vector<double> ds(size_t(N * C)), dbs(size_t(N * C));
  parallel_for(0, N * C, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, S)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   double a = 0, b = 0;
                   row_grad_sums(g + r * S, x + r * S, S, 0.0, &a, &b);
                   dbs[size_t(r)] = a;
                   ds[size_t(r)] = b;
                 }
               });
  if (dx) {
    parallel_for(0, N * G, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, D)),
                 [&](int64_t r0, int64_t r1) {
                   for (int64_t r = r0; r < r1; ++r) {
                     const int64_t n = r / G, c0 = (r % G) * cpg;
                     double dsg = 0, dbg = 0;
                     for (int64_t j = 0; j < cpg; ++j) {
                       const double wc = w ? double(w[c0 + j]) : 1.0;
                       dsg += ds[size_t(n * C + c0 + j)] * wc;
                       dbg += dbs[size_t(n * C + c0 + j)] * wc;
                     }
                     const double m = double(mean[r]), rs = double(rstd[r]);
                     const double s = 1.0 / double(D);
                     const double c2 = (dbg * m - dsg) * rs * rs * rs * s;
                     const double c3 = -c2 * m - dbg * rs * s;
                     for (int64_t j = 0; j < cpg; ++j) {
                       const double a = rs * (w ? double(w[c0 + j]) : 1.0);
                       const int64_t off = r * D + j * S;
                       row_bwd(g + off, x + off, dx + off, S, T(a), T(c2), T(c3));
                     }
                   }
                 });
  }
  for (int64_t c = 0; c < C && (dw || db); ++c) {
    double sw = 0, sb = 0;
    for (int64_t n = 0; n < N; ++n) {
      const int64_t r = n * G + c / cpg;
      sw += (ds[size_t(n * C + c)] - dbs[size_t(n * C + c)] * double(mean[r])) * double(rstd[r]);
      sb += dbs[size_t(n * C + c)];
    }
    if (dw) dw[c] = T(sw);
    if (db) db[c] = T(sb);
  }
}

#define EMBER_NORM_INSTANTIATE(T)                                                                  \
  template void bn_stats<T>(const T*, int64_t, int64_t, int64_t, double*, double*);                \
  template void bn_apply<T>(const T*, T*, int64_t, int64_t, int64_t, const double*,                \
                            const double*);                                                        \
  template void bn_grad_sums<T>(const T*, const T*, int64_t, int64_t, int64_t, const double*,      \
                                double*, double*);                                                 \
  template void bn_backward_apply<T>(const T*, const T*, T*, int64_t, int64_t, int64_t,            \
                                     const double*, const double*, const double*);                 \
  template void ln_forward<T>(const T*, const T*, const T*, T*, int64_t, int64_t, double, T*, T*); \
  template void ln_backward<T>(const T*, const T*, const T*, const T*, const T*, int64_t, int64_t, \
                               T*, T*, T*);                                                        \
  template void gn_forward<T>(const T*, const T*, const T*, T*, int64_t, int64_t, int64_t,         \
                              int64_t, double, T*, T*);                                            \
  template void gn_backward<T>(const T*, const T*, const T*, const T*, const T*, int64_t, int64_t, \
                               int64_t, int64_t, T*, T*, T*);
EMBER_NORM_INSTANTIATE(float)
EMBER_NORM_INSTANTIATE(double)
#undef EMBER_NORM_INSTANTIATE

}  // namespace ember::cpu
