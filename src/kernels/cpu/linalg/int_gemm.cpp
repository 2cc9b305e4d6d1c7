// Integer GEMM (see gemm.h): A and B are packed into panels of the micro-kernel's input type and
// a register-blocked micro-kernel per instruction set multiplies them (Note [Integer GEMM
// blocking], Note [Integer GEMM micro-kernels]).
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/parallel_internal.h"
#include "ember/parallel.h"
#include "ember/version.h"
#include "kernels/cpu/linalg/gemm.h"

namespace ember::cpu {
namespace {

// Note [Integer GEMM blocking]
// Every integer dtype wraps modulo 2^bits as PyTorch's result does, so any exact ring
// arithmetic modulo 2^32 (8-, 16- and 32-bit dtypes) or 2^64 (int64) gives the right low bits:
// the kernels accumulate in uint32 / uint64 (unsigned overflow is defined) and only the final
// store truncates to the dtype. Loop order is the usual one for packed GEMMs: for each
// NC-column block and KC-deep slice, B is packed into NR-column panels (k-major, zero-padded),
// then each MC-row block of A is packed into MR-row panels and every MR×NR tile of C runs one
// micro-kernel call over the whole slice. The micro-kernel also applies alpha and, on the first
// slice, beta (C = beta*C + alpha*A·B), so C is read and written once per slice. Threads take
// stripes of C (Note [Integer GEMM threading]); the results are exact, so the split cannot
// change them.
//
// Note [Integer GEMM micro-kernels]
// - int8, uint8, int16: operands are widened to int16 and packed in k-pairs, so AVX2's
//   vpmaddwd (AVX-512BW's, or VNNI's vpdpwssd, which also adds) yields a[k]b[k] + a[k+1]b[k+1]
//   per int32 lane. The pair sum is exact modulo 2^32 (the one overflowing case,
//   2 * (-2^15)^2 = 2^31, wraps to -2^31, which is the same residue), and uint8 widened by zero
//   extension is congruent to its bits, so the low 8/16 bits equal PyTorch's.
// - int32: vpmulld (low 32 bits of the product) and vpaddd, 6×16 (AVX2) or 6×32 (AVX-512);
//   when every element of A and B fits in int16 (checked per call: one read of A and B against
//   the product's m*n*k), the operands are packed as int16 pairs for the vpmaddwd kernel, whose
//   int32 lanes then hold the int32 result.
// - int64: AVX-512DQ has vpmullq. AVX2 has no 64-bit multiply. When every element of A and B
//   fits in int32 (checked per call), vpmuldq's exact 32x32->64 product is the product (6×8
//   tile, 4 products per multiply). Otherwise the product modulo 2^64 is
//   lo(a)lo(b) + 2^32 (lo(a)hi(b) + hi(a)lo(b)): vpmuludq gives the first term and one vpmulld
//   against B with its 32-bit halves swapped gives both cross terms' low halves, summed once
//   per tile. Against a scalar 4×4 loop nest (no vectorization) it ran at 4.3-10 GOP/s vs
//   3.0 GOP/s for 256^3 and 512^3 products on one AVX2 core (AMD EPYC, Zen 2/3), and the
//   compiler's own vectorization of the uint64 loop nest reached only 1.0 GOP/s.
// - default capability: the same packed layouts through a plain C++ loop nest that the compiler
//   vectorizes for the baseline ISA.
// oneDNN's int8 matmul is not used: it is exact only with VNNI (its AVX2 path sums u8*s8 pairs
// with saturating vpmaddubsw), it has no s8 x s8 -> wrapping s8 output, and it would cover only
// int8 while these kernels cover every integer dtype.

/// a * b wrapping modulo 2^bits(U) (uint16 operands would otherwise promote to signed int).
template <class U>
inline U wmul(U a, U b) {
  using M = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
  return U(M(a) * M(b));
}

/// The packed operand type P, the accumulator U and the k-group KP (k values per packed
/// element group) of each integer dtype, and the depth KC of a k slice.
template <class T>
struct Family {
  using P = int16_t;
  using U = uint32_t;
  static constexpr int KP = 2;
  static constexpr int64_t KC = 512;
};
template <>
struct Family<int32_t> {
  using P = int32_t;
  using U = uint32_t;
  static constexpr int KP = 1;
  static constexpr int64_t KC = 256;
};
template <>
struct Family<int64_t> {
  using P = int64_t;
  using U = uint64_t;
  static constexpr int KP = 1;
  static constexpr int64_t KC = 256;
};

constexpr int64_t kMC = 120;   // a multiple of every MR (6, 4)
constexpr int64_t kNC = 1024;  // a multiple of every NR

/// Where a micro-kernel writes its MR×NR tile: C = cmul * C + alpha * acc (wrapping), with
/// cmul = beta on the first k slice and 1 after it. h × w is the part of the tile inside C.
template <class T, class U>
struct Tile {
  T* c;
  int64_t rsc, csc, h, w;
  U alpha, cmul;
};

template <class T, class U, int MR, int NR>
[[gnu::always_inline]] inline void write_tile(const U* acc, const Tile<T, U>& e) {
  const bool full = e.h == MR && e.w == NR && e.csc == 1;
  if (full && e.alpha == 1 && e.cmul == 1) {
    for (int r = 0; r < MR; ++r) {
      T* cr = e.c + r * e.rsc;
      const U* ar = acc + r * NR;
      for (int q = 0; q < NR; ++q) cr[q] = T(U(U(cr[q]) + ar[q]));
    }
    return;
  }
  if (full) {
    for (int r = 0; r < MR; ++r) {
      T* cr = e.c + r * e.rsc;
      const U* ar = acc + r * NR;
      for (int q = 0; q < NR; ++q) cr[q] = T(U(wmul(e.cmul, U(cr[q])) + wmul(e.alpha, ar[q])));
    }
    return;
  }
  for (int64_t r = 0; r < e.h; ++r) {
    T* cr = e.c + r * e.rsc;
    for (int64_t q = 0; q < e.w; ++q) {
      T& cv = cr[q * e.csc];
      cv = T(U(wmul(e.cmul, U(cv)) + wmul(e.alpha, acc[r * NR + q])));
    }
  }
}

template <class T, class F = Family<T>>
using MicroFn = void (*)(int64_t kq, const typename F::P* ap, const typename F::P* bp,
                         const Tile<T, typename F::U>& e);

/// A micro-kernel and its tile shape.
/// A micro-kernel for dtype T on operands packed as family F, and its tile shape.
template <class T, class F = Family<T>>
struct MicroKernel {
  int mr, nr;
  MicroFn<T, F> fn;
};

// ---- the portable micro-kernel (any ISA; also the reference layout) ----

// A panel of A is [kq][MR][KP], a panel of B [kq][NR][KP]; products wrap in U.
#define EMBER_INT_GENERIC_BODY                                                            \
  using P = typename F::P;                                                                \
  using U = typename F::U;                                                                \
  constexpr int KP = F::KP;                                                               \
  U acc[MR * NR] = {};                                                                    \
  for (int64_t p = 0; p < kq; ++p) {                                                      \
    const P* a = ap + p * MR * KP;                                                        \
    const P* b = bp + p * NR * KP;                                                        \
    for (int r = 0; r < MR; ++r)                                                          \
      for (int c = 0; c < NR; ++c) {                                                      \
        U s = acc[r * NR + c];                                                            \
        for (int t = 0; t < KP; ++t) s = U(s + wmul(U(a[r * KP + t]), U(b[c * KP + t]))); \
        acc[r * NR + c] = s;                                                              \
      }                                                                                   \
  }                                                                                       \
  write_tile<T, U, MR, NR>(acc, e);

template <class T, class F, int MR, int NR>
void generic_kernel(int64_t kq, const typename F::P* __restrict ap,
                    const typename F::P* __restrict bp, const Tile<T, typename F::U>& e) {
  EMBER_INT_GENERIC_BODY
}

#undef EMBER_INT_GENERIC_BODY

// ---- AVX2 ----

#define EMBER_AVX2 __attribute__((target("avx2,fma")))

/// 8/16-bit dtypes: 6×16 tile, int16 k-pairs through vpmaddwd.
template <class T>
EMBER_AVX2 void madd_6x16_avx2(int64_t kq, const int16_t* ap, const int16_t* bp,
                               const Tile<T, uint32_t>& e) {
  __m256i c[6][2];
  for (int r = 0; r < 6; ++r) c[r][0] = c[r][1] = _mm256_setzero_si256();
  for (int64_t p = 0; p < kq; ++p) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + 16));
#pragma GCC unroll 6
    for (int r = 0; r < 6; ++r) {
      int32_t pair;
      std::memcpy(&pair, ap + 2 * r, sizeof pair);
      const __m256i a = _mm256_set1_epi32(pair);
      c[r][0] = _mm256_add_epi32(c[r][0], _mm256_madd_epi16(a, b0));
      c[r][1] = _mm256_add_epi32(c[r][1], _mm256_madd_epi16(a, b1));
    }
    ap += 12;
    bp += 32;
  }
  alignas(32) uint32_t acc[6 * 16];
  for (int r = 0; r < 6; ++r) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(acc + r * 16), c[r][0]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(acc + r * 16 + 8), c[r][1]);
  }
  write_tile<T, uint32_t, 6, 16>(acc, e);
}

