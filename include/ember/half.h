#pragma once
/// 16-bit floating types: `Half` (IEEE binary16) and `BFloat16` (bfloat16). Storage only:
/// arithmetic converts to float, computes there and rounds back (round to nearest even),
/// as PyTorch does on CPU.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <ostream>

namespace ember {

namespace detail {
inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float half_bits_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (man << 13));  // inf / nan
  if (exp == 0) {
    if (man == 0) return bits_f32(sign);
    // Subnormal half: value = man * 2^-24.
    float v = float(man) * 5.9604644775390625e-08f;
    return sign ? -v : v;
  }
  return bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

inline uint16_t float_to_half_bits(float f) {
  uint32_t x = f32_bits(f);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return uint16_t(sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0));
  if (absx >= 0x477ff000u) return uint16_t(sign | 0x7c00);  // rounds to inf
  if (absx < 0x38800000u) {                                 // subnormal or zero in half
    // Add 0.5 so that the float adder rounds to nearest even at 2^-24 granularity.
    float v = bits_f32(absx) + 0.5f;
    return uint16_t(sign | (f32_bits(v) - f32_bits(0.5f)));
  }
  uint32_t mant_odd = (absx >> 13) & 1;
  absx += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
  return uint16_t(sign | (absx >> 13));
}

inline uint16_t float_to_bf16_bits(float f) {
  uint32_t x = f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);  // quiet nan
  x += 0x7fffu + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}
}  // namespace detail

/// IEEE 754 binary16.
struct alignas(2) Half {
  uint16_t x = 0;
  struct from_bits_t {};
  Half() = default;
  constexpr Half(uint16_t bits, from_bits_t) : x(bits) {}
  Half(float f) : x(detail::float_to_half_bits(f)) {}  // NOLINT
  operator float() const { return detail::half_bits_to_float(x); }  // NOLINT
};

/// bfloat16: the upper half of an IEEE binary32.
struct alignas(2) BFloat16 {
  uint16_t x = 0;
  struct from_bits_t {};
  BFloat16() = default;
  constexpr BFloat16(uint16_t bits, from_bits_t) : x(bits) {}
  BFloat16(float f) : x(detail::float_to_bf16_bits(f)) {}  // NOLINT
  operator float() const { return detail::bits_f32(uint32_t(x) << 16); }  // NOLINT
};

inline std::ostream& operator<<(std::ostream& os, Half h) { return os << float(h); }
inline std::ostream& operator<<(std::ostream& os, BFloat16 h) { return os << float(h); }

}  // namespace ember

namespace std {
template <>
class numeric_limits<ember::Half> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static ember::Half lowest() { return ember::Half(0xFBFF, ember::Half::from_bits_t{}); }
  static ember::Half max() { return ember::Half(0x7BFF, ember::Half::from_bits_t{}); }
  static ember::Half min() { return ember::Half(0x0400, ember::Half::from_bits_t{}); }
  static ember::Half epsilon() { return ember::Half(0x1400, ember::Half::from_bits_t{}); }
  static ember::Half infinity() { return ember::Half(0x7C00, ember::Half::from_bits_t{}); }
  static ember::Half quiet_NaN() { return ember::Half(0x7E00, ember::Half::from_bits_t{}); }
};
template <>
class numeric_limits<ember::BFloat16> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static ember::BFloat16 lowest() { return ember::BFloat16(0xFF7F, ember::BFloat16::from_bits_t{}); }
  static ember::BFloat16 max() { return ember::BFloat16(0x7F7F, ember::BFloat16::from_bits_t{}); }
  static ember::BFloat16 min() { return ember::BFloat16(0x0080, ember::BFloat16::from_bits_t{}); }
  static ember::BFloat16 epsilon() { return ember::BFloat16(0x3C00, ember::BFloat16::from_bits_t{}); }
  static ember::BFloat16 infinity() { return ember::BFloat16(0x7F80, ember::BFloat16::from_bits_t{}); }
  static ember::BFloat16 quiet_NaN() { return ember::BFloat16(0x7FC0, ember::BFloat16::from_bits_t{}); }
};
}  // namespace std
