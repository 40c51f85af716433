// cupric/convert.h — one element converted between dtypes exactly as NumPy's astype does
// (complex -> real keeps the real part; NaN and out-of-range floats -> the integer minimum for
// 32/64-bit targets, wrapped through int64 for smaller ones). Shared by the CPU cast loops and
// the CUDA kernels, so both backends convert alike.
#pragma once

#include "cupric/scalar_math.h"
#if !defined(__CUDACC_RTC__)
#include "cupric/half.hpp"
#endif

namespace cu {

template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, cupric::float16> || std::is_same_v<T, cupric::bfloat16>;

template <class To, class From>
CUPRIC_HD To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
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
  } else if constexpr (is_half_v<To>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    constexpr From lo = static_cast<From>(std::numeric_limits<To>::min());
    constexpr From hi = static_cast<From>(std::numeric_limits<To>::max());
    if (v >= lo && v < hi) return static_cast<To>(v);
    if constexpr (sizeof(To) < 4) return static_cast<To>(convert<std::int64_t>(v));  // wraps, as NumPy
    else return std::numeric_limits<To>::min();
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace cu
