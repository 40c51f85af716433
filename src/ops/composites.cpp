// composites.cpp — elementwise functions built from ufunc calls (cupric/elementwise.hpp). Each
// follows NumPy's own composition step by step, so dtypes and roundings come out the same.
#include <cmath>
#include <cstring>
#include <numbers>
#include <string_view>

#include "cupric/backend.hpp"
#include "cupric/elementwise.hpp"
#include "cupric/errors.hpp"
#include "cupric/ufunc.hpp"

namespace cupric {

namespace {
Array call(const char* ufunc, const std::vector<Array>& inputs, const Array& out = {}, const Array& where = {}) {
  UfuncOptions opt;
  opt.out = out;
  opt.where = where;
  return apply_ufunc(ufunc, inputs, opt);
}

Array weak_float(double v) { return scalar_array(Scalar::from_float(v)); }
Array weak_int(std::int64_t v) { return scalar_array(Scalar::from_int(v)); }

/// Scalar value of a weak Python number as a complex double (bool/int/float/complex).
std::complex<double> weak_value(const Array& a) {
  const Scalar s = scalar_of_weak(a);
  switch (s.kind) {
    case WeakKind::boolean: return s.b ? 1.0 : 0.0;
    case WeakKind::integer: return s.big_unsigned ? static_cast<double>(s.u) : static_cast<double>(s.i);
    case WeakKind::floating: return s.f;
    default: return s.c;
  }
}

Array copy_of(const Array& a) {
  Array c = Array::empty(a.shape(), a.dtype(), a.device());
  if (c.size()) backend_for(a.device()).cast(elementwise_plan({&a, &c}, a.shape()));
  return c;
}

/// One of the two float parts of a complex array, as a strided view sharing its storage.
Array complex_part(const Array& z, int part) {
  Strides s = z.strides();
  for (auto& v : s) v *= 2;
  Array v(z.storage(), z.shape(), s, z.offset() * 2 + part, real_dtype(z.dtype()));
  v.set_writeable(z.writeable());
  return v;
}

/// NumPy's isclose makes b inexact: Python ints become Python floats, arrays take
/// result_type(b, 1.0).
Array inexact_operand(const Array& b) {
  if (b.weak() == WeakKind::boolean || b.weak() == WeakKind::integer) return weak_float(weak_value(b).real());
  if (b.weak() != WeakKind::none) return b;
  const DType t = promote_weak(b.dtype(), WeakKind::floating);
  if (t == b.dtype()) return b;
  Array c = Array::empty(b.shape(), t, b.device());
  if (c.size()) backend_for(b.device()).cast(elementwise_plan({&b, &c}, b.shape()));
  return c;
}

/// atol + rtol * |y|; stays a weak Python float when all three are Python numbers, as in NumPy.
Array tolerance(const Array& y, const Array& rtol, const Array& atol) {
  if (y.weak() != WeakKind::none && rtol.weak() != WeakKind::none && atol.weak() != WeakKind::none &&
      rtol.weak() != WeakKind::complex && atol.weak() != WeakKind::complex)
    return weak_float(weak_value(atol).real() + weak_value(rtol).real() * std::abs(weak_value(y)));
  return call("add", {atol, call("multiply", {rtol, call("absolute", {y})})});
}

/// NumPy's power_of_ten (a table to 1e8, then repeated multiplication).
double power_of_ten(int n) {
  static const double table[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
  if (n < 9) return table[n];
  double r = 1e9;
  while (n-- > 9) r *= 10.;
  return r;
}

bool is_weak_int(const Array& a) { return a.weak() == WeakKind::integer; }

/// A Python-int bound that every value of the integer dtype t already satisfies.
bool bound_is_inactive(const Array& bound, DType t, bool lower) {
  if (!bound.defined() || !is_weak_int(bound) || !is_integer(t)) return false;
  const Scalar s = scalar_of_weak(bound);
  const IntInfo lim = iinfo(t);
  if (lower) return !s.big_unsigned && s.i <= lim.min;
  if (s.big_unsigned) return s.u >= lim.max;
  return s.i >= 0 && static_cast<std::uint64_t>(s.i) >= lim.max;
}
/// isfinite / isnan of an operand; a weak Python number's stays a weak bool (a ufunc over weak
/// operands alone would make its array on the default device, not beside the other operand's).
Array classify(const char* ufunc, const Array& v) {
  if (v.weak() == WeakKind::none) return call(ufunc, {v});
  const std::complex<double> z = weak_value(v);
  const bool nan = std::isnan(z.real()) || std::isnan(z.imag());
  const bool finite = std::isfinite(z.real()) && std::isfinite(z.imag());
  return scalar_array(Scalar::from_bool(std::string_view(ufunc) == "isnan" ? nan : finite));
}

}  // namespace

// ---- comparisons ---------------------------------------------------------------------------

Array isclose(const Array& a, const Array& b, const Array& rtol, const Array& atol, bool equal_nan) {
  const Array& x = a;
  const Array y = inexact_operand(b);
  Array close = call("less_equal", {call("absolute", {call("subtract", {x, y})}), tolerance(y, rtol, atol)});
  close = call("logical_or", {call("logical_and", {close, classify("isfinite", y)}), call("equal", {x, y})});
  if (equal_nan) close = call("logical_or", {close, call("logical_and", {classify("isnan", x), classify("isnan", y)})});
  return close;
}

Array isclose(const Array& a, const Array& b, double rtol, double atol, bool equal_nan) {
  return isclose(a, b, weak_float(rtol), weak_float(atol), equal_nan);
}

bool all_nonzero(const Array& a) {
  if (a.size() == 0) return true;
  Array mask = a;
  if (a.dtype() != DType::bool_ || !a.is_c_contiguous() || !a.device().is_cpu()) {
    Array dense = Array::empty(a.shape(), DType::bool_, a.device());
    backend_for(a.device()).cast(elementwise_plan({&a, &dense}, a.shape()));
    mask = dense;
    if (!a.device().is_cpu()) {
      mask = Array::empty(a.shape(), DType::bool_);
      backend_for(a.device()).copy_to_host(mask.data(), dense.data(), static_cast<std::size_t>(dense.nbytes()));
    }
  }
  const auto* p = static_cast<const unsigned char*>(mask.data());
  return std::memchr(p, 0, static_cast<std::size_t>(mask.size())) == nullptr;
}

bool allclose(const Array& a, const Array& b, const Array& rtol, const Array& atol, bool equal_nan) {
  return all_nonzero(isclose(a, b, rtol, atol, equal_nan));
}

bool array_equal(const Array& a, const Array& b, bool equal_nan) {
  if (a.shape() != b.shape()) return false;
  Array same = call("equal", {a, b});
  if (equal_nan) same = call("logical_or", {same, call("logical_and", {call("isnan", {a}), call("isnan", {b})})});
  return all_nonzero(same);
}

// ---- special values ---------------------------------------------------------------------------

Array nan_to_num(const Array& x_in, bool copy, double nan, std::optional<double> posinf, std::optional<double> neginf) {
  if (!copy && is_inexact(x_in.dtype())) x_in.check_writeable();
  Array x = copy ? copy_of(x_in) : x_in;
  if (!is_inexact(x.dtype())) return x;
  const FloatInfo limits = finfo(real_dtype(x.dtype()));
  const double values[3] = {nan, posinf.value_or(limits.max), neginf.value_or(limits.min)};
  std::vector<Array> parts;
  if (is_complex(x.dtype())) parts = {complex_part(x, 0), complex_part(x, 1)};
  else parts = {x};
  const double inf = std::numeric_limits<double>::infinity();
  for (const Array& d : parts) {
    // all three masks first, so that a replacement value is not replaced again
    const Array masks[3] = {call("isnan", {d}), call("equal", {d, weak_float(inf)}),
                            call("equal", {d, weak_float(-inf)})};
    for (int i = 0; i < 3; ++i)
      call("positive", {scalar_array(Scalar::from_float(values[i]), d.dtype(), d.device())}, d, masks[i]);
  }
  return x;
}

Array real(const Array& x) { return is_complex(x.dtype()) ? complex_part(x, 0) : x; }

Array imag(const Array& x) {
  if (is_complex(x.dtype())) return complex_part(x, 1);
  Array zeros = Array::empty(x.shape(), x.dtype(), x.device());
  const unsigned char zero[16] = {};
  if (zeros.size()) backend_for(x.device()).fill(zeros, zero);
  zeros.set_writeable(false);
  return zeros;
}

// ---- rounding and limits ---------------------------------------------------------------------

Array round(const Array& x, int decimals, const Array& out) {
  if (is_complex(x.dtype())) {  // as NumPy: each part rounds as a real array
    if (out.defined() && !is_complex(out.dtype()))
      throw TypeError(cat("round of a ", name(x.dtype()), " array needs a complex out=, got ", name(out.dtype())));
    Array result = out.defined() ? out : Array::empty(x.shape(), x.dtype(), x.device());
    for (int part = 0; part < 2; ++part) round(complex_part(x, part), decimals, complex_part(result, part));
    return result;
  }
  const bool integer = is_integer(x.dtype());
  if (integer && decimals >= 0) return out.defined() ? call("positive", {x}, out) : copy_of(x);
  if (decimals == 0) return call("rint", {x}, out);
  const char* scale_up = decimals > 0 ? "multiply" : "divide";
  const char* scale_down = decimals > 0 ? "divide" : "multiply";
  const Array f = weak_float(power_of_ten(decimals > 0 ? decimals : -decimals));
  // integers with decimals < 0 round in float64, then convert back
  Array tmp =
      integer || !out.defined() ? Array::empty(x.shape(), integer ? DType::float64 : x.dtype(), x.device()) : out;
  call(scale_up, {x, f}, tmp);
  call("rint", {tmp}, tmp);
  call(scale_down, {tmp, f}, tmp);
  if (!integer) return tmp;
  Array result = out.defined() ? out : Array::empty(x.shape(), x.dtype(), x.device());
  if (out.defined()) {
    out.check_writeable();
    if (broadcast_shapes(out.shape(), x.shape()) != out.shape())
      throw ValueError(cat("non-broadcastable output operand with shape ", shape_str(out.shape()),
                           " doesn't match the broadcast shape ", shape_str(x.shape())));
  }
  Array src = broadcast_to(tmp, result.shape());
  if (result.size()) backend_for(x.device()).cast(elementwise_plan({&src, &result}, result.shape()));
  return result;
}

Array clip(const Array& x, const Array& min_in, const Array& max_in, const Array& out) {
  const Array lo = bound_is_inactive(min_in, x.dtype(), true) ? Array() : min_in;
  const Array hi = bound_is_inactive(max_in, x.dtype(), false) ? Array() : max_in;
  if (!lo.defined() && !hi.defined()) return call("positive", {x}, out);
  if (!lo.defined()) return call("minimum", {x, hi}, out);
  if (!hi.defined()) return call("maximum", {x, lo}, out);
  return call("clip", {x, lo, hi}, out);
}

Array angle(const Array& z, bool deg) {
  Array a = is_complex(z.dtype()) ? call("arctan2", {complex_part(z, 1), complex_part(z, 0)})
                                  : call("arctan2", {weak_int(0), z});
  if (deg) call("multiply", {a, weak_float(180.0 / std::numbers::pi)}, a);
  return a;
}

}  // namespace cupric
