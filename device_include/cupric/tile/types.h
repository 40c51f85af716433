// cupric/tile/types.h — element types of generated tile code on both targets: short integer
// names, the float16 / bfloat16 / float8 storage types, constants by bit pattern, and convert<To>(x),
// which casts as NumPy does (16-bit floats go through float32; bool is "!= 0").
#pragma once

namespace cu::tile {

using i8 = signed char;
using u8 = unsigned char;
using i16 = short;
using u16 = unsigned short;
using i32 = int;
using u32 = unsigned int;
using i64 = long long;
using u64 = unsigned long long;

template <class A, class B>
inline constexpr bool same_v = false;
template <class A>
inline constexpr bool same_v<A, A> = true;

/// IEEE binary16 and bfloat16 as 16-bit storage; arithmetic happens in float32.
struct f16 {
  u16 bits;
};
struct bf16 {
  u16 bits;
};
/// The 8-bit floats of fp8 tensor-core products (ml_dtypes' float8_e4m3fn: no infinity, one NaN
/// pattern per sign, largest 448; float8_e5m2: IEEE-like with infinities), 8-bit storage.
struct f8e4m3 {
  u8 bits;
};
struct f8e5m2 {
  u8 bits;
};
template <class T>
inline constexpr bool is_f8_v = same_v<T, f8e4m3> || same_v<T, f8e5m2>;
/// The storage-only floats (16- and 8-bit): arithmetic happens in float32.
template <class T>
inline constexpr bool is_half_v = same_v<T, f16> || same_v<T, bf16> || is_f8_v<T>;

// PTX conversions need a CUDA compiler; tests/cpp/test_tile_gpu_memory.cpp runs the device path on
// the host, where they take the portable branch (clang checks an asm's constraints even unused).
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define CUPRIC_TILE_PTX 1
#else
#define CUPRIC_TILE_PTX 0
#endif

CUPRIC_TD u32 float_bits(float f) {
#ifdef CUPRIC_TILE_DEVICE
  return __float_as_uint(f);
#else
  return __builtin_bit_cast(u32, f);
#endif
}
CUPRIC_TD float bits_float(u32 u) {
#ifdef CUPRIC_TILE_DEVICE
  return __uint_as_float(u);
#else
  return __builtin_bit_cast(float, u);
#endif
}
CUPRIC_TD double bits_double(u64 u) {
#ifdef CUPRIC_TILE_DEVICE
  return __longlong_as_double(static_cast<long long>(u));
#else
  return __builtin_bit_cast(double, u);
#endif
}

CUPRIC_TD float to_float(bf16 h) { return bits_float(static_cast<u32>(h.bits) << 16); }

CUPRIC_TD bf16 to_bf16(float f) {
#if defined(CUPRIC_TILE_DEVICE) && CUPRIC_TILE_PTX
  u16 r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(f));
  return bf16{r};
#else
  const u32 u = float_bits(f);
  const u32 rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;  // round to nearest even
  const u32 quiet = (u >> 16) | 0x40u;                         // NaN stays NaN
  return bf16{static_cast<u16>((u & 0x7fffffffu) > 0x7f800000u ? quiet : rounded)};
#endif
}

#if defined(CUPRIC_TILE_DEVICE) && CUPRIC_TILE_PTX
CUPRIC_TD float to_float(f16 h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
  return f;
}
CUPRIC_TD f16 to_f16(float f) {
  u16 r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(f));
  return f16{r};
}
#elif defined(__FLT16_MAX__)
CUPRIC_TD float to_float(f16 h) { return static_cast<float>(__builtin_bit_cast(_Float16, h.bits)); }
CUPRIC_TD f16 to_f16(float f) { return f16{__builtin_bit_cast(u16, static_cast<_Float16>(f))}; }
#else
CUPRIC_TD float to_float(f16 h) {
  const u32 sign = static_cast<u32>(h.bits & 0x8000u) << 16;
  const u32 exp = (h.bits >> 10) & 0x1fu, man = h.bits & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    const float v = static_cast<float>(man) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return bits_float(sign | ((exp + 112) << 23) | (man << 13));
}
CUPRIC_TD f16 to_f16(float f) {
  const u32 x = float_bits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u)
    return f16{static_cast<u16>(sign | (ax == 0x7f800000u ? 0x7c00u : 0x7e00u | ((ax >> 13) & 0x3ffu)))};
  if (ax >= 0x477ff000u) return f16{static_cast<u16>(sign | 0x7c00u)};
  if (ax < 0x38800000u) {
    if (ax < 0x33000000u) return f16{static_cast<u16>(sign)};
    const u32 e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u, shift = 126 - e;
    u32 h = m >> shift;
    const u32 rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return f16{static_cast<u16>(sign | h)};
  }
  u32 h = (ax >> 13) - (112u << 10);
  const u32 rem = ax & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return f16{static_cast<u16>(sign | h)};
}
#endif

