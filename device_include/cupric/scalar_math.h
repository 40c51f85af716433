// cupric/scalar_math.h — scalar functions that the ufunc table's expressions call (`cu::...`).
//
// One definition per function for every element type, with NumPy's semantics (Python-style
// floor division and remainder, NaN-propagating maximum, integer shifts past the width, ...).
// Header-only and free of host-only code paths other than <cmath>/<complex>, so that the
// host compiler and, later, NVRTC (through CUPRIC_HD) can both include it.
#pragma once

#include "cupric/hd.h"

#if defined(__CUDACC_RTC__)
#include "cupric/cuda_prelude.h"
#else
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>
#endif

#include "cupric/complex_math.h"

namespace cu {

template <class T>
struct is_complex : std::false_type {};
template <class T>
struct is_complex<std::complex<T>> : std::true_type {};
template <class T>
inline constexpr bool is_complex_v = is_complex<T>::value;
/// The part type of a complex type (float for std::complex<float>), the type itself otherwise.
template <class T>
struct real_of {
  using type = T;
};
template <class T>
struct real_of<std::complex<T>> {
  using type = T;
};
template <class T>
using real_of_t = typename real_of<T>::type;
template <class T>
inline constexpr bool is_float_v = std::is_floating_point_v<T>;
template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <class T>
CUPRIC_HD bool truthy(T a) {
  if constexpr (is_complex_v<T>) return a.real() != 0 || a.imag() != 0;
  else return a != T(0);
}
// & and |, not && and ||: no branch, so that loops over them (any / all) vectorise (on ints, which
// says to clang's -Wbitwise-instead-of-logical that no short-circuit was meant)
template <class A, class B>
CUPRIC_HD bool logical_and(A a, B b) {
  return static_cast<int>(truthy(a)) & static_cast<int>(truthy(b));
}
template <class A, class B>
CUPRIC_HD bool logical_or(A a, B b) {
  return static_cast<int>(truthy(a)) | static_cast<int>(truthy(b));
}

// ---- libm functions under cu:: (the table's expressions name only cu:: and operators, so that
// each compiler -- host C++, NVRTC -- can map them to its own math library) ------------------
#define CUPRIC_FORWARD1(NAME, STD) \
  template <class T>               \
  CUPRIC_HD auto NAME(T a) {       \
    return std::STD(a);            \
  }
#define CUPRIC_FORWARD2(NAME, STD) \
  template <class T>               \
  CUPRIC_HD auto NAME(T a, T b) {  \
    return std::STD(a, b);         \
  }
CUPRIC_FORWARD1(fabs, fabs)
CUPRIC_FORWARD1(sqrt, sqrt)
CUPRIC_FORWARD1(cbrt, cbrt)
CUPRIC_FORWARD1(exp, exp)
CUPRIC_FORWARD1(log, log)
CUPRIC_FORWARD1(log10, log10)
CUPRIC_FORWARD1(sin, sin)
CUPRIC_FORWARD1(cos, cos)
CUPRIC_FORWARD1(tan, tan)
CUPRIC_FORWARD1(asin, asin)
CUPRIC_FORWARD1(acos, acos)
CUPRIC_FORWARD1(atan, atan)
CUPRIC_FORWARD1(sinh, sinh)
CUPRIC_FORWARD1(cosh, cosh)
CUPRIC_FORWARD1(asinh, asinh)
CUPRIC_FORWARD1(acosh, acosh)
CUPRIC_FORWARD1(atanh, atanh)
CUPRIC_FORWARD1(signbit, signbit)
CUPRIC_FORWARD2(atan2, atan2)
CUPRIC_FORWARD2(hypot, hypot)
CUPRIC_FORWARD2(copysign, copysign)
#undef CUPRIC_FORWARD1
#undef CUPRIC_FORWARD2
template <class T>
CUPRIC_HD T deg2rad(T a) {
  return a * static_cast<T>(0.017453292519943295);
}
template <class T>
CUPRIC_HD T rad2deg(T a) {
  return a * static_cast<T>(57.29577951308232);
}

// ---- classification ----------------------------------------------------------------------
template <class T>
CUPRIC_HD bool isnan(T a) {
  if constexpr (is_complex_v<T>) return std::isnan(a.real()) || std::isnan(a.imag());
  else if constexpr (is_float_v<T>) return a != a;
  else return false;
}
template <class T>
CUPRIC_HD bool isinf(T a) {
  if constexpr (is_complex_v<T>) return std::isinf(a.real()) || std::isinf(a.imag());
  else if constexpr (is_float_v<T>) return std::isinf(a);
  else return false;
}
template <class T>
CUPRIC_HD bool isfinite(T a) {
  if constexpr (is_complex_v<T>) return std::isfinite(a.real()) && std::isfinite(a.imag());
  else if constexpr (is_float_v<T>) return std::isfinite(a);
  else return true;
}

// ---- comparisons (complex: lexicographic, as NumPy; a NaN part makes it false) ---------------
template <class T>
CUPRIC_HD bool less(T a, T b) {
  if constexpr (is_complex_v<T>)
    return (a.real() < b.real() && a.imag() == a.imag() && b.imag() == b.imag()) ||
           (a.real() == b.real() && a.imag() < b.imag());
  else return a < b;
}
template <class T>
CUPRIC_HD bool less_equal(T a, T b) {
  if constexpr (is_complex_v<T>)
    return (a.real() < b.real() && a.imag() == a.imag() && b.imag() == b.imag()) ||
           (a.real() == b.real() && a.imag() <= b.imag());
  else return a <= b;
}

// ---- arithmetic ---------------------------------------------------------------------------
template <class T>
CUPRIC_HD T floor_divide(T a, T b) {
  if constexpr (is_int_v<T>) {
    if (b == 0) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return static_cast<T>(T(0) - a);  // wraps for the minimum, as NumPy
      T q = static_cast<T>(a / b);
      if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
      return q;
    } else {
      return static_cast<T>(a / b);
    }
  } else if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else {
    if (b == 0) return a / b;
    // infinite operands: the Array API's special cases (inf // 2 = inf, 1 // -inf = -0), where
    // NumPy's fmod-based answer is NaN or -1
    if (std::isinf(a) || std::isinf(b)) return a / b;
    T mod = std::fmod(a, b);
    T div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= T(1);
    if (div != 0) {
      T f = std::floor(div);
      if (div - f > T(0.5)) f += T(1);
      return f;
    }
    return std::copysign(T(0), a / b);
  }
}