/// int32: 6×16 tile through vpmulld.
EMBER_AVX2 void mul32_6x16_avx2(int64_t kq, const int32_t* ap, const int32_t* bp,
                                const Tile<int32_t, uint32_t>& e) {
  __m256i c[6][2];
  for (int r = 0; r < 6; ++r) c[r][0] = c[r][1] = _mm256_setzero_si256();
  for (int64_t p = 0; p < kq; ++p) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + 8));
#pragma GCC unroll 6
    for (int r = 0; r < 6; ++r) {
      const __m256i a = _mm256_set1_epi32(ap[r]);
      c[r][0] = _mm256_add_epi32(c[r][0], _mm256_mullo_epi32(a, b0));
      c[r][1] = _mm256_add_epi32(c[r][1], _mm256_mullo_epi32(a, b1));
    }
    ap += 6;
    bp += 16;
  }
  alignas(32) uint32_t acc[6 * 16];
  for (int r = 0; r < 6; ++r) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(acc + r * 16), c[r][0]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(acc + r * 16 + 8), c[r][1]);
  }
  write_tile<int32_t, uint32_t, 6, 16>(acc, e);
}

/// int64: 6×4 tile, the product modulo 2^64 from 32-bit multiplies (Note [Integer GEMM
/// micro-kernels]).
EMBER_AVX2 void mul64_6x4_avx2(int64_t kq, const int64_t* ap, const int64_t* bp,
                               const Tile<int64_t, uint64_t>& e) {
  __m256i lo[6], x[6];
  for (int r = 0; r < 6; ++r) lo[r] = x[r] = _mm256_setzero_si256();
  for (int64_t p = 0; p < kq; ++p) {
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp));
    const __m256i bsw = _mm256_shuffle_epi32(b, 0xB1);  // hi(b), lo(b) in each 64-bit lane
