// cupric/cuda_prelude.h — what NVRTC lacks and scalar_math.h needs: fixed-width integers, a few
// type traits, numeric_limits, complex<T> and the libm names, all under `std` so that the same
// scalar code compiles on the host and under NVRTC without any header from a CUDA toolkit.
// Included only when __CUDACC_RTC__ is defined.
#pragma once

// (not formatted: the standard library's declarations in a compact form, one a line)
// clang-format off
namespace std {

typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
typedef unsigned long size_t;
typedef long ptrdiff_t;

template <class T, T v>
struct integral_constant {
  static constexpr T value = v;
};
typedef integral_constant<bool, true> true_type;
typedef integral_constant<bool, false> false_type;
template <class A, class B>
struct is_same : false_type {};
template <class A>
struct is_same<A, A> : true_type {};
template <class A, class B>
inline constexpr bool is_same_v = is_same<A, B>::value;
template <bool C, class A, class B>
struct conditional {
  typedef A type;
};
template <class A, class B>
struct conditional<false, A, B> {
  typedef B type;
};
template <bool C, class A, class B>
using conditional_t = typename conditional<C, A, B>::type;

template <class T> struct is_integral : false_type {};
#define CUPRIC_INTEGRAL(T) template <> struct is_integral<T> : true_type {};
CUPRIC_INTEGRAL(bool) CUPRIC_INTEGRAL(char) CUPRIC_INTEGRAL(signed char) CUPRIC_INTEGRAL(unsigned char)
CUPRIC_INTEGRAL(short) CUPRIC_INTEGRAL(unsigned short) CUPRIC_INTEGRAL(int) CUPRIC_INTEGRAL(unsigned int)
CUPRIC_INTEGRAL(long) CUPRIC_INTEGRAL(unsigned long) CUPRIC_INTEGRAL(long long) CUPRIC_INTEGRAL(unsigned long long)
#undef CUPRIC_INTEGRAL
template <class T> inline constexpr bool is_integral_v = is_integral<T>::value;
template <class T> struct is_floating_point : false_type {};
template <> struct is_floating_point<float> : true_type {};
template <> struct is_floating_point<double> : true_type {};
template <class T> inline constexpr bool is_floating_point_v = is_floating_point<T>::value;
template <class T> inline constexpr bool is_signed_v = T(-1) < T(0);
template <class T> inline constexpr bool is_unsigned_v = is_integral_v<T> && !(T(-1) < T(0));

template <class T> struct make_unsigned { typedef T type; };
template <> struct make_unsigned<signed char> { typedef unsigned char type; };
template <> struct make_unsigned<short> { typedef unsigned short type; };
template <> struct make_unsigned<int> { typedef unsigned int type; };
template <> struct make_unsigned<long> { typedef unsigned long type; };
template <> struct make_unsigned<long long> { typedef unsigned long long type; };
template <class T> using make_unsigned_t = typename make_unsigned<T>::type;

template <class T>
struct numeric_limits {
  static constexpr __host__ __device__ T min() { return T(1) << (sizeof(T) * 8 - 1) > T(0) ? T(0) : T(T(1) << (sizeof(T) * 8 - 1)); }
  static constexpr __host__ __device__ T max() { return T(~min()); }
  static constexpr __host__ __device__ T lowest() { return min(); }
};
template <> struct numeric_limits<bool> {
  static constexpr __host__ __device__ bool min() { return false; }
  static constexpr __host__ __device__ bool max() { return true; }
};
template <> struct numeric_limits<float> {
  static __device__ float min() { return 1.17549435e-38f; }
  static __device__ float max() { return 3.40282347e+38f; }
  static __device__ float lowest() { return -3.40282347e+38f; }
  static __device__ float infinity() { return __int_as_float(0x7f800000); }
  static __device__ float quiet_NaN() { return __int_as_float(0x7fc00000); }
};
template <> struct numeric_limits<double> {
  static __device__ double min() { return 2.2250738585072014e-308; }
  static __device__ double max() { return 1.7976931348623157e+308; }
  static __device__ double lowest() { return -1.7976931348623157e+308; }
  static __device__ double infinity() { return __longlong_as_double(0x7ff0000000000000LL); }
  static __device__ double quiet_NaN() { return __longlong_as_double(0x7ff8000000000000LL); }
};

// ---- libm, float and double overloads of the CUDA math library -----------------------------
#define CUPRIC_MATH1(NAME)                                              \
  __device__ inline float NAME(float a) { return ::NAME##f(a); }        \
  __device__ inline double NAME(double a) { return ::NAME(a); }
#define CUPRIC_MATH2(NAME)                                                       \
  __device__ inline float NAME(float a, float b) { return ::NAME##f(a, b); }     \
  __device__ inline double NAME(double a, double b) { return ::NAME(a, b); }
CUPRIC_MATH1(fabs) CUPRIC_MATH1(sqrt) CUPRIC_MATH1(cbrt) CUPRIC_MATH1(exp) CUPRIC_MATH1(exp2)
CUPRIC_MATH1(expm1) CUPRIC_MATH1(log) CUPRIC_MATH1(log2) CUPRIC_MATH1(log10) CUPRIC_MATH1(log1p)
CUPRIC_MATH1(sin) CUPRIC_MATH1(cos) CUPRIC_MATH1(tan) CUPRIC_MATH1(asin) CUPRIC_MATH1(acos)
CUPRIC_MATH1(atan) CUPRIC_MATH1(sinh) CUPRIC_MATH1(cosh) CUPRIC_MATH1(tanh) CUPRIC_MATH1(asinh)
CUPRIC_MATH1(acosh) CUPRIC_MATH1(atanh) CUPRIC_MATH1(floor) CUPRIC_MATH1(ceil) CUPRIC_MATH1(trunc)
CUPRIC_MATH1(nearbyint)
CUPRIC_MATH2(atan2) CUPRIC_MATH2(hypot) CUPRIC_MATH2(copysign) CUPRIC_MATH2(nextafter)
CUPRIC_MATH2(fmod) CUPRIC_MATH2(pow) CUPRIC_MATH2(fmax) CUPRIC_MATH2(fmin)
#undef CUPRIC_MATH1
#undef CUPRIC_MATH2
__device__ inline bool isnan(float a) { return ::isnan(a); }
__device__ inline bool isnan(double a) { return ::isnan(a); }
__device__ inline bool isinf(float a) { return ::isinf(a); }
__device__ inline bool isinf(double a) { return ::isinf(a); }
__device__ inline bool isfinite(float a) { return ::isfinite(a); }
__device__ inline bool isfinite(double a) { return ::isfinite(a); }
__device__ inline bool signbit(float a) { return ::signbit(a); }
__device__ inline bool signbit(double a) { return ::signbit(a); }

// ---- complex ------------------------------------------------------------------------------
template <class T>
struct complex {
  typedef T value_type;
  T re, im;
  __device__ constexpr complex(T r = T(0), T i = T(0)) : re(r), im(i) {}
  template <class U>
  __device__ explicit constexpr complex(const complex<U>& o) : re(T(o.real())), im(T(o.imag())) {}
  __device__ constexpr T real() const { return re; }
  __device__ constexpr T imag() const { return im; }
};
template <class T> __device__ inline complex<T> operator+(complex<T> a, complex<T> b) { return {a.re + b.re, a.im + b.im}; }
template <class T> __device__ inline complex<T> operator-(complex<T> a, complex<T> b) { return {a.re - b.re, a.im - b.im}; }
template <class T> __device__ inline complex<T> operator-(complex<T> a) { return {-a.re, -a.im}; }
template <class T> __device__ inline complex<T> operator+(complex<T> a) { return a; }
template <class T> __device__ inline complex<T> operator*(complex<T> a, complex<T> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <class T> __device__ inline complex<T> operator*(complex<T> a, T b) { return {a.re * b, a.im * b}; }
template <class T> __device__ inline complex<T> operator/(complex<T> a, T b) { return {a.re / b, a.im / b}; }
template <class T> __device__ inline complex<T> operator/(complex<T> a, complex<T> b) {
  // Smith's algorithm: no overflow for large |b|
  if (fabs(b.re) >= fabs(b.im)) {
    T r = b.im / b.re, d = b.re + b.im * r;
    return {(a.re + a.im * r) / d, (a.im - a.re * r) / d};
  }
  T r = b.re / b.im, d = b.re * r + b.im;
  return {(a.re * r + a.im) / d, (a.im * r - a.re) / d};
}
template <class T> __device__ inline bool operator==(complex<T> a, complex<T> b) { return a.re == b.re && a.im == b.im; }
template <class T> __device__ inline bool operator!=(complex<T> a, complex<T> b) { return !(a == b); }
template <class T> __device__ inline T abs(complex<T> a) { return hypot(a.re, a.im); }
template <class T> __device__ inline T arg(complex<T> a) { return atan2(a.im, a.re); }
template <class T> __device__ inline complex<T> conj(complex<T> a) { return {a.re, -a.im}; }
template <class T> __device__ inline complex<T> polar(T r, T t) { return {r * cos(t), r * sin(t)}; }
template <class T>
__device__ inline complex<T> exp(complex<T> a) {
  const T e = exp(a.re);
  if (a.im == 0) return {e, a.im};  // exp(x + 0i) = e^x + 0i, even when e^x overflows (not inf * 0 = nan)
  return polar(e, a.im);
}
template <class T> __device__ inline complex<T> log(complex<T> a) { return {log(abs(a)), arg(a)}; }
template <class T> __device__ inline complex<T> log10(complex<T> a) { return log(a) * T(0.43429448190325182765); }
template <class T> __device__ inline complex<T> sqrt(complex<T> a) {
  if (a.re == 0 && a.im == 0) return {T(0), a.im};
  if (isinf(a.im)) return {numeric_limits<T>::infinity(), a.im};  // C99: even beside a nan
  // past max / 4, |re| + |a| overflows: sqrt(a) = 2 sqrt(a / 4)
  const T big = numeric_limits<T>::max() / 4;
  const T scale = fabs(a.re) > big || fabs(a.im) > big ? T(2) : T(1);
  if (scale != 1) a = {a.re * T(0.25), a.im * T(0.25)};
  T m = sqrt((fabs(a.re) + abs(a)) * T(0.5));
  if (a.re >= 0) return {m * scale, a.im / (2 * m) * scale};
  return {fabs(a.im) / (2 * m) * scale, copysign(m * scale, a.im)};
}
template <class T> __device__ inline complex<T> pow(complex<T> a, complex<T> b) { return exp(b * log(a)); }
template <class T> __device__ inline complex<T> sinh(complex<T> a) { return {sinh(a.re) * cos(a.im), cosh(a.re) * sin(a.im)}; }
template <class T> __device__ inline complex<T> cosh(complex<T> a) { return {cosh(a.re) * cos(a.im), sinh(a.re) * sin(a.im)}; }
template <class T> __device__ inline complex<T> tanh(complex<T> a) {
  T d = cosh(2 * a.re) + cos(2 * a.im);
  return {sinh(2 * a.re) / d, sin(2 * a.im) / d};
}
template <class T> __device__ inline complex<T> sin(complex<T> a) { complex<T> s = sinh(complex<T>(-a.im, a.re)); return {s.im, -s.re}; }
template <class T> __device__ inline complex<T> cos(complex<T> a) { return cosh(complex<T>(-a.im, a.re)); }
template <class T> __device__ inline complex<T> tan(complex<T> a) { complex<T> t = tanh(complex<T>(-a.im, a.re)); return {t.im, -t.re}; }
template <class T> __device__ inline complex<T> asinh(complex<T> a) { return log(a + sqrt(a * a + complex<T>(1))); }
template <class T> __device__ inline complex<T> acosh(complex<T> a) {
  return log(a + sqrt(a + complex<T>(1)) * sqrt(a - complex<T>(1)));
}
// The branch cuts of asin, acos and atanh lie on the real axis beyond +-1, where the formulas
// below took the conjugate branch on an H200 (acos(2 + 0i) gave +1.32i; NumPy and C99 give
// -1.32i): a real argument (imaginary part +-0) is computed from the real functions, with the
// imaginary part's sign taken from the zero's sign as C99 has it.
template <class T> __device__ inline complex<T> atanh(complex<T> a) {
  if (a.im == 0 && fabs(a.re) > 1)
    return {atanh(T(1) / a.re), copysign(T(1.57079632679489661923), a.im)};
  return (log(complex<T>(1) + a) - log(complex<T>(1) - a)) * T(0.5);
}
template <class T> __device__ inline complex<T> asin(complex<T> a) {
  if (a.im == 0 && fabs(a.re) > 1)
    return {copysign(T(1.57079632679489661923), a.re), copysign(acosh(fabs(a.re)), a.im)};
  complex<T> s = asinh(complex<T>(-a.im, a.re));
  return {s.im, -s.re};
}
template <class T> __device__ inline complex<T> acos(complex<T> a) {
  if (a.im == 0 && fabs(a.re) > 1)
    return {a.re > 0 ? T(0) : T(3.14159265358979323846), -copysign(acosh(fabs(a.re)), a.im)};
  complex<T> s = asin(a);
  return {T(1.57079632679489661923) - s.re, -s.im};
}
template <class T> __device__ inline complex<T> atan(complex<T> a) { complex<T> t = atanh(complex<T>(-a.im, a.re)); return {t.im, -t.re}; }
template <class T> __device__ inline bool isnan(complex<T> a) { return isnan(a.re) || isnan(a.im); }

}  // namespace std

namespace cupric {

/// IEEE float16 and bfloat16 storage types for device code, converted with the hardware's
/// round-to-nearest-even instructions.
struct float16 {
  unsigned short bits;
  float16() = default;
  __device__ float16(float f) { asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(f)); }
  __device__ operator float() const {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
    return f;
  }
};
struct bfloat16 {
  unsigned short bits;
  bfloat16() = default;
  __device__ bfloat16(float f) { asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(bits) : "f"(f)); }
  __device__ operator float() const { return __int_as_float(static_cast<int>(bits) << 16); }
};

}  // namespace cupric
// clang-format on

#include "cupric/float8.h"  // float8_e4m3fn, float8_e5m2: the same software conversions as the host's