template <class T>
CUPRIC_HD T remainder(T a, T b) {
  if constexpr (is_int_v<T>) {
    if (b == 0) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(0);
      T r = static_cast<T>(a % b);
      if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
      return r;
    } else {
      return static_cast<T>(a % b);
    }
  } else if constexpr (std::is_same_v<T, bool>) {
    return false;
  } else {
    if (b == 0) return std::fmod(a, b);
    T mod = std::fmod(a, b);
    if (mod != 0) {
      if ((b < 0) != (mod < 0)) mod += b;
    } else {
      mod = std::copysign(T(0), b);
    }
    return mod;
  }
}

template <class T>
CUPRIC_HD T fmod(T a, T b) {
  if constexpr (is_int_v<T>) {
    if (b == 0) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(0);
    }
    return static_cast<T>(a % b);
  } else if constexpr (std::is_same_v<T, bool>) {
    return false;
  } else {
    return std::fmod(a, b);
  }
}

template <class T>
CUPRIC_HD T power(T a, T b) {
  if constexpr (is_int_v<T>) {
    if constexpr (std::is_signed_v<T>) {
      if (b < 0) {
        if (a == 1) return T(1);
        if (a == -1) return (b & 1) ? T(-1) : T(1);
        return T(0);
      }
    }
    using U = std::make_unsigned_t<T>;
    U result = 1, base = static_cast<U>(a);
    U e = static_cast<U>(b);
    while (e) {
      if (e & 1u) result = static_cast<U>(result * base);
      base = static_cast<U>(base * base);
      e = static_cast<U>(e >> 1);
    }
    return static_cast<T>(result);
  } else if constexpr (is_complex_v<T>) {
    return complex_power(a, b);
  } else {
    return std::pow(a, b);
  }
}

