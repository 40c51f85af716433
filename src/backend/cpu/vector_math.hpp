// vector_math.hpp — branch-free exp, log, sin and cos for float and double that the compiler
// vectorises (libm's scalar calls do not). Each is valid on a "fast range"; the CPU loops send
// other inputs (NaN, inf, huge arguments, zero/negative/subnormal logs) to libm, so results
// match libm within a few ulp everywhere.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "cpu_variant.hpp"
#if defined(CUPRIC_CPU_VARIANT_AVX512) || defined(CUPRIC_CPU_VARIANT_AVX2)
#include <immintrin.h>
#endif

CUPRIC_CPU_VARIANT_BEGIN
namespace vm {

// ---- exp ---------------------------------------------------------------------------------
// e^x = 2^n e^r with n = round(x / ln2), r = x - n ln2 (two-part ln2), |r| <= ln2/2, e^r by
// its Taylor series (error below half an ulp), 2^n applied in two halves so that results in
// the subnormal range come out right.
inline bool exp_fast_range(float x) { return (x >= -103.0f) & (x <= 88.0f); }
inline bool exp_fast_range(double x) { return (x >= -745.0) & (x <= 709.0); }

inline float exp(float x) {
  const float t = x * 1.44269504088896341f + 12582912.0f;  // round to nearest by the 1.5*2^23 trick
  const float n = t - 12582912.0f;
  float r = x - n * 0.693145751953125f;
  r = r - n * 1.428606765330187045e-06f;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // n as an integer from t's low bits (t = 1.5*2^23 + n): no float -> int conversion
  const std::int32_t ni = std::bit_cast<std::int32_t>(t) - std::bit_cast<std::int32_t>(12582912.0f);
  const std::int32_t n1 = ni >> 1, n2 = ni - n1;
  const float s1 = std::bit_cast<float>((n1 + 127) << 23);
  const float s2 = std::bit_cast<float>((n2 + 127) << 23);
  return p * s1 * s2;
}

inline double exp(double x) {
  const double t = x * 1.4426950408889634074 + 6755399441055744.0;  // 1.5*2^52
  const double n = t - 6755399441055744.0;
  double r = x - n * 6.93147180369123816490e-01;
  r = r - n * 1.90821492927058770002e-10;
  double p = 1.0 / 6227020800.0;  // 1/13!
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  // from t's low bits: AVX2 has no double -> int64 conversion, which kept this loop scalar there
  const std::int64_t ni = std::bit_cast<std::int64_t>(t) - std::bit_cast<std::int64_t>(6755399441055744.0);
  const std::int64_t n1 = ni >> 1, n2 = ni - n1;
  const double s1 = std::bit_cast<double>((n1 + 1023) << 52);
  const double s2 = std::bit_cast<double>((n2 + 1023) << 52);
  return p * s1 * s2;
}

// exp over a block of doubles that are all in the fast range. AVX-512 has a 16-entry table
// lookup in registers (vpermt2pd) and a 2^k scaling that handles subnormal results (vscalefpd),
// so it takes e^x = 2^(k/16) e^r with k = round(16x / ln2), |r| <= ln2/32: a degree-7 series
// instead of degree 13, and 2^(j/16) from a head and tail table (error within one ulp of libm,
// about twice as fast as the vectorised scalar code on a Xeon). AVX2: exp_table32 below;
// baseline: the scalar code.
#if defined(CUPRIC_CPU_VARIANT_AVX512)
// 2^(j/16) rounded to double, and the rest of it (computed to 60 digits)
alignas(64) inline constexpr double kExp2Head[16] = {
    0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0, 0x1.2387a6e756238p+0,
    0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0, 0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0,
    0x1.6a09e667f3bcdp+0, 0x1.7a11473eb0187p+0, 0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0,
    0x1.ae89f995ad3adp+0, 0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0, 0x1.ea4afa2a490dap+0};
alignas(64) inline constexpr double kExp2Tail[16] = {0x0.0p+0,
                                                     0x1.8a62e4adc610bp-54,
                                                     -0x1.19041b9d78a76p-55,
                                                     0x1.9b07eb6c70573p-54,
                                                     0x1.6f46ad23182e4p-55,
                                                     0x1.ada0911f09ebcp-55,
                                                     0x1.d4397afec42e2p-56,
                                                     0x1.6324c054647adp-54,
                                                     -0x1.bdd3413b26456p-54,
                                                     -0x1.41577ee04992fp-55,
                                                     0x1.6e9f156864b27p-54,
                                                     0x1.c7c46b071f2bep-56,
                                                     0x1.7a1cd345dcc81p-54,
                                                     0x1.11065895048ddp-55,
                                                     0x1.2ed02d75b3707p-55,
                                                     -0x1.e9c23179c2893p-54};

inline __m512d exp_table16(__m512d x) {
  const __m512d magic = _mm512_set1_pd(6755399441055744.0);  // 1.5*2^52: k's bits land low in t
  const __m512d t = _mm512_fmadd_pd(x, _mm512_set1_pd(0x1.71547652b82fep+4), magic);  // 16/ln2
  const __m512d k = _mm512_sub_pd(t, magic);
  __m512d r = _mm512_fnmadd_pd(k, _mm512_set1_pd(0x1.62e42fefa39efp-5), x);  // ln2/16, two parts
  r = _mm512_fnmadd_pd(k, _mm512_set1_pd(0x1.abc9e3b39803fp-60), r);
  __m512d p = _mm512_set1_pd(1.0 / 5040);
  for (double c : {1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1.0}) p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(c));
  const __m512d q = _mm512_mul_pd(p, r);  // e^r - 1
  // the permutes read the low 4 bits of each lane of t, which are k mod 16
  const __m512i j = _mm512_castpd_si512(t);
  const __m512d head = _mm512_permutex2var_pd(_mm512_load_pd(kExp2Head), j, _mm512_load_pd(kExp2Head + 8));
  const __m512d tail = _mm512_permutex2var_pd(_mm512_load_pd(kExp2Tail), j, _mm512_load_pd(kExp2Tail + 8));
  const __m512d s = _mm512_add_pd(head, _mm512_fmadd_pd(head, q, tail));
  // times 2^floor(k/16); the masked form, since GCC 12 warns on the plain one's undefined source
  return _mm512_maskz_scalef_pd(0xFF, s, _mm512_mul_pd(k, _mm512_set1_pd(0.0625)));
}
#endif

