// CUDA layer, group and batch normalization, forward and backward (kernels/stubs/norm.h), and
// the inference-only _add_layer_norm (kernels/stubs/add_layer_norm.h). As the CPU kernels:
// statistics accumulate in double (float for _add_layer_norm's float / bfloat16 data), the mean
// comes first and the variance from the deviations (two passes), batch-norm channel sums are
// shifted by the channel's first element, and per-element arithmetic runs in the data type.
// Every sum is a fixed tree over the lanes of a row (no atomics), so results are reproducible.
#include <cuda_bf16.h>

#include <type_traits>

#include "core/kernel_stub.h"
#include "ember/cuda.h"
#include "kernels/cuda/block_rows.cuh"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/stubs/add_layer_norm.h"
#include "kernels/stubs/norm.h"
#include "ops/device_kernels.h"

namespace ember {
namespace cuda {
namespace {

constexpr double kNaN = __builtin_nan("");

// ---- shared pieces ----

// Sums `v` over the x lanes of each row of the block (blockDim.x a power of two); every lane
// gets the result. `sh` holds blockDim.x * blockDim.y values.
template <class A>
__device__ A lane_sum(A v, A* sh) {
  const int me = threadIdx.y * blockDim.x + threadIdx.x;
  sh[me] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (int(threadIdx.x) < s) sh[me] = sh[me] + sh[me + s];
    __syncthreads();
  }
  const A r = sh[threadIdx.y * blockDim.x];
  __syncthreads();
  return r;
}

// Lanes per row and rows per block for rows of `d` elements (one block of 256 threads).
struct RowShape {
  unsigned bx, by;
};
inline RowShape row_shape(int64_t d) {
  unsigned bx = 32;
  while (bx < 256 && int64_t(bx) < d) bx <<= 1;
  return {bx, 256 / bx};
}
inline unsigned row_blocks(int64_t rows, const RowShape& s) {
  return unsigned((rows + s.by - 1) / s.by);
}

template <class T>
const T* cptr(const Tensor& t) {
  return t.defined() ? static_cast<const T*>(t.data_ptr()) : nullptr;
}
template <class T>
T* mptr(const Tensor& t) {
  return t.defined() ? static_cast<T*>(t.data_ptr()) : nullptr;
}

template <class F>
void float_or_double(const Tensor& x, const char* name, const F& f) {
  if (x.dtype() == kFloat)
    f(float{});
  else if (x.dtype() == kDouble)
    f(double{});
  else
    EMBER_THROW(NotImplementedError, "[", name, "] cuda kernel not implemented for ",
                dtype_name(x.dtype()));
}

// ---- layer norm (and group norm's statistics: rows of one group) ----

// mean / rstd of each row of D elements; with `w` per-channel (group norm: channel of element j
// is c0 + j / S) or per-element (layer norm: S == 0) affine parameters.
template <class T>
__global__ void norm_rows_forward(const T* __restrict__ x, const T* __restrict__ w,
                                  const T* __restrict__ b, T* __restrict__ y, int64_t M, int64_t D,
                                  int64_t G, int64_t cpg, int64_t S, double eps, T* mean, T* rstd) {
  extern __shared__ __align__(16) unsigned char norm_smem[];
  double* sh = reinterpret_cast<double*>(norm_smem);
  const int64_t r = int64_t(blockIdx.x) * blockDim.y + threadIdx.y;
  const bool valid = r < M;
  const T* xr = x + (valid ? r : 0) * D;
  double s = 0;
  if (valid)
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) s += double(xr[j]);
  const double m = D ? lane_sum(s, sh) / double(D) : kNaN;
  double q = 0;
  if (valid)
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
      const double d = double(xr[j]) - m;
      q += d * d;
    }
  const double v = D ? lane_sum(q, sh) / double(D) : kNaN;
  if (!valid) return;
  const double rs = 1.0 / sqrt(v + eps);
  if (threadIdx.x == 0) {
    mean[r] = T(m);
    rstd[r] = T(rs);
  }
  T* yr = y + r * D;
  if (S == 0) {  // layer norm
    const T mt = T(m), rt = T(rs);
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
      T o = (xr[j] - mt) * rt;
      if (w) o = o * w[j];
      if (b) o = o + b[j];
      yr[j] = o;
    }
  } else {  // group norm: y = x * a[c] + shift[c]
    const int64_t c0 = (r % G) * cpg;
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
      const int64_t c = c0 + j / S;
      const double a = rs * (w ? double(w[c]) : 1.0);
      const double sh2 = (b ? double(b[c]) : 0.0) - m * a;
      yr[j] = xr[j] * T(a) + T(sh2);
    }
  }
}