#pragma GCC unroll 6
    for (int r = 0; r < 6; ++r) {
      const __m256i a = _mm256_set1_epi64x(ap[r]);
      lo[r] = _mm256_add_epi64(lo[r], _mm256_mul_epu32(a, b));
      x[r] = _mm256_add_epi32(x[r], _mm256_mullo_epi32(a, bsw));
    }
    ap += 6;
    bp += 4;
  }
  alignas(32) uint64_t acc[6 * 4];
  for (int r = 0; r < 6; ++r) {
    // Each 64-bit lane of x holds the two cross terms' sums modulo 2^32 in its halves.
    const __m256i cross =
        _mm256_slli_epi64(_mm256_add_epi64(x[r], _mm256_srli_epi64(x[r], 32)), 32);
    _mm256_store_si256(reinterpret_cast<__m256i*>(acc + r * 4), _mm256_add_epi64(lo[r], cross));
  }
  write_tile<int64_t, uint64_t, 6, 4>(acc, e);
}
/// int64 with every operand inside the int32 range: vpmuldq gives the exact 64-bit product of
/// the low halves, so a 6×8 tile needs one multiply per 4 products.
EMBER_AVX2 void mul64_small_6x8_avx2(int64_t kq, const int64_t* ap, const int64_t* bp,
                                     const Tile<int64_t, uint64_t>& e) {
  __m256i c[6][2];
  for (int r = 0; r < 6; ++r) c[r][0] = c[r][1] = _mm256_setzero_si256();
  for (int64_t p = 0; p < kq; ++p) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + 4));
