// cupric/convert.h — one element converted between dtypes exactly as NumPy's astype does
// (complex -> real keeps the real part; out-of-range floats as NumPy on x86-64). Shared by the CPU cast loops and
// the CUDA kernels, so both backends convert alike.
#pragma once

#include "cupric/scalar_math.h"
#if !defined(__CUDACC_RTC__)
#include "cupric/half.hpp"
#endif

namespace cu {

template <class T>
inline constexpr bool is_float8_v = std::is_same_v<T, cupric::float8_e4m3fn> || std::is_same_v<T, cupric::float8_e5m2>;
/// The narrow storage floats: float16, bfloat16 and the float8s (they convert through float32).
template <class T>
inline constexpr bool is_half_v =
    std::is_same_v<T, cupric::float16> || std::is_same_v<T, cupric::bfloat16> || is_float8_v<T>;

template <class To, class From>
CUPRIC_HD To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_float8_v<From> && std::is_integral_v<To> && !std::is_same_v<To, bool>) {
    // ml_dtypes' float8 -> integer casts give 0 where the truncated value does not fit (NaN and inf too)
    const float f = v;
    constexpr float lo = static_cast<float>(std::numeric_limits<To>::min()) - 1.0f;
    constexpr float hi = static_cast<float>(std::numeric_limits<To>::max()) + 1.0f;
    return f > lo && f < hi ? static_cast<To>(f) : To(0);
  } else if constexpr (is_half_v<From>) {
    return convert<To>(static_cast<float>(v));
  } else if constexpr (is_complex_v<From>) {
    if constexpr (std::is_same_v<To, bool>) return v.real() != 0 || v.imag() != 0;
    else if constexpr (is_complex_v<To>)
      return To(static_cast<typename To::value_type>(v.real()), static_cast<typename To::value_type>(v.imag()));
    else return convert<To>(v.real());
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (is_complex_v<To>) {
    return To(static_cast<typename To::value_type>(v), 0);
  } else if constexpr (is_float8_v<To> && std::is_same_v<From, double>) {
    return To(v);  // one rounding, from the double (as ml_dtypes)
  } else if constexpr (is_half_v<To>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    constexpr From lo = static_cast<From>(std::numeric_limits<To>::min());
    constexpr From hi = static_cast<From>(std::numeric_limits<To>::max());
    if (v >= lo && v < hi) return static_cast<To>(v);
    // out of range: what NumPy gives on x86-64 (small types go through int32, negative values
    // into unsigned types wrap through int64)
    if constexpr (sizeof(To) < 4) return static_cast<To>(convert<std::int32_t>(v));
    else if constexpr (std::is_unsigned_v<To>) {
      if (v < 0 && v > From(-9.2e18)) return static_cast<To>(static_cast<std::int64_t>(v));
    }
    return std::numeric_limits<To>::min();
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace cu