// Layer norm of float32 rows of 4 * d4 elements, one per block, held in registers
// (block_rows.cuh): one read and one write of the row, where norm_rows_forward reads it three
// times. The statistics are summed in double across threads, as there.
template <int K>
__global__ void __launch_bounds__(512)
    layer_norm_rows_vec(const float* __restrict__ x, const float* __restrict__ w,
                        const float* __restrict__ b, float* __restrict__ y, int64_t d4, double eps,
                        float* mean, float* rstd) {
  __shared__ double sh[32];
  const int64_t row = blockIdx.x;
  const float4* xr = reinterpret_cast<const float4*>(x) + row * d4;
  float4 v[K];
  float s = 0;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int64_t i = threadIdx.x + int64_t(k) * blockDim.x;
    v[k] = i < d4 ? xr[i] : float4{0.f, 0.f, 0.f, 0.f};
    s += (v[k].x + v[k].y) + (v[k].z + v[k].w);
  }
  const double dn = 4.0 * double(d4);
  const double m = block_reduce(double(s), SumOp{}, sh) / dn;
  const float mf = float(m);
  float q = 0;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    if (threadIdx.x + int64_t(k) * blockDim.x < d4) {
      const float a = v[k].x - mf, c = v[k].y - mf, e = v[k].z - mf, f = v[k].w - mf;
      q += (a * a + c * c) + (e * e + f * f);
    }
  }
  const double rs = 1.0 / sqrt(block_reduce(double(q), SumOp{}, sh) / dn + eps);
  if (threadIdx.x == 0) {
    mean[row] = mf;
    rstd[row] = float(rs);
  }
  const float rt = float(rs);
  const float4* w4 = reinterpret_cast<const float4*>(w);
  const float4* b4 = reinterpret_cast<const float4*>(b);
  float4* yr = reinterpret_cast<float4*>(y) + row * d4;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int64_t i = threadIdx.x + int64_t(k) * blockDim.x;
    if (i >= d4) continue;
    float4 o = {(v[k].x - mf) * rt, (v[k].y - mf) * rt, (v[k].z - mf) * rt, (v[k].w - mf) * rt};
    if (w) {
      const float4 g = w4[i];
      o = {o.x * g.x, o.y * g.y, o.z * g.z, o.w * g.w};
    }
    if (b) {
      const float4 c = b4[i];
      o = {o.x + c.x, o.y + c.y, o.z + c.z, o.w + c.w};
    }
    yr[i] = o;
  }
}

// dx of layer norm, one row per lane group.
template <class T>
__global__ void layer_norm_dx(const T* __restrict__ g, const T* __restrict__ x, const T* mean,
                              const T* rstd, const T* __restrict__ w, int64_t M, int64_t D,
                              T* __restrict__ dx) {
  extern __shared__ __align__(16) unsigned char norm_smem[];
  double* sh = reinterpret_cast<double*>(norm_smem);
  const int64_t r = int64_t(blockIdx.x) * blockDim.y + threadIdx.y;
  const bool valid = r < M;
  const int64_t base = (valid ? r : 0) * D;
  const double m = valid ? double(mean[r]) : 0.0, rs = valid ? double(rstd[r]) : 0.0;
  double a = 0, b = 0;
  if (valid)
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
      const double gw = double(g[base + j]) * (w ? double(w[j]) : 1.0);
      a += gw;
      b += gw * (double(x[base + j]) - m);
    }
  const double s1 = lane_sum(a, sh), s2 = lane_sum(b, sh);
  if (!valid) return;
  const T c1 = T(s1 / double(D)), c2 = T(rs * rs * rs * s2 / double(D));
  const T mt = T(m), rt = T(rs);
  for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
    const T gw = w ? g[base + j] * w[j] : g[base + j];
    dx[base + j] = rt * (gw - c1) - (x[base + j] - mt) * c2;
  }
}

