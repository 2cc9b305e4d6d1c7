// The CPU kernels of random sampling on the counter-based Philox stream (Note [Reproducible
// random streams] in ember/generator.h): Philox batches and Box-Muller per instruction set,
// chosen at run time, and the fills of each distribution.
#include "kernels/stubs/random.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#if defined(__x86_64__)
#define EMBER_RANDOM_X86 1
#include <immintrin.h>
#include <sleef.h>
#if !defined(__AVX__)
// sleef.h declares its AVX2 functions only when the whole file is compiled for AVX; declare the
// few used here, as AVX2 functions (they are called only from AVX2 code after the capability
// check).
#pragma GCC push_options
#pragma GCC target("avx2,fma")
typedef struct {
  __m256 x, y;
} Sleef___m256_2;
typedef struct {
  __m256d x, y;
} Sleef___m256d_2;
extern "C" {
__m256 Sleef_logf8_u10avx2(__m256);
__m256d Sleef_logd4_u10avx2(__m256d);
__m256 Sleef_log1pf8_u10avx2(__m256);
__m256d Sleef_log1pd4_u10avx2(__m256d);
Sleef___m256_2 Sleef_sincospif8_u05avx2(__m256);
Sleef___m256d_2 Sleef_sincospid4_u05avx2(__m256d);
}
#pragma GCC pop_options
#endif
#else
#define EMBER_RANDOM_X86 0
#endif

#include "core/parallel_internal.h"
#include "core/scalar_traits.h"
#include "ember/dispatch_type.h"
#include "ember/error.h"
#include "ember/version.h"
#include "kernels/common/philox.h"

