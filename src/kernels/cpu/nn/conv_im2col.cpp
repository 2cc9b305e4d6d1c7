// The reference convolution: im2col/col2im and BLAS gemm, one image and one group at a time.
// It serves float64 (oneDNN has no f64) and whatever oneDNN declines.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/parallel_internal.h"
#include "core/tensor_util.h"
#include "kernels/cpu/linalg/gemm.h"
#include "kernels/cpu/nn/conv_dnnl.h"

namespace ember::cpu {

namespace {
int64_t prod3(const int64_t* v) { return v[0] * v[1] * v[2]; }

// Spatial arrays padded to three dims (leading size-1 dims) so one loop nest serves 1/2/3-d.
struct Geom3 {
  int64_t in[3], out[3], k[3], s[3], p[3], d[3];
  explicit Geom3(const ConvGeom& g) {
    const int off = 3 - g.nd;
    for (int i = 0; i < 3; ++i) {
      const int j = i - off;
      const bool real = j >= 0;
      in[i] = real ? g.in[j] : 1;
      out[i] = real ? g.out[j] : 1;
      k[i] = real ? g.kernel[j] : 1;
      s[i] = real ? g.stride[j] : 1;
      p[i] = real ? g.pad_l[j] : 0;
      d[i] = real ? g.dilation[j] : 1;
    }
  }
};

// Calls f(col_row, in_offset or -1, out_index) over every (channel, kernel offset, output).
template <class F>
void for_each_tap(const Geom3& q, int64_t channels, const F& f) {
  const int64_t ks = prod3(q.k), L = prod3(q.out), plane = prod3(q.in);
  parallel_for(0, channels * ks, std::max<int64_t>(1, 4096 / std::max<int64_t>(L, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t r = b; r < e; ++r) {
                   const int64_t c = r / ks, kk = r % ks;
                   const int64_t kd = kk / (q.k[1] * q.k[2]), kh = (kk / q.k[2]) % q.k[1],
                                 kw = kk % q.k[2];
                   int64_t o = 0;
                   for (int64_t od = 0; od < q.out[0]; ++od) {
                     const int64_t id = od * q.s[0] - q.p[0] + kd * q.d[0];
                     const bool vd = id >= 0 && id < q.in[0];
                     for (int64_t oh = 0; oh < q.out[1]; ++oh) {
                       const int64_t ih = oh * q.s[1] - q.p[1] + kh * q.d[1];
                       const bool vh = vd && ih >= 0 && ih < q.in[1];
                       const int64_t base = c * plane + (id * q.in[1] + ih) * q.in[2];
                       for (int64_t ow = 0; ow < q.out[2]; ++ow, ++o) {
                         const int64_t iw = ow * q.s[2] - q.p[2] + kw * q.d[2];
                         const bool v = vh && iw >= 0 && iw < q.in[2];
                         f(r, v ? base + iw : -1, o);
                       }
                     }
                   }
                 }
               });
}
}  // namespace

template <class T>
void im2col(const T* x, T* col, int64_t channels, const ConvGeom& g) {
  const Geom3 q(g);
  const int64_t L = prod3(q.out);
  for_each_tap(q, channels, [&](int64_t r, int64_t src, int64_t o) {
    col[r * L + o] = src >= 0 ? x[src] : T(0);
  });
}

template <class T>
void col2im(const T* col, T* x, int64_t channels, const ConvGeom& g) {
  const Geom3 q(g);
  const int64_t L = prod3(q.out), ks = prod3(q.k);
  // Taps of different kernel offsets hit the same pixel: one channel per task avoids races.
  parallel_for(0, channels, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      for (int64_t kk = 0; kk < ks; ++kk) {
        const int64_t r = c * ks + kk;
        const int64_t kd = kk / (q.k[1] * q.k[2]), kh = (kk / q.k[2]) % q.k[1], kw = kk % q.k[2];
        int64_t o = 0;
        for (int64_t od = 0; od < q.out[0]; ++od) {
          const int64_t id = od * q.s[0] - q.p[0] + kd * q.d[0];
          const bool vd = id >= 0 && id < q.in[0];
          for (int64_t oh = 0; oh < q.out[1]; ++oh) {
            const int64_t ih = oh * q.s[1] - q.p[1] + kh * q.d[1];
            const bool vh = vd && ih >= 0 && ih < q.in[1];
            T* row = x + c * prod3(q.in) + (id * q.in[1] + ih) * q.in[2];
            for (int64_t ow = 0; ow < q.out[2]; ++ow, ++o) {
              const int64_t iw = ow * q.s[2] - q.p[2] + kw * q.d[2];
              if (vh && iw >= 0 && iw < q.in[2]) row[iw] += col[r * L + o];
            }
          }
        }
      }
    }
  });
}

