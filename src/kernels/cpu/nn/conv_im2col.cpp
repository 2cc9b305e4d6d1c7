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

// The outputs [lo, hi) of one line whose input index o * s + off lies inside [0, in).
void valid_range(int64_t out, int64_t in, int64_t s, int64_t off, int64_t& lo, int64_t& hi) {
  lo = off >= 0 ? 0 : (-off + s - 1) / s;
  hi = in - 1 - off < 0 ? 0 : (in - 1 - off) / s + 1;
  lo = std::min(lo, out);
  hi = std::clamp(hi, lo, out);
}

// Calls f(r, kw offset, line, input line offset or -1) for each output line (od, oh) of col
// row r = (c, kd, kh, kw): the innermost dimension is handled a line at a time, so the copies
// run as memcpy (stride 1) or tight strided loops with the padding split off.
template <class F>
void for_each_line(const Geom3& q, int64_t c, int64_t kk, const F& f) {
  const int64_t kd = kk / (q.k[1] * q.k[2]), kh = (kk / q.k[2]) % q.k[1];
  const int64_t plane = prod3(q.in);
  int64_t line = 0;
  for (int64_t od = 0; od < q.out[0]; ++od) {
    const int64_t id = od * q.s[0] - q.p[0] + kd * q.d[0];
    const bool vd = id >= 0 && id < q.in[0];
    for (int64_t oh = 0; oh < q.out[1]; ++oh, ++line) {
      const int64_t ih = oh * q.s[1] - q.p[1] + kh * q.d[1];
      const bool v = vd && ih >= 0 && ih < q.in[1];
      f(line, v ? c * plane + (id * q.in[1] + ih) * q.in[2] : int64_t(-1));
    }
  }
}
}  // namespace

template <class T>
void im2col(const T* x, T* col, int64_t channels, const ConvGeom& g) {
  const Geom3 q(g);
  const int64_t ks = prod3(q.k), L = prod3(q.out), OW = q.out[2], s = q.s[2];
  parallel_for(0, channels * ks, std::max<int64_t>(1, 4096 / std::max<int64_t>(L, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t r = b; r < e; ++r) {
                   const int64_t c = r / ks, kk = r % ks;
                   const int64_t off = (kk % q.k[2]) * q.d[2] - q.p[2];
                   int64_t lo, hi;
                   valid_range(OW, q.in[2], s, off, lo, hi);
                   for_each_line(q, c, kk, [&](int64_t line, int64_t base) {
                     T* dst = col + r * L + line * OW;
                     if (base < 0) {
                       std::fill(dst, dst + OW, T(0));
                       return;
                     }
                     std::fill(dst, dst + lo, T(0));
                     // x[base + off + o * s] lies inside the line for o in [lo, hi).
                     const T* src = hi > lo ? x + base + off + lo * s : x;
                     if (s == 1)
                       std::copy(src, src + (hi - lo), dst + lo);
                     else
                       for (int64_t o = lo; o < hi; ++o) dst[o] = src[(o - lo) * s];
                     std::fill(dst + hi, dst + OW, T(0));
                   });
                 }
               });
}

template <class T>
void col2im(const T* col, T* x, int64_t channels, const ConvGeom& g) {
  const Geom3 q(g);
  const int64_t L = prod3(q.out), ks = prod3(q.k), OW = q.out[2], s = q.s[2];
  // Taps of different kernel offsets hit the same pixel: one channel per task avoids races.
  parallel_for(0, channels, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c)
      for (int64_t kk = 0; kk < ks; ++kk) {
        const int64_t r = c * ks + kk, off = (kk % q.k[2]) * q.d[2] - q.p[2];
        int64_t lo, hi;
        valid_range(OW, q.in[2], s, off, lo, hi);
        for_each_line(q, c, kk, [&](int64_t line, int64_t base) {
          if (base < 0 || hi <= lo) return;
          const T* src = col + r * L + line * OW;
          T* dst = x + base + off + lo * s;
          for (int64_t o = lo; o < hi; ++o) dst[(o - lo) * s] += src[o];
        });
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
