// Direct float32 convolutions on channels-last copies of each image, as register-tiled products
// whose operand rows are read in place (Note [Direct convolutions]). Compiled once per CPU
// capability.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include "core/parallel_internal.h"
#include "kernels/cpu/nn/conv_dnnl.h"
#include "kernels/cpu/vec.h"
#include "kernels/cpu/vec_tile.h"

namespace ember::cpu::EMBER_CPU_CAP {
namespace {

// Note [Direct convolutions]
// A 2-d convolution is the product Y (K x P) = W (K x R) . X~ (R x P) over the im2col matrix X~
// (R = C * kh * kw rows, P = OH * OW pixels), but X~ need not exist: in a channels-last copy of
// the image (zero-padded, Hp x Wp x C), pixel p's column of X~ is kh runs of kw * C consecutive
// values (dilation 1 in width; else kh * kw runs of C), each at a fixed offset from the pixel's
// first tap. So each pass is a register-tiled product whose operand rows are read in place:
// - forward: tiles of MR pixels x NR = 2 vectors of output channels; each step broadcasts one
//   tap value of each of the MR pixels and multiplies it by NR packed weights, R in registers
//   (in blocks of at most kMaxPanelRows), started from the bias; a panel's tiles are then
//   transposed into the NCHW output by 8x8 blocks. The weights are packed once per call into
//   R x NR panels (18 KiB for 32 channels of 3x3: in L1 while the image's tiles stream past) in
//   X~'s order (tap row, tap column, channel).
// - backward data: per tap (i, j), gY^T (P x K, a channels-last copy of gy) . W_ij (K x C) is
//   added into a channels-last input gradient at the tap's offset from each pixel's first tap,
//   for any stride and padding, and the result is cropped into NCHW. No zero is multiplied (the
//   forward map of a zero-padded gy by the flipped weights does 40% more work on the first row
//   of the grid below), but each tile is added into memory once per tap: it pays from K >= 32.
// - backward weights: G (K x R) = gY (K x P) . X~^T, tiles of MR output channels (broadcasts
//   of gY) x NR consecutive entries of one run (two vector loads per pixel), summed over the
//   pixels of every image in order. Threads own disjoint tiles and go through all the images,
//   so each entry's sum has one order whatever the thread count; the images' channels-last
//   copies are made in groups of at most 16 MiB.
// Forward and backward data hand out images one at a time (for_each_image).
// oneDNN pads the channels to blocks and reorders its operands on every call; these kernels copy
// each image once per pass and run at the FMA kernel's rate from the first pixel. conv.cpp
// (direct_conv_pays) takes them where they measured faster on the avx2 set (Zen 3, 1 thread,
// GFLOP/s of ember / oneDNN; each pass timed alone, best of 5 rounds of 5-20 calls):
//   N x C x H x W -> K (3x3 unless said)      forward   weights   data
//   64x32x13x13 -> 64 (the CNN's 2nd layer)   84/49     72/54     81/75
//   64x8x28x28 -> 16, pad 1                   72/59     57/48     32/62
//   32x16x32x32 -> 32, pad 1                  83/76     62/56     73/59
//   16x64x28x28 -> 64, pad 1                  91/86     71/65     81/89
//   8x64x56x56 -> 64, pad 1                   85/85     56/59     82/88
//   8x128x28x28 -> 128, pad 1                 91/88     58/64     88/93
//   8x256x14x14 -> 256, pad 1                 91/88     68/62     85/97
//   8x512x7x7 -> 512, pad 1                   69/77     54/55     67/81
//   8x256x56x56 -> 64, 1x1                    70/64     38/58     59/65
//   8x64x56x56 -> 128, stride 2, pad 1        85/76     49/64     81/60
// On 2 threads (same harness) the forward passes above win by 3-25%, backward weights wins by
// 33-49% up to 32 input channels but loses by 5-22% from 64 (16x64x28x28, 8x128x28x28,
// 8x256x14x14), and backward data is level from 16 input channels (0.93-1.1) and loses at 8
// (0.62). So larger images and wider layers lose in backward weights (each tile row streams the
// image from L3), deep layers and 1x1 kernels are level or lose, and backward data loses below
// K = 32 or with C not a multiple of 16 (padded lanes). The other kernel sets keep oneDNN until
// measured; EMBER_DIRECT_CONV=1 forces these kernels wherever they apply (the tests), =0 turns them
// off.

constexpr int kL = kLanes<float>;
constexpr int kNR = 2 * kL;
using V = vfloat;

/// A 2-d convolution in this file's terms (a 1-d one has H = OH = kh = 1).
struct Shape {
  int64_t c, h, w;    // input channels and size
  int64_t k, oh, ow;  // output channels and size
  int64_t kh, kw, sh, sw, dh, dw;
  int64_t pt, pl;                // top and left padding
  int64_t hp, wp;                // the channels-last copy: the rows and columns the taps reach
  int64_t seg_len;               // kw * c (dilation 1 in width) or c
  std::vector<int64_t> seg_off;  // each run's offset from a pixel's first tap
  std::vector<int64_t> pix;      // each output pixel's first tap in the copy