namespace ember {

EMBER_DEFINE_KERNEL(uniform_stub);
EMBER_DEFINE_KERNEL(normal_stub);
EMBER_DEFINE_KERNEL(exponential_stub);
EMBER_DEFINE_KERNEL(bernoulli_scalar_stub);
EMBER_DEFINE_KERNEL(bernoulli_tensor_stub);
EMBER_DEFINE_KERNEL(random_stub);
EMBER_DEFINE_KERNEL(randperm_stub);
EMBER_DEFINE_KERNEL(multinomial_stub);
EMBER_DEFINE_KERNEL(normal_std_check_stub);

namespace cpu {
namespace {

// Below this many elements a fill stays on the calling thread.
constexpr int64_t kGrainElems = 32768;
// Blocks generated per batch: an 8 KiB word buffer that stays in L1 with its scratch arrays.
constexpr int64_t kBatchBlocks = 512;

// ---- Philox batches and Box-Muller, per instruction set ----
//
// Note [Random kernels and instruction sets]
// Philox is integer arithmetic, so the SSE2, AVX2 and scalar paths give identical words. The
// transcendental parts (log, sincos for normal; log1p for exponential) use SLEEF's vector
// functions on x86; their last bit may differ between the SSE2 and AVX2 variants, so normal and
// exponential samples are reproducible for a given CPU capability (EMBER_CPU_CAPABILITY), on any
// thread count. Lanes are independent, so a value never depends on its position in a vector.

enum class Isa { Scalar, Sse2, Avx2 };

Isa isa() {
#if EMBER_RANDOM_X86
  static const Isa v = std::strcmp(cpu_capability(), "default") == 0 ? Isa::Sse2 : Isa::Avx2;
  return v;
#else
  return Isa::Scalar;
#endif
}

constexpr uint32_t kPhiloxM0 = philox::kM0, kPhiloxM1 = philox::kM1;
constexpr uint32_t kPhiloxW0 = philox::kW0, kPhiloxW1 = philox::kW1;

// Counter words of lanes [l0, l0 + n) of a batch starting at the 128-bit counter (lo, hi).
inline void counter_words(uint64_t lo, uint64_t hi, int64_t l0, int n, uint32_t* c0, uint32_t* c1,
                          uint32_t* c2, uint32_t* c3) {
  for (int l = 0; l < n; ++l) {
    uint64_t clo = lo + uint64_t(l0 + l);
    uint64_t chi = hi + (clo < lo ? 1 : 0);
    c0[l] = uint32_t(clo);
    c1[l] = uint32_t(clo >> 32);
    c2[l] = uint32_t(chi);
    c3[l] = uint32_t(chi >> 32);
  }
}

void philox_batch_scalar(uint64_t key, uint64_t lo, uint64_t hi, int64_t nb, uint32_t* words) {
  for (int64_t b = 0; b < nb; ++b) {
    uint64_t clo = lo + uint64_t(b);
    philox::Words w = philox::block(key, clo, hi + (clo < lo ? 1 : 0));
    for (int j = 0; j < 4; ++j) words[4 * b + j] = w.w[j];
  }
}

#if EMBER_RANDOM_X86
// 4 blocks per step; _mm_mul_epu32 multiplies lanes 0 and 2, a shifted copy lanes 1 and 3.
void philox_batch_sse2(uint64_t key, uint64_t lo, uint64_t hi, int64_t nb, uint32_t* words) {
  const __m128i m0 = _mm_set1_epi32(int(kPhiloxM0)), m1 = _mm_set1_epi32(int(kPhiloxM1));
  const __m128i even_mask = _mm_set_epi32(0, -1, 0, -1);
  auto mulhilo = [&](__m128i a, __m128i m, __m128i& h, __m128i& l) {
    __m128i even = _mm_mul_epu32(a, m), odd = _mm_mul_epu32(_mm_srli_epi64(a, 32), m);
    l = _mm_or_si128(_mm_and_si128(even, even_mask), _mm_slli_epi64(odd, 32));
    h = _mm_or_si128(_mm_srli_epi64(even, 32), _mm_andnot_si128(even_mask, odd));
  };
  int64_t full = nb / 4 * 4;
  for (int64_t b = 0; b < full; b += 4) {
    alignas(16) uint32_t t[4][4];
    counter_words(lo, hi, b, 4, t[0], t[1], t[2], t[3]);
    __m128i c0 = _mm_load_si128(reinterpret_cast<const __m128i*>(t[0]));
    __m128i c1 = _mm_load_si128(reinterpret_cast<const __m128i*>(t[1]));
    __m128i c2 = _mm_load_si128(reinterpret_cast<const __m128i*>(t[2]));
    __m128i c3 = _mm_load_si128(reinterpret_cast<const __m128i*>(t[3]));
    uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
    for (int r = 0; r < 10; ++r) {
      __m128i h0, l0, h1, l1;
      mulhilo(c0, m0, h0, l0);
      mulhilo(c2, m1, h1, l1);
      c0 = _mm_xor_si128(_mm_xor_si128(h1, c1), _mm_set1_epi32(int(k0)));
      c2 = _mm_xor_si128(_mm_xor_si128(h0, c3), _mm_set1_epi32(int(k1)));
      c1 = l1;
      c3 = l0;
      k0 += kPhiloxW0;
      k1 += kPhiloxW1;
    }
    // Transpose lanes x words into block-major words.
    __m128i a = _mm_unpacklo_epi32(c0, c1), bb = _mm_unpacklo_epi32(c2, c3);
    __m128i c = _mm_unpackhi_epi32(c0, c1), d = _mm_unpackhi_epi32(c2, c3);
    auto* out = reinterpret_cast<__m128i*>(words + 4 * b);
    _mm_storeu_si128(out + 0, _mm_unpacklo_epi64(a, bb));
    _mm_storeu_si128(out + 1, _mm_unpackhi_epi64(a, bb));
    _mm_storeu_si128(out + 2, _mm_unpacklo_epi64(c, d));
    _mm_storeu_si128(out + 3, _mm_unpackhi_epi64(c, d));
  }
  if (full < nb) {
    uint64_t l2 = lo + uint64_t(full);
    philox_batch_scalar(key, l2, hi + (l2 < lo ? 1 : 0), nb - full, words + 4 * full);
  }
}

// 8 blocks per step.
#pragma GCC push_options
#pragma GCC target("avx2,fma")
inline void mulhilo_avx2(__m256i a, __m256i m, __m256i& h, __m256i& l) {
  __m256i even = _mm256_mul_epu32(a, m), odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
  l = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  h = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

void philox_batch_avx2(uint64_t key, uint64_t lo, uint64_t hi, int64_t nb, uint32_t* words) {
  const __m256i m0 = _mm256_set1_epi32(int(kPhiloxM0)), m1 = _mm256_set1_epi32(int(kPhiloxM1));
  int64_t full = nb / 8 * 8;
  for (int64_t b = 0; b < full; b += 8) {
    alignas(32) uint32_t t[4][8];
    counter_words(lo, hi, b, 8, t[0], t[1], t[2], t[3]);
    __m256i c0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(t[0]));
    __m256i c1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(t[1]));
    __m256i c2 = _mm256_load_si256(reinterpret_cast<const __m256i*>(t[2]));
    __m256i c3 = _mm256_load_si256(reinterpret_cast<const __m256i*>(t[3]));
    uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
    for (int r = 0; r < 10; ++r) {
      __m256i h0, l0, h1, l1;
      mulhilo_avx2(c0, m0, h0, l0);
      mulhilo_avx2(c2, m1, h1, l1);
      c0 = _mm256_xor_si256(_mm256_xor_si256(h1, c1), _mm256_set1_epi32(int(k0)));
      c2 = _mm256_xor_si256(_mm256_xor_si256(h0, c3), _mm256_set1_epi32(int(k1)));
      c1 = l1;
      c3 = l0;
      k0 += kPhiloxW0;
      k1 += kPhiloxW1;
    }
    // Per 128-bit half, as in the SSE2 transpose: blocks (0..3) low halves, (4..7) high halves.
    __m256i a = _mm256_unpacklo_epi32(c0, c1), bb = _mm256_unpacklo_epi32(c2, c3);
    __m256i c = _mm256_unpackhi_epi32(c0, c1), d = _mm256_unpackhi_epi32(c2, c3);
    __m256i q0 = _mm256_unpacklo_epi64(a, bb), q1 = _mm256_unpackhi_epi64(a, bb);
    __m256i q2 = _mm256_unpacklo_epi64(c, d), q3 = _mm256_unpackhi_epi64(c, d);
    auto* out = reinterpret_cast<__m256i*>(words + 4 * b);
    _mm256_storeu_si256(out + 0, _mm256_permute2x128_si256(q0, q1, 0x20));
    _mm256_storeu_si256(out + 1, _mm256_permute2x128_si256(q2, q3, 0x20));
    _mm256_storeu_si256(out + 2, _mm256_permute2x128_si256(q0, q1, 0x31));
    _mm256_storeu_si256(out + 3, _mm256_permute2x128_si256(q2, q3, 0x31));
  }
  if (full < nb) {
    uint64_t l2 = lo + uint64_t(full);
    philox_batch_scalar(key, l2, hi + (l2 < lo ? 1 : 0), nb - full, words + 4 * full);
  }
}
#pragma GCC pop_options
#endif

// Philox 4x32-10 over `nb` consecutive counters from the 128-bit value (lo, hi), written as
// words[4 * k + j] (the words of Philox4x32::block for counter k).
void philox_batch(uint64_t key, uint64_t lo, uint64_t hi, int64_t nb, uint32_t* words) {
  switch (isa()) {
#if EMBER_RANDOM_X86
    case Isa::Avx2:
      return philox_batch_avx2(key, lo, hi, nb, words);
    case Isa::Sse2:
      return philox_batch_sse2(key, lo, hi, nb, words);
#endif
    default:
      return philox_batch_scalar(key, lo, hi, nb, words);
  }
}

// Vector math on arrays padded to a multiple of 8 (float) / 4 (double) with harmless values.
// box_muller: r = sqrt(-2 log(u1)), (s, c) = sincos(2 pi u2); neg_log1p: -log1p(-u).
#if EMBER_RANDOM_X86
#pragma GCC push_options
#pragma GCC target("avx2,fma")
void box_muller_avx2(const float* u1, const float* u2, int64_t n, float* r, float* s, float* c) {
  for (int64_t i = 0; i < n; i += 8) {
    __m256 lg = Sleef_logf8_u10avx2(_mm256_loadu_ps(u1 + i));
    _mm256_storeu_ps(r + i, _mm256_sqrt_ps(_mm256_mul_ps(_mm256_set1_ps(-2.0f), lg)));
    Sleef___m256_2 sc =
        Sleef_sincospif8_u05avx2(_mm256_mul_ps(_mm256_set1_ps(2.0f), _mm256_loadu_ps(u2 + i)));
    _mm256_storeu_ps(s + i, sc.x);
    _mm256_storeu_ps(c + i, sc.y);
  }
}
void box_muller_avx2(const double* u1, const double* u2, int64_t n, double* r, double* s,
                     double* c) {
  for (int64_t i = 0; i < n; i += 4) {
    __m256d lg = Sleef_logd4_u10avx2(_mm256_loadu_pd(u1 + i));
    _mm256_storeu_pd(r + i, _mm256_sqrt_pd(_mm256_mul_pd(_mm256_set1_pd(-2.0), lg)));
    Sleef___m256d_2 sc =
        Sleef_sincospid4_u05avx2(_mm256_mul_pd(_mm256_set1_pd(2.0), _mm256_loadu_pd(u2 + i)));
    _mm256_storeu_pd(s + i, sc.x);
    _mm256_storeu_pd(c + i, sc.y);
  }
}
void neg_log1p_avx2(float* x, int64_t n) {
  for (int64_t i = 0; i < n; i += 8) {
    __m256 v = Sleef_log1pf8_u10avx2(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_loadu_ps(x + i)));
    _mm256_storeu_ps(x + i, _mm256_sub_ps(_mm256_setzero_ps(), v));
  }
}
void neg_log1p_avx2(double* x, int64_t n) {
  for (int64_t i = 0; i < n; i += 4) {
    __m256d v = Sleef_log1pd4_u10avx2(_mm256_sub_pd(_mm256_setzero_pd(), _mm256_loadu_pd(x + i)));
    _mm256_storeu_pd(x + i, _mm256_sub_pd(_mm256_setzero_pd(), v));
  }
}
#pragma GCC pop_options

void box_muller_sse2(const float* u1, const float* u2, int64_t n, float* r, float* s, float* c) {
  for (int64_t i = 0; i < n; i += 4) {
    __m128 lg = Sleef_logf4_u10sse2(_mm_loadu_ps(u1 + i));
    _mm_storeu_ps(r + i, _mm_sqrt_ps(_mm_mul_ps(_mm_set1_ps(-2.0f), lg)));
    Sleef___m128_2 sc =
        Sleef_sincospif4_u05sse2(_mm_mul_ps(_mm_set1_ps(2.0f), _mm_loadu_ps(u2 + i)));
    _mm_storeu_ps(s + i, sc.x);
    _mm_storeu_ps(c + i, sc.y);
  }
}
void box_muller_sse2(const double* u1, const double* u2, int64_t n, double* r, double* s,
                     double* c) {
  for (int64_t i = 0; i < n; i += 2) {
    __m128d lg = Sleef_logd2_u10sse2(_mm_loadu_pd(u1 + i));
    _mm_storeu_pd(r + i, _mm_sqrt_pd(_mm_mul_pd(_mm_set1_pd(-2.0), lg)));
    Sleef___m128d_2 sc =
        Sleef_sincospid2_u05sse2(_mm_mul_pd(_mm_set1_pd(2.0), _mm_loadu_pd(u2 + i)));
    _mm_storeu_pd(s + i, sc.x);
    _mm_storeu_pd(c + i, sc.y);
  }
}
void neg_log1p_sse2(float* x, int64_t n) {
  for (int64_t i = 0; i < n; i += 4)
    _mm_storeu_ps(x + i, _mm_sub_ps(_mm_setzero_ps(), Sleef_log1pf4_u10sse2(_mm_sub_ps(
                                                          _mm_setzero_ps(), _mm_loadu_ps(x + i)))));
}
void neg_log1p_sse2(double* x, int64_t n) {
  for (int64_t i = 0; i < n; i += 2)
    _mm_storeu_pd(x + i, _mm_sub_pd(_mm_setzero_pd(), Sleef_log1pd2_u10sse2(_mm_sub_pd(
                                                          _mm_setzero_pd(), _mm_loadu_pd(x + i)))));
}
#endif

template <class F>
void box_muller(const F* u1, const F* u2, int64_t n, F* r, F* s, F* c) {
  switch (isa()) {
#if EMBER_RANDOM_X86
    case Isa::Avx2:
      return box_muller_avx2(u1, u2, n, r, s, c);
    case Isa::Sse2:
      return box_muller_sse2(u1, u2, n, r, s, c);
#endif
    default:
      for (int64_t i = 0; i < n; ++i) {
        r[i] = std::sqrt(F(-2) * std::log(u1[i]));
        F th = F(6.283185307179586476925286766559) * u2[i];
        s[i] = std::sin(th);
        c[i] = std::cos(th);
      }
  }
}

template <class F>
void neg_log1p(F* x, int64_t n) {
  switch (isa()) {
#if EMBER_RANDOM_X86
    case Isa::Avx2:
      return neg_log1p_avx2(x, n);
    case Isa::Sse2:
      return neg_log1p_sse2(x, n);
#endif
    default:
      for (int64_t i = 0; i < n; ++i) x[i] = -std::log1p(-x[i]);
  }
}

// Draws the blocks for `n` elements at `kPer` elements per block from `gen`, and calls
// f(words, first_element, count) on batches; batch boundaries never split a block, so the
// element -> counter map (and hence every value) is independent of the thread count.
template <int kPer, class F>
void for_blocks(int64_t n, Generator& gen, const F& f) {
  if (n <= 0) return;
  int64_t nblocks = (n + kPer - 1) / kPer;
  auto [seed, offset] = gen.reserve(uint64_t(nblocks));
  parallel_for(0, nblocks, kGrainElems / kPer, [&](int64_t b0, int64_t b1) {
    uint32_t words[4 * kBatchBlocks];
    for (int64_t b = b0; b < b1; b += kBatchBlocks) {
      int64_t nb = std::min(kBatchBlocks, b1 - b);
      uint64_t lo = offset + uint64_t(b);
      philox_batch(seed, lo, lo < offset ? 1 : 0, nb, words);
      int64_t e0 = b * kPer;
      f(words, e0, std::min(nb * kPer, n - e0));
    }
  });
}

// Uniform floats on [0, 1) and 64-bit words: the map shared with the CUDA kernels
// (kernels/common/philox.h).
using philox::u24;
using philox::u32d;
using philox::u53;
using philox::w64;

// ---- kernels on a contiguous buffer of n real values ----

template <class T>
void uniform_kernel(T* p, int64_t n, double from, double to, Generator& gen) {
  if constexpr (std::is_same_v<T, double>) {
    double range = to - from;
    for_blocks<2>(n, gen, [&](const uint32_t* w, int64_t e0, int64_t cnt) {
      for (int64_t i = 0; i < cnt; ++i)
        p[e0 + i] = philox::uniform_double(w[2 * i], w[2 * i + 1], from, range);
    });
  } else {
    // float16/bfloat16 take only as many bits as their significand holds (11 / 8), so every
    // draw is exactly representable and [0, 1) never rounds up to 1 (as PyTorch).
    constexpr int kBits = std::is_same_v<T, Half>       ? philox::kBitsHalf
                          : std::is_same_v<T, BFloat16> ? philox::kBitsBFloat16
                                                        : philox::kBitsFloat;
    float f = float(from), range = float(to - from);
    for_blocks<4>(n, gen, [&](const uint32_t* w, int64_t e0, int64_t cnt) {
      for (int64_t i = 0; i < cnt; ++i) p[e0 + i] = T(philox::uniform_float(w[i], kBits, f, range));
    });
  }
}

// Box-Muller: each pair of uniforms (u1, u2) gives two normals, the cos branch for the even
// element and the sin branch for the odd one.
template <class T>
void normal_kernel(T* p, int64_t n, double mean, double stdv, Generator& gen) {
  if constexpr (std::is_same_v<T, double>) {
    for_blocks<2>(n, gen, [&](const uint32_t* w, int64_t e0, int64_t cnt) {
      constexpr int64_t kMax = kBatchBlocks + 4;
      double u1[kMax], u2[kMax], r[kMax], sn[kMax], cs[kMax];
      int64_t np = (cnt + 1) / 2, npad = (np + 3) / 4 * 4;
      for (int64_t j = 0; j < np; ++j) {
        u1[j] = 1.0 - u53(w[4 * j], w[4 * j + 1]);  // (0, 1]: log is finite
        u2[j] = u53(w[4 * j + 2], w[4 * j + 3]);
      }
      std::fill(u1 + np, u1 + npad, 1.0);
      std::fill(u2 + np, u2 + npad, 0.0);
      box_muller(u1, u2, npad, r, sn, cs);
      for (int64_t j = 0; j < np; ++j) {
        p[e0 + 2 * j] = mean + stdv * r[j] * cs[j];
        if (2 * j + 1 < cnt) p[e0 + 2 * j + 1] = mean + stdv * r[j] * sn[j];
      }
    });
  } else {
    float m = float(mean), sd = float(stdv);
    for_blocks<4>(n, gen, [&](const uint32_t* w, int64_t e0, int64_t cnt) {
      constexpr int64_t kMax = 2 * kBatchBlocks + 8;
      float u1[kMax], u2[kMax], r[kMax], sn[kMax], cs[kMax];
      int64_t np = (cnt + 1) / 2, npad = (np + 7) / 8 * 8;
      for (int64_t j = 0; j < np; ++j) {
        u1[j] = 1.0f - u24(w[2 * j]);
        u2[j] = u24(w[2 * j + 1]);
      }
      std::fill(u1 + np, u1 + npad, 1.0f);
      std::fill(u2 + np, u2 + npad, 0.0f);
      box_muller(u1, u2, npad, r, sn, cs);
      for (int64_t j = 0; j < np; ++j) {
        p[e0 + 2 * j] = T(m + sd * r[j] * cs[j]);
        if (2 * j + 1 < cnt) p[e0 + 2 * j + 1] = T(m + sd * r[j] * sn[j]);
      }
    });
  }
}

// -log(1 - u) / lambda, as PyTorch's -1/lambda * log(1 - u).
template <class T>
void exponential_kernel(T* p, int64_t n, double lambd, Generator& gen) {
  if (lambd == 0) {
    // PyTorch's formula is +inf for every u > 0.
    std::fill(p, p + n, T(std::numeric_limits<float>::infinity()));
    return;
  }
  if constexpr (std::is_same_v<T, double>) {
    for_blocks<2>(n, gen, [&](const uint32_t* w, int64_t e0, int64_t cnt) {
      constexpr int64_t kMax = 2 * kBatchBlocks + 4;
      double x[kMax];
      int64_t npad = (cnt + 3) / 4 * 4;
      for (int64_t i = 0; i < cnt; ++i) x[i] = u53(w[2 * i], w[2 * i + 1]);
      std::fill(x + cnt, x + npad, 0.0);
      neg_log1p(x, npad);
      for (int64_t i = 0; i < cnt; ++i) p[e0 + i] = x[i] / lambd;
    });
  } else {
    float l = float(lambd);
    for_blocks<4>(n, gen, [&](const uint32_t* w, int64_t e0, int64_t cnt) {
      constexpr int64_t kMax = 4 * kBatchBlocks + 8;
      float x[kMax];
      int64_t npad = (cnt + 7) / 8 * 8;
      for (int64_t i = 0; i < cnt; ++i) x[i] = u24(w[i]);
      std::fill(x + cnt, x + npad, 0.0f);
      neg_log1p(x, npad);
      for (int64_t i = 0; i < cnt; ++i) p[e0 + i] = T(x[i] / l);
    });
  }
}

// `prob(i)` is the probability for element i.
template <class T, class P>
void bernoulli_kernel(T* p, int64_t n, const P& prob, Generator& gen) {
  for_blocks<4>(n, gen, [&](const uint32_t* w, int64_t e0, int64_t cnt) {
    for (int64_t i = 0; i < cnt; ++i) p[e0 + i] = T(philox::bernoulli(w[i], prob(e0 + i)) ? 1 : 0);
  });
}

// Integers from + [0, range); range == 0 means the full 2^64. A word maps to [0, range) by
// multiply-shift (floor(w * range / 2^bits)): no division, the same tiny bias as a modulo.
template <class T>
void random_kernel(T* p, int64_t n, int64_t from, uint64_t range, Generator& gen) {
  auto put = [&](int64_t i, uint64_t v) {
    int64_t x = int64_t(uint64_t(from) + v);
    if constexpr (std::is_same_v<T, bool>)
      p[i] = x != 0;
    else
      p[i] = T(x);
  };
  if (philox::random_one_word(range)) {
    for_blocks<4>(n, gen, [&](const uint32_t* w, int64_t e0, int64_t cnt) {
      for (int64_t i = 0; i < cnt; ++i) put(e0 + i, philox::random32(w[i], range));
    });
  } else {
    for_blocks<2>(n, gen, [&](const uint32_t* w, int64_t e0, int64_t cnt) {
      for (int64_t i = 0; i < cnt; ++i)
        put(e0 + i, philox::random64(w[2 * i], w[2 * i + 1], range));
    });
  }
}

// Elements of the real buffer behind a contiguous tensor (complex counts twice).
int64_t real_numel(const Tensor& t) { return t.numel() * (t.is_complex() ? 2 : 1); }

// ---- the stubs' CPU kernels ----

void uniform_cpu(Tensor& self, double from, double to, Generator& gen) {
  EMBER_DISPATCH_FLOATING_TYPES(toRealValueType(self.dtype()), "uniform_", [&] {
    uniform_kernel(static_cast<scalar_t*>(self.data_ptr()), real_numel(self), from, to, gen);
  });
}

void normal_cpu(Tensor& self, double mean, double std, Generator& gen) {
  EMBER_DISPATCH_FLOATING_TYPES(toRealValueType(self.dtype()), "normal_", [&] {
    normal_kernel(static_cast<scalar_t*>(self.data_ptr()), real_numel(self), mean, std, gen);
  });
}

void exponential_cpu(Tensor& self, double lambd, Generator& gen) {
  EMBER_DISPATCH_FLOATING_TYPES(self.dtype(), "exponential_", [&] {
    exponential_kernel(static_cast<scalar_t*>(self.data_ptr()), self.numel(), lambd, gen);
  });
}

void bernoulli_scalar_cpu(Tensor& self, double p, Generator& gen) {
  EMBER_DISPATCH_REAL_TYPES_AND_BOOL(self.dtype(), "bernoulli_", [&] {
    bernoulli_kernel(
        static_cast<scalar_t*>(self.data_ptr()), self.numel(), [p](int64_t) { return p; }, gen);
  });
}

void bernoulli_tensor_cpu(Tensor& self, const Tensor& p, Generator& gen) {
  // Every probability is checked before any draw, so a bad one leaves the generator untouched.
  const double* pp = static_cast<const double*>(p.data_ptr());
  for (int64_t i = 0; i < p.numel(); ++i)
    EMBER_CHECK(pp[i] >= 0 && pp[i] <= 1,
                "[bernoulli_] expected all probabilities in [0, 1], but got p=", pp[i]);
  EMBER_DISPATCH_REAL_TYPES_AND_BOOL(self.dtype(), "bernoulli_", [&] {
    bernoulli_kernel(
        static_cast<scalar_t*>(self.data_ptr()), self.numel(), [pp](int64_t i) { return pp[i]; },
        gen);
  });
}

void random_cpu(Tensor& self, int64_t from, uint64_t range, Generator& gen) {
  EMBER_DISPATCH_REAL_TYPES_AND_BOOL(self.dtype(), "random_", [&] {
    random_kernel(static_cast<scalar_t*>(self.data_ptr()), self.numel(), from, range, gen);
  });
}

void randperm_cpu(Tensor& out, Generator& g) {
  const int64_t n = out.numel();
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), int64_t(0));
  if (n > 1) {
    // Fisher-Yates, swap k uses the 64-bit word pair k % 2 of block k / 2. Sequential by nature.
    int64_t nswaps = n - 1;
    int64_t nblocks = (nswaps + 1) / 2;
    auto [seed, offset] = g.reserve(uint64_t(nblocks));
    std::vector<uint32_t> words(size_t(4 * std::min(nblocks, kBatchBlocks)));
    for (int64_t b = 0; b < nblocks; b += kBatchBlocks) {
      int64_t nb = std::min(kBatchBlocks, nblocks - b);
      uint64_t lo = offset + uint64_t(b);
      philox_batch(seed, lo, lo < offset ? 1 : 0, nb, words.data());
      for (int64_t k = 2 * b; k < std::min(nswaps, 2 * (b + nb)); ++k) {
        const uint32_t* w = words.data() + 2 * (k - 2 * b);
        int64_t i = n - 1 - k;
        int64_t j = int64_t((unsigned __int128)w64(w[0], w[1]) * uint64_t(i + 1) >> 64);
        std::swap(perm[size_t(i)], perm[size_t(j)]);
      }
    }
  }
  EMBER_DISPATCH_REAL_TYPES(out.dtype(), "randperm", [&] {
    auto* p = static_cast<scalar_t*>(out.data_ptr());
    for (int64_t i = 0; i < n; ++i) p[i] = scalar_t(perm[size_t(i)]);
  });
}