template <class T>
CUPRIC_HD T multiply(T a, T b) {
  if constexpr (is_complex_v<T>) return complex_multiply(a, b);
  else return static_cast<T>(a * b);
}
template <class T>
CUPRIC_HD T divide(T a, T b) {
  if constexpr (is_complex_v<T>) return complex_divide(a, b);
  else return a / b;
}

template <class T>
CUPRIC_HD T reciprocal(T a) {
  if constexpr (is_int_v<T>) {
    if (a == 0) return T(0);
    return static_cast<T>(T(1) / a);
  } else if constexpr (is_complex_v<T>) {
    return complex_reciprocal(a);
  } else {
    return T(1) / a;
  }
}

// maximum / minimum order -0.0 below +0.0 (IEEE 754-2019's maximum / minimum): the result does
// not depend on the order of the operands, so a reduction gives one answer however it is split
// over lanes, threads or blocks. NumPy has no one rule here: its float16 loops keep the first
// zero, its SIMD float32/float64 loops one that depends on the vector width. These four are the
// combining functions of the min/max/fmin/fmax reductions too (src/ops/reduction_table.def), on
// every path; for floats they are written as two selects over compares and bit operations, with
// no branch, so that the CPU loops over them vectorise.

/// Of two equal floats, the one maximum (Max) or minimum keeps: the AND / OR of their bits
/// (+0.0 over -0.0 for maximum; equal nonzero floats have equal bits).
template <bool Max, class T>
CUPRIC_HD T equal_extreme(T a, T b) {
#if defined(__CUDACC_RTC__) || defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4) {
    const unsigned x = __float_as_uint(a), y = __float_as_uint(b);
    return __uint_as_float(Max ? (x & y) : (x | y));
  } else {
    const long long x = __double_as_longlong(a), y = __double_as_longlong(b);
    return __longlong_as_double(Max ? (x & y) : (x | y));
  }
#else
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  const U x = __builtin_bit_cast(U, a), y = __builtin_bit_cast(U, b);
  return __builtin_bit_cast(T, static_cast<U>(Max ? (x & y) : (x | y)));
#endif
}

/// maximum (Max) or minimum of two floats: a NaN in a wins, then a NaN in b (propagate), or a
/// NaN loses to a number (skip: fmax / fmin).
template <bool Max, bool SkipNan, class T>
CUPRIC_HD T float_extreme(T a, T b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (sizeof(T) == 4 && !SkipNan) {
    // sm_80+: one instruction with the same rule (-0.0 below +0.0, a NaN wins; its payload is the
    // canonical NaN's): the max / min reductions of tile kernels combine 64 values a thread a row
    float r;
    if constexpr (Max) asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    else asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
  }
#endif
  const bool take_b = (Max ? b > a : b < a) || (SkipNan ? a != a : b != b);
  const T pick = take_b ? b : a;
  return a == b ? equal_extreme<Max>(a, b) : pick;
}

template <class T>
CUPRIC_HD T maximum(T a, T b) {
  if constexpr (is_float_v<T>) return float_extreme<true, false>(a, b);
  else if constexpr (is_complex_v<T>) return isnan(a) ? a : (isnan(b) ? b : (less(b, a) || a == b ? a : b));
  else return a >= b ? a : b;
}
template <class T>
CUPRIC_HD T minimum(T a, T b) {
  if constexpr (is_float_v<T>) return float_extreme<false, false>(a, b);
  else if constexpr (is_complex_v<T>) return isnan(a) ? a : (isnan(b) ? b : (less_equal(a, b) ? a : b));
  else return a <= b ? a : b;
}
template <class T>
CUPRIC_HD T fmax(T a, T b) {
  if constexpr (is_float_v<T>) return float_extreme<true, true>(a, b);
  else if constexpr (is_complex_v<T>) return isnan(b) ? a : (isnan(a) ? b : maximum(a, b));
  else return maximum(a, b);
}
template <class T>
CUPRIC_HD T fmin(T a, T b) {
  if constexpr (is_float_v<T>) return float_extreme<false, true>(a, b);
  else if constexpr (is_complex_v<T>) return isnan(b) ? a : (isnan(a) ? b : minimum(a, b));
  else return minimum(a, b);
}
template <class T>
CUPRIC_HD T clip(T a, T lo, T hi) {
  return minimum(maximum(a, lo), hi);
}

