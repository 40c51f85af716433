// cupric/float8.h — the 8-bit floating point storage types float8_e4m3fn and float8_e5m2, for
// the host compiler and NVRTC alike (one conversion, so both backends round the same way).
//
// Conversions round to nearest even exactly as ml_dtypes does, in software (the hardware's
// cvt.satfinite saturates where ml_dtypes gives NaN or inf): e4m3fn has no infinity (overflow and
// +-inf become NaN, 0x7f/0xff; the largest finite value is 448), e5m2 is IEEE-like (overflow
// gives inf). A double converts directly, without a float32 rounding on the way.
#pragma once

#include "cupric/hd.h"

#if !defined(__CUDACC_RTC__)
#include <cstdint>
#include <cstring>
#endif

namespace cupric {

namespace detail {

CUPRIC_HD std::uint32_t f8_float_bits(float f) {
#if defined(__CUDACC_RTC__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}
CUPRIC_HD float f8_bits_float(std::uint32_t u) {
#if defined(__CUDACC_RTC__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}
CUPRIC_HD std::uint64_t f8_double_bits(double d) {
#if defined(__CUDACC_RTC__)
  return static_cast<std::uint64_t>(__double_as_longlong(d));
#else
  std::uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
#endif
}

/// The layout of one float8 format: exponent and mantissa bits, bias, and whether the top
/// exponent holds inf/NaN (IEEE, e5m2) or only the all-ones NaN (the "fn" formats, e4m3fn).
template <int ExpBits, int ManBits, bool IEEE>
struct Float8Format {
  static constexpr int kMan = ManBits;
  static constexpr int kBias = (1 << (ExpBits - 1)) - 1;
  static constexpr int kMinExp = 1 - kBias;  ///< unbiased exponent of the smallest normal
  static constexpr bool kIEEE = IEEE;
  /// The code of +NaN that a conversion produces, and of +inf (e4m3fn: none, overflow is NaN).
  static constexpr std::uint8_t kNaN = IEEE ? static_cast<std::uint8_t>(((1 << ExpBits) - 1) << ManBits | 2) : 0x7f;
  static constexpr std::uint8_t kInf = IEEE ? static_cast<std::uint8_t>(((1 << ExpBits) - 1) << ManBits) : kNaN;
  /// The first magnitude code past the largest finite value (rounding up to it overflows).
  static constexpr std::uint8_t kOverflow = IEEE ? kInf : 0x7f;

  /// Rounds |x| = significand * 2^(exp - SrcMan) (significand with its implicit bit, exp unbiased)
  /// to the nearest even magnitude code.
  template <class U, int SrcMan>
  static CUPRIC_HD std::uint8_t round_magnitude(U significand, int exp) {
    int shift = SrcMan - kMan;  // bits dropped from a normal result
    U base = 0;
    if (exp < kMinExp) {
      shift += kMinExp - exp;            // subnormal result: the value in units of the smallest subnormal
      if (shift > SrcMan + 1) return 0;  // below half the smallest subnormal
    } else {
      if (exp - kMinExp + 1 >= (1 << (8 - 1 - kMan))) return kOverflow;  // beyond every exponent
      base = static_cast<U>(exp - kMinExp) << kMan;  // the exponent field minus one, plus the implicit bit below
    }
    U q = significand >> shift;
    const U rem = significand & ((U(1) << shift) - 1);
    const U half = U(1) << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;  // a carry into the exponent is correct
    const U code = base + q;
    return code >= kOverflow ? kOverflow : static_cast<std::uint8_t>(code);
  }

  static CUPRIC_HD std::uint8_t from_float(float f) {
    const std::uint32_t x = f8_float_bits(f);
    const std::uint8_t sign = static_cast<std::uint8_t>((x >> 24) & 0x80u);
    const std::uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return sign | kNaN;
    if (ax == 0x7f800000u) return sign | kInf;
    const int e = static_cast<int>(ax >> 23);
    if (e == 0) return sign;  // float32 subnormals are far below every float8 subnormal
    return sign | round_magnitude<std::uint32_t, 23>((ax & 0x7fffffu) | 0x800000u, e - 127);
  }

  static CUPRIC_HD std::uint8_t from_double(double d) {
    const std::uint64_t x = f8_double_bits(d);
    const std::uint8_t sign = static_cast<std::uint8_t>((x >> 56) & 0x80u);
    const std::uint64_t ax = x & 0x7fffffffffffffffull;
    if (ax > 0x7ff0000000000000ull) return sign | kNaN;
    if (ax == 0x7ff0000000000000ull) return sign | kInf;
    const int e = static_cast<int>(ax >> 52);
    if (e == 0) return sign;
    return sign | round_magnitude<std::uint64_t, 52>((ax & 0xfffffffffffffull) | 0x10000000000000ull, e - 1023);
  }

  static CUPRIC_HD float to_float(std::uint8_t b) {
    const std::uint32_t sign = static_cast<std::uint32_t>(b & 0x80u) << 24;
    const std::uint32_t mag = b & 0x7fu;
    const std::uint32_t exp = mag >> kMan;
    const std::uint32_t man = mag & ((1u << kMan) - 1);
    if (IEEE ? exp == (0x7fu >> kMan) : mag == 0x7fu) {
      if (IEEE && man == 0) return f8_bits_float(sign | 0x7f800000u);
      return f8_bits_float(sign | 0x7fc00000u);  // every NaN reads as the quiet NaN, as ml_dtypes
    }
    if (exp == 0) {  // subnormal: man * 2^(kMinExp - kMan), exact in float
      const float v = static_cast<float>(man) * f8_bits_float(static_cast<std::uint32_t>(127 + kMinExp - kMan) << 23);
      return sign ? -v : v;
    }
    return f8_bits_float(sign | ((exp - kBias + 127) << 23) | (man << (23 - kMan)));
  }
};

/// A float8 storage type: arithmetic is done in float32 and rounded back, as ml_dtypes does.
template <class Format, class Self>
struct Float8Storage {
  std::uint8_t bits;
  CUPRIC_HD operator float() const { return Format::to_float(bits); }
  static CUPRIC_HD Self from_bits(std::uint8_t b) {
    Self v;
    v.bits = b;
    return v;
  }
};

}  // namespace detail

/// OCP FP8 E4M3 ("fn": finite, NaN only): 4 exponent bits, 3 mantissa bits, bias 7, max 448.
struct float8_e4m3fn : detail::Float8Storage<detail::Float8Format<4, 3, false>, float8_e4m3fn> {
  using Format = detail::Float8Format<4, 3, false>;
  float8_e4m3fn() = default;
  CUPRIC_HD float8_e4m3fn(float f) { bits = Format::from_float(f); }
  CUPRIC_HD explicit float8_e4m3fn(double d) { bits = Format::from_double(d); }
};

/// OCP FP8 E5M2: 5 exponent bits, 2 mantissa bits, bias 15, with inf and NaN; max 57344.
struct float8_e5m2 : detail::Float8Storage<detail::Float8Format<5, 2, true>, float8_e5m2> {
  using Format = detail::Float8Format<5, 2, true>;
  float8_e5m2() = default;
  CUPRIC_HD float8_e5m2(float f) { bits = Format::from_float(f); }
  CUPRIC_HD explicit float8_e5m2(double d) { bits = Format::from_double(d); }
};

}  // namespace cupric
