// Random sampling (random.h and the Tensor random fills) on the counter-based Philox stream.
// See Note [Reproducible random streams] in generator.h for how elements map to counters.
#include "ember/random.h"
#include "ops/call_path.h"

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
#include "core/tensor_util.h"
#include "ember/dispatch_type.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/version.h"

namespace ember {

namespace {

// Below this many elements a fill stays on the calling thread.
constexpr int64_t kGrainElems = 32768;
// Blocks generated per batch: an 8 KiB word buffer that stays in L1 with its scratch arrays.
constexpr int64_t kBatchBlocks = 512;

Generator pick_generator(const std::optional<Generator>& gen, Device d) {
  return gen ? *gen : default_generator(d);
}

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

constexpr uint32_t kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;

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
    uint32_t c0, c1, c2, c3;
    counter_words(lo, hi, b, 1, &c0, &c1, &c2, &c3);
    uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
    for (int r = 0; r < 10; ++r) {
      uint64_t p0 = uint64_t(kPhiloxM0) * c0, p1 = uint64_t(kPhiloxM1) * c2;
      uint32_t n0 = uint32_t(p1 >> 32) ^ c1 ^ k0, n2 = uint32_t(p0 >> 32) ^ c3 ^ k1;
      c1 = uint32_t(p1);
      c3 = uint32_t(p0);
      c0 = n0;
      c2 = n2;
      k0 += kPhiloxW0;
      k1 += kPhiloxW1;
    }
    uint32_t* w = words + 4 * b;
    w[0] = c0;
    w[1] = c1;
    w[2] = c2;
    w[3] = c3;
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

// Uniform floats on [0, 1): 24 random bits for float, 53 for double, 32 for a double
// compared against a probability.
inline float u24(uint32_t w) { return float(w >> 8) * 0x1.0p-24f; }
inline double u53(uint32_t a, uint32_t b) {
  return double(((uint64_t(b) << 32) | a) >> 11) * 0x1.0p-53;
}
inline double u32d(uint32_t w) { return double(w) * 0x1.0p-32; }
inline uint64_t w64(uint32_t a, uint32_t b) { return (uint64_t(b) << 32) | a; }

// ---- kernels on a contiguous buffer of n real values ----

template <class T>
void uniform_kernel(T* p, int64_t n, double from, double to, Generator& gen) {
  if constexpr (std::is_same_v<T, double>) {
    double range = to - from;
    for_blocks<2>(n, gen, [&](const uint32_t* w, int64_t e0, int64_t cnt) {
      for (int64_t i = 0; i < cnt; ++i) p[e0 + i] = from + u53(w[2 * i], w[2 * i + 1]) * range;
    });
  } else {
    // float16/bfloat16 take only as many bits as their significand holds (11 / 8), so every
    // draw is exactly representable and [0, 1) never rounds up to 1 (as PyTorch).
    constexpr int kBits = std::is_same_v<T, Half> ? 11 : std::is_same_v<T, BFloat16> ? 8 : 24;
    constexpr float kScale = 1.0f / float(1u << kBits);
    float f = float(from), range = float(to - from);
    for_blocks<4>(n, gen, [&](const uint32_t* w, int64_t e0, int64_t cnt) {
      for (int64_t i = 0; i < cnt; ++i) {
        p[e0 + i] = T(f + float(w[i] >> (32 - kBits)) * kScale * range);
      }
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
    for (int64_t i = 0; i < cnt; ++i) p[e0 + i] = T(u32d(w[i]) < prob(e0 + i) ? 1 : 0);
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
  if (range != 0 && range <= (uint64_t(1) << 32)) {
    for_blocks<4>(n, gen, [&](const uint32_t* w, int64_t e0, int64_t cnt) {
      for (int64_t i = 0; i < cnt; ++i) put(e0 + i, (uint64_t(w[i]) * range) >> 32);
    });
  } else {
    for_blocks<2>(n, gen, [&](const uint32_t* w, int64_t e0, int64_t cnt) {
      for (int64_t i = 0; i < cnt; ++i) {
        uint64_t v = w64(w[2 * i], w[2 * i + 1]);
        put(e0 + i, range ? uint64_t((unsigned __int128)v * range >> 64) : v);
      }
    });
  }
}

// Runs `fill(contiguous CPU tensor)` for `self`: directly when self is a plain contiguous CPU
// tensor, else into a temporary that is then copied (strided, conj or other-device targets).
template <class F>
Tensor& fill_random(Tensor& self, const char* op, const F& fill) {
  EMBER_CHECK(self.defined(), "[", op, "] undefined tensor");
  if (self.numel() == 0) return self;
  bool direct = self.is_cpu() && self.is_contiguous() && !self.is_conj();
  Tensor buf = direct ? self : empty_tensor(self.sizes(), self.dtype(), Device(kCPU));
  fill(buf);
  if (direct)
    self.unsafeGetTensorImpl()->bump_version();
  else
    self.copy_(buf);
  return self;
}

// Elements of the real buffer behind a contiguous tensor (complex counts twice).
int64_t real_numel(const Tensor& t) { return t.numel() * (t.is_complex() ? 2 : 1); }

const char* cpp_type_name(ScalarType t) {
  switch (t) {
    case kBool:
      return "bool";
    case kByte:
      return "unsigned char";
    case kChar:
      return "signed char";
    case kShort:
      return "short";
    case kInt:
      return "int";
    case kLong:
      return "long";
    case kHalf:
      return "c10::Half";
    case kBFloat16:
      return "c10::BFloat16";
    case kFloat:
      return "float";
    case kDouble:
      return "double";
    default:
      return toString(t);
  }
}

// Largest finite value of a floating dtype.
double float_max(ScalarType t) {
  switch (t) {
    case kHalf:
      return 65504.0;
    case kBFloat16:
      return double(float(std::numeric_limits<BFloat16>::max()));
    case kFloat:
      return double(std::numeric_limits<float>::max());
    default:
      return std::numeric_limits<double>::max();
  }
}

// Integers a floating dtype represents exactly: 2^digits.
int64_t float_digits_max(ScalarType t) {
  switch (t) {
    case kHalf:
      return int64_t(1) << 11;
    case kBFloat16:
      return int64_t(1) << 8;
    case kFloat:
      return int64_t(1) << 24;
    default:
      return int64_t(1) << 53;
  }
}

// [min, max] of an integral dtype (bool: [0, 1]).
std::pair<int64_t, int64_t> int_bounds(ScalarType t) {
  return EMBER_DISPATCH_INTEGRAL_TYPES_AND_BOOL(t, "random_", [&] {
    return std::pair<int64_t, int64_t>(int64_t(std::numeric_limits<scalar_t>::lowest()),
                                       int64_t(std::numeric_limits<scalar_t>::max()));
  });
}

void check_floating_or_complex(ScalarType t, const char* op, const char* kernel) {
  EMBER_CHECK(isFloatingType(t) || isComplexType(t), "[", op, "] \"", kernel,
              "\" not implemented for '", toString(t), "'");
}

// A double copy of `t` (CPU, contiguous) in row-major order.
Tensor as_double(const Tensor& t) { return t.to(Device(kCPU), kDouble).contiguous(); }

}  // namespace

// ---- Tensor random fills ----

Tensor& Tensor::uniform_(double from, double to, std::optional<Generator> gen) {
  EMBER_OP(uniform_, *this, from, to, gen);
  EMBER_CHECK(defined(), "[uniform_] undefined tensor");
  check_floating_or_complex(dtype(), "uniform_", "check_uniform_bounds");
  ScalarType real_t = toRealValueType(dtype());
  double lim = float_max(real_t);
  EMBER_CHECK(from >= -lim && from <= lim, "[uniform_] from is out of bounds for ",
              cpp_type_name(real_t));
  EMBER_CHECK(to >= -lim && to <= lim, "[uniform_] to is out of bounds for ",
              cpp_type_name(real_t));
  EMBER_CHECK(from <= to,
              "[uniform_] uniform_ expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  EMBER_CHECK(to - from <= lim, "[uniform_] uniform_ expects to-from <= std::numeric_limits<",
              ember::toString(real_t), ">::max(), but found to=", to, " and from=", from,
              " which result in to-from to exceed the limit");
  Generator g = pick_generator(gen, device());
  return fill_random(*this, "uniform_", [&](Tensor& buf) {
    EMBER_DISPATCH_FLOATING_TYPES(real_t, "uniform_", [&] {
      uniform_kernel(static_cast<scalar_t*>(buf.data_ptr()), real_numel(buf), from, to, g);
    });
  });
}

Tensor& Tensor::normal_(double mean, double std, std::optional<Generator> gen) {
  EMBER_OP(normal_, *this, mean, std, gen);
  EMBER_CHECK(defined(), "[normal_] undefined tensor");
  check_floating_or_complex(dtype(), "normal_", "normal_kernel_cpu");
  EMBER_CHECK(std >= 0.0, "[normal_] normal expects std >= 0.0, but found std ", std);
  // Complex: real and imaginary parts each get std / sqrt(2) (PyTorch's convention).
  double s = is_complex() ? std / std::sqrt(2.0) : std;
  Generator g = pick_generator(gen, device());
  ScalarType real_t = toRealValueType(dtype());
  return fill_random(*this, "normal_", [&](Tensor& buf) {
    EMBER_DISPATCH_FLOATING_TYPES(real_t, "normal_", [&] {
      normal_kernel(static_cast<scalar_t*>(buf.data_ptr()), real_numel(buf), mean, s, g);
    });
  });
}

Tensor& Tensor::exponential_(double lambd, std::optional<Generator> gen) {
  EMBER_OP(exponential_, *this, lambd, gen);
  EMBER_CHECK(defined(), "[exponential_] undefined tensor");
  EMBER_CHECK(isFloatingType(dtype()), "[exponential_] \"exponential_cpu\" not implemented for '",
              ember::toString(dtype()), "'");
  EMBER_CHECK(lambd >= 0.0,
              "[exponential_] exponential_ expects lambda >= 0.0, but found lambda=", lambd);
  Generator g = pick_generator(gen, device());
  return fill_random(*this, "exponential_", [&](Tensor& buf) {
    EMBER_DISPATCH_FLOATING_TYPES(dtype(), "exponential_", [&] {
      exponential_kernel(static_cast<scalar_t*>(buf.data_ptr()), buf.numel(), lambd, g);
    });
  });
}

Tensor& Tensor::bernoulli_(double p, std::optional<Generator> gen) {
  EMBER_OP(bernoulli_, *this, p, gen);
  EMBER_CHECK(defined(), "[bernoulli_] undefined tensor");
  EMBER_CHECK(!is_complex(), "[bernoulli_] \"bernoulli_scalar_cpu_\" not implemented for '",
              ember::toString(dtype()), "'");
  EMBER_CHECK(p >= 0 && p <= 1, "[bernoulli_] bernoulli_ expects p to be in [0, 1], but got p=", p);
  Generator g = pick_generator(gen, device());
  return fill_random(*this, "bernoulli_", [&](Tensor& buf) {
    EMBER_DISPATCH_REAL_TYPES_AND_BOOL(dtype(), "bernoulli_", [&] {
      bernoulli_kernel(
          static_cast<scalar_t*>(buf.data_ptr()), buf.numel(), [p](int64_t) { return p; }, g);
    });
  });
}

Tensor& Tensor::bernoulli_(const Tensor& p, std::optional<Generator> gen) {
  EMBER_OP(bernoulli__1, *this, p, gen);
  EMBER_CHECK(defined() && p.defined(), "[bernoulli_] undefined tensor");
  EMBER_CHECK(!is_complex(), "[bernoulli_] \"bernoulli_tensor_cpu_self_\" not implemented for '",
              ember::toString(dtype()), "'");
  EMBER_CHECK(isFloatingType(p.dtype()),
              "[bernoulli_] \"bernoulli_tensor_cpu_p_\" not implemented for '",
              ember::toString(p.dtype()), "'");
  Tensor pd = as_double(p.expand(sizes()));
  if (pd.is_alias_of(*this)) pd = pd.clone();  // x.bernoulli_(x): read p before writing
  const double* pp = static_cast<const double*>(pd.data_ptr());
  for (int64_t i = 0; i < pd.numel(); ++i)
    EMBER_CHECK(pp[i] >= 0 && pp[i] <= 1,
                "[bernoulli_] expected all probabilities in [0, 1], but got p=", pp[i]);
  Generator g = pick_generator(gen, device());
  return fill_random(*this, "bernoulli_", [&](Tensor& buf) {
    EMBER_DISPATCH_REAL_TYPES_AND_BOOL(dtype(), "bernoulli_", [&] {
      bernoulli_kernel(
          static_cast<scalar_t*>(buf.data_ptr()), buf.numel(), [pp](int64_t i) { return pp[i]; },
          g);
    });
  });
}

Tensor& Tensor::random_(int64_t from, std::optional<int64_t> to, std::optional<Generator> gen) {
  EMBER_OP(random_, *this, from, to, gen);
  EMBER_CHECK(defined(), "[random_] undefined tensor");
  ScalarType dt = dtype();
  EMBER_CHECK(!isComplexType(dt),
              "[random_] check_random_bounds handles only integral, floating-point and boolean "
              "types");
  uint64_t range;
  int64_t hi;  // largest value drawn
  if (to) {
    EMBER_CHECK(from < *to,
                "[random_] random_ expects 'from' to be less than 'to', but got from=", from,
                " >= to=", *to);
    range = uint64_t(*to) - uint64_t(from);
    hi = *to - 1;
  } else {
    hi = isFloatingType(dt) ? float_digits_max(dt) : int_bounds(dt).second;
    EMBER_CHECK(from <= hi,
                "[random_] random_ expects 'from' casted to dtype to be less than or equal to "
                "'to_inc' casted to dtype, but got from=",
                from, " > to_inc=", hi);
    range = uint64_t(hi) - uint64_t(from) + 1;  // 0 encodes the full 2^64
  }
  if (!isFloatingType(dt)) {
    auto [lo_b, hi_b] = int_bounds(dt);
    EMBER_CHECK(from >= lo_b && from <= hi_b, "[random_] from is out of bounds for ",
                cpp_type_name(dt));
    EMBER_CHECK(hi >= lo_b && hi <= hi_b, "[random_] to - 1 is out of bounds for ",
                cpp_type_name(dt));
  }
  Generator g = pick_generator(gen, device());
  return fill_random(*this, "random_", [&](Tensor& buf) {
    EMBER_DISPATCH_REAL_TYPES_AND_BOOL(dt, "random_", [&] {
      random_kernel(static_cast<scalar_t*>(buf.data_ptr()), buf.numel(), from, range, g);
    });
  });
}

Tensor Tensor::bernoulli(std::optional<Generator> gen) const {
  return ember::bernoulli(*this, std::move(gen));
}

// ---- random factories ----

namespace {
TensorOptions without_grad(const TensorOptions& opts) { return opts.requires_grad(false); }
Tensor with_grad(Tensor t, const TensorOptions& opts) {
  if (opts.requires_grad()) t.set_requires_grad(true);
  return t;
}
}  // namespace

Tensor rand(IntArrayRef sizes, std::optional<Generator> gen, const TensorOptions& opts) {
  EMBER_OP(rand, sizes, gen, opts);
  check_floating_or_complex(opts.dtype(), "rand", "check_uniform_bounds");
  Tensor t = empty(sizes, without_grad(opts));
  t.uniform_(0, 1, std::move(gen));
  return with_grad(t, opts);
}
Tensor rand(IntArrayRef sizes, const TensorOptions& opts) {
  EMBER_OP(rand_1, sizes, opts);
  return rand(sizes, std::nullopt, opts);
}

Tensor randn(IntArrayRef sizes, std::optional<Generator> gen, const TensorOptions& opts) {
  EMBER_OP(randn, sizes, gen, opts);
  check_floating_or_complex(opts.dtype(), "randn", "normal_kernel_cpu");
  Tensor t = empty(sizes, without_grad(opts));
  t.normal_(0, 1, std::move(gen));
  return with_grad(t, opts);
}
Tensor randn(IntArrayRef sizes, const TensorOptions& opts) {
  EMBER_OP(randn_1, sizes, opts);
  return randn(sizes, std::nullopt, opts);
}

Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, std::optional<Generator> gen,
               const TensorOptions& opts) {
  EMBER_OP(randint, low, high, sizes, gen, opts);
  TensorOptions o = without_grad(opts).dtype(opts.has_dtype() ? opts.dtype() : kLong);
  Tensor t = empty(sizes, o);
  t.random_(low, high, std::move(gen));
  return with_grad(t, opts);
}
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, const TensorOptions& opts) {
  EMBER_OP(randint_1, low, high, sizes, opts);
  return randint(low, high, sizes, std::nullopt, opts);
}
Tensor randint(int64_t high, IntArrayRef sizes, const TensorOptions& opts) {
  EMBER_OP(randint_2, high, sizes, opts);
  return randint(0, high, sizes, std::nullopt, opts);
}
Tensor randint(int64_t high, IntArrayRef sizes, std::optional<Generator> gen,
               const TensorOptions& opts) {
  EMBER_OP(randint_3, high, sizes, gen, opts);
  return randint(0, high, sizes, std::move(gen), opts);
}

Tensor randperm(int64_t n, std::optional<Generator> gen, const TensorOptions& opts) {
  EMBER_OP(randperm, n, gen, opts);
  EMBER_CHECK(n >= 0, "[randperm] n must be non-negative, got ", n);
  ScalarType dt = opts.has_dtype() ? opts.dtype() : kLong;
  EMBER_CHECK(dt != kBool && !isComplexType(dt), "[randperm] \"randperm\" not implemented for '",
              ember::toString(dt), "'");
  if (isFloatingType(dt)) {
    EMBER_CHECK(n <= float_digits_max(dt) + 1, "[randperm] n cannot be greater than ",
                float_digits_max(dt) + 1, " for ", ember::toString(dt), " type.");
  } else {
    EMBER_CHECK(n == 0 || n - 1 <= int_bounds(dt).second, "[randperm] n is too large (", n,
                ") for result tensor type: '", ember::toString(dt), "'");
  }
  Device dev = opts.device();
  Generator g = pick_generator(gen, dev);
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
  Tensor t = empty_tensor({n}, dt, Device(kCPU));
  EMBER_DISPATCH_REAL_TYPES(dt, "randperm", [&] {
    auto* p = static_cast<scalar_t*>(t.data_ptr());
    for (int64_t i = 0; i < n; ++i) p[i] = scalar_t(perm[size_t(i)]);
  });
  if (!dev.is_cpu()) t = t.to(dev);
  return with_grad(t, opts);
}

Tensor randperm(int64_t n, const TensorOptions& opts) {
  EMBER_OP(randperm_1, n, opts);
  return randperm(n, std::nullopt, opts);
}

Tensor rand_like(const Tensor& t, const TensorOptions& opts) {
  EMBER_OP(rand_like, t, opts);
  Tensor r = empty_like(t, without_grad(opts));
  check_floating_or_complex(r.dtype(), "rand_like", "check_uniform_bounds");
  r.uniform_(0, 1);
  return with_grad(r, opts);
}

Tensor randn_like(const Tensor& t, const TensorOptions& opts) {
  EMBER_OP(randn_like, t, opts);
  Tensor r = empty_like(t, without_grad(opts));
  check_floating_or_complex(r.dtype(), "randn_like", "normal_kernel_cpu");
  r.normal_(0, 1);
  return with_grad(r, opts);
}

Tensor bernoulli(const Tensor& p, std::optional<Generator> gen) {
  EMBER_OP(bernoulli, p, gen);
  EMBER_CHECK(p.defined(), "[bernoulli] undefined tensor");
  EMBER_CHECK(isFloatingType(p.dtype()),
              "[bernoulli] \"bernoulli_tensor_cpu_p_\" not implemented for '",
              ember::toString(p.dtype()), "'");
  Tensor out = empty_like(p);
  out.bernoulli_(p, std::move(gen));
  return out;
}

Tensor bernoulli(const Tensor& x, double p, std::optional<Generator> gen) {
  EMBER_OP(bernoulli_1, x, p, gen);
  EMBER_CHECK(x.defined(), "[bernoulli] undefined tensor");
  Tensor out = empty_like(x);
  out.bernoulli_(p, std::move(gen));
  return out;
}

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement,
                   std::optional<Generator> gen) {
  EMBER_OP(multinomial, probs, num_samples, replacement, gen);
  EMBER_CHECK(probs.defined(), "[multinomial] undefined tensor");
  EMBER_CHECK(probs.dim() == 1 || probs.dim() == 2, "[multinomial] prob_dist must be 1 or 2 dim");
  EMBER_CHECK(isFloatingType(probs.dtype()),
              "[multinomial] multinomial only supports floating-point dtypes for input, got: ",
              toString(probs.dtype()));
  EMBER_CHECK(num_samples > 0, "[multinomial] cannot sample n_sample <= 0 samples");
  int64_t n_cat = probs.size(-1);
  EMBER_CHECK(replacement || num_samples <= n_cat,
              "[multinomial] cannot sample n_sample > prob_dist.size(-1) samples without "
              "replacement");
  EMBER_CHECK(n_cat <= (int64_t(1) << 24), "[multinomial] number of categories cannot exceed 2^24");
  int64_t rows = probs.dim() == 1 ? 1 : probs.size(0);
  Tensor pd = as_double(probs);
  const double* pp = static_cast<const double*>(pd.data_ptr());
  for (int64_t i = 0; i < rows * n_cat; ++i)
    EMBER_CHECK(std::isfinite(pp[i]) && pp[i] >= 0,
                "[multinomial] probability tensor contains either `inf`, `nan` or element < 0");
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t c = 0; c < n_cat; ++c) s += pp[r * n_cat + c];
    EMBER_CHECK(s > 0,
                "[multinomial] invalid multinomial distribution (sum of probabilities <= 0)");
  }
  Generator g = pick_generator(gen, probs.device());
  DimVector out_sizes = probs.dim() == 1 ? DimVector{num_samples} : DimVector{rows, num_samples};
  Tensor out = empty_tensor(out_sizes, kLong, Device(kCPU));
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
  if (!probs.is_cpu()) out = out.to(probs.device());
  return out;
}