template <class T>
CUPRIC_HD auto abs(T a) {
  if constexpr (is_complex_v<T>) return std::abs(a);
  else if constexpr (is_float_v<T>) return std::fabs(a);
  else if constexpr (std::is_signed_v<T> && !std::is_same_v<T, bool>) return static_cast<T>(a < 0 ? T(0) - a : a);
  else return a;
}

template <class T>
CUPRIC_HD T sign(T a) {
  if constexpr (is_complex_v<T>) {
    return complex_sign(a);
  } else if constexpr (is_float_v<T>) {
    return (a != a) ? a : static_cast<T>((a > 0) - (a < 0));
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>((a > 0) - (a < 0));
  } else {
    return static_cast<T>(a > 0);
  }
}

template <class T>
CUPRIC_HD T conjugate(T a) {
  if constexpr (is_complex_v<T>) return std::conj(a);
  else return a;
}

template <class T>
CUPRIC_HD auto angle(T a) {
  if constexpr (is_complex_v<T>) return std::atan2(a.imag(), a.real());
  else return std::atan2(T(0), a);
}

// ---- rounding (integers are returned as they are) ----------------------------------------
#define CUPRIC_ROUNDING(NAME, FN)                                                  \
  template <class T>                                                               \
  CUPRIC_HD T NAME(T a) {                                                          \
    if constexpr (is_complex_v<T>) return T(std::FN(a.real()), std::FN(a.imag())); \
    else if constexpr (is_float_v<T>) return std::FN(a);                           \
    else return a;                                                                 \
  }
CUPRIC_ROUNDING(floor, floor)
CUPRIC_ROUNDING(ceil, ceil)
CUPRIC_ROUNDING(trunc, trunc)
CUPRIC_ROUNDING(rint, nearbyint)
#undef CUPRIC_ROUNDING

// tanh: complex infinities take the Array API's zero, whose sign is the imaginary part's
// (C99's ctanh, which NumPy follows, signs it by sin(2y))
template <class T>
CUPRIC_HD auto tanh(T a) {
  if constexpr (is_complex_v<T>) {
    using R = typename T::value_type;
    R x = a.real(), y = a.imag();
    if (std::isinf(x) && std::isfinite(y)) return T(std::copysign(R(1), x), std::copysign(R(0), y));
  }
  return std::tanh(a);
}

// ---- exponentials and logarithms with complex forms ----------------------------------------
template <class T>
CUPRIC_HD T exp2(T a) {
  if constexpr (is_complex_v<T>) return std::exp(a * typename T::value_type(0.69314718055994530942));
  else return std::exp2(a);
}
template <class T>
CUPRIC_HD T expm1(T a) {
  if constexpr (is_complex_v<T>) {
    // exp(x+iy) - 1 = expm1(x) cos y - 2 sin^2(y/2)  +  i exp(x) sin y   (accurate near 0)
    using R = typename T::value_type;
    R x = a.real(), y = a.imag();
    // the Array API's special cases (C99's cexp, minus one), where the formula makes inf * 0
    if (y == 0 && x == 0) return T(R(0), y);                   // +0 real part for either zero (expm1(-0 + 0j) too)
    if (y == 0 && !std::isinf(x)) return T(std::expm1(x), y);  // real input (NaN + 0j too): exact
    if (std::isinf(x)) {
      if (x < 0) return T(R(-1), std::isfinite(y) ? std::copysign(R(0), std::sin(y)) : R(0));
      if (y == 0) return T(x, y);
      if (std::isfinite(y)) return T(x * std::cos(y), x * std::sin(y));
      return T(x, y - y);  // +inf + NaN j for an infinite or NaN imaginary part
    }
    R s = std::sin(y / 2);
    return T(std::expm1(x) * std::cos(y) - 2 * s * s, std::exp(x) * std::sin(y));
  } else {
    return std::expm1(a);
  }
}
template <class T>
CUPRIC_HD T log1p(T a) {
  if constexpr (is_complex_v<T>) {
    using R = typename T::value_type;
    R x = a.real(), y = a.imag();
    // log|1+z| = 0.5 log1p(2x + x^2 + y^2) keeps precision for small z; elsewhere it loses 1+z
    // near -1 (-1 + 1e-300i gave -inf) and its squares overflow for huge z (1e300+1e300i gave
    // inf), where log(hypot(1 + x, y)) (NumPy's formula everywhere) is exact enough
    if (!(std::fabs(x) < R(0.5) && std::fabs(y) < R(0.5)))
      return T(std::log(std::hypot(1 + x, y)), std::atan2(y, 1 + x));
    return T(R(0.5) * std::log1p(x * (2 + x) + y * y), std::atan2(y, 1 + x));
  } else {
    return std::log1p(a);
  }
}
template <class T>
CUPRIC_HD T log2(T a) {
  if constexpr (is_complex_v<T>) return std::log(a) * typename T::value_type(1.44269504088896340736);
  else return std::log2(a);
}
template <class T>
CUPRIC_HD T logaddexp(T a, T b) {
  if (a == b) return a + T(0.69314718055994530942);  // handles infinities of one sign
  T d = a - b;
  if (d > 0) return a + std::log1p(std::exp(-d));
  if (d <= 0) return b + std::log1p(std::exp(d));
  return d;  // nan
}
template <class T>
CUPRIC_HD T logaddexp2(T a, T b) {
  const T ln2 = T(0.69314718055994530942);
  if (a == b) return a + T(1);
  T d = a - b;
  if (d > 0) return a + std::log1p(std::exp2(-d)) / ln2;
  if (d <= 0) return b + std::log1p(std::exp2(d)) / ln2;
  return d;
}
template <class T>
CUPRIC_HD T heaviside(T x, T h0) {
  if (x != x) return x;
  if (x == 0) return h0;
  return x < 0 ? T(0) : T(1);
}