// dw / db of layer norm: column j summed over the M rows; x lanes take columns (coalesced), y
// lanes share the rows and combine in a tree.
template <class T>
__global__ void layer_norm_dwdb(const T* __restrict__ g, const T* __restrict__ x, const T* mean,
                                const T* rstd, int64_t M, int64_t D, T* dw, T* db) {
  __shared__ double shw[32 * 16], shb[32 * 16];
  const int64_t j = int64_t(blockIdx.x) * 32 + threadIdx.x;
  double aw = 0, ab = 0;
  if (j < D)
    for (int64_t r = threadIdx.y; r < M; r += 16) {
      const double gv = double(g[r * D + j]);
      aw += gv * (double(x[r * D + j]) - double(mean[r])) * double(rstd[r]);
      ab += gv;
    }
  const int me = threadIdx.y * 32 + threadIdx.x;
  shw[me] = aw;
  shb[me] = ab;
  __syncthreads();
  for (int s = 8; s > 0; s >>= 1) {
    if (int(threadIdx.y) < s) {
      shw[me] += shw[me + s * 32];
      shb[me] += shb[me + s * 32];
    }
    __syncthreads();
  }
  if (threadIdx.y == 0 && j < D) {
    if (dw) dw[j] = T(shw[threadIdx.x]);
    if (db) db[j] = T(shb[threadIdx.x]);
  }
}

void layer_norm_cuda(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t M,
                     int64_t D, double eps, Tensor& y, Tensor& mean, Tensor& rstd) {
  DeviceGuard guard(y.device());
  if (M == 0) return;
  float_or_double(x, "layer_norm", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float>) {
      const VecRows vr = vec_rows(D / 4);
      if (D >= 512 && D % 4 == 0 && vr.k && M < (int64_t(1) << 31) &&
          aligned16({x.data_ptr(), y.data_ptr(), cptr<T>(weight), cptr<T>(bias)})) {
        with_vec_k(vr.k, [&](auto k) {
          layer_norm_rows_vec<k()><<<unsigned(M), vr.threads, 0, current_raw_stream()>>>(
              cptr<T>(x), cptr<T>(weight), cptr<T>(bias), mptr<T>(y), D / 4, eps, mptr<T>(mean),
              mptr<T>(rstd));
        });
        check_launch("layer_norm");
        return;
      }
    }
    const RowShape s = row_shape(D);
    norm_rows_forward<T>
        <<<row_blocks(M, s), dim3(s.bx, s.by), sizeof(double) * 256, current_raw_stream()>>>(
            cptr<T>(x), cptr<T>(weight), cptr<T>(bias), mptr<T>(y), M, D, 1, 0, 0, eps,
            mptr<T>(mean), mptr<T>(rstd));
    check_launch("layer_norm");
  });
}