  int64_t taps() const { return kh * kw * c; }
  int64_t image() const { return hp * wp * c; }
};

Shape make_shape(int64_t c, int64_t h, int64_t w, int64_t k, int64_t oh, int64_t ow, int64_t kh,
                 int64_t kw, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t pt,
                 int64_t pl) {
  Shape s{c, h, w, k, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, 0, 0, 0, {}, {}};
  s.hp = (oh - 1) * sh + (kh - 1) * dh + 1;
  s.wp = (ow - 1) * sw + (kw - 1) * dw + 1;
  if (dw == 1) {
    s.seg_len = kw * c;
    for (int64_t i = 0; i < kh; ++i) s.seg_off.push_back(i * dh * s.wp * c);
  } else {
    s.seg_len = c;
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j) s.seg_off.push_back((i * dh * s.wp + j * dw) * c);
  }
  s.pix.resize(size_t(oh * ow));
  for (int64_t y = 0; y < oh; ++y)
    for (int64_t x = 0; x < ow; ++x) s.pix[size_t(y * ow + x)] = (y * sh * s.wp + x * sw) * c;
  return s;
}

/// A 64-byte aligned float buffer: a channels-last pixel of 16 channels is one cache line.
class Buffer {
 public:
  explicit Buffer(int64_t n) : p_(new (std::align_val_t(64)) float[size_t(n)]) {}
  ~Buffer() { ::operator delete[](p_, std::align_val_t(64)); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  float* get() const { return p_; }

 private:
  float* p_;
};

/// dst[p * ldd + q] = src[q * lds + p] for p < rows, q < cols: 8x8 blocks in registers where
/// the ISA has them, scalars at the edges.
void transpose(const float* src, int64_t lds, float* dst, int64_t ldd, int64_t rows, int64_t cols) {
  int64_t p = 0;
#if defined(__AVX__)
  for (; p + 8 <= rows; p += 8) {
    int64_t q = 0;
    for (; q + 8 <= cols; q += 8) transpose8x8(src + q * lds + p, lds, dst + p * ldd + q, ldd);
    for (; q < cols; ++q)
      for (int64_t i = p; i < p + 8; ++i) dst[i * ldd + q] = src[q * lds + i];
  }
#endif
  for (; p < rows; ++p)
    for (int64_t q = 0; q < cols; ++q) dst[p * ldd + q] = src[q * lds + p];
}

/// dst (hp x wp x c, zero where no input lands) = src (c x h x w) placed at (pt, pl).
void to_channels_last(const float* src, const Shape& s, float* dst) {
  const int64_t w0 = std::max<int64_t>(0, -s.pl), w1 = std::min(s.w, s.wp - s.pl);
  const int64_t y0 = std::max<int64_t>(0, -s.pt), y1 = std::min(s.h, s.hp - s.pt);
  if (s.pt > 0 || s.pl > 0 || y1 - y0 < s.hp || w1 - w0 < s.wp)
    std::memset(dst, 0, sizeof(float) * size_t(s.image()));
  for (int64_t y = y0; y < y1; ++y)
    transpose(src + y * s.w + w0, s.h * s.w, dst + ((y + s.pt) * s.wp + s.pl + w0) * s.c, s.c,
              w1 - w0, s.c);
}

/// Packs the forward operand: panels of NR output channels, R x NR each (zero past k), row
/// (i * kw + j) * c + ch holding w(o, ch, i, j) (w: k x c x kh x kw) for the panel's channels o.
std::vector<float> pack_weights(const Shape& s, const float* w) {
  const int64_t R = s.taps(), panels = (s.k + kNR - 1) / kNR, taps = s.kh * s.kw;
  std::vector<float> p(size_t(panels * R * kNR), 0.f);
  for (int64_t q = 0; q < panels; ++q)
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t ch = 0; ch < s.c; ++ch) {
        float* row = p.data() + (q * R + t * s.c + ch) * kNR;
        for (int64_t o = q * kNR; o < std::min(s.k, (q + 1) * kNR); ++o)
          row[o - q * kNR] = w[(o * s.c + ch) * taps + t];
      }
  return p;
}

/// tile (MR x NR) = start + the tile of X~^T . B for pixels rows[] (first taps) over runs
/// [s0, s1) of B's panel `b` (which starts at run s0); start is `init` (NR values, each row)
/// when given, else the tile itself.
[[gnu::always_inline]] inline void forward_tile(const float* const (&rows)[kMR], const Shape& s,
                                                int64_t s0, int64_t s1, const float* b, float* tile,
                                                const float* init) {
  V acc[kMR][2];
#pragma GCC unroll 16
  for (int r = 0; r < kMR; ++r) {
    acc[r][0] = vload<V>(init ? init : tile + r * kNR);
    acc[r][1] = vload<V>(init ? init + kL : tile + r * kNR + kL);
  }
  const int64_t len = s.seg_len;
  for (int64_t seg = s0; seg < s1; ++seg) {
    const int64_t off = s.seg_off[size_t(seg)];
    const float* rp[kMR];
#pragma GCC unroll 16
    for (int r = 0; r < kMR; ++r) rp[r] = rows[r] + off;
    b = tile_steps(acc, rp, 0, len, b, kNR);
  }
#pragma GCC unroll 16
  for (int r = 0; r < kMR; ++r) {
    vstore(tile + r * kNR, acc[r][0]);
    vstore(tile + r * kNR + kL, acc[r][1]);
  }
}

/// The rows of B held in L1 while an image's tiles stream past (20 KiB of float at NR = 16).
constexpr int64_t kMaxPanelRows = 320;

/// out (k x oh*ow) = the forward map of one channels-last image `xp` with the packed weights,
/// plus bias (may be null). `scratch` holds a panel's tiles: pixels (rounded up to MR) x NR.
void forward_image(const float* xp, const Shape& s, const float* packed, const float* bias,
                   float* out, float* scratch) {
  const int64_t P = s.oh * s.ow, R = s.taps(), panels = (s.k + kNR - 1) / kNR;
  const auto nseg = int64_t(s.seg_off.size());
  // Runs are taken in blocks of at most kMaxPanelRows rows of B (at least one run).
  const int64_t per_block = std::max<int64_t>(1, kMaxPanelRows / s.seg_len);
  alignas(64) float init[kNR];
  for (int64_t q = 0; q < panels; ++q) {
    const int64_t o0 = q * kNR, nr = std::min<int64_t>(kNR, s.k - o0);
    for (int64_t o = 0; o < kNR; ++o) init[o] = bias && o < nr ? bias[o0 + o] : 0.f;
    for (int64_t s0 = 0; s0 < nseg; s0 += per_block) {
      const int64_t s1 = std::min(nseg, s0 + per_block);
      const float* b = packed + (q * R + s0 * s.seg_len) * kNR;
      for (int64_t p0 = 0; p0 < P; p0 += kMR) {
        const float* rows[kMR];
#pragma GCC unroll 16
        for (int r = 0; r < kMR; ++r) rows[r] = xp + s.pix[size_t(std::min(p0 + r, P - 1))];
        forward_tile(rows, s, s0, s1, b, scratch + p0 * kNR, s0 == 0 ? init : nullptr);
      }
    }
    transpose(scratch, kNR, out + o0 * P, P, nr, P);
  }
}

/// body(i, a, b) for every image i < n, with two per-thread buffers of na and nb floats. Images
/// are handed out one at a time, so a thread whose core is taken away for a while (a preempted
/// vCPU) does fewer of them instead of holding the others at the join. Each image is independent.
template <class Body>
void for_each_image(int64_t n, int64_t na, int64_t nb, const Body& body) {
  std::atomic<int64_t> next{0};
  parallel_for(0, std::min<int64_t>(n, detail::g_num_threads), 1, [&](int64_t, int64_t) {
    Buffer a(na), b(nb);
    for (int64_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;)
      body(i, a.get(), b.get());
  });
}

/// Forward maps of n images (x: n x c x h x w) into y (n x k x oh x ow), threaded over images.
void forward_images(const float* x, int64_t n, const Shape& s, const std::vector<float>& packed,
                    const float* bias, float* y) {
  const int64_t in_size = s.c * s.h * s.w, out_size = s.k * s.oh * s.ow;
  for_each_image(n, s.image(), (s.oh * s.ow + kMR) * kNR,
                 [&](int64_t i, float* xp, float* scratch) {
                   to_channels_last(x + i * in_size, s, xp);
                   forward_image(xp, s, packed.data(), bias, y + i * out_size, scratch);
                 });
}

/// gxp rows dst[r] (r < mr) += the MR x NR tile of A . B, A's rows rows[r] (len values each),
/// B's panel b (len x NR).
[[gnu::always_inline]] inline void scatter_tile(const float* const (&rows)[kMR], int64_t len,
                                                const float* b, float* const (&dst)[kMR],
                                                int64_t mr) {
  V acc[kMR][2];
#pragma GCC unroll 16
  for (int r = 0; r < kMR; ++r) acc[r][0] = acc[r][1] = V{};
  tile_steps(acc, rows, 0, len, b, kNR);
#pragma GCC unroll 16
  for (int r = 0; r < kMR; ++r) {
    if (r >= mr) break;
    vstore(dst[r], vload<V>(dst[r]) + acc[r][0]);
    vstore(dst[r] + kL, vload<V>(dst[r] + kL) + acc[r][1]);
  }
}

/// gx (n x c x h x w) = the data gradient of gy (n x k x oh x ow) and weights w (k x c x kh x
/// kw), for any stride: each tap (i, j) adds gY^T (P x K) . W_ij (K x C) into the channels-last
/// input gradient at the tap's offset from every pixel's first tap (no zeros multiplied).
void backward_data(const float* gy, const float* w, int64_t n, const Shape& s, float* gx) {
  const int64_t P = s.oh * s.ow, K = s.k, C = s.c, taps = s.kh * s.kw;
  const int64_t panels = (C + kNR - 1) / kNR, cp = panels * kNR;  // gx's channels, padded
  // Panels of W_ij: [tap][panel][k][NR], zero past c.
  std::vector<float> packed(size_t(taps * panels * K * kNR), 0.f);
  for (int64_t t = 0; t < taps; ++t)
    for (int64_t q = 0; q < panels; ++q)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t c = q * kNR; c < std::min(C, (q + 1) * kNR); ++c)
          packed[size_t(((t * panels + q) * K + k) * kNR + c - q * kNR)] =
              w[(k * C + c) * taps + t];
  std::vector<int64_t> pix(static_cast<size_t>(P)), tap_off(static_cast<size_t>(taps));
  for (int64_t y = 0; y < s.oh; ++y)
    for (int64_t x = 0; x < s.ow; ++x)
      pix[size_t(y * s.ow + x)] = (y * s.sh * s.wp + x * s.sw) * cp;
  for (int64_t i = 0; i < s.kh; ++i)
    for (int64_t j = 0; j < s.kw; ++j)
      tap_off[size_t(i * s.kw + j)] = (i * s.dh * s.wp + j * s.dw) * cp;
  const int64_t in_size = C * s.h * s.w;
  for_each_image(n, P * K, s.hp * s.wp * cp, [&](int64_t img, float* gyc, float* gxp) {
    transpose(gy + img * K * P, P, gyc, K, P, K);
    std::memset(gxp, 0, sizeof(float) * size_t(s.hp * s.wp * cp));
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t q = 0; q < panels; ++q) {
        const float* b = packed.data() + (t * panels + q) * K * kNR;
        float* base = gxp + tap_off[size_t(t)] + q * kNR;
        for (int64_t p0 = 0; p0 < P; p0 += kMR) {
          const int64_t mr = std::min<int64_t>(kMR, P - p0);
          const float* rows[kMR];
          float* dst[kMR];
#pragma GCC unroll 16
          for (int r = 0; r < kMR; ++r) {
            const int64_t p = std::min(p0 + r, P - 1);
            rows[r] = gyc + p * K;
            dst[r] = base + pix[size_t(p)];
          }
          scatter_tile(rows, K, b, dst, mr);
        }
      }
    // Crop: input rows and columns that no tap reaches get zeros.
    float* out = gx + img * in_size;
    for (int64_t y = 0; y < s.h; ++y) {
      const int64_t yp = y + s.pt;
      const int64_t w1 = yp < s.hp ? std::clamp<int64_t>(s.wp - s.pl, 0, s.w) : 0;
      if (w1 > 0) transpose(gxp + (yp * s.wp + s.pl) * cp, cp, out + y * s.w, s.h * s.w, C, w1);
      for (int64_t c = 0; c < C && w1 < s.w; ++c)
        std::fill(out + (c * s.h + y) * s.w + w1, out + (c * s.h + y) * s.w + s.w, 0.f);
    }
  });
}

