#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Note [Vector 16-bit float conversion]
// Contiguous float32 <-> bfloat16 / float16 conversion for the kernel files compiled per CPU
// capability (Note [Per-ISA vectors]). Every path gives the bits of the scalar conversion in
// ember/half.h, NaN payloads included, so results never depend on the kernel set:
//  - bfloat16 -> float32 is a 16-bit shift; float32 -> bfloat16 adds 0x7fff plus the kept lsb
//    (round to nearest even) in 32-bit lanes, and a NaN keeps its top bits with the quiet bit set;
//  - float16 uses F16C (vcvtph2ps / vcvtps2ph, round to nearest even), with NaN lanes rewritten
//    to the scalar rule: float16 -> float32 keeps the payload unquieted, float32 -> float16 gives
//    sign | 0x7e00 (F16C would keep payload bits).
// The default kernel set runs the scalar conversion.

#include <cstdint>
#include <type_traits>

#include "ember/half.h"
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#ifndef EMBER_CPU_CAP
#error "convert_vec.h is for kernel files compiled per CPU capability"
#endif

namespace ember::cpu::EMBER_CPU_CAP {

#if defined(__AVX512F__)
namespace cvt512 {
inline __m512 bf16_to_f32(__m256i h) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
inline __m256i f32_to_bf16(__m512 f) {
  const __m512i x = _mm512_castps_si512(f);
  const __m512i hi = _mm512_srli_epi32(x, 16);
  const __m512i lsb = _mm512_and_si512(hi, _mm512_set1_epi32(1));
  __m512i r =
      _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)), lsb), 16);
  const __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
  r = _mm512_mask_blend_epi32(nan, r, _mm512_or_si512(hi, _mm512_set1_epi32(0x40)));
  return _mm512_cvtepi32_epi16(r);
}
inline __m512 f16_to_f32(__m256i h) {
  const __m512i w = _mm512_cvtepu16_epi32(h);
  const __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(w, _mm512_set1_epi32(0x7fff)),
                                                _mm512_set1_epi32(0x7c00));
  const __m512i nanv = _mm512_or_si512(
      _mm512_or_si512(_mm512_slli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x8000)), 16),
                      _mm512_set1_epi32(0x7f800000)),
      _mm512_slli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x3ff)), 13));
  return _mm512_mask_blend_ps(nan, _mm512_cvtph_ps(h), _mm512_castsi512_ps(nanv));
}
inline __m256i f32_to_f16(__m512 f) {
  const __m512i x = _mm512_castps_si512(f);
  const __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
  const __m256i h = _mm512_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256i nanv = _mm512_cvtepi32_epi16(
      _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(0x8000)),
                      _mm512_set1_epi32(0x7e00)));
  return _mm256_mask_blend_epi16(nan, h, nanv);
}
}  // namespace cvt512
#endif

#if defined(__AVX2__)
namespace cvt256 {
inline __m256 bf16_to_f32(__m128i h) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
inline __m128i f32_to_bf16(__m256 f) {
  const __m256i x = _mm256_castps_si256(f);
  const __m256i hi = _mm256_srli_epi32(x, 16);
  const __m256i lsb = _mm256_and_si256(hi, _mm256_set1_epi32(1));
  __m256i r =
      _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb), 16);
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)),
                                         _mm256_set1_epi32(0x7f800000));
  r = _mm256_blendv_epi8(r, _mm256_or_si256(hi, _mm256_set1_epi32(0x40)), nan);
  // Lanes hold 0..0xffff, so the unsigned-saturating pack keeps them as they are.
  return _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
}
inline __m256 f16_to_f32(__m128i h) {
  const __m256i w = _mm256_cvtepu16_epi32(h);
  const __m256i nan =
      _mm256_cmpgt_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x7fff)), _mm256_set1_epi32(0x7c00));
  const __m256i nanv = _mm256_or_si256(
      _mm256_or_si256(_mm256_slli_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x8000)), 16),
                      _mm256_set1_epi32(0x7f800000)),
      _mm256_slli_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x3ff)), 13));
  return _mm256_blendv_ps(_mm256_cvtph_ps(h), _mm256_castsi256_ps(nanv), _mm256_castsi256_ps(nan));
}
inline __m128i f32_to_f16(__m256 f) {
  const __m256i x = _mm256_castps_si256(f);
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)),
                                         _mm256_set1_epi32(0x7f800000));
  const __m128i h = _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256i nanv =
      _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x8000)),
                      _mm256_set1_epi32(0x7e00));
  // The masks are 0 or -1 and the NaN words at most 0xfe00, so both packs keep them intact.
  const __m128i nan16 =
      _mm_packs_epi32(_mm256_castsi256_si128(nan), _mm256_extracti128_si256(nan, 1));
  const __m128i nanv16 =
      _mm_packus_epi32(_mm256_castsi256_si128(nanv), _mm256_extracti128_si256(nanv, 1));
  return _mm_blendv_epi8(h, nanv16, nan16);
}
}  // namespace cvt256
#endif