template void im2col<float>(const float*, float*, int64_t, const ConvGeom&);
template void im2col<double>(const double*, double*, int64_t, const ConvGeom&);
template void col2im<float>(const float*, float*, int64_t, const ConvGeom&);
template void col2im<double>(const double*, double*, int64_t, const ConvGeom&);

namespace {
template <class T>
void ref_conv_t(ConvPass pass, const ConvGeom& g, ScalarType dt, const T* a, const T* b, T* out,
                T* bias) {
  const Geom3 q(g);
  const int64_t cg = g.c / g.groups, kg = g.k / g.groups, ks = prod3(q.k), L = prod3(q.out),
                P = prod3(q.in);
  const int64_t rows = cg * ks;
  std::vector<T> col =
      checked_buffer<T>("conv", {std::max<int64_t>(rows, 1), std::max<int64_t>(L, 1)});
  switch (pass) {
    case ConvPass::Forward: {  // y[n, g] = W[g] (kg x rows) @ col (rows x L)
      for (int64_t n = 0; n < g.n; ++n)
        for (int64_t gr = 0; gr < g.groups; ++gr) {
          im2col(a + (n * g.c + gr * cg) * P, col.data(), cg, g);
          T* y = out + (n * g.k + gr * kg) * L;
          blas_gemm(dt, Op::N, Op::N, kg, L, rows, 1, b + gr * kg * rows, rows, col.data(), L, 0, y,
                    L);
          if (bias)
            for (int64_t k = 0; k < kg; ++k)
              for (int64_t l = 0; l < L; ++l) y[k * L + l] += bias[gr * kg + k];
        }
      break;
    }
    case ConvPass::BackwardData: {  // col = W[g]^T @ gy[n, g]; gx[n, g] = col2im(col)
      std::fill(out, out + g.n * g.c * P, T(0));
      for (int64_t n = 0; n < g.n; ++n)
        for (int64_t gr = 0; gr < g.groups; ++gr) {
          blas_gemm(dt, Op::T, Op::N, rows, L, kg, 1, b + gr * kg * rows, rows,
                    a + (n * g.k + gr * kg) * L, L, 0, col.data(), L);
          col2im(col.data(), out + (n * g.c + gr * cg) * P, cg, g);
        }
      break;
    }
    case ConvPass::BackwardWeights: {  // gw[g] = sum_n gy[n, g] @ col^T
      std::fill(out, out + g.k * rows, T(0));
      for (int64_t n = 0; n < g.n; ++n)
        for (int64_t gr = 0; gr < g.groups; ++gr) {
          im2col(a + (n * g.c + gr * cg) * P, col.data(), cg, g);
          blas_gemm(dt, Op::N, Op::T, kg, rows, L, 1, b + (n * g.k + gr * kg) * L, L, col.data(), L,
                    1, out + gr * kg * rows, rows);
        }
      if (bias) {
        std::fill(bias, bias + g.k, T(0));
        for (int64_t n = 0; n < g.n; ++n)
          for (int64_t k = 0; k < g.k; ++k) {
            const T* gy = b + (n * g.k + k) * L;
            T s = 0;
            for (int64_t l = 0; l < L; ++l) s += gy[l];
            bias[k] += s;
          }
      }
      break;
    }
  }
}
}  // namespace

void ref_conv(ConvPass pass, const ConvGeom& g, ScalarType dt, const void* a, const void* b,
              void* out, void* bias) {
  if (dt == kDouble)
    ref_conv_t<double>(pass, g, dt, static_cast<const double*>(a), static_cast<const double*>(b),
                       static_cast<double*>(out), static_cast<double*>(bias));
  else
    ref_conv_t<float>(pass, g, dt, static_cast<const float*>(a), static_cast<const float*>(b),
                      static_cast<float*>(out), static_cast<float*>(bias));
}

}  // namespace ember::cpu