void multinomial_cpu(Tensor& out, const Tensor& probs, int64_t num_samples, bool replacement,
                     Generator& g) {
  const int64_t n_cat = probs.size(-1);
  const int64_t rows = probs.dim() == 1 ? 1 : probs.size(0);
  const double* pp = static_cast<const double*>(probs.data_ptr());
  for (int64_t i = 0; i < rows * n_cat; ++i)
    EMBER_CHECK(std::isfinite(pp[i]) && pp[i] >= 0,
                "[multinomial] probability tensor contains either `inf`, `nan` or element < 0");
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t c = 0; c < n_cat; ++c) s += pp[r * n_cat + c];
    EMBER_CHECK(s > 0,
                "[multinomial] invalid multinomial distribution (sum of probabilities <= 0)");
  }
  auto* op = static_cast<int64_t*>(out.data_ptr());
  if (!replacement || num_samples == 1) {
    // Exponential race: the k largest p_i / E_i (E_i ~ Exp(1)) are k draws without replacement
    // in order, as PyTorch's Gumbel-top-k; one Exp(1) per category.
    std::vector<double> e(size_t(rows * n_cat));
    exponential_kernel(e.data(), rows * n_cat, 1.0, g);
    parallel_for(0, rows, std::max<int64_t>(1, kGrainElems / std::max<int64_t>(n_cat, 1)),
                 [&](int64_t r0, int64_t r1) {
                   std::vector<double> key(static_cast<size_t>(n_cat));
                   std::vector<int64_t> idx(static_cast<size_t>(n_cat));
                   for (int64_t r = r0; r < r1; ++r) {
                     for (int64_t c = 0; c < n_cat; ++c) {
                       double p = pp[r * n_cat + c];
                       key[size_t(c)] = p == 0 ? 0.0 : p / e[size_t(r * n_cat + c)];
                     }
                     std::iota(idx.begin(), idx.end(), int64_t(0));
                     auto better = [&](int64_t a, int64_t b) {
                       return key[size_t(a)] > key[size_t(b)] ||
                              (key[size_t(a)] == key[size_t(b)] && a < b);
                     };
                     std::partial_sort(idx.begin(), idx.begin() + num_samples, idx.end(), better);
                     for (int64_t k = 0; k < num_samples; ++k)
                       op[r * num_samples + k] = idx[size_t(k)];
                   }
                 });
  } else {
    // Inverse CDF per sample; upper_bound never lands on a zero-probability category.
    std::vector<double> u(size_t(rows * num_samples));
    uniform_kernel(u.data(), rows * num_samples, 0.0, 1.0, g);
    parallel_for(0, rows, 1, [&](int64_t r0, int64_t r1) {
      std::vector<double> cdf(static_cast<size_t>(n_cat));
      for (int64_t r = r0; r < r1; ++r) {
        double s = 0;
        int64_t last = 0;
        for (int64_t c = 0; c < n_cat; ++c) {
          s += pp[r * n_cat + c];
          cdf[size_t(c)] = s;
          if (pp[r * n_cat + c] > 0) last = c;
        }
        for (int64_t k = 0; k < num_samples; ++k) {
          double x = u[size_t(r * num_samples + k)] * s;
          int64_t c = std::upper_bound(cdf.begin(), cdf.end(), x) - cdf.begin();
          op[r * num_samples + k] = std::min(c, last);
        }
      }
    });
  }
}