#pragma GCC unroll 6
    for (int r = 0; r < 6; ++r) {
      const __m256i a = _mm256_set1_epi64x(ap[r]);
      c[r][0] = _mm256_add_epi64(c[r][0], _mm256_mul_epi32(a, b0));
      c[r][1] = _mm256_add_epi64(c[r][1], _mm256_mul_epi32(a, b1));
    }
    ap += 6;
    bp += 8;
  }
  alignas(32) uint64_t acc[6 * 8];
  for (int r = 0; r < 6; ++r) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(acc + r * 8), c[r][0]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(acc + r * 8 + 4), c[r][1]);
  }
  write_tile<int64_t, uint64_t, 6, 8>(acc, e);
}
#undef EMBER_AVX2

// ---- AVX-512 ----

#define EMBER_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")))
#define EMBER_AVX512_VNNI \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma")))

/// The 8/16-bit 6×32 body; `MADD_ADD(acc, a, b)` is acc + pairwise products.
#define EMBER_MADD_6X32_BODY(MADD_ADD)                                    \
  __m512i c[6][2];                                                        \
  for (int r = 0; r < 6; ++r) c[r][0] = c[r][1] = _mm512_setzero_si512(); \
  for (int64_t p = 0; p < kq; ++p) {                                      \
    const __m512i b0 = _mm512_loadu_si512(bp);                            \
    const __m512i b1 = _mm512_loadu_si512(bp + 32);                       \
    _Pragma("GCC unroll 6") for (int r = 0; r < 6; ++r) {                 \
      int32_t pair;                                                       \
      std::memcpy(&pair, ap + 2 * r, sizeof pair);                        \
      const __m512i a = _mm512_set1_epi32(pair);                          \
      c[r][0] = MADD_ADD(c[r][0], a, b0);                                 \
      c[r][1] = MADD_ADD(c[r][1], a, b1);                                 \
    }                                                                     \
    ap += 12;                                                             \
    bp += 64;                                                             \
  }                                                                       \
  alignas(64) uint32_t acc[6 * 32];                                       \
  for (int r = 0; r < 6; ++r) {                                           \
    _mm512_store_si512(acc + r * 32, c[r][0]);                            \
    _mm512_store_si512(acc + r * 32 + 16, c[r][1]);                       \
  }                                                                       \
  write_tile<T, uint32_t, 6, 32>(acc, e);

#define EMBER_MADD_ADD_BW(acc, a, b) _mm512_add_epi32(acc, _mm512_madd_epi16(a, b))
#define EMBER_MADD_ADD_VNNI(acc, a, b) _mm512_dpwssd_epi32(acc, a, b)

template <class T>
EMBER_AVX512 void madd_6x32_avx512(int64_t kq, const int16_t* ap, const int16_t* bp,
                                   const Tile<T, uint32_t>& e) {
  EMBER_MADD_6X32_BODY(EMBER_MADD_ADD_BW)
}

template <class T>
EMBER_AVX512_VNNI void madd_6x32_vnni(int64_t kq, const int16_t* ap, const int16_t* bp,
                                      const Tile<T, uint32_t>& e) {
  EMBER_MADD_6X32_BODY(EMBER_MADD_ADD_VNNI)
}
#undef EMBER_MADD_6X32_BODY
#undef EMBER_MADD_ADD_BW
#undef EMBER_MADD_ADD_VNNI

/// int32: 6×32 tile through vpmulld.
EMBER_AVX512 void mul32_6x32_avx512(int64_t kq, const int32_t* ap, const int32_t* bp,
                                    const Tile<int32_t, uint32_t>& e) {
  __m512i c[6][2];
  for (int r = 0; r < 6; ++r) c[r][0] = c[r][1] = _mm512_setzero_si512();
  for (int64_t p = 0; p < kq; ++p) {
    const __m512i b0 = _mm512_loadu_si512(bp);
    const __m512i b1 = _mm512_loadu_si512(bp + 16);
#pragma GCC unroll 6
    for (int r = 0; r < 6; ++r) {
      const __m512i a = _mm512_set1_epi32(ap[r]);
      c[r][0] = _mm512_add_epi32(c[r][0], _mm512_mullo_epi32(a, b0));
      c[r][1] = _mm512_add_epi32(c[r][1], _mm512_mullo_epi32(a, b1));
    }
    ap += 6;
    bp += 32;
  }
  alignas(64) uint32_t acc[6 * 32];
  for (int r = 0; r < 6; ++r) {
    _mm512_store_si512(acc + r * 32, c[r][0]);
    _mm512_store_si512(acc + r * 32 + 16, c[r][1]);
  }
  write_tile<int32_t, uint32_t, 6, 32>(acc, e);
}