/// The next representable value after a toward b. Narrow storage types (float16, bfloat16, the
/// float8s: the table's half_native loops) step their bit pattern, since rounding float32's answer would not;
/// a == b gives b, as C's nextafter and NumPy >= 2.5 (NumPy 2.4's half loop gave a).
template <class T>
CUPRIC_HD T nextafter(T a, T b) {
  if constexpr (requires {
                  a.bits;
                  T::from_bits(a.bits);
                }) {
    using Bits = decltype(a.bits);
    constexpr unsigned sign = 1u << (sizeof(Bits) * 8 - 1);
    const float x = a, y = b;
    if (x != x || y != y) return T(x + y);
    if (x == y) return b;
    if (x == 0) return T::from_bits(static_cast<Bits>((b.bits & sign) | 1u));  // smallest subnormal
    const bool away_from_zero = (x < y) == (x > 0);
    return T::from_bits(static_cast<Bits>(away_from_zero ? a.bits + 1 : a.bits - 1));
  } else {
    return std::nextafter(a, b);
  }
}

// ---- integer functions ---------------------------------------------------------------------
template <class T>
CUPRIC_HD T gcd(T a, T b) {
  using U = std::make_unsigned_t<T>;
  U x = static_cast<U>(a < 0 ? T(0) - a : a), y = static_cast<U>(b < 0 ? T(0) - b : b);
  while (y) {
    U t = static_cast<U>(x % y);
    x = y;
    y = t;
  }
  return static_cast<T>(x);
}
template <class T>
CUPRIC_HD T lcm(T a, T b) {  // |a| / gcd * |b| in the unsigned type, wrapping as NumPy's
  using U = std::make_unsigned_t<T>;
  const U x = static_cast<U>(a < 0 ? T(0) - a : a), y = static_cast<U>(b < 0 ? T(0) - b : b);
  const U g = static_cast<U>(gcd(a, b));
  if (g == 0) return T(0);
  return static_cast<T>(static_cast<U>(x / g * y));
}
template <class T>
CUPRIC_HD T left_shift(T a, T b) {
  constexpr int bits = sizeof(T) * 8;
  if (b < 0 || b >= bits) return T(0);
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) << b);
}
template <class T>
CUPRIC_HD T right_shift(T a, T b) {
  constexpr int bits = sizeof(T) * 8;
  if (b < 0 || b >= bits) return a < 0 ? T(-1) : T(0);
  return static_cast<T>(a >> b);
}
template <class T>
CUPRIC_HD T invert(T a) {
  if constexpr (std::is_same_v<T, bool>) return !a;
  else return static_cast<T>(~a);
}

}  // namespace cu