// AVX2 has neither a two-register permute nor vscalef: e^x = 2^(k/32) e^r, |r| <= ln2/64, a
// degree-6 series, 2^(j/32) as (head, tail) pairs read by four 16-byte loads (portable in speed,
// unlike gathers), and 2^floor(k/32) added to the exponent field, valid while the result is a
// normal number: vectors with a lane below kExpTable32Low take the scalar code. 0.55 ulp measured
// against long double; 1.4 x the speed of the degree-13 code on a Zen 4.
#if defined(CUPRIC_CPU_VARIANT_AVX2)
// 2^(j/32) rounded to double, then the rest of it (computed to 60 digits), for j = 0..31
alignas(64) inline constexpr double kExp2Pairs32[64] = {0x1.0000000000000p+0, 0x0.0p+0,
                                                        0x1.059b0d3158574p+0, 0x1.d73e2a475b465p-55,
                                                        0x1.0b5586cf9890fp+0, 0x1.8a62e4adc610bp-54,
                                                        0x1.11301d0125b51p+0, -0x1.6c51039449b3ap-54,
                                                        0x1.172b83c7d517bp+0, -0x1.19041b9d78a76p-55,
                                                        0x1.1d4873168b9aap+0, 0x1.e016e00a2643cp-54,
                                                        0x1.2387a6e756238p+0, 0x1.9b07eb6c70573p-54,
                                                        0x1.29e9df51fdee1p+0, 0x1.612e8afad1255p-55,
                                                        0x1.306fe0a31b715p+0, 0x1.6f46ad23182e4p-55,
                                                        0x1.371a7373aa9cbp+0, -0x1.63aeabf42eae2p-54,
                                                        0x1.3dea64c123422p+0, 0x1.ada0911f09ebcp-55,
                                                        0x1.44e086061892dp+0, 0x1.89b7a04ef80d0p-59,
                                                        0x1.4bfdad5362a27p+0, 0x1.d4397afec42e2p-56,
                                                        0x1.5342b569d4f82p+0, -0x1.07abe1db13cadp-55,
                                                        0x1.5ab07dd485429p+0, 0x1.6324c054647adp-54,
                                                        0x1.6247eb03a5585p+0, -0x1.383c17e40b497p-54,
                                                        0x1.6a09e667f3bcdp+0, -0x1.bdd3413b26456p-54,
                                                        0x1.71f75e8ec5f74p+0, -0x1.16e4786887a99p-55,
                                                        0x1.7a11473eb0187p+0, -0x1.41577ee04992fp-55,
                                                        0x1.82589994cce13p+0, -0x1.d4c1dd41532d8p-54,
                                                        0x1.8ace5422aa0dbp+0, 0x1.6e9f156864b27p-54,
                                                        0x1.93737b0cdc5e5p+0, -0x1.75fc781b57ebcp-57,
                                                        0x1.9c49182a3f090p+0, 0x1.c7c46b071f2bep-56,
                                                        0x1.a5503b23e255dp+0, -0x1.d2f6edb8d41e1p-54,
                                                        0x1.ae89f995ad3adp+0, 0x1.7a1cd345dcc81p-54,
                                                        0x1.b7f76f2fb5e47p+0, -0x1.5584f7e54ac3bp-56,
                                                        0x1.c199bdd85529cp+0, 0x1.11065895048ddp-55,
                                                        0x1.cb720dcef9069p+0, 0x1.503cbd1e949dbp-56,
                                                        0x1.d5818dcfba487p+0, 0x1.2ed02d75b3707p-55,
                                                        0x1.dfc97337b9b5fp+0, -0x1.1a5cd4f184b5cp-54,
                                                        0x1.ea4afa2a490dap+0, -0x1.e9c23179c2893p-54,
                                                        0x1.f50765b6e4540p+0, 0x1.9d3e12dd8a18bp-54};
