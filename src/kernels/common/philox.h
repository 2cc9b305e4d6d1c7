#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Philox 4x32-10 and the element -> random word map of Note [Reproducible random streams]
// (ember/generator.h), written once for the CPU kernels (src/kernels/cpu/creation/random.cpp)
// and the CUDA kernels (src/kernels/cuda/random*.cu), so that one seed gives the same numbers on
// both. Plain integer arithmetic and explicitly rounded float operations: the host and the
// device evaluate every uniform, bernoulli and integer draw bit for bit alike. Normal and
// exponential samples go through log / sincos, whose last bit differs between math libraries.

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define EMBER_PHILOX_HD __host__ __device__ __forceinline__
#else
#define EMBER_PHILOX_HD inline
#endif

namespace ember::philox {

constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;

/// Four 32-bit words.
struct Words {
  uint32_t w[4];
};

/// Philox 4x32-10 of the 128-bit counter (lo holds words 0 and 1, low word first) under `key`:
/// Philox4x32::block's words.
EMBER_PHILOX_HD Words block(uint64_t key, uint64_t lo, uint64_t hi) {
  uint32_t c0 = uint32_t(lo), c1 = uint32_t(lo >> 32), c2 = uint32_t(hi), c3 = uint32_t(hi >> 32);
  uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
  for (int r = 0; r < 10; ++r) {
    uint64_t p0 = uint64_t(kM0) * c0, p1 = uint64_t(kM1) * c2;
    uint32_t n0 = uint32_t(p1 >> 32) ^ c1 ^ k0, n2 = uint32_t(p0 >> 32) ^ c3 ^ k1;
    c1 = uint32_t(p1);
    c3 = uint32_t(p0);
    c0 = n0;
    c2 = n2;
    k0 += kW0;
    k1 += kW1;
  }
  return Words{{c0, c1, c2, c3}};
}

/// The words of block `b` of a draw that reserved its blocks from `offset` (the counter's high
/// half is the carry of offset + b, as the CPU batches count).
EMBER_PHILOX_HD Words draw_block(uint64_t seed, uint64_t offset, uint64_t b) {
  uint64_t lo = offset + b;
  return block(seed, lo, lo < offset ? 1 : 0);
}

// ---- words -> values ----

/// 24-bit uniform float on [0, 1).
EMBER_PHILOX_HD float u24(uint32_t w) { return float(w >> 8) * 0x1.0p-24f; }
/// 53-bit uniform double on [0, 1) from the low word `a` and high word `b`.
EMBER_PHILOX_HD double u53(uint32_t a, uint32_t b) {
  return double(((uint64_t(b) << 32) | a) >> 11) * 0x1.0p-53;
}
/// 32-bit uniform double on [0, 1), compared against a bernoulli probability.
EMBER_PHILOX_HD double u32d(uint32_t w) { return double(w) * 0x1.0p-32; }
/// The 64-bit word of a low and a high word.
EMBER_PHILOX_HD uint64_t w64(uint32_t a, uint32_t b) { return (uint64_t(b) << 32) | a; }

// Rounded float operations that the device compiler may not fuse into an FMA (the CPU computes
// a product, rounds, then adds).
EMBER_PHILOX_HD float fmul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
EMBER_PHILOX_HD float fadd(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
EMBER_PHILOX_HD double dmul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
EMBER_PHILOX_HD double dadd(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

/// Random significand bits of a uniform draw of a float dtype: 11 for float16, 8 for bfloat16,
/// 24 for float (every draw exactly representable, so [0, 1) never rounds up to 1).
constexpr int kBitsHalf = 11, kBitsBFloat16 = 8, kBitsFloat = 24;

/// Uniform float of element word `w` with `bits` significand bits: from + u * range (rounded to
/// the element type by the caller).
EMBER_PHILOX_HD float uniform_float(uint32_t w, int bits, float from, float range) {
  float scale = 1.0f / float(1u << bits);
  return fadd(from, fmul(fmul(float(w >> (32 - bits)), scale), range));
}
/// Uniform double of the word pair (a, b).
EMBER_PHILOX_HD double uniform_double(uint32_t a, uint32_t b, double from, double range) {
  return dadd(from, dmul(u53(a, b), range));
}

/// Bernoulli draw of word `w` against probability p.
EMBER_PHILOX_HD bool bernoulli(uint32_t w, double p) { return u32d(w) < p; }

/// Whether integer draws of `range` (0: 2^64) take one word (k = 4) rather than two (k = 2).
EMBER_PHILOX_HD bool random_one_word(uint64_t range) {
  return range != 0 && range <= (uint64_t(1) << 32);
}
/// An integer of [0, range) from one word (range <= 2^32), by multiply-shift.
EMBER_PHILOX_HD uint64_t random32(uint32_t w, uint64_t range) {
  return (uint64_t(w) * range) >> 32;
}
/// An integer of [0, range) (range 0: the full 2^64) from a word pair, by multiply-shift.
EMBER_PHILOX_HD uint64_t random64(uint32_t a, uint32_t b, uint64_t range) {
  uint64_t v = w64(a, b);
  if (range == 0) return v;
#if defined(__CUDA_ARCH__)
  return __umul64hi(v, range);
#else
  return uint64_t((unsigned __int128)v * range >> 64);
#endif
}

/// Elements per block of each draw (Note [Reproducible random streams]).
constexpr int kPerFloat = 4, kPerDouble = 2;

/// Box-Muller inputs of element j (0..3) of a float normal block: u1 on (0, 1], u2 on [0, 1);
/// elements 2m and 2m + 1 share the pair (w[2m], w[2m + 1]), the even one takes cos.
struct BoxMullerIn {
  float u1, u2;
  bool use_sin;
};
EMBER_PHILOX_HD BoxMullerIn normal_float_in(const Words& w, int j) {
  int m = j >> 1;
  return BoxMullerIn{1.0f - u24(w.w[2 * m]), u24(w.w[2 * m + 1]), (j & 1) != 0};
}
/// The same for double: element j (0..1) of a block, on (w0|w1, w2|w3).
struct BoxMullerInD {
  double u1, u2;
  bool use_sin;
};
EMBER_PHILOX_HD BoxMullerInD normal_double_in(const Words& w, int j) {
  return BoxMullerInD{1.0 - u53(w.w[0], w.w[1]), u53(w.w[2], w.w[3]), (j & 1) != 0};
}

/// mean + std * r * (cos or sin)(2 pi u2), r = sqrt(-2 log u1); the CPU's float evaluation order.
EMBER_PHILOX_HD float normal_float(const BoxMullerIn& in, float mean, float sd) {
#if defined(__CUDA_ARCH__)
  float r = sqrtf(-2.0f * logf(in.u1));
  float s, c;
  sincospif(2.0f * in.u2, &s, &c);
#else
  float r = std::sqrt(-2.0f * std::log(in.u1));
  float th = 6.283185307179586476925286766559f * in.u2;
  float s = std::sin(th), c = std::cos(th);
#endif
  return fadd(mean, fmul(fmul(sd, r), in.use_sin ? s : c));
}
EMBER_PHILOX_HD double normal_double(const BoxMullerInD& in, double mean, double sd) {
#if defined(__CUDA_ARCH__)
  double r = sqrt(-2.0 * log(in.u1));
  double s, c;
  sincospi(2.0 * in.u2, &s, &c);
#else
  double r = std::sqrt(-2.0 * std::log(in.u1));
  double th = 6.283185307179586476925286766559 * in.u2;
  double s = std::sin(th), c = std::cos(th);
#endif
  return dadd(mean, dmul(dmul(sd, r), in.use_sin ? s : c));
}

/// Exponential of rate lambd (> 0) from a uniform u: -log1p(-u) / lambd.
EMBER_PHILOX_HD float exponential_float(uint32_t w, float lambd) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(-log1pf(-u24(w)), lambd);
#else
  return -std::log1p(-u24(w)) / lambd;
#endif
}
EMBER_PHILOX_HD double exponential_double(uint32_t a, uint32_t b, double lambd) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(-log1p(-u53(a, b)), lambd);
#else
  return -std::log1p(-u53(a, b)) / lambd;
#endif
}

}  // namespace ember::philox