void layer_norm_backward_cuda(const Tensor& grad, const Tensor& x, const Tensor& mean,
                              const Tensor& rstd, const Tensor& weight, int64_t M, int64_t D,
                              Tensor& grad_input, Tensor& grad_weight, Tensor& grad_bias) {
  DeviceGuard guard(x.device());
  float_or_double(x, "layer_norm_backward", [&](auto tag) {
    using T = decltype(tag);
    cudaStream_t stream = current_raw_stream();
    if (grad_input.defined() && M > 0 && D > 0) {
      const RowShape s = row_shape(D);
      layer_norm_dx<T><<<row_blocks(M, s), dim3(s.bx, s.by), sizeof(double) * 256, stream>>>(
          cptr<T>(grad), cptr<T>(x), cptr<T>(mean), cptr<T>(rstd), cptr<T>(weight), M, D,
          mptr<T>(grad_input));
      check_launch("layer_norm_backward");
    }
    if ((grad_weight.defined() || grad_bias.defined()) && D > 0) {
      layer_norm_dwdb<T><<<unsigned((D + 31) / 32), dim3(32, 16), 0, stream>>>(
          cptr<T>(grad), cptr<T>(x), cptr<T>(mean), cptr<T>(rstd), M, D, mptr<T>(grad_weight),
          mptr<T>(grad_bias));
      check_launch("layer_norm_backward");
    }
  });
}

// ---- group norm ----

void ncs(const Tensor& x, int64_t& N, int64_t& C, int64_t& S) {
  N = x.size(0), C = x.size(1), S = 1;
  for (int64_t d = 2; d < x.dim(); ++d) S *= x.size(d);
}

void group_norm_cuda(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t groups,
                     double eps, Tensor& y, Tensor& mean, Tensor& rstd) {
  DeviceGuard guard(y.device());
  int64_t N, C, S;
  ncs(x, N, C, S);
  const int64_t M = N * groups, cpg = C / groups, D = cpg * S;
  if (M == 0) return;
  float_or_double(x, "group_norm", [&](auto tag) {
    using T = decltype(tag);
    const RowShape s = row_shape(D);
    // S == 0 selects layer norm's affine step, so a group norm of zero-size rows passes S = 1.
    norm_rows_forward<T>
        <<<row_blocks(M, s), dim3(s.bx, s.by), sizeof(double) * 256, current_raw_stream()>>>(
            cptr<T>(x), cptr<T>(weight), cptr<T>(bias), mptr<T>(y), M, D, groups, cpg,
            S > 0 ? S : 1, eps, mptr<T>(mean), mptr<T>(rstd));
    check_launch("group_norm");
  });
}

// Per row of S elements (one (n, c) pair): sum of g * x and of g.
template <class T>
__global__ void row_grad_sums(const T* __restrict__ g, const T* __restrict__ x, int64_t rows,
                              int64_t S, double* ds, double* dbs) {
  extern __shared__ __align__(16) unsigned char norm_smem[];
  double* sh = reinterpret_cast<double*>(norm_smem);
  const int64_t r = int64_t(blockIdx.x) * blockDim.y + threadIdx.y;
  const bool valid = r < rows;
  double a = 0, b = 0;
  if (valid)
    for (int64_t j = threadIdx.x; j < S; j += blockDim.x) {
      const double gv = double(g[r * S + j]);
      a += gv * double(x[r * S + j]);
      b += gv;
    }
  const double sa = lane_sum(a, sh), sb = lane_sum(b, sh);
  if (valid && threadIdx.x == 0) {
    ds[r] = sa;
    dbs[r] = sb;
  }
}

// Per (n, group): the coefficients of dx = g * rs * w[c] + x * c2 + c3.
template <class T>
__global__ void group_norm_coeffs(const double* ds, const double* dbs, const T* mean, const T* rstd,
                                  const T* w, int64_t N, int64_t C, int64_t G, int64_t D,
                                  double* c2s, double* c3s) {
  const int64_t cpg = C / G;
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < N * G; r += step) {
    const int64_t n = r / G, c0 = (r % G) * cpg;
    double dsg = 0, dbg = 0;
    for (int64_t j = 0; j < cpg; ++j) {
      const double wc = w ? double(w[c0 + j]) : 1.0;
      dsg += ds[n * C + c0 + j] * wc;
      dbg += dbs[n * C + c0 + j] * wc;
    }
    const double m = double(mean[r]), rs = double(rstd[r]), s = 1.0 / double(D);
    const double c2 = (dbg * m - dsg) * rs * rs * rs * s;
    c2s[r] = c2;
    c3s[r] = -c2 * m - dbg * rs * s;
  }
}

