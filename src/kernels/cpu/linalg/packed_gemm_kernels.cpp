// ember's own float32/float64 GEMM (Note [Packed GEMM]). Compiled once per CPU capability.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <numeric>
#include <type_traits>

#include <immintrin.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "core/parallel_internal.h"
#include "kernels/cpu/linalg/packed_gemm.h"
#include "kernels/cpu/vec.h"
#include "kernels/cpu/vec_tile.h"

namespace ember::cpu::EMBER_CPU_CAP {
namespace {

// Note [Packed GEMM]
// OpenBLAS reaches the FMA peak on large products, but below about 400^3 its packing of both
// operands, its buffers and its thread start-up cost as much as 10-40% of the product, and a
// batch of small products (bmm) pays that per product. This GEMM has two loop nests over one
// kind of register tile, an MR×NR block of accumulators (NR = two vectors; MR = 6 on
// 16-register ISAs, 8 with AVX-512's 32), updated by one broadcast of A and two vector loads of
// B per step along k, and written to C once per k block with alpha and beta (beta == 0 never
// reads C).
// The in-place nest (gemm_block), for products below kBlockedMinWork, packs as little as it can:
// - A is read in place: MR row pointers when it is row-major (rows past a ragged end repeat the
//   last one), MR consecutive values per k step when it is stored transposed. A transposed A
//   whose rows would alias in L1 (fits_l1_in_place) is packed per block into kc×MR panels, and
//   otherwise only its ragged last row panel is;
// - B is read in place when it is row-major and its rows fit L1 without aliasing, or when so
//   few row panels reuse it that packing would not pay; otherwise each k block of a thread's
//   columns is packed into kc×NR panels (transposed B, nn.Linear's weight, by 8×8 transposes),
//   and the ragged last column panel always is, zero padded;
// - k is blocked by KC so that one kc×NR panel of B stays in L1 while every row panel of the
//   thread's A block streams past it; rows are blocked by MC so that A's block stays in L2.
// The blocked nest (gemm_block_packed), for larger products, is the classic one for the three
// cache levels (Zen 3: 32 KiB L1d, 512 KiB L2, 32 MiB shared L3): each kc×nc block of B is
// packed once into kc×NR panels (2 MiB at most, L3), each mc×kc block of A under it into kc×MR
// panels (L2; row-major A by 8×8 transposes, transposed A row by row so that each of its lines
// is read once), and every tile is computed with B's kc×NR panel (16 KiB) held in L1 while A's
// panels stream from L2. k, rows and columns are cut into equal
// blocks (no thin last block). The tile kernel prefetches A's panel ahead, the next B panel
// into L1 over the first tiles of a column (it comes from L3 otherwise, a stall per column),
// and C's rows of this tile (L1) and the next (L2 only: with a power-of-two ldc all those
// rows share one L1 set). Packed buffers of a megabyte or more ask for huge pages.
// Both nests: threads split C into a grid of tile-aligned blocks, one independent product each
// (no barrier), one thread per 96^3 multiply-adds at most. Every element is the same k-ordered
// sum whatever the split, so results do not depend on the thread count.
// blas_gemm (gemm.cpp) uses it where it was measured faster than OpenBLAS (Note [GEMM choice]).

template <class T>
constexpr int kNR = 2 * kLanes<T>;
constexpr int64_t kKC = 256;              // a kc×NR panel of B: 16 KiB for float and double alike
constexpr int64_t kMC = kMR * 20;         // an mc×kc block of A: 120-160 KiB (float), in L2
constexpr int64_t kNC = 2048;             // a packed kc×nc block of B: 2 MiB (float)
constexpr int64_t kMCBlocked = kMR * 24;  // the blocked nest's mc×kc block of A: 144-192 KiB
constexpr double kBlockedMinWork = 160.0 * 160.0 * 160.0;

/// Whether kc rows of a panel read in place, `stride` elements apart, stay in L1: a stride of
/// s cache lines maps them to 64 / gcd(s, 64) of L1's 64 sets (8 ways each; a 4 KiB stride puts
/// every row in one set), and half of those lines are left to the other operands.
template <class T>
bool fits_l1_in_place(int64_t stride, int64_t kc) {
  const int64_t bytes = stride * int64_t(sizeof(T));
  if (bytes >= 4096) return false;        // a page per row: kc rows overflow the L1 TLB
  if (bytes % 64 != 0) return kc <= 256;  // rows start at different offsets: sets spread
  const int64_t sets = 64 / std::gcd<int64_t>(bytes / 64, 64);
  return kc <= sets * 4;
}

/// Where the micro-kernel reads its MR×kc slice of A: A(r, p) = rows[r][p] (row-major A), or
/// A(r, p) = cols[p * cps + r] (transposed A in place, or a packed panel).
template <class T>
struct APanel {
  const T* rows[kMR];
  const T* cols;
  int64_t cps;
};

/// C(mr×nr) = alpha * acc + beta * C (beta == 0: C is not read).
template <class T>
__attribute__((always_inline)) inline void write_tile(Vec<T> (&acc)[kMR][2], T alpha, T beta, T* c,
                                                      int64_t ldc, int mr, int nr) {
  using V = Vec<T>;
  constexpr int L = kLanes<T>;
  const V va = bcast(alpha), vb = bcast(beta);
  if (nr == kNR<T>) {
#pragma GCC unroll 16
    for (int r = 0; r < kMR; ++r) {
      if (r >= mr) break;
      T* cr = c + r * ldc;
      V x0 = acc[r][0] * va, x1 = acc[r][1] * va;
      if (beta != T(0)) {
        x0 = vfma(vb, vload<V>(cr), x0);
        x1 = vfma(vb, vload<V>(cr + L), x1);
      }
      vstore(cr, x0);
      vstore(cr + L, x1);
    }
    return;
  }
  alignas(64) T buf[kMR][kNR<T>];
  for (int r = 0; r < kMR; ++r) {
    vstore(&buf[r][0], acc[r][0] * va);
    vstore(&buf[r][L], acc[r][1] * va);
  }
  for (int r = 0; r < mr; ++r) {
    T* cr = c + r * ldc;
    if (beta != T(0)) {
      for (int q = 0; q < nr; ++q) cr[q] = beta * cr[q] + buf[r][q];
    } else {
      for (int q = 0; q < nr; ++q) cr[q] = buf[r][q];
    }
  }
}

/// The MR×NR tile of C at c = alpha * A·B + beta * C over kc steps; B row p is b[p * bps ..+NR).
template <class T, bool kRows>
void micro_kernel(int64_t kc, const APanel<T>& ap, const T* __restrict b, int64_t bps, T alpha,
                  T beta, T* c, int64_t ldc, int mr, int nr) {
  using V = Vec<T>;
  constexpr int L = kLanes<T>;
  V acc[kMR][2];
#pragma GCC unroll 16
  for (int r = 0; r < kMR; ++r) {
    acc[r][0] = acc[r][1] = V{};
    // C's lines are fetched for writing while the tile is computed.
    __builtin_prefetch(c + r * ldc, 1);
    __builtin_prefetch(c + r * ldc + kNR<T> - 1, 1);
  }
  if constexpr (kRows) {
    const T* rp[kMR];
    for (int r = 0; r < kMR; ++r) rp[r] = ap.rows[r];
    // Rows read in place are MR streams: a line of each is prefetched a few lines ahead.
    constexpr int64_t kLine = 64 / int64_t(sizeof(T));
    for (int64_t p0 = 0; p0 < kc; p0 += kLine) {
#pragma GCC unroll 16
      for (int r = 0; r < kMR; ++r) __builtin_prefetch(rp[r] + p0 + 4 * kLine);
      b = tile_steps<T>(acc, rp, p0, std::min(kc, p0 + kLine), b, bps);
    }
  } else {
    const T* a = ap.cols;
    const int64_t aps = ap.cps;
#pragma GCC unroll 2
    for (int64_t p = 0; p < kc; ++p) {
      tile_fma(
          acc, [&](int r) { return a[r]; }, vload<V>(b), vload<V>(b + L));
      b += bps;
      a += aps;
    }
  }
  write_tile<T>(acc, alpha, beta, c, ldc, mr, nr);
}

/// The MR×NR tile of C at c = alpha * A·B + beta * C over kc steps of a packed kc×MR panel of A
/// and a packed kc×NR panel of B (Note [Packed GEMM], the blocked path). Not inlined: one call
/// per tile costs nothing against its kc·MR·NR multiply-adds, and keeps the loop's registers
/// its own.
template <class T>
__attribute__((noinline)) void micro_kernel_packed(int64_t kc, const T* __restrict a,
                                                   const T* __restrict b, const T* bnext, T alpha,
                                                   T beta, T* c, int64_t ldc, int mr, int nr) {
  using V = Vec<T>;
  constexpr int L = kLanes<T>, NR = kNR<T>;
  // A's panel streams from L2: the lines 8 steps of 8 ahead are asked for each 8 steps.
  constexpr int kU = 8;
  constexpr int kLinesPerU = int(kU * kMR * sizeof(T) + 63) / 64;
  constexpr int64_t kAhead = 8 * kU * kMR;
  V acc[kMR][2];
#pragma GCC unroll 16
  for (int r = 0; r < kMR; ++r) {
    acc[r][0] = acc[r][1] = V{};
    // This tile's rows of C are fetched for writing, and the next tile's (below it) into L2
    // only: with a power-of-two ldc, all of those rows fall in one L1 set.
    __builtin_prefetch(c + r * ldc, 1);
    __builtin_prefetch(c + r * ldc + NR - 1, 1);
    __builtin_prefetch(c + (kMR + r) * ldc, 1, 2);
    __builtin_prefetch(c + (kMR + r) * ldc + NR - 1, 1, 2);
  }
  int64_t p = 0;
  for (; p + kU <= kc; p += kU) {
#pragma GCC unroll 8
    for (int l = 0; l < kLinesPerU; ++l) __builtin_prefetch(a + kAhead + l * (64 / sizeof(T)));
    __builtin_prefetch(bnext);
    bnext += 64 / sizeof(T);
#pragma GCC unroll 8
    for (int q = 0; q < kU; ++q)
      tile_fma(
          acc, [&](int r) { return a[q * kMR + r]; }, vload<V>(b + q * NR),
          vload<V>(b + q * NR + L));
    a += kU * kMR;
    b += kU * NR;
  }
  for (; p < kc; ++p) {
    tile_fma(
        acc, [&](int r) { return a[r]; }, vload<V>(b), vload<V>(b + L));
    a += kMR;
    b += NR;
  }
  write_tile<T>(acc, alpha, beta, c, ldc, mr, nr);
}

/// A per-thread buffer that only grows, 64-byte aligned (so packed B rows are whole lines).
/// Buffers of a megabyte or more are aligned to 2 MiB and asked for as transparent huge pages
/// (Linux's madvise mode): a packed block of B then takes one TLB entry instead of 512.
template <class T>
T* scratch(int slot, int64_t n) {
  constexpr size_t kHuge = size_t(2) << 20;
  struct Buf {
    T* p = nullptr;
    int64_t cap = 0;
    size_t align = 64;
    ~Buf() { ::operator delete[](p, std::align_val_t(align)); }
  };
  static thread_local Buf bufs[2];
  Buf& b = bufs[slot];
  if (b.cap < n) {
    ::operator delete[](b.p, std::align_val_t(b.align));
    size_t bytes = size_t(n) * sizeof(T);
    b.align = bytes >= kHuge / 2 ? kHuge : 64;
    if (b.align == kHuge) bytes = (bytes + kHuge - 1) / kHuge * kHuge;
    b.p = static_cast<T*>(::operator new[](bytes, std::align_val_t(b.align)));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (b.align == kHuge) madvise(b.p, bytes, MADV_HUGEPAGE);  // advice only: errors ignored
#endif
    b.cap = int64_t(bytes / sizeof(T));
  }
  return b.p;
}

/// The operands of one product, with op(A)(i, p) and op(B)(p, j) as in blas_gemm.
template <class T>
struct Problem {
  bool ta, tb;
  int64_t m, n, k;
  T alpha;
  const T* a;
  int64_t lda;
  const T* b;
  int64_t ldb;
  T beta;
  T* c;
  int64_t ldc;
};

/// Packs op(B)[pc:pc+kc, j0:j0+nc] into kc×NR panels, the last one zero padded.
template <class T>
void pack_b(const Problem<T>& P, int64_t pc, int64_t kc, int64_t j0, int64_t nc, T* dst) {
  constexpr int NR = kNR<T>;
  for (int64_t jp = 0; jp < nc; jp += NR, dst += kc * NR) {
    const int64_t w = std::min<int64_t>(NR, nc - jp);
#if defined(__AVX__)
    if constexpr (std::is_same_v<T, float>) {
      if (P.tb && w == NR) {
        // B^T stored n×k (nn.Linear's weight): 8×8 transposes, the last k steps one by one.
        const T* src = P.b + (j0 + jp) * P.ldb + pc;
        const int64_t k8 = kc / 8 * 8;
        for (int64_t p = 0; p < k8; p += 8)
          for (int q = 0; q < NR; q += 8)
            transpose8x8(src + q * P.ldb + p, P.ldb, dst + p * NR + q, NR);
        for (int64_t p = k8; p < kc; ++p)
          for (int q = 0; q < NR; ++q) dst[p * NR + q] = src[q * P.ldb + p];
        continue;
      }
    }
#endif
    if (!P.tb && w == NR) {
      using V = Vec<T>;
      constexpr int L = kLanes<T>;
      const T* src = P.b + pc * P.ldb + j0 + jp;
      for (int64_t p = 0; p < kc; ++p, src += P.ldb) {
        vstore(dst + p * NR, vload<V>(src));
        vstore(dst + p * NR + L, vload<V>(src + L));
      }
    } else if (!P.tb) {
      const T* src = P.b + pc * P.ldb + j0 + jp;
      for (int64_t p = 0; p < kc; ++p, src += P.ldb) {
        std::memcpy(dst + p * NR, src, size_t(w) * sizeof(T));
        for (int64_t q = w; q < NR; ++q) dst[p * NR + q] = T(0);
      }
    } else {
      // B^T is stored n×k: column j of op(B) is a contiguous row.
      for (int64_t q = 0; q < w; ++q) {
        const T* src = P.b + (j0 + jp + q) * P.ldb + pc;
        for (int64_t p = 0; p < kc; ++p) dst[p * NR + q] = src[p];
      }
      for (int64_t q = w; q < NR; ++q)
        for (int64_t p = 0; p < kc; ++p) dst[p * NR + q] = T(0);
    }
  }
}

/// Packs op(A)[i0:i0+h, pc:pc+kc] (h <= MR) into one kc×MR panel, zero padded.
template <class T>
void pack_a_panel(const Problem<T>& P, int64_t i0, int64_t h, int64_t pc, int64_t kc, T* dst) {
  if (P.ta && h == kMR) {  // a fixed-size copy per k step (inlined, unlike memcpy of h values)
    const T* src = P.a + pc * P.lda + i0;
    for (int64_t p = 0; p < kc; ++p, src += P.lda) std::memcpy(dst + p * kMR, src, sizeof(T) * kMR);
    return;
  }
  for (int64_t p = 0; p < kc; ++p) {
    T* d = dst + p * kMR;
    if (P.ta) {
      const T* src = P.a + (pc + p) * P.lda + i0;
      for (int64_t r = 0; r < h; ++r) d[r] = src[r];
    } else {
      for (int64_t r = 0; r < h; ++r) d[r] = P.a[(i0 + r) * P.lda + pc + p];
    }
    for (int64_t r = h; r < kMR; ++r) d[r] = T(0);
  }
}

#if defined(__AVX__)
/// dst[p * MR + r] = rows[r][p] for r < MR, p < 8: an 8×8 transpose whose rows past MR repeat
/// the last one, stored in order of p so that each 8-wide store's overhang past MR values is
/// overwritten by the next (the last one writes 8 - MR floats past the 8 steps).
inline void transpose_rows8(const float* const (&rows)[kMR], int64_t p, float* dst) {
  __m256 r[8], o[8];
  for (int q = 0; q < 8; ++q) r[q] = _mm256_loadu_ps(rows[std::min(q, kMR - 1)] + p);
  transpose8_regs(r, o);
  for (int q = 0; q < 8; ++q) _mm256_storeu_ps(dst + q * kMR, o[q]);
}
#endif

/// Packs op(A)[ic:ic+mc, pc:pc+kc] into consecutive kc×MR panels, the last one zero padded.
/// `dst` holds kPackPad values past the panels (transpose_rows8's overhang).
template <class T>
void pack_a_block(const Problem<T>& P, int64_t ic, int64_t mc, int64_t pc, int64_t kc, T* dst) {
  if (P.ta) {
    // A^T stored k×m: row p of the block is mc contiguous values, dealt out MR to each panel,
    // so that each line of A is read once (panel by panel, kc rows lda apart would be read once
    // per panel, and with a power-of-two lda they do not stay in cache).
    const int64_t full = mc / kMR * kMR;
    const T* src = P.a + pc * P.lda + ic;
    for (int64_t p = 0; p < kc; ++p, src += P.lda) {
      T* d = dst + p * kMR;
      for (int64_t ir = 0; ir < full; ir += kMR, d += kc * kMR)
        std::memcpy(d, src + ir, sizeof(T) * kMR);
      if (full < mc) {
        for (int64_t r = 0; r < mc - full; ++r) d[r] = src[full + r];
        for (int64_t r = mc - full; r < kMR; ++r) d[r] = T(0);
      }
    }
    return;
  }
  for (int64_t ir = 0; ir < mc; ir += kMR, dst += kc * kMR) {
    const int64_t h = std::min<int64_t>(kMR, mc - ir);
#if defined(__AVX__)
    if constexpr (std::is_same_v<T, float>) {
      if (!P.ta && h == kMR) {
        // Row-major A: 8 steps of MR rows per transpose, the last steps one by one.
        const float* rows[kMR];
        for (int r = 0; r < kMR; ++r) rows[r] = P.a + (ic + ir + r) * P.lda + pc;
        const int64_t k8 = kc / 8 * 8;
        for (int64_t p = 0; p < k8; p += 8) transpose_rows8(rows, p, dst + p * kMR);
        for (int64_t p = k8; p < kc; ++p)
          for (int r = 0; r < kMR; ++r) dst[p * kMR + r] = rows[r][p];
        continue;
      }
    }
#endif
    pack_a_panel(P, ic + ir, h, pc, kc, dst);
  }
}

/// Values allocated past a packed block of A (transpose_rows8 writes up to 8 - MR floats past).
constexpr int64_t kPackPad = 16;

/// Splits n into the fewest blocks of at most `max` whose sizes (but the last) are equal
/// multiples of `unit`: the block size.
inline int64_t balanced_block(int64_t n, int64_t max, int64_t unit) {
  const int64_t blocks = (n + max - 1) / max;
  const int64_t per = (n + blocks - 1) / blocks;
  return std::min(max, (per + unit - 1) / unit * unit);
}

/// C[i0:i1, j0:j1] with both operands packed (Note [Packed GEMM], the blocked path): for each
/// kc×nc block of B, packed once into NR-wide panels (L3), each mc×kc block of A is packed into
/// MR-high panels (L2) and every tile of C under them is computed with B's kc×NR panel held in
/// L1 while A's panels stream past it.
template <class T>
void gemm_block_packed(const Problem<T>& P, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  constexpr int NR = kNR<T>;
  const int64_t kcb = balanced_block(P.k, kKC, 8);
  const int64_t mcb = balanced_block(i1 - i0, kMCBlocked, kMR);
  const int64_t ncb = balanced_block(j1 - j0, kNC, NR);
  T* bpack = scratch<T>(0, kcb * ((std::min(ncb, j1 - j0) + NR - 1) / NR * NR));
  T* apack = scratch<T>(1, kcb * ((std::min(mcb, i1 - i0) + kMR - 1) / kMR * kMR) + kPackPad);
  for (int64_t jc = j0; jc < j1; jc += ncb) {
    const int64_t nc = std::min(ncb, j1 - jc);
    for (int64_t pc = 0; pc < P.k; pc += kcb) {
      const int64_t kc = std::min(kcb, P.k - pc);
      const T beta = pc == 0 ? P.beta : T(1);
      pack_b(P, pc, kc, jc, nc, bpack);
      for (int64_t ic = i0; ic < i1; ic += mcb) {
        const int64_t mc = std::min(mcb, i1 - ic);
        pack_a_block(P, ic, mc, pc, kc, apack);
        for (int64_t jr = 0; jr < nc; jr += NR) {
          const int nr = int(std::min<int64_t>(NR, nc - jr));
          const T* bp = bpack + jr * kc;
          // The first tiles under B's panel pull the next panel into L1, a line per 8 steps
          // each: kc / 8 lines per tile, kc·NR values in all.
          const T* bnext = jr + NR < nc ? bp + kc * NR : bp;
          const int64_t lines_per_tile = kc / 8 * (64 / int64_t(sizeof(T)));
          for (int64_t ir = 0, t = 0; ir < mc; ir += kMR, ++t) {
            const int mr = int(std::min<int64_t>(kMR, mc - ir));
            const T* pf = (t + 1) * lines_per_tile <= kc * NR ? bnext + t * lines_per_tile : bp;
            micro_kernel_packed<T>(kc, apack + ir * kc, bp, pf, P.alpha, beta,
                                   P.c + (ic + ir) * P.ldc + jc + jr, P.ldc, mr, nr);
          }
        }
      }
    }
  }
}

/// C[i0:i1, j0:j1] of the product, on the calling thread (i0 and j0 are tile aligned).
template <class T>
void gemm_block(const Problem<T>& P, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  constexpr int NR = kNR<T>;
  const int64_t kc_max = std::min(kKC, P.k);
  // Packing B costs a pass over it, repaid only when several row panels reuse it.
  const bool direct_b = !P.tb && (fits_l1_in_place<T>(P.ldb, kc_max) || i1 - i0 <= 8 * kMR);
  // A transposed is read MR values per k step, lda apart: packed when those rows would alias.
  const bool pack_a = P.ta && !fits_l1_in_place<T>(P.lda, kc_max);
  T* apack = scratch<T>(1, kKC * (pack_a ? kMC : kMR));
  for (int64_t jc = j0; jc < j1; jc += kNC) {
    const int64_t nc = std::min(kNC, j1 - jc);
    const int64_t nfull = direct_b ? nc / NR * NR : 0;  // panels read in place
    for (int64_t pc = 0; pc < P.k; pc += kKC) {
      const int64_t kc = std::min(kKC, P.k - pc);
      const T beta = pc == 0 ? P.beta : T(1);
      // Pack what is not read in place: all of B's columns, or only the ragged last panel.
      T* bpack = nullptr;
      if (nfull < nc) {
        bpack = scratch<T>(0, kc * ((nc - nfull + NR - 1) / NR * NR));
        pack_b(P, pc, kc, jc + nfull, nc - nfull, bpack);
      }
      for (int64_t ic = i0; ic < i1; ic += kMC) {
        const int64_t mc = std::min(kMC, i1 - ic);
        if (pack_a) {
          for (int64_t ir = 0; ir < mc; ir += kMR)
            pack_a_panel(P, ic + ir, std::min<int64_t>(kMR, mc - ir), pc, kc, apack + ir * kc);
        } else if (P.ta && mc % kMR != 0) {
          // Transposed A read in place: a full-width read of the ragged last row panel would
          // pass the end of the stored rows, so that panel alone is packed (once per block).
          const int64_t last = mc / kMR * kMR;
          pack_a_panel(P, ic + last, mc - last, pc, kc, apack);
        }
        for (int64_t jr = 0; jr < nc; jr += NR) {
          const int nr = int(std::min<int64_t>(NR, nc - jr));
          const T* bp;
          int64_t bps;
          if (jr < nfull) {
            bp = P.b + pc * P.ldb + jc + jr;
            bps = P.ldb;
          } else {
            bp = bpack + (jr - nfull) * kc;
            bps = NR;
          }
          for (int64_t ir = 0; ir < mc; ir += kMR) {
            const int64_t i = ic + ir;
            const int mr = int(std::min<int64_t>(kMR, mc - ir));
            T* cp = P.c + i * P.ldc + jc + jr;
            APanel<T> ap;
            if (!P.ta) {
              // Rows past the end repeat the last row; their results are not written.
              for (int r = 0; r < kMR; ++r)
                ap.rows[r] = P.a + (i + std::min(r, mr - 1)) * P.lda + pc;
              micro_kernel<T, true>(kc, ap, bp, bps, P.alpha, beta, cp, P.ldc, mr, nr);
            } else if (pack_a) {
              ap.cols = apack + ir * kc;
              ap.cps = kMR;
              micro_kernel<T, false>(kc, ap, bp, bps, P.alpha, beta, cp, P.ldc, mr, nr);
            } else {
              ap.cols = mr == kMR ? P.a + pc * P.lda + i : apack;
              ap.cps = mr == kMR ? P.lda : kMR;
              micro_kernel<T, false>(kc, ap, bp, bps, P.alpha, beta, cp, P.ldc, mr, nr);
            }
          }
        }
      }
    }
  }
}

/// C = beta * C (beta == 0 writes zeros without reading C).
template <class T>
void scale_c(const Problem<T>& P) {
  for (int64_t i = 0; i < P.m; ++i) {
    T* cr = P.c + i * P.ldc;
    if (P.beta == T(0)) {
      std::fill(cr, cr + P.n, T(0));
    } else if (P.beta != T(1)) {
      for (int64_t j = 0; j < P.n; ++j) cr[j] *= P.beta;
    }
  }
}

/// Whether the product takes the blocked nest (both operands packed): from kBlockedMinWork
/// multiply-adds on, where packing A repays itself (measured: the in-place nest wins at 128^3,
/// the two tie at 192^3-256^3).
template <class T>
bool use_blocked(const Problem<T>& P, PackedPath path) {
  if (path != PackedPath::kAuto) return path == PackedPath::kBlocked;
  return double(P.m) * double(P.n) * double(P.k) >= kBlockedMinWork;
}

template <class T>
void packed_gemm(const Problem<T>& P, int threads, PackedPath path) {
  if (P.m <= 0 || P.n <= 0) return;
  if (P.k == 0 || P.alpha == T(0)) return scale_c(P);
  constexpr int NR = kNR<T>;
  // A thread's share must repay waking it: a microsecond on an idle machine, a time slice when
  // the other cores are busy. 96^3 multiply-adds (about 30 us) per thread; OpenBLAS likewise
  // keeps a 64^3 product on one thread.
  const double work = double(P.m) * double(P.n) * double(P.k);
  threads = int(std::clamp<double>(work / (96.0 * 96.0 * 96.0), 1.0, double(std::max(threads, 1))));
  const int64_t mt = (P.m + kMR - 1) / kMR, nt = (P.n + NR - 1) / NR;
  // A grid pm×pn of tile-aligned blocks whose largest block has the fewest tiles (ties: fewer
  // blocks). One block per thread: blocks are independent products.
  int64_t best_pm = 1, best_pn = 1, best = mt * nt;
  for (int64_t pm = 1; pm <= std::min<int64_t>(threads, mt); ++pm) {
    const int64_t pn = std::min<int64_t>(threads / pm, nt);
    const int64_t cost = ((mt + pm - 1) / pm) * ((nt + pn - 1) / pn);
    if (cost < best) best = cost, best_pm = pm, best_pn = pn;
  }
  const int64_t blocks = best_pm * best_pn;
  const bool blocked = use_blocked(P, path);
  const int64_t mper = (mt + best_pm - 1) / best_pm * kMR, nper = (nt + best_pn - 1) / best_pn * NR;
  auto run = [&](int64_t blk) {
    const int64_t bi = blk / best_pn, bj = blk % best_pn;
    const int64_t i0 = bi * mper, i1 = std::min(P.m, i0 + mper);
    const int64_t j0 = bj * nper, j1 = std::min(P.n, j0 + nper);
    if (i0 >= i1 || j0 >= j1) return;
    if (blocked)
      gemm_block_packed(P, i0, i1, j0, j1);
    else
      gemm_block(P, i0, i1, j0, j1);
  };
  if (blocks == 1) return run(0);
  parallel_for(0, blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t blk = b0; blk < b1; ++blk) run(blk);
  });
}

}  // namespace

void packed_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
                  int threads, PackedPath path) {
  packed_gemm<float>({ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc}, threads, path);
}

void packed_dgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                  int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc,
                  int threads, PackedPath path) {
  packed_gemm<double>({ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc}, threads, path);
}

}  // namespace ember::cpu::EMBER_CPU_CAP