// below this the result nears the subnormal range (2^-1021), where adding to the exponent fails
inline constexpr double kExpTable32Low = -707.0;

inline __m256d exp_table32(__m256d x) {
  const __m256d magic = _mm256_set1_pd(6755399441055744.0);  // 1.5*2^52: k's bits land low in t
  const __m256d t = _mm256_fmadd_pd(x, _mm256_set1_pd(0x1.71547652b82fep+5), magic);  // 32/ln2
  const __m256d k = _mm256_sub_pd(t, magic);
  __m256d r = _mm256_fnmadd_pd(k, _mm256_set1_pd(0x1.62e42fefa39efp-6), x);  // ln2/32, two parts
  r = _mm256_fnmadd_pd(k, _mm256_set1_pd(0x1.abc9e3b39803fp-61), r);
  __m256d p = _mm256_set1_pd(1.0 / 720);
  for (double c : {1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1.0}) p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(c));
  const __m256d q = _mm256_mul_pd(p, r);  // e^r - 1
  const __m256i tbits = _mm256_castpd_si256(t);
  alignas(32) std::int64_t j[4];  // k mod 32, from t's low bits
  _mm256_store_si256(reinterpret_cast<__m256i*>(j), _mm256_and_si256(tbits, _mm256_set1_epi64x(31)));
  const __m128d p0 = _mm_load_pd(kExp2Pairs32 + 2 * j[0]), p1 = _mm_load_pd(kExp2Pairs32 + 2 * j[1]);
  const __m128d p2 = _mm_load_pd(kExp2Pairs32 + 2 * j[2]), p3 = _mm_load_pd(kExp2Pairs32 + 2 * j[3]);
  const __m256d even = _mm256_insertf128_pd(_mm256_castpd128_pd256(p0), p2, 1);  // h0 t0 h2 t2
  const __m256d odd = _mm256_insertf128_pd(_mm256_castpd128_pd256(p1), p3, 1);   // h1 t1 h3 t3
  const __m256d head = _mm256_unpacklo_pd(even, odd), tail = _mm256_unpackhi_pd(even, odd);
  const __m256d s = _mm256_add_pd(head, _mm256_fmadd_pd(head, q, tail));
  // floor(k/32) << 52 is t's bits << 47 without the five bits of j
  const __m256i e = _mm256_andnot_si256(_mm256_set1_epi64x(0x000FFFFFFFFFFFFF), _mm256_slli_epi64(tbits, 47));
  return _mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(s), e));
}
#endif

inline void exp_block(const double* x, double* y, std::int64_t n) {
  std::int64_t i = 0;
#if defined(CUPRIC_CPU_VARIANT_AVX512)
  for (; i + 8 <= n; i += 8) _mm512_storeu_pd(y + i, exp_table16(_mm512_loadu_pd(x + i)));
#elif defined(CUPRIC_CPU_VARIANT_AVX2)
  // a block with a lane below the table's range runs the scalar code; checked first (y may be
  // x), in a loop of its own: a branch in the table loop made GCC reload every constant
  const __m256d low = _mm256_set1_pd(kExpTable32Low);
  __m256d below = _mm256_setzero_pd();
  for (std::int64_t l = 0; l + 4 <= n; l += 4)
    below = _mm256_or_pd(below, _mm256_cmp_pd(_mm256_loadu_pd(x + l), low, _CMP_LT_OQ));
  if (_mm256_movemask_pd(below) == 0)
    for (; i + 4 <= n; i += 4) _mm256_storeu_pd(y + i, exp_table32(_mm256_loadu_pd(x + i)));
#endif
  for (; i < n; ++i) y[i] = exp(x[i]);
}