template <class T>
__global__ void group_norm_dx(const T* __restrict__ g, const T* __restrict__ x, const T* rstd,
                              const T* w, const double* c2s, const double* c3s, int64_t total,
                              int64_t C, int64_t G, int64_t S, T* __restrict__ dx) {
  const int64_t cpg = C / G;
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t nc = i / S, c = nc % C, n = nc / C;
    const int64_t r = n * G + c / cpg;
    const double a = double(rstd[r]) * (w ? double(w[c]) : 1.0);
    dx[i] = g[i] * T(a) + x[i] * T(c2s[r]) + T(c3s[r]);
  }
}

template <class T>
__global__ void group_norm_dwdb(const double* ds, const double* dbs, const T* mean, const T* rstd,
                                int64_t N, int64_t C, int64_t G, T* dw, T* db) {
  const int64_t cpg = C / G;
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < C; c += step) {
    double sw = 0, sb = 0;
    for (int64_t n = 0; n < N; ++n) {
      const int64_t r = n * G + c / cpg;
      sw += (ds[n * C + c] - dbs[n * C + c] * double(mean[r])) * double(rstd[r]);
      sb += dbs[n * C + c];
    }
    if (dw) dw[c] = T(sw);
    if (db) db[c] = T(sb);
  }
}

void group_norm_backward_cuda(const Tensor& grad, const Tensor& x, const Tensor& mean,
                              const Tensor& rstd, const Tensor& weight, int64_t groups,
                              Tensor& grad_input, Tensor& grad_weight, Tensor& grad_bias) {
  DeviceGuard guard(x.device());
  int64_t N, C, S;
  ncs(x, N, C, S);
  const int64_t G = groups, D = (C / G) * S;
  float_or_double(x, "group_norm_backward", [&](auto tag) {
    using T = decltype(tag);
    cudaStream_t stream = current_raw_stream();
    const int64_t NC = N * C;
    DataPtr buf = scratch(sizeof(double) * size_t(2 * NC + 2 * N * G + 2));
    double* ds = static_cast<double*>(buf.get());
    double* dbs = ds + NC;
    double* c2s = dbs + NC;
    double* c3s = c2s + N * G;
    if (NC > 0) {
      const RowShape s = row_shape(S);
      row_grad_sums<T><<<row_blocks(NC, s), dim3(s.bx, s.by), sizeof(double) * 256, stream>>>(
          cptr<T>(grad), cptr<T>(x), NC, S, ds, dbs);
      check_launch("group_norm_backward");
    }
    if (grad_input.defined() && x.numel() > 0) {
      group_norm_coeffs<T><<<grid_for(N * G), kBlockSize, 0, stream>>>(
          ds, dbs, cptr<T>(mean), cptr<T>(rstd), cptr<T>(weight), N, C, G, D, c2s, c3s);
      check_launch("group_norm_backward");
      group_norm_dx<T><<<grid_for(x.numel()), kBlockSize, 0, stream>>>(
          cptr<T>(grad), cptr<T>(x), cptr<T>(rstd), cptr<T>(weight), c2s, c3s, x.numel(), C, G, S,
          mptr<T>(grad_input));
      check_launch("group_norm_backward");
    }
    if ((grad_weight.defined() || grad_bias.defined()) && C > 0) {
      group_norm_dwdb<T><<<grid_for(C), kBlockSize, 0, stream>>>(
          ds, dbs, cptr<T>(mean), cptr<T>(rstd), N, C, G, mptr<T>(grad_weight), mptr<T>(grad_bias));
      check_launch("group_norm_backward");
    }
  });
}

// ---- batch norm ----