/// 8-bit floats with E exponent bits (bias B), M mantissa bits; E4M3FN: no infinity (the largest
/// code, 0x7f, is NaN). Decoding is exact; encoding rounds to nearest even as ml_dtypes does:
/// beyond the largest finite value, infinity (E5M2) or NaN (E4M3FN).
template <int E, int M, bool FN>
CUPRIC_TD float f8_to_float(u8 c) {
  constexpr int B = (1 << (E - 1)) - 1;
  const u32 sign = static_cast<u32>(c & 0x80u) << 24, e = (c >> M) & ((1u << E) - 1), m = c & ((1u << M) - 1);
  if (FN ? (e == (1u << E) - 1 && m == (1u << M) - 1) : e == (1u << E) - 1)
    return bits_float(sign | 0x7f800000u | (FN || m != 0 ? 0x400000u : 0u));  // NaN or inf
  if (e == 0) {                                                               // subnormal: m * 2^(1 - B - M)
    const float v = static_cast<float>(m) * bits_float(static_cast<u32>(127 + 1 - B - M) << 23);
    return (c & 0x80u) ? -v : v;
  }
  return bits_float(sign | ((e + 127 - B) << 23) | (m << (23 - M)));
}
template <int E, int M, bool FN>
CUPRIC_TD u8 f8_from_float(float f) {
  constexpr int B = (1 << (E - 1)) - 1;
  constexpr u32 nan = FN ? 0x7fu : ((((1u << E) - 1) << M) | (1u << (M - 1)));  // E5M2: 0x7e
  constexpr u32 inf = FN ? nan : (((1u << E) - 1) << M);
  constexpr u32 top = FN ? nan - 1 : inf - 1;  // the largest finite code
  const u32 x = float_bits(f), sign = (x >> 24) & 0x80u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return static_cast<u8>(sign | nan);
  if (ax == 0x7f800000u) return static_cast<u8>(sign | inf);
  u32 code;
  if (ax < (static_cast<u32>(127 + 1 - B) << 23)) {  // below the smallest normal: units of 2^(1-B-M)
    const float q = bits_float(ax) * bits_float(static_cast<u32>(127 + B + M - 1) << 23);
#if defined(CUPRIC_TILE_DEVICE) && CUPRIC_TILE_PTX
    code = static_cast<u32>(__float2uint_rn(q));
#else
    code = static_cast<u32>(__builtin_rintf(q));  // (the default rounding: to nearest even)
#endif
  } else {
    const u32 r = ax - (static_cast<u32>(127 - B) << 23);                      // exponent rebiased
    code = (r + ((1u << (22 - M)) - 1) + ((r >> (23 - M)) & 1u)) >> (23 - M);  // > top: overflow
  }
  return static_cast<u8>(sign | (code > top ? inf : code));
}
CUPRIC_TD float to_float(f8e4m3 h) { return f8_to_float<4, 3, true>(h.bits); }
CUPRIC_TD float to_float(f8e5m2 h) { return f8_to_float<5, 2, false>(h.bits); }
CUPRIC_TD f8e4m3 to_f8e4m3(float f) { return f8e4m3{f8_from_float<4, 3, true>(f)}; }
CUPRIC_TD f8e5m2 to_f8e5m2(float f) { return f8e5m2{f8_from_float<5, 2, false>(f)}; }

/// The bits of one type as another of the same size.
template <class To, class From>
CUPRIC_TD To bit_cast(From f) {
#ifdef CUPRIC_TILE_DEVICE
  union {
    From from;
    To to;
  } u{f};
  return u.to;
#else
  return __builtin_bit_cast(To, f);
#endif
}

/// The smallest and largest values of an arithmetic type (floats: -inf and +inf).
template <class A>
CUPRIC_TD A lowest() {
  if constexpr (same_v<A, float>) return bits_float(0xff800000u);
  else if constexpr (same_v<A, double>) return bits_double(0xfff0000000000000ull);
  else if constexpr (same_v<A, bool>) return false;
  else if constexpr (A(-1) < A(0)) return static_cast<A>(static_cast<u64>(1) << (sizeof(A) * 8 - 1));
  else return A(0);
}
template <class A>
CUPRIC_TD A highest() {
  if constexpr (same_v<A, float>) return bits_float(0x7f800000u);
  else if constexpr (same_v<A, double>) return bits_double(0x7ff0000000000000ull);
  else if constexpr (same_v<A, bool>) return true;
  else return static_cast<A>(~lowest<A>());
}

/// The type arithmetic on T happens in: float for the storage-only floats (is_half_v), else T.
template <class T, bool Storage = is_half_v<T>>
struct compute_of {
  using type = T;
};
template <class T>
struct compute_of<T, true> {
  using type = float;
};
template <class T>
using compute_t = typename compute_of<T>::type;

/// NumPy's cast of one value from From to To.
template <class To, class From>
CUPRIC_TD To convert(From x) {
  if constexpr (same_v<To, From>) {
    return x;
  } else if constexpr (is_half_v<From>) {
    return convert<To>(to_float(x));
  } else if constexpr (same_v<To, f16>) {
    return to_f16(static_cast<float>(x));
  } else if constexpr (same_v<To, bf16>) {
    return to_bf16(static_cast<float>(x));
  } else if constexpr (same_v<To, f8e4m3>) {
    return to_f8e4m3(static_cast<float>(x));
  } else if constexpr (same_v<To, f8e5m2>) {
    return to_f8e5m2(static_cast<float>(x));
  } else if constexpr (same_v<To, bool>) {
    return x != From(0);
  } else {
    return static_cast<To>(x);
  }
}

/// 2**a with results below the smallest normal number flushed to 0 (ct.exp2(x, flush_to_zero=True)):
/// on the GPU one ex2.approx.ftz (exp2f keeps subnormal results with a compare and two multiplies)
CUPRIC_TD float exp2_ftz(float a) {
#if defined(CUPRIC_TILE_DEVICE) && CUPRIC_TILE_PTX
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
  return r;
#else
  const float r = ::cu::exp2(a);
  return r < 1.17549435e-38f ? 0.0f : r;
#endif
}
CUPRIC_TD double exp2_ftz(double a) {
  const double r = ::cu::exp2(a);
  return r < 2.2250738585072014e-308 ? 0.0 : r;
}

}  // namespace cu::tile