/// dst[i] = float(src[i]) for i < n (contiguous).
inline void cvt_bf16_to_f32(const BFloat16* __restrict src, float* __restrict dst, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(dst + i, cvt512::bf16_to_f32(
                                  _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i))));
#endif
#if defined(__AVX2__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(
        dst + i, cvt256::bf16_to_f32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
#endif
  for (; i < n; ++i) dst[i] = float(src[i]);
}

/// dst[i] = BFloat16(src[i]) for i < n (contiguous).
inline void cvt_f32_to_bf16(const float* __restrict src, BFloat16* __restrict dst, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                        cvt512::f32_to_bf16(_mm512_loadu_ps(src + i)));
#endif
#if defined(__AVX2__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     cvt256::f32_to_bf16(_mm256_loadu_ps(src + i)));
#endif
  for (; i < n; ++i) dst[i] = BFloat16(src[i]);
}

/// dst[i] = float(src[i]) for i < n (contiguous).
inline void cvt_f16_to_f32(const Half* __restrict src, float* __restrict dst, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(
        dst + i, cvt512::f16_to_f32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i))));
#endif
#if defined(__AVX2__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(
        dst + i, cvt256::f16_to_f32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
#endif
  for (; i < n; ++i) dst[i] = float(src[i]);
}

/// dst[i] = Half(src[i]) for i < n (contiguous).
inline void cvt_f32_to_f16(const float* __restrict src, Half* __restrict dst, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                        cvt512::f32_to_f16(_mm512_loadu_ps(src + i)));
#endif
#if defined(__AVX2__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     cvt256::f32_to_f16(_mm256_loadu_ps(src + i)));
#endif
  for (; i < n; ++i) dst[i] = Half(src[i]);
}

/// Whether convert_contiguous<To, From> has a vector path (a float32 <-> 16-bit float pair).
template <class To, class From>
inline constexpr bool kVectorConvert =
    (std::is_same_v<From, float> && (std::is_same_v<To, BFloat16> || std::is_same_v<To, Half>)) ||
    (std::is_same_v<To, float> && (std::is_same_v<From, BFloat16> || std::is_same_v<From, Half>));

/// The vector conversion of n contiguous elements between float32 and a 16-bit float.
template <class To, class From>
inline void convert_contiguous(const From* src, To* dst, int64_t n) {
  static_assert(kVectorConvert<To, From>);
  if constexpr (std::is_same_v<From, BFloat16>)
    cvt_bf16_to_f32(src, dst, n);
  else if constexpr (std::is_same_v<From, Half>)
    cvt_f16_to_f32(src, dst, n);
  else if constexpr (std::is_same_v<To, BFloat16>)
    cvt_f32_to_bf16(src, dst, n);
  else
    cvt_f32_to_f16(src, dst, n);
}

}  // namespace ember::cpu::EMBER_CPU_CAP