// Per channel c (one block each): statistics over the N * S elements of channel c, shifted by
// the channel's first element (as the CPU kernel).
template <class T>
__global__ void bn_stats_kernel(const T* __restrict__ x, int64_t N, int64_t C, int64_t S,
                                double eps, double* mean, double* invstd, double* var) {
  __shared__ double sh[256];
  const int64_t c = blockIdx.x, L = N * S;
  const double k = L ? double(x[c * S]) : 0.0;
  double a = 0, b = 0;
  for (int64_t i = threadIdx.x; i < L; i += blockDim.x) {
    const double d = double(x[((i / S) * C + c) * S + i % S]) - k;
    a += d;
    b += d * d;
  }
  const double s = lane_sum(a, sh), q = lane_sum(b, sh);
  if (threadIdx.x != 0) return;
  if (L == 0) {
    mean[c] = invstd[c] = var[c] = kNaN;
    return;
  }
  const double M = double(L), d = s / M;
  const double v = fmax(0.0, q / M - d * d);
  mean[c] = k + d;
  invstd[c] = 1.0 / sqrt(v + eps);
  var[c] = v * M / (M - 1);  // the running variance is unbiased
}

__global__ void bn_eval_stats_kernel(const double* rm, const double* rv, double eps, int64_t C,
                                     double* mean, double* invstd) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= C) return;
  mean[c] = rm[c];
  invstd[c] = 1.0 / sqrt(rv[c] + eps);
}

template <class T>
__global__ void bn_apply_kernel(const T* __restrict__ x, const double* w, const double* b,
                                const double* mean, const double* invstd, int64_t total, int64_t C,
                                int64_t S, T* __restrict__ y) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t c = (i / S) % C;
    const double scale = (w ? w[c] : 1.0) * invstd[c];
    const double shift = (b ? b[c] : 0.0) - mean[c] * scale;
    y[i] = x[i] * T(scale) + T(shift);
  }
}

// Per channel: sum of g (into sg) and of g * (x - mean[c]) (into sgx).
template <class T>
__global__ void bn_grad_sums_kernel(const T* __restrict__ g, const T* __restrict__ x, int64_t N,
                                    int64_t C, int64_t S, const double* mean, double* sg,
                                    double* sgx) {
  __shared__ double sh[256];
  const int64_t c = blockIdx.x, L = N * S;
  const double m = mean[c];
  double a = 0, b = 0;
  for (int64_t i = threadIdx.x; i < L; i += blockDim.x) {
    const int64_t off = ((i / S) * C + c) * S + i % S;
    const double gv = double(g[off]);
    a += gv;
    b += gv * (double(x[off]) - m);
  }
  const double s = lane_sum(a, sh), q = lane_sum(b, sh);
  if (threadIdx.x == 0) {
    sg[c] = s;
    sgx[c] = q;
  }
}

template <class T>
__global__ void bn_backward_apply_kernel(const T* __restrict__ g, const T* __restrict__ x,
                                         const double* w, const double* mean, const double* invstd,
                                         const double* sg, const double* sgx, bool training,
                                         int64_t total, int64_t C, int64_t S, double M,
                                         T* __restrict__ dx) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t c = (i / S) % C;
    const double a = (w ? w[c] : 1.0) * invstd[c];
    double b = 0, d = 0;
    if (training) {
      b = -a * invstd[c] * invstd[c] * sgx[c] / M;
      d = -a * sg[c] / M - b * mean[c];
    }
    dx[i] = g[i] * T(a) + x[i] * T(b) + T(d);
  }
}

__global__ void bn_dw_kernel(const double* sgx, const double* invstd, int64_t C, double* dw) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c < C) dw[c] = sgx[c] * invstd[c];
}

void batch_norm_stats_cuda(const Tensor& x, double eps, Tensor& mean, Tensor& invstd, Tensor& var) {
  DeviceGuard guard(x.device());
  int64_t N, C, S;
  ncs(x, N, C, S);
  if (C == 0) return;
  float_or_double(x, "batch_norm", [&](auto tag) {
    using T = decltype(tag);
    bn_stats_kernel<T><<<unsigned(C), 256, 0, current_raw_stream()>>>(
        cptr<T>(x), N, C, S, eps, mptr<double>(mean), mptr<double>(invstd), mptr<double>(var));
    check_launch("batch_norm");
  });
}