/// The fast code over a block whose inputs are all in the fast range.
template <class T, class F>
inline void each_block(const T* x, T* y, std::int64_t n, F f) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}
inline void exp_block(const float* x, float* y, std::int64_t n) {
  each_block(x, y, n, [](float v) { return exp(v); });
}

// ---- log ---------------------------------------------------------------------------------
// x = m 2^e with m in [sqrt(1/2), sqrt(2)); log(m) = 2 atanh(s), s = (m-1)/(m+1), by its odd
// series; log(x) = e ln2 + log(m) with ln2 in two parts.
// (bounds as constants: clang takes a call on the right of & for a short-circuit meant)
inline bool log_fast_range(float x) {
  constexpr float lo = std::numeric_limits<float>::min(), hi = std::numeric_limits<float>::max();
  return (x >= lo) & (x <= hi);
}
inline bool log_fast_range(double x) {
  constexpr double lo = std::numeric_limits<double>::min(), hi = std::numeric_limits<double>::max();
  return (x >= lo) & (x <= hi);
}

inline float log(float x) {
  const std::int32_t bits = std::bit_cast<std::int32_t>(x);
  std::int32_t e = ((bits >> 23) & 0xff) - 127;
  float m = std::bit_cast<float>((bits & 0x7fffff) | 0x3f800000);
  const bool big = m > 1.41421356f;
  m = big ? m * 0.5f : m;
  e = big ? e + 1 : e;
  const float f = m - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s;
  float p = 1.0f / 11;
  p = p * z + 1.0f / 9;
  p = p * z + 1.0f / 7;
  p = p * z + 1.0f / 5;
  p = p * z + 1.0f / 3;
  const float logm = f - s * (f - 2.0f * z * p);  // = 2s(1 + z p), written to keep f's precision
  const float ef = static_cast<float>(e);
  return ef * 0.693145751953125f + (logm + ef * 1.428606765330187045e-06f);
}

inline double log(double x) {
  const std::int64_t bits = std::bit_cast<std::int64_t>(x);
  // the exponent as a double from the bits of 2^52 + biased exponent: AVX2 has no int64 ->
  // double conversion, which kept this loop scalar there
  double ed = std::bit_cast<double>(((bits >> 52) & 0x7ff) | 0x4330000000000000LL) - (4503599627370496.0 + 1023.0);
  double m = std::bit_cast<double>((bits & 0xfffffffffffffLL) | 0x3ff0000000000000LL);
  const bool big = m > 1.4142135623730951;
  m = big ? m * 0.5 : m;
  ed = big ? ed + 1.0 : ed;
  const double f = m - 1.0;
  const double s = f / (2.0 + f);
  const double z = s * s;
  double p = 1.0 / 23;
  p = p * z + 1.0 / 21;
  p = p * z + 1.0 / 19;
  p = p * z + 1.0 / 17;
  p = p * z + 1.0 / 15;
  p = p * z + 1.0 / 13;
  p = p * z + 1.0 / 11;
  p = p * z + 1.0 / 9;
  p = p * z + 1.0 / 7;
  p = p * z + 1.0 / 5;
  p = p * z + 1.0 / 3;
  const double logm = f - s * (f - 2.0 * z * p);
  return ed * 6.93147180369123816490e-01 + (logm + ed * 1.90821492927058770002e-10);
}

// ---- sin and cos -------------------------------------------------------------------------
// x = j pi/2 + y with |y| <= pi/4 (three-part pi/2, exact products while |j| is small), then
// the Taylor series of sin or cos on y, chosen and signed by the quadrant j mod 4.
inline bool trig_fast_range(float x) { return std::fabs(x) <= 1048576.0f; }
inline bool trig_fast_range(double x) { return std::fabs(x) <= 1048576.0; }

template <class T>
struct Reduced {
  T y;
  std::int32_t quadrant;
};

