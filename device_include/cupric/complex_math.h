// cupric/complex_math.h — complex arithmetic with NumPy's algorithms, used by scalar_math.h:
// the schoolbook product, Smith's division, reciprocal, integer powers by repeated squaring, and
// sign. std::complex's operators follow C99 Annex G instead (recovering infinities, calling
// __mulsc3 per element), which gives other results for inf/nan and is slower.
#pragma once

#include "cupric/hd.h"

#if defined(__CUDACC_RTC__)
#include "cupric/cuda_prelude.h"  // NVRTC has no standard headers
#else
#include <cmath>
#include <complex>
#include <limits>
#endif

namespace cu {

template <class C>
CUPRIC_HD C complex_multiply(C a, C b) {
  return C(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
}

/// Smith's algorithm: scale by the larger part of the divisor to avoid overflow.
template <class C>
CUPRIC_HD C complex_divide(C a, C b) {
  using R = typename C::value_type;
  const R ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
  const R abs_br = std::fabs(br), abs_bi = std::fabs(bi);
  if (abs_br >= abs_bi) {
    if (abs_br == 0 && abs_bi == 0) return C(ar / abs_br, ai / abs_br);  // a complex inf or nan
    const R ratio = bi / br, scale = R(1) / (br + bi * ratio);
    return C((ar + ai * ratio) * scale, (ai - ar * ratio) * scale);
  }
  const R ratio = br / bi, scale = R(1) / (bi + br * ratio);
  return C((ar * ratio + ai) * scale, (ai * ratio - ar) * scale);
}

template <class C>
CUPRIC_HD C complex_reciprocal(C a) {
  using R = typename C::value_type;
  const R ar = a.real(), ai = a.imag();
  if (std::fabs(ai) <= std::fabs(ar)) {
    const R ratio = ai / ar, d = ar + ai * ratio;
    return C(R(1) / d, -ratio / d);
  }
  const R ratio = ar / ai, d = ar * ratio + ai;
  return C(ratio / d, R(-1) / d);
}

/// a ** b: exact special cases for b == 0 and a == 0 (0 ** b is 0 when Re b > 0, else nan), repeated squaring for small
/// integer exponents (more accurate than exp(b log a)), the C library's cpow otherwise.
template <class C>
CUPRIC_HD C complex_power(C a, C b) {
  using R = typename C::value_type;
  const R br = b.real(), bi = b.imag();
  if (br == 0 && bi == 0) return C(1, 0);
  if (a.real() == 0 && a.imag() == 0) {
    if (br > 0) return C(0, 0);
    const R nan = std::numeric_limits<R>::quiet_NaN();  // 0 ** z is ill-defined otherwise
    return C(nan, nan);
  }
  if (bi == 0 && std::fabs(br) < 100 && br == std::trunc(br)) {
    const int n = static_cast<int>(br);
    if (n == 1) return a;
    if (n == 2) return complex_multiply(a, a);
    if (n == 3) return complex_multiply(a, complex_multiply(a, a));
    int m = n < 0 ? -n : n;
    C result(1, 0), square = a;
    while (true) {
      if (m & 1) result = complex_multiply(result, square);
      m >>= 1;
      if (!m) break;
      square = complex_multiply(square, square);
    }
    return n < 0 ? complex_divide(C(1, 0), result) : result;
  }
  return std::pow(a, b);
}

/// z / |z| (NumPy 2): a unit-modulus direction. One infinite part gives its axis (even beside a
/// nan, as |z| is inf then), two give nan, and so does a nan with a finite part.
template <class C>
CUPRIC_HD C complex_sign(C a) {
  using R = typename C::value_type;
  const R r = a.real(), i = a.imag();
  const R nan = std::numeric_limits<R>::quiet_NaN();
  if (std::isinf(r)) {
    if (std::isinf(i)) return C(nan, nan);
    return C(r > 0 ? R(1) : R(-1), R(0));
  }
  if (std::isinf(i)) return C(R(0), i > 0 ? R(1) : R(-1));
  if (r != r || i != i) return C(nan, nan);
  const R m = std::hypot(r, i);
  if (m == 0) return C(0, 0);
  return C(r / m, i / m);
}

}  // namespace cu