void batch_norm_eval_stats_cuda(const Tensor& running_mean, const Tensor& running_var, double eps,
                                Tensor& mean, Tensor& invstd) {
  DeviceGuard guard(mean.device());
  const int64_t C = mean.numel();
  if (C == 0) return;
  EMBER_CHECK(running_mean.dtype() == kDouble && running_var.dtype() == kDouble,
              "[batch_norm] cuda kernel expects float64 running statistics");
  bn_eval_stats_kernel<<<grid_for(C), kBlockSize, 0, current_raw_stream()>>>(
      cptr<double>(running_mean), cptr<double>(running_var), eps, C, mptr<double>(mean),
      mptr<double>(invstd));
  check_launch("batch_norm");
}

void batch_norm_apply_cuda(const Tensor& x, const Tensor& weight, const Tensor& bias,
                           const Tensor& mean, const Tensor& invstd, Tensor& y) {
  DeviceGuard guard(y.device());
  int64_t N, C, S;
  ncs(x, N, C, S);
  if (x.numel() == 0) return;
  float_or_double(x, "batch_norm", [&](auto tag) {
    using T = decltype(tag);
    bn_apply_kernel<T><<<grid_for(x.numel()), kBlockSize, 0, current_raw_stream()>>>(
        cptr<T>(x), cptr<double>(weight), cptr<double>(bias), cptr<double>(mean),
        cptr<double>(invstd), x.numel(), C, S, mptr<T>(y));
    check_launch("batch_norm");
  });
}

void batch_norm_backward_cuda(const Tensor& grad, const Tensor& x, const Tensor& weight,
                              const Tensor& mean, const Tensor& invstd, bool training,
                              Tensor& grad_input, Tensor& grad_weight, Tensor& grad_bias) {
  DeviceGuard guard(x.device());
  int64_t N, C, S;
  ncs(x, N, C, S);
  if (C == 0) return;
  float_or_double(x, "batch_norm_backward", [&](auto tag) {
    using T = decltype(tag);
    cudaStream_t stream = current_raw_stream();
    DataPtr buf = scratch(sizeof(double) * size_t(C));
    double* sgx = static_cast<double*>(buf.get());
    double* sg = mptr<double>(grad_bias);
    bn_grad_sums_kernel<T><<<unsigned(C), 256, 0, stream>>>(cptr<T>(grad), cptr<T>(x), N, C, S,
                                                            cptr<double>(mean), sg, sgx);
    check_launch("batch_norm_backward");
    if (grad_input.defined() && x.numel() > 0) {
      bn_backward_apply_kernel<T><<<grid_for(x.numel()), kBlockSize, 0, stream>>>(
          cptr<T>(grad), cptr<T>(x), cptr<double>(weight), cptr<double>(mean), cptr<double>(invstd),
          sg, sgx, training, x.numel(), C, S, double(N * S), mptr<T>(grad_input));
      check_launch("batch_norm_backward");
    }
    bn_dw_kernel<<<grid_for(C), kBlockSize, 0, stream>>>(sgx, cptr<double>(invstd), C,
                                                         mptr<double>(grad_weight));
    check_launch("batch_norm_backward");
  });
}

// ---- _add_layer_norm ----

template <class T>
struct AlnAcc {
  using type = float;
};
template <>
struct AlnAcc<double> {
  using type = double;
};

template <class T, class A>
__device__ __forceinline__ A aln_load(T v) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(v);
  else
    return A(v);
}
template <class T, class A>
__device__ __forceinline__ T aln_store(A v) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16_rn(v);
  else
    return T(v);
}