Tensor normal(const Tensor& mean, const Tensor& std, std::optional<Generator> gen) {
  EMBER_OP(normal, mean, std, gen);
  EMBER_CHECK(mean.defined() && std.defined(), "[normal] undefined tensor");
  Tensor sd = as_double(std);
  const double* sp = static_cast<const double*>(sd.data_ptr());
  for (int64_t i = 0; i < sd.numel(); ++i)
    EMBER_CHECK(sp[i] >= 0.0, "[normal] normal expects all elements of std >= 0.0");
  DimVector shape = broadcast_shapes(mean.sizes(), std.sizes());
  Tensor out = empty_tensor(shape, mean.dtype(), mean.device());
  out.normal_(0, 1, std::move(gen));
  out.mul_(std).add_(mean);
  return out;
}

Tensor normal(const Tensor& mean, double std, std::optional<Generator> gen) {
  EMBER_OP(normal_1, mean, std, gen);
  EMBER_CHECK(mean.defined(), "[normal] undefined tensor");
  EMBER_CHECK(std >= 0.0, "[normal] normal expects std >= 0.0, but found std ", std);
  Tensor out = empty_like(mean);
  out.normal_(0, std, std::move(gen));
  out.add_(mean);
  return out;
}

Tensor normal(double mean, const Tensor& std, std::optional<Generator> gen) {
  EMBER_OP(normal_2, mean, std, gen);
  EMBER_CHECK(std.defined(), "[normal] undefined tensor");
  Tensor sd = as_double(std);
  const double* sp = static_cast<const double*>(sd.data_ptr());
  for (int64_t i = 0; i < sd.numel(); ++i)
    EMBER_CHECK(sp[i] >= 0.0, "[normal] normal expects all elements of std >= 0.0");
  Tensor out = empty_like(std);
  out.normal_(0, 1, std::move(gen));
  out.mul_(std).add_(Scalar(mean));
  return out;
}

Tensor normal(double mean, double std, IntArrayRef sizes, std::optional<Generator> gen,
              const TensorOptions& opts) {
  EMBER_OP(normal_3, mean, std, sizes, gen, opts);
  Tensor t = empty(sizes, without_grad(opts));
  t.normal_(mean, std, std::move(gen));
  return with_grad(t, opts);
}

}  // namespace ember