void normal_std_check_cpu(const Tensor& std) {
  const double* sp = static_cast<const double*>(std.data_ptr());
  for (int64_t i = 0; i < std.numel(); ++i)
    EMBER_CHECK(sp[i] >= 0.0, "[normal] normal expects all elements of std >= 0.0");
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(uniform_stub, kCPU, cpu::uniform_cpu);
EMBER_REGISTER_KERNEL(normal_stub, kCPU, cpu::normal_cpu);
EMBER_REGISTER_KERNEL(exponential_stub, kCPU, cpu::exponential_cpu);
EMBER_REGISTER_KERNEL(bernoulli_scalar_stub, kCPU, cpu::bernoulli_scalar_cpu);
EMBER_REGISTER_KERNEL(bernoulli_tensor_stub, kCPU, cpu::bernoulli_tensor_cpu);
EMBER_REGISTER_KERNEL(random_stub, kCPU, cpu::random_cpu);
EMBER_REGISTER_KERNEL(randperm_stub, kCPU, cpu::randperm_cpu);
EMBER_REGISTER_KERNEL(multinomial_stub, kCPU, cpu::multinomial_cpu);
EMBER_REGISTER_KERNEL(normal_std_check_stub, kCPU, cpu::normal_std_check_cpu);

}  // namespace ember