/// Images per weight_tile call: the tile's accumulators stay in registers across them (for
/// 11x11 outputs one image is only 121 steps).
constexpr int64_t kImagesPerTile = 4;

/// G's tile gt (MR rows ldg apart, NR entries of one run) += the sum over the pixels of images
/// [0, count) of gy[i][r][p] * X~_i(off + l0 .. + NR, p), images and pixels in order. Image i's
/// rows are gy[r] + i * gy_step, its channels-last copy xp + i * xp_step.
[[gnu::noinline]] void weight_tile(const float* const (&gy)[kMR], int64_t gy_step, const float* xp,
                                   int64_t xp_step, int64_t count, const Shape& s, int64_t off,
                                   float* gt, int64_t ldg) {
  V acc[kMR][2];
#pragma GCC unroll 16
  for (int r = 0; r < kMR; ++r) {
    acc[r][0] = vload<V>(gt + r * ldg);
    acc[r][1] = vload<V>(gt + r * ldg + kL);
  }
  const int64_t* pix = s.pix.data();
  const auto P = int64_t(s.pix.size());
  for (int64_t i = 0; i < count; ++i) {
    const float* g[kMR];
#pragma GCC unroll 16
    for (int r = 0; r < kMR; ++r) g[r] = gy[r] + i * gy_step;
    const float* a = xp + i * xp_step + off;
    for (int64_t p = 0; p < P; ++p) {
      const float* ap = a + pix[p];
      tile_fma(
          acc, [&](int r) { return g[r][p]; }, vload<V>(ap), vload<V>(ap + kL));
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < kMR; ++r) {
    vstore(gt + r * ldg, acc[r][0]);
    vstore(gt + r * ldg + kL, acc[r][1]);
  }
}

/// gw (k x c x kh x kw) and gbias (may be null) of n images x and gradients gy.
void backward_weights(const float* x, const float* gy, int64_t n, const Shape& s, float* gw,
                      float* gbias) {
  const int64_t P = s.oh * s.ow, in_size = s.c * s.h * s.w, out_size = s.k * P;
  const int64_t len = s.seg_len, lenp = (len + kNR - 1) / kNR * kNR;
  const auto nseg = int64_t(s.seg_off.size());
  const int64_t row_tiles = (s.k + kMR - 1) / kMR, col_tiles = nseg * (lenp / kNR);
  const int64_t ldg = nseg * lenp;  // G's rows: the runs, each padded to whole tiles
  std::vector<float> G(size_t(row_tiles * kMR * ldg), 0.f);
  // Channels-last copies of a group of images (the last tile of a run reads past its end: the
  // slack keeps that inside the buffer; those lanes are never stored).
  const int64_t img = s.image(), group = std::max<int64_t>(1, (int64_t(4) << 20) / img);
  Buffer xp(std::min(n, group) * img + kNR);
  std::fill(xp.get() + std::min(n, group) * img, xp.get() + std::min(n, group) * img + kNR, 0.f);
  for (int64_t g0 = 0; g0 < n; g0 += group) {
    const int64_t g1 = std::min(n, g0 + group);
    parallel_for(g0, g1, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i)
        to_channels_last(x + i * in_size, s, xp.get() + (i - g0) * img);
    });
    parallel_for(0, row_tiles * col_tiles, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t i = g0; i < g1; i += kImagesPerTile) {
        const int64_t count = std::min(kImagesPerTile, g1 - i);
        const float* xi = xp.get() + (i - g0) * img;
        for (int64_t t = lo; t < hi; ++t) {
          const int64_t rt = t / col_tiles, ct = t % col_tiles;
          const int64_t seg = ct / (lenp / kNR), l0 = ct % (lenp / kNR) * kNR;
          const float* rows[kMR];
          for (int r = 0; r < kMR; ++r)
            rows[r] = gy + i * out_size + std::min<int64_t>(rt * kMR + r, s.k - 1) * P;
          float* gt = G.data() + rt * kMR * ldg + seg * lenp + l0;
          weight_tile(rows, out_size, xi, img, count, s, s.seg_off[size_t(seg)] + l0, gt, ldg);
        }
      }
    });
  }
  for (int64_t o = 0; o < s.k; ++o)
    for (int64_t ch = 0; ch < s.c; ++ch)
      for (int64_t i = 0; i < s.kh; ++i)
        for (int64_t j = 0; j < s.kw; ++j) {
          const int64_t r = (i * s.kw + j) * s.c + ch;
          gw[((o * s.c + ch) * s.kh + i) * s.kw + j] =
              G[size_t(o * ldg + r / len * lenp + r % len)];
        }
  if (gbias)
    parallel_for(0, s.k, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t o = lo; o < hi; ++o) {
        float total = 0.f;
        for (int64_t i = 0; i < n; ++i) {
          const float* row = gy + i * out_size + o * P;
          V acc = V{};
          int64_t p = 0;
          for (; p + kL <= P; p += kL) acc += vload<V>(row + p);
          float part = 0.f;
          for (int l = 0; l < kL; ++l) part += acc[l];
          for (; p < P; ++p) part += row[p];
          total += part;
        }
        gbias[o] = total;
      }
    });
}

}  // namespace

