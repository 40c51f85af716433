// cupric/elementwise.hpp — elementwise functions that are not single rows of the ufunc table:
// compositions of ufunc calls with NumPy's semantics (isclose, nan_to_num, round, clip, ...).
#pragma once

#include <optional>

#include "cupric/array.hpp"

namespace cupric {

/// NumPy's isclose: |a - b| <= atol + rtol * |b| where b is finite, or a == b (so equal
/// infinities are close); NaNs are close to each other only with equal_nan. b is made inexact
/// first (integers compare as float64). rtol and atol may be weak scalars or arrays.
Array isclose(const Array& a, const Array& b, const Array& rtol, const Array& atol, bool equal_nan = false);
Array isclose(const Array& a, const Array& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
/// True when isclose holds everywhere (waits for the device).
bool allclose(const Array& a, const Array& b, const Array& rtol, const Array& atol, bool equal_nan = false);
/// True when the shapes are equal and so are all elements (NaN == NaN with equal_nan).
bool array_equal(const Array& a, const Array& b, bool equal_nan = false);
/// True when every element is nonzero (waits for the device).
bool all_nonzero(const Array& a);

/// NaN -> nan, +inf -> posinf (default: the dtype's max), -inf -> neginf (default: its min);
/// complex arrays have both parts replaced; integer and bool arrays are returned as they are.
/// copy=false works in place on x (which must be writeable) and returns it.
Array nan_to_num(const Array& x, bool copy = true, double nan = 0.0, std::optional<double> posinf = std::nullopt,
                 std::optional<double> neginf = std::nullopt);

/// The real part: a view for complex arrays (writes go to x), x itself for real ones.
Array real(const Array& x);
/// The imaginary part: a view for complex arrays; read-only zeros of x's dtype for real ones.
Array imag(const Array& x);

/// Round half to even at `decimals` digits (negative: left of the point), as NumPy's round:
/// x * 10^d, rint, / 10^d in x's dtype (integers with d < 0 through float64). Integers with
/// d >= 0 are copied unchanged; complex arrays round each part. `out`, when given, receives the result.
Array round(const Array& x, int decimals = 0, const Array& out = {});

/// NumPy's clip: min/max may be undefined (no bound); Python-int bounds beyond an integer
/// dtype's range are dropped (NEP 50 would make them overflow); no bounds = a copy.
Array clip(const Array& x, const Array& min, const Array& max, const Array& out = {});

/// The argument of complex numbers (atan2(imag, real)); for real x, atan2(0, x). In degrees with deg.
Array angle(const Array& z, bool deg = false);

}  // namespace cupric