template <class T>
__global__ void add_layer_norm_kernel(const T* __restrict__ x, const T* __restrict__ res,
                                      const T* __restrict__ w, const T* __restrict__ b, int64_t M,
                                      int64_t D, double eps, T* __restrict__ y) {
  using A = typename AlnAcc<T>::type;
  extern __shared__ __align__(16) unsigned char norm_smem[];
  A* sh = reinterpret_cast<A*>(norm_smem);
  const int64_t r = int64_t(blockIdx.x) * blockDim.y + threadIdx.y;
  const bool valid = r < M;
  const int64_t base = (valid ? r : 0) * D;
  A s = 0;
  if (valid)
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x)
      s += aln_load<T, A>(x[base + j]) + aln_load<T, A>(res[base + j]);
  const A mean = lane_sum(s, sh) / A(D);
  A q = 0;
  if (valid)
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
      const A c = aln_load<T, A>(x[base + j]) + aln_load<T, A>(res[base + j]) - mean;
      q += c * c;
    }
  const A rstd = A(1) / sqrt(lane_sum(q, sh) / A(D) + A(eps));
  if (!valid) return;
  for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
    A v = (aln_load<T, A>(x[base + j]) + aln_load<T, A>(res[base + j]) - mean) * rstd;
    if (w) v *= aln_load<T, A>(w[j]);
    if (b) v += aln_load<T, A>(b[j]);
    y[base + j] = aln_store<T, A>(v);
  }
}

void add_layer_norm_cuda(const Tensor& x, const Tensor& r, const Tensor& weight, const Tensor& bias,
                         int64_t M, int64_t D, double eps, Tensor& y) {
  DeviceGuard guard(y.device());
  if (M == 0 || D == 0) return;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    using A = typename AlnAcc<T>::type;
    const RowShape s = row_shape(D);
    add_layer_norm_kernel<T>
        <<<row_blocks(M, s), dim3(s.bx, s.by), sizeof(A) * 256, current_raw_stream()>>>(
            cptr<T>(x), cptr<T>(r), cptr<T>(weight), cptr<T>(bias), M, D, eps, mptr<T>(y));
    check_launch("_add_layer_norm");
  };
  switch (x.dtype()) {
    case kFloat:
      run(float{});
      break;
    case kDouble:
      run(double{});
      break;
    case kBFloat16:
      run(__nv_bfloat16{});
      break;
    default:
      EMBER_THROW(NotImplementedError, "[_add_layer_norm] cuda kernel not implemented for ",
                  dtype_name(x.dtype()));
  }
}

[[maybe_unused]] const bool registered = [] {
  using S = ScalarType;
  // The ops compute in float32 / float64 (float16 and bfloat16 inputs are converted).
  for (OpId op : {OpId::native_batch_norm, OpId::native_layer_norm, OpId::group_norm})
    register_kernel(kCUDA, op, {S::Half, S::BFloat16, S::Float, S::Double});
  register_kernel(kCUDA, OpId::_add_layer_norm, {S::BFloat16, S::Float, S::Double});
  return true;
}();

}  // namespace
}  // namespace cuda

EMBER_REGISTER_KERNEL(batch_norm_stats_stub, kCUDA, cuda::batch_norm_stats_cuda);
EMBER_REGISTER_KERNEL(batch_norm_eval_stats_stub, kCUDA, cuda::batch_norm_eval_stats_cuda);
EMBER_REGISTER_KERNEL(batch_norm_apply_stub, kCUDA, cuda::batch_norm_apply_cuda);
EMBER_REGISTER_KERNEL(batch_norm_backward_stub, kCUDA, cuda::batch_norm_backward_cuda);
EMBER_REGISTER_KERNEL(layer_norm_stub, kCUDA, cuda::layer_norm_cuda);
EMBER_REGISTER_KERNEL(layer_norm_backward_stub, kCUDA, cuda::layer_norm_backward_cuda);
EMBER_REGISTER_KERNEL(group_norm_stub, kCUDA, cuda::group_norm_cuda);
EMBER_REGISTER_KERNEL(group_norm_backward_stub, kCUDA, cuda::group_norm_backward_cuda);
EMBER_REGISTER_KERNEL(add_layer_norm_stub, kCUDA, cuda::add_layer_norm_cuda);

}  // namespace ember
