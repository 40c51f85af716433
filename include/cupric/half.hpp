// cupric/half.hpp — the narrow floating point storage types: IEEE float16 and bfloat16 here,
// float8_e4m3fn and float8_e5m2 from cupric/float8.h (shared with the device code).
//
// Both are storage types: arithmetic is done in float32 and rounded back, as NumPy
// does for float16. Conversions round to nearest even and keep NaN, inf and -0.0.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cupric/float8.h"

namespace cupric {

namespace detail {
inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace detail

/// IEEE 754 binary16. Converts to and from float exactly as NumPy's npy_half does.
struct float16 {
  std::uint16_t bits = 0;

  float16() = default;
  float16(float f) : bits(from_float(f)) {}
  explicit float16(double d) : float16(static_cast<float>(d)) {}
  operator float() const { return to_float(bits); }

  static float16 from_bits(std::uint16_t b) {
    float16 h;
    h.bits = b;
    return h;
  }

  static float to_float(std::uint16_t h) {
    std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    std::uint32_t exp = (h >> 10) & 0x1fu;
    std::uint32_t man = h & 0x3ffu;
    if (exp == 0x1f) return detail::bits_float(sign | 0x7f800000u | (man << 13));  // inf / nan
    if (exp == 0) {
      if (man == 0) return detail::bits_float(sign);
      // subnormal: value = man * 2^-24
      float v = static_cast<float>(man) * 5.9604644775390625e-8f;
      return sign ? -v : v;
    }
    return detail::bits_float(sign | ((exp + 112) << 23) | (man << 13));
  }

  static std::uint16_t from_float(float f) {
    std::uint32_t x = detail::float_bits(f);
    std::uint32_t sign = (x >> 16) & 0x8000u;
    std::uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) {  // inf or nan
      if (ax == 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7c00u);
      return static_cast<std::uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    }
    if (ax >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow -> inf
    if (ax < 0x38800000u) {                                                    // result is subnormal or zero
      if (ax < 0x33000000u) return static_cast<std::uint16_t>(sign);           // < 2^-25 rounds to 0
      std::uint32_t e = ax >> 23;
      std::uint32_t m = (ax & 0x7fffffu) | 0x800000u;
      std::uint32_t shift = 126 - e;  // 14 .. 24 (113 - e + 13)
      std::uint32_t h = m >> shift;
      std::uint32_t rem = m & ((1u << shift) - 1);
      std::uint32_t half = 1u << (shift - 1);
      if (rem > half || (rem == half && (h & 1u))) ++h;
      return static_cast<std::uint16_t>(sign | h);
    }
    std::uint32_t h = ((ax >> 13) - (112u << 10));
    std::uint32_t rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry into inf: correct
    return static_cast<std::uint16_t>(sign | h);
  }
};

/// bfloat16: the upper half of an IEEE float32, rounded to nearest even.
struct bfloat16 {
  std::uint16_t bits = 0;

  bfloat16() = default;
  bfloat16(float f) : bits(from_float(f)) {}
  explicit bfloat16(double d) : bfloat16(static_cast<float>(d)) {}
  operator float() const { return detail::bits_float(static_cast<std::uint32_t>(bits) << 16); }

  static bfloat16 from_bits(std::uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }

  static std::uint16_t from_float(float f) {
    std::uint32_t x = detail::float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet nan
    std::uint32_t lsb = (x >> 16) & 1u;
    x += 0x7fffu + lsb;
    return static_cast<std::uint16_t>(x >> 16);
  }
};

/// The storage-only float types (float16, bfloat16, the float8s): their arithmetic is done in
/// float32 and rounded back.
template <class T>
inline constexpr bool is_narrow_float_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16> ||
                                          std::is_same_v<T, float8_e4m3fn> || std::is_same_v<T, float8_e5m2>;

}  // namespace cupric