/// int64: 6×16 tile through vpmullq (AVX-512DQ).
EMBER_AVX512 void mul64_6x16_avx512(int64_t kq, const int64_t* ap, const int64_t* bp,
                                    const Tile<int64_t, uint64_t>& e) {
  __m512i c[6][2];
  for (int r = 0; r < 6; ++r) c[r][0] = c[r][1] = _mm512_setzero_si512();
  for (int64_t p = 0; p < kq; ++p) {
    const __m512i b0 = _mm512_loadu_si512(bp);
    const __m512i b1 = _mm512_loadu_si512(bp + 8);
#pragma GCC unroll 6
    for (int r = 0; r < 6; ++r) {
      const __m512i a = _mm512_set1_epi64(ap[r]);
      c[r][0] = _mm512_add_epi64(c[r][0], _mm512_mullo_epi64(a, b0));
      c[r][1] = _mm512_add_epi64(c[r][1], _mm512_mullo_epi64(a, b1));
    }
    ap += 6;
    bp += 16;
  }
  alignas(64) uint64_t acc[6 * 16];
  for (int r = 0; r < 6; ++r) {
    _mm512_store_si512(acc + r * 16, c[r][0]);
    _mm512_store_si512(acc + r * 16 + 8, c[r][1]);
  }
  write_tile<int64_t, uint64_t, 6, 16>(acc, e);
}
#undef EMBER_AVX512
#undef EMBER_AVX512_VNNI

// ---- choice ----

bool has_vnni() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512vnni");
}

/// The micro-kernel for T under cpu_capability() (so EMBER_CPU_CAPABILITY applies here too).
template <class T>
MicroKernel<T> pick_kernel() {
  static const MicroKernel<T> k = [] {
    const std::string_view cap = cpu_capability();
    if constexpr (std::is_same_v<T, int64_t>) {
      if (cap == "avx512") return MicroKernel<T>{6, 16, &mul64_6x16_avx512};
      if (cap == "avx2") return MicroKernel<T>{6, 4, &mul64_6x4_avx2};
    } else if constexpr (std::is_same_v<T, int32_t>) {
      if (cap == "avx512") return MicroKernel<T>{6, 32, &mul32_6x32_avx512};
      if (cap == "avx2") return MicroKernel<T>{6, 16, &mul32_6x16_avx2};
    } else {
      if (cap == "avx512")
        return MicroKernel<T>{6, 32, has_vnni() ? &madd_6x32_vnni<T> : &madd_6x32_avx512<T>};
      if (cap == "avx2") return MicroKernel<T>{6, 16, &madd_6x16_avx2<T>};
    }
    return MicroKernel<T>{4, 16, &generic_kernel<T, Family<T>, 4, 16>};
  }();
  return k;
}

/// The vpmaddwd micro-kernel of cpu_capability() for T on int16-pair panels (on the default
/// capability the portable loop nest, which the compiler turns into SSE2's pmaddwd).
template <class T>
MicroKernel<T, Family<int16_t>> pair_kernel() {
  static const MicroKernel<T, Family<int16_t>> k = [] {
    const std::string_view cap = cpu_capability();
    using K = MicroKernel<T, Family<int16_t>>;
    if (cap == "avx512") return K{6, 32, has_vnni() ? &madd_6x32_vnni<T> : &madd_6x32_avx512<T>};
    if (cap == "avx2") return K{6, 16, &madd_6x16_avx2<T>};
    return K{4, 16, &generic_kernel<T, Family<int16_t>, 4, 16>};
  }();
  return k;
}

/// True when every element of the rows × cols matrix at `p` is a value of type N.
template <class N, class T>
bool fits(const T* p, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  if (cs != 1 && rs == 1) {
    std::swap(rows, cols);
    std::swap(rs, cs);
  }
  bool ok = true;
  for (int64_t i = 0; i < rows && ok; ++i) {
    const T* row = p + i * rs;
    for (int64_t j = 0; j < cols; ++j) ok &= T(N(row[j * cs])) == row[j * cs];
  }
  return ok;
}

// ---- packing ----