#if CUPRIC_CPU_HAS_FMA
// In float, with fused multiply-adds and pi/2 in three floats (72 bits): x - j*P1 is exact, and
// each later step rounds a value already reduced, so y keeps its precision near every zero.
// Half the work of the double reduction below (8 float lanes to an AVX2 register, not 4 doubles).
inline Reduced<float> reduce_pio2(float x) {
  const float t = x * 0.636619772f + 12582912.0f;  // 1.5*2^23: j = round(x * 2/pi) in t's low bits
  const float j = t - 12582912.0f;
  float y = __builtin_fmaf(-j, 0x1.921fb6p+0f, x);
  y = __builtin_fmaf(-j, -0x1.777a5cp-25f, y);
  y = __builtin_fmaf(-j, -0x1.ee59dap-50f, y);
  return {y, std::bit_cast<std::int32_t>(t) - std::bit_cast<std::int32_t>(12582912.0f)};
}
#else
inline Reduced<float> reduce_pio2(float x) {  // reduced in double: exact enough near every zero
  const double xd = x;
  const double t = xd * 0.63661977236758134308 + 6755399441055744.0;
  const double j = t - 6755399441055744.0;
  double y = xd - j * 1.57079632673412561417e+00;
  y = y - j * 6.07710050650619224932e-11;
  return {static_cast<float>(y), static_cast<std::int32_t>(j)};
}
#endif

inline Reduced<double> reduce_pio2(double x) {
  const double t = x * 0.63661977236758134308 + 6755399441055744.0;
  const double j = t - 6755399441055744.0;
  double y = x - j * 1.57079632673412561417e+00;
  y = y - j * 6.07710050630396597660e-11;
  y = y - j * 2.02226624879595063154e-21;
  return {y, static_cast<std::int32_t>(j)};
}

inline float sin_poly(float y) {
  const float z = y * y;
  float p = -1.0f / 39916800;
  p = p * z + 1.0f / 362880;
  p = p * z - 1.0f / 5040;
  p = p * z + 1.0f / 120;
  p = p * z - 1.0f / 6;
  return y + y * z * p;
}
inline float cos_poly(float y) {
  const float z = y * y;
  float p = 1.0f / 479001600;
  p = p * z - 1.0f / 3628800;
  p = p * z + 1.0f / 40320;
  p = p * z - 1.0f / 720;
  p = p * z + 1.0f / 24;
  return 1.0f - 0.5f * z + z * z * p;
}
inline double sin_poly(double y) {
  const double z = y * y;
  double p = -1.0 / 355687428096000.0;  // -1/17!
  p = p * z + 1.0 / 1307674368000.0;    // 1/15!
  p = p * z - 1.0 / 6227020800.0;       // 1/13!
  p = p * z + 1.0 / 39916800.0;         // 1/11!
  p = p * z - 1.0 / 362880.0;           // 1/9!
  p = p * z + 1.0 / 5040.0;             // 1/7!
  p = p * z - 1.0 / 120.0;              // 1/5!
  p = p * z + 1.0 / 6.0;                // 1/3!
  return y - y * z * p;
}
inline double cos_poly(double y) {
  const double z = y * y;
  double p = 1.0 / 6402373705728000.0;  // 1/18!
  p = p * z - 1.0 / 20922789888000.0;   // 1/16!
  p = p * z + 1.0 / 87178291200.0;      // 1/14!
  p = p * z - 1.0 / 479001600.0;        // 1/12!
  p = p * z + 1.0 / 3628800.0;          // 1/10!
  p = p * z - 1.0 / 40320.0;            // 1/8!
  p = p * z + 1.0 / 720.0;              // 1/6!
  p = p * z - 1.0 / 24.0;               // 1/4!
  return 1.0 - 0.5 * z - z * z * p;
}

template <class T>
inline T sin(T x) {
  const auto [y, q] = reduce_pio2(x);
  const T s = sin_poly(y), c = cos_poly(y);
  const T v = (q & 1) ? c : s;
  const T r = (q & 2) ? -v : v;
  return x == T(0) ? x : r;  // sin(-0.0) is -0.0
}

template <class T>
inline T cos(T x) {
  const auto [y, q] = reduce_pio2(x);
  const T s = sin_poly(y), c = cos_poly(y);
  const T v = (q & 1) ? s : c;
  return ((q + 1) & 2) ? -v : v;
}

// log, sin and cos have no table form: their blocks are the vectorised scalar code
template <class T>
inline void log_block(const T* x, T* y, std::int64_t n) {
  each_block(x, y, n, [](T v) { return log(v); });
}
template <class T>
inline void sin_block(const T* x, T* y, std::int64_t n) {
  each_block(x, y, n, [](T v) { return sin(v); });
}
template <class T>
inline void cos_block(const T* x, T* y, std::int64_t n) {
  each_block(x, y, n, [](T v) { return cos(v); });
}

}  // namespace vm
CUPRIC_CPU_VARIANT_END
CUPRIC_CPU_VARIANT_ALIAS(vm)
