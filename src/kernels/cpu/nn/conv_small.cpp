// Convolutions with few input channels (an image model's first layer: 1 or 3 channels): per-image
// im2col and small AVX2 kernels, threaded over the images. See Note [Small-channel convolutions].
#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/parallel_internal.h"
#include "ember/version.h"
#include "kernels/cpu/nn/conv_dnnl.h"

namespace ember::cpu {

// Note [Small-channel convolutions]
// oneDNN's blocked kernels pad the input channels to a multiple of 8, so a convolution with one
// input channel does 8x the work: on the Fashion-MNIST model's first layer (64x1x28x28, 32
// filters of 3x3, 25 MFLOP per pass) its backward-weights pass took 2.3-3.9 ms and its forward
// 0.8-1.2 ms on one thread. With C * prod(kernel) = R <= 64 the im2col matrix of one image is
// small (9 x 676 floats there), so each pass runs per image on that matrix with AVX2 kernels
// that keep the short dimension R (or K) in the loop and the long one, L, in the lanes:
//   forward           y[n] = bias + W (K x R) . col[n] (R x L): tiles of 4 rows x 24 columns
//                     hold C in registers over all of R;
//   backward data     col = W^T (R x K) . gy[n] by the same kernel, then col2im;
//   backward weights  gW (K x R) += gy[n] . col[n]^T as K x R dot products along L (and the
//                     bias gradient as the row sums of gy, in the same pass), summed over blocks
//                     of 8 images in a fixed order: the result does not depend on the threads.
// The general packed GEMM does worse here: k = R = 9 is too short to amortize its tile set-up,
// and the weight gradient's transposed operand costs more to pack than to multiply.
// The images are split between the threads; the kernels inside run on one thread.

namespace {

int64_t prod(const int64_t* v, int nd) {
  int64_t p = 1;
  for (int i = 0; i < nd; ++i) p *= v[i];
  return p;
}

constexpr int64_t kImagesPerBlock = 8;

// Lanes [0, n) of a ymm mask, n in 1..8.
[[gnu::target("avx2")]] inline __m256i lane_mask(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// A tile of MR rows x NV vectors of C = bias + A (rows x J) . B (J x cols); the last vector is
// masked when kMask. J is small (the im2col rows), so the tile keeps C in registers over all of J.
template <int MR, int NV, bool kMask>
[[gnu::target("avx2,fma")]] inline void small_k_tile(const float* a, int64_t lda, int64_t J,
                                                     const float* b, int64_t ldb, const float* bias,
                                                     float* c, int64_t ldc, __m256i mask) {
  __m256 acc[MR][NV];
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_set1_ps(bias ? bias[i] : 0.f);
  for (int64_t j = 0; j < J; ++j) {
    __m256 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      bv[v] = kMask && v == NV - 1 ? _mm256_maskload_ps(b + j * ldb + 8 * v, mask)
                                   : _mm256_loadu_ps(b + j * ldb + 8 * v);
#pragma GCC unroll 4
    for (int i = 0; i < MR; ++i) {
      const __m256 av = _mm256_broadcast_ss(a + i * lda + j);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_fmadd_ps(av, bv[v], acc[i][v]);
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      float* dst = c + i * ldc + 8 * v;
      if (kMask && v == NV - 1)
        _mm256_maskstore_ps(dst, mask, acc[i][v]);
      else
        _mm256_storeu_ps(dst, acc[i][v]);
    }
}

template <int MR>
[[gnu::target("avx2,fma")]] void small_k_rows(const float* a, int64_t lda, int64_t J,
                                              const float* b, int64_t L, const float* bias,
                                              float* c) {
  int64_t l = 0;
  for (; l + 24 <= L; l += 24)
    small_k_tile<MR, 3, false>(a, lda, J, b + l, L, bias, c + l, L, __m256i());
  for (; l + 8 <= L; l += 8)
    small_k_tile<MR, 1, false>(a, lda, J, b + l, L, bias, c + l, L, __m256i());
  if (l < L) small_k_tile<MR, 1, true>(a, lda, J, b + l, L, bias, c + l, L, lane_mask(L - l));
}

// C (M x L) = bias + A (M x J, row-major) . B (J x L, row-major); bias may be null.
[[gnu::target("avx2,fma")]] void small_k_gemm(const float* a, int64_t M, int64_t J, const float* b,
                                              int64_t L, const float* bias, float* c) {
  int64_t m = 0;
  for (; m + 4 <= M; m += 4)
    small_k_rows<4>(a + m * J, J, J, b, L, bias ? bias + m : nullptr, c + m * L);
  for (; m < M; ++m) small_k_rows<1>(a + m * J, J, J, b, L, bias ? bias + m : nullptr, c + m * L);
}

[[gnu::target("avx2")]] inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// G[k, r0 + i] += sum_l Y[k, l] X[r0 + i, l] for i < RC, and gb[k] += sum_l Y[k, l] when gb:
// the long dimension L runs in the vector lanes, each output is one horizontal sum at the end.
template <int RC>
[[gnu::target("avx2,fma")]] void dots_chunk(const float* y, const float* x, int64_t L, float* g,
                                            float* gb) {
  __m256 acc[RC], accb = _mm256_setzero_ps();
#pragma GCC unroll 12
  for (int i = 0; i < RC; ++i) acc[i] = _mm256_setzero_ps();
  int64_t l = 0;
  for (; l + 8 <= L; l += 8) {
    const __m256 yv = _mm256_loadu_ps(y + l);
    accb = _mm256_add_ps(accb, yv);
#pragma GCC unroll 12
    for (int i = 0; i < RC; ++i)
      acc[i] = _mm256_fmadd_ps(yv, _mm256_loadu_ps(x + i * L + l), acc[i]);
  }
  if (l < L) {
    const __m256i mask = lane_mask(L - l);
    const __m256 yv = _mm256_maskload_ps(y + l, mask);
    accb = _mm256_add_ps(accb, yv);
#pragma GCC unroll 12
    for (int i = 0; i < RC; ++i)
      acc[i] = _mm256_fmadd_ps(yv, _mm256_maskload_ps(x + i * L + l, mask), acc[i]);
  }
  for (int i = 0; i < RC; ++i) g[i] += hsum(acc[i]);
  if (gb) *gb += hsum(accb);
}

using DotsFn = void (*)(const float*, const float*, int64_t, float*, float*);
constexpr DotsFn kDots[12] = {dots_chunk<1>, dots_chunk<2>,  dots_chunk<3>,  dots_chunk<4>,
                              dots_chunk<5>, dots_chunk<6>,  dots_chunk<7>,  dots_chunk<8>,
                              dots_chunk<9>, dots_chunk<10>, dots_chunk<11>, dots_chunk<12>};

// G (K x R) += Y (K x L) . X (R x L)^T and gb (K) += the row sums of Y (gb may be null).
[[gnu::target("avx2,fma")]] void small_k_dots(const float* y, int64_t K, const float* x, int64_t R,
                                              int64_t L, float* g, float* gb) {
  const int64_t chunks = (R + 11) / 12, per = (R + chunks - 1) / chunks;
  for (int64_t k = 0; k < K; ++k)
    for (int64_t r = 0; r < R; r += per) {
      const float* yk = y + k * L;
      const float* xr = x + r * L;
      float* gk = g + k * R + r;
      float* b = gb && r == 0 ? gb + k : nullptr;
      kDots[std::min(per, R - r) - 1](yk, xr, L, gk, b);
    }
}

}  // namespace

bool small_channel_conv(ConvPass pass, const ConvGeom& g, const float* a, const float* b,
                        float* out, float* bias) {
  const int64_t ks = prod(g.kernel, g.nd), L = prod(g.out, g.nd), P = prod(g.in, g.nd);
  const int64_t R = g.c * ks, K = g.k, N = g.n;
  if (g.groups != 1 || g.c >= 8 || R > 64 || L < 8 || N < 1) return false;
  // Each thread holds one image's im2col matrix: at most 16 MiB (a 3x3 kernel on a 4K image
  // would want 576 MiB; oneDNN needs none).
  if (R * L > (int64_t(1) << 22)) return false;
  // AVX2 kernels: the default kernel set keeps oneDNN. EMBER_SMALL_CONV=0 turns the path off.
  static const bool on =
      std::strcmp(cpu_capability(), "default") != 0 &&
      !(std::getenv("EMBER_SMALL_CONV") && std::strcmp(std::getenv("EMBER_SMALL_CONV"), "0") == 0);
  if (!on) return false;
  const auto col_size = static_cast<size_t>(R * L);
  switch (pass) {
    case ConvPass::Forward:  // a = x, b = w (K x R)
      parallel_for(0, N, 1, [&](int64_t lo, int64_t hi) {
        std::vector<float> col(col_size);
        for (int64_t n = lo; n < hi; ++n) {
          im2col(a + n * g.c * P, col.data(), g.c, g);
          small_k_gemm(b, K, R, col.data(), L, bias, out + n * K * L);
        }
      });
      return true;
    case ConvPass::BackwardData: {                        // a = gy, b = w, out = gx
      std::vector<float> wt(static_cast<size_t>(R * K));  // W^T (R x K)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t r = 0; r < R; ++r) wt[size_t(r * K + k)] = b[k * R + r];
      parallel_for(0, N, 1, [&](int64_t lo, int64_t hi) {
        std::vector<float> col(col_size);
        for (int64_t n = lo; n < hi; ++n) {
          small_k_gemm(wt.data(), R, K, a + n * K * L, L, nullptr, col.data());
          float* gx = out + n * g.c * P;
          std::fill(gx, gx + g.c * P, 0.f);
          col2im(col.data(), gx, g.c, g);
        }
      });
      return true;
    }
    case ConvPass::BackwardWeights: {  // a = x, b = gy, out = gw (K x R), bias = gbias
      const int64_t blocks = (N + kImagesPerBlock - 1) / kImagesPerBlock, stride = R * K + K;
      std::vector<float> part(static_cast<size_t>(blocks * stride));  // zeros
      parallel_for(0, blocks, 1, [&](int64_t lo, int64_t hi) {
        std::vector<float> col(col_size);
        for (int64_t blk = lo; blk < hi; ++blk) {
          float* pw = part.data() + blk * stride;  // gW (K x R), then the bias gradient
          const int64_t end = std::min(N, (blk + 1) * kImagesPerBlock);
          for (int64_t n = blk * kImagesPerBlock; n < end; ++n) {
            im2col(a + n * g.c * P, col.data(), g.c, g);
            small_k_dots(b + n * K * L, K, col.data(), R, L, pw, bias ? pw + R * K : nullptr);
          }
        }
      });
      for (int64_t i = 0; i < K * R; ++i) {
        float s = 0;
        for (int64_t blk = 0; blk < blocks; ++blk) s += part[size_t(blk * stride + i)];
        out[i] = s;
      }
      if (bias)
        for (int64_t k = 0; k < K; ++k) {
          float s = 0;
          for (int64_t blk = 0; blk < blocks; ++blk) s += part[size_t(blk * stride + R * K + k)];
          bias[k] = s;
        }
      return true;
    }
  }
  return false;
}

}  // namespace ember::cpu