/// A[i0:i0+h, pc:pc+kc] as one [kq][MR][KP] panel, zero-padded to MR rows and kq*KP depth.
template <class T, class F>
void pack_a(typename F::P* dst, const T* a, int64_t rsa, int64_t csa, int64_t h, int64_t mr,
            int64_t kc) {
  using P = typename F::P;
  constexpr int64_t KP = F::KP;
  const int64_t kq = (kc + KP - 1) / KP;
  if (h < mr || kc % KP) std::fill(dst, dst + kq * mr * KP, P(0));
  for (int64_t r = 0; r < h; ++r) {
    const T* src = a + r * rsa;
    P* d = dst + r * KP;
    for (int64_t kk = 0; kk < kc; ++kk) d[(kk / KP) * mr * KP + kk % KP] = P(src[kk * csa]);
  }
}

/// B[pc:pc+kc, j0:j0+w] as one [kq][NR][KP] panel, zero-padded to NR columns and kq*KP depth.
template <class T, class F>
void pack_b(typename F::P* dst, const T* b, int64_t rsb, int64_t csb, int64_t w, int64_t nr,
            int64_t kc) {
  using P = typename F::P;
  constexpr int64_t KP = F::KP;
  const int64_t kq = (kc + KP - 1) / KP;
  if (w < nr || kc % KP) std::fill(dst, dst + kq * nr * KP, P(0));
  for (int64_t kk = 0; kk < kc; ++kk) {
    const T* src = b + kk * rsb;
    P* d = dst + (kk / KP) * nr * KP + kk % KP;
    if (csb == 1) {
      for (int64_t q = 0; q < w; ++q) d[q * KP] = P(src[q]);
    } else {
      for (int64_t q = 0; q < w; ++q) d[q * KP] = P(src[q * csb]);
    }
  }
}

/// One thread's blocked product (Note [Integer GEMM blocking]); k >= 1 and alpha != 0.
template <class T, class F>
void int_gemm_blocked(const MicroKernel<T, F>& mk, int64_t m, int64_t n, int64_t k,
                      typename F::U alpha, const T* a, int64_t rsa, int64_t csa, const T* b,
                      int64_t rsb, int64_t csb, typename F::U beta, T* c, int64_t rsc,
                      int64_t csc) {
  using P = typename F::P;
  using U = typename F::U;
  constexpr int64_t KP = F::KP, KC = F::KC;
  const int64_t mr = mk.mr, nr = mk.nr;
  const int64_t nc_max = std::min(kNC, (n + nr - 1) / nr * nr);
  const int64_t kq_max = (std::min(KC, k) + KP - 1) / KP;
  const int64_t mc_max = std::min(kMC, (m + mr - 1) / mr * mr);
  std::vector<P> bpack(size_t(kq_max * KP * nc_max));
  std::vector<P> apack(size_t(kq_max * KP * mc_max));
  for (int64_t jc = 0; jc < n; jc += kNC) {
    const int64_t nc = std::min(kNC, n - jc);
    const int64_t npanels = (nc + nr - 1) / nr;
    for (int64_t pc = 0; pc < k; pc += KC) {
      const int64_t kc = std::min(KC, k - pc), kq = (kc + KP - 1) / KP;
      const int64_t bpanel = kq * nr * KP, apanel = kq * mr * KP;
      for (int64_t jp = 0; jp < npanels; ++jp) {
        const int64_t j0 = jc + jp * nr;
        pack_b<T, F>(bpack.data() + jp * bpanel, b + pc * rsb + j0 * csb, rsb, csb,
                     std::min(nr, n - j0), nr, kc);
      }
      const U cmul = pc == 0 ? beta : U(1);
      for (int64_t ic = 0; ic < m; ic += mc_max) {
        const int64_t mc = std::min(mc_max, m - ic), mpanels = (mc + mr - 1) / mr;
        for (int64_t ip = 0; ip < mpanels; ++ip) {
          const int64_t i0 = ic + ip * mr;
          pack_a<T, F>(apack.data() + ip * apanel, a + i0 * rsa + pc * csa, rsa, csa,
                       std::min(mr, m - i0), mr, kc);
        }
        for (int64_t jp = 0; jp < npanels; ++jp) {
          const int64_t j0 = jc + jp * nr;
          for (int64_t ip = 0; ip < mpanels; ++ip) {
            const int64_t i0 = ic + ip * mr;
            const Tile<T, U> tile{c + i0 * rsc + j0 * csc, rsc,   csc, std::min(mr, m - i0),
                                  std::min(nr, n - j0),    alpha, cmul};
            mk.fn(kq, apack.data() + ip * apanel, bpack.data() + jp * bpanel, tile);
          }
        }
      }
    }
  }
}