bool direct_conv(ConvPass pass, const ConvGeom& g, const float* a, const float* b, float* out,
                 float* bias) {
  if (g.groups != 1 || g.nd > 2 || g.n < 1) return false;
  // A 1-d problem is a 2-d one with a single row.
  const bool d2 = g.nd == 2;
  const int64_t h = d2 ? g.in[0] : 1, w = g.in[d2 ? 1 : 0];
  const int64_t oh = d2 ? g.out[0] : 1, ow = g.out[d2 ? 1 : 0];
  const int64_t kh = d2 ? g.kernel[0] : 1, kw = g.kernel[d2 ? 1 : 0];
  const int64_t sh = d2 ? g.stride[0] : 1, sw = g.stride[d2 ? 1 : 0];
  const int64_t dh = d2 ? g.dilation[0] : 1, dw = g.dilation[d2 ? 1 : 0];
  const int64_t pt = d2 ? g.pad_l[0] : 0, pl = g.pad_l[d2 ? 1 : 0];
  if (oh < 1 || ow < 1) return false;
  switch (pass) {
    case ConvPass::Forward: {  // a = x, b = w (k x c x kh x kw)
      const Shape s = make_shape(g.c, h, w, g.k, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl);
      forward_images(a, g.n, s, pack_weights(s, b), bias, out);
      return true;
    }
    case ConvPass::BackwardData: {  // a = gy, b = w, out = gx
      const Shape s = make_shape(g.c, h, w, g.k, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl);
      backward_data(a, b, g.n, s, out);
      return true;
    }
    case ConvPass::BackwardWeights: {  // a = x, b = gy, out = gw, bias = gbias
      const Shape s = make_shape(g.c, h, w, g.k, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl);
      backward_weights(a, b, g.n, s, out, bias);
      return true;
    }
  }
  return false;
}

}  // namespace ember::cpu::EMBER_CPU_CAP