// Note [Integer GEMM threading]
// Threads take disjoint stripes of C (columns when n >= m, else rows), each running the whole
// blocked product on its stripe in one parallel region: no barrier between packing B and using
// it, at the price of each thread packing all of the other operand (O(mk) or O(kn) against the
// stripe's O(mnk / threads)). Separate parallel regions for packing and computing cost a
// thread hand-off each, which on a loaded 2-core machine can be a scheduler time slice.
template <class T, class F>
void int_gemm_impl(const MicroKernel<T, F>& mk, int64_t m, int64_t n, int64_t k, int64_t alpha_in,
                   const T* a, int64_t rsa, int64_t csa, const T* b, int64_t rsb, int64_t csb,
                   int64_t beta_in, T* c, int64_t rsc, int64_t csc) {
  using U = typename F::U;
  const U alpha = U(alpha_in), beta = U(beta_in);
  if (k == 0 || alpha == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T& cv = c[i * rsc + j * csc];
        cv = beta == 0 ? T(0) : T(wmul(U(cv), beta));
      }
    return;
  }
  const int nt = get_num_threads();
  // Below ~64^3 multiply-adds a thread hand-off costs more than it saves.
  if (nt <= 1 || double(m) * double(n) * double(k) < 64.0 * 64.0 * 64.0)
    return int_gemm_blocked(mk, m, n, k, alpha, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc);
  const bool cols = n >= m;
  const int64_t unit = cols ? mk.nr : mk.mr, len = cols ? n : m;
  const int64_t units = (len + unit - 1) / unit, parts = std::min<int64_t>(nt, units);
  parallel_for(0, parts, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t s0 = p * units / parts * unit;
      const int64_t s1 = std::min(len, (p + 1) * units / parts * unit);
      if (s0 >= s1) continue;
      if (cols) {
        int_gemm_blocked(mk, m, s1 - s0, k, alpha, a, rsa, csa, b + s0 * csb, rsb, csb, beta,
                         c + s0 * csc, rsc, csc);
      } else {
        int_gemm_blocked(mk, s1 - s0, n, k, alpha, a + s0 * rsa, rsa, csa, b, rsb, csb, beta,
                         c + s0 * rsc, rsc, csc);
      }
    }
  });
}

}  // namespace

void int_gemm(ScalarType dt, int64_t m, int64_t n, int64_t k, int64_t alpha, const void* a,
              int64_t rsa, int64_t csa, const void* b, int64_t rsb, int64_t csb, int64_t beta,
              void* c, int64_t rsc, int64_t csc) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* at = static_cast<const T*>(a);
    const T* bt = static_cast<const T*>(b);
    T* ct = static_cast<T*>(c);
    if constexpr (std::is_same_v<T, int32_t>) {
      // int32 operands that all fit in int16 (the usual case) take the 8/16-bit vpmaddwd
      // kernel: its int32 sums are the int32 result, two products per lane per instruction.
      const MicroKernel<T, Family<int16_t>> pairs = pair_kernel<T>();
      if (pairs.fn && k > 0 && fits<int16_t>(at, m, k, rsa, csa) &&
          fits<int16_t>(bt, k, n, rsb, csb))
        return int_gemm_impl(pairs, m, n, k, alpha, at, rsa, csa, bt, rsb, csb, beta, ct, rsc, csc);
    }
    MicroKernel<T> mk = pick_kernel<T>();
    if constexpr (std::is_same_v<T, int64_t>) {
      // AVX2 multiplies int64 through 32-bit halves; operands that all fit in int32 (the usual
      // case) need one vpmuldq per product instead.
      if (mk.fn == &mul64_6x4_avx2 && fits<int32_t>(at, m, k, rsa, csa) &&
          fits<int32_t>(bt, k, n, rsb, csb))
        mk = MicroKernel<T>{6, 8, &mul64_small_6x8_avx2};
    }
    int_gemm_impl(mk, m, n, k, alpha, at, rsa, csa, bt, rsb, csb, beta, ct, rsc, csc);
  };
  switch (dt) {
    case ScalarType::Byte:
      return run(uint8_t{});
    case ScalarType::Char:
      return run(int8_t{});
    case ScalarType::Short:
      return run(int16_t{});
    case ScalarType::Int:
      return run(int32_t{});
    case ScalarType::Long:
      return run(int64_t{});
    default:
      EMBER_THROW(Error, "[gemm] unsupported integer dtype ", dtype_name(dt));
  }
}

}  // namespace ember::cpu
