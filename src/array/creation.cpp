// creation.cpp — zeros, arange, eye and meshgrid: the creation functions that need only the
// backend's fill and arange (those composed from ufuncs, linspace/logspace and tri/tril/triu, are
// in src/ops). arange follows NumPy's algorithm step by step, so values match it bit for bit.
#include "cupric/creation.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "cupric/backend.hpp"
#include "cupric/errors.hpp"
#include "cupric/manipulation.hpp"

namespace cupric {

namespace {
bool is_integral(const Scalar& s) { return s.kind == WeakKind::integer || s.kind == WeakKind::boolean; }

double as_double(const Scalar& s) {
  switch (s.kind) {
    case WeakKind::boolean: return s.b ? 1.0 : 0.0;
    case WeakKind::integer:
      return s.beyond ? s.f : s.big_unsigned ? static_cast<double>(s.u) : static_cast<double>(s.i);
    case WeakKind::floating: return s.f;
    default: return s.c.real();
  }
}

/// An integer or boolean scalar's exact value (Python ints in [-2^63, 2^64); past those, only
/// a stop can be, and its nearest double is as exact as NumPy's own length computation).
__int128 as_int128(const Scalar& s) {
  if (s.kind == WeakKind::boolean) return s.b ? 1 : 0;
  if (s.beyond) return static_cast<__int128>(std::clamp(s.f, -0x1p100, 0x1p100));
  return s.big_unsigned ? static_cast<__int128>(s.u) : static_cast<__int128>(s.i);
}

/// The scalar of an exact integer: int64, else uint64, else (past both) the nearest double.
Scalar scalar_of_int128(__int128 v) {
  if (v >= std::numeric_limits<std::int64_t>::min() && v <= std::numeric_limits<std::int64_t>::max())
    return Scalar::from_int(static_cast<std::int64_t>(v));
  if (v > 0 && v <= static_cast<__int128>(std::numeric_limits<std::uint64_t>::max()))
    return Scalar::from_uint(static_cast<std::uint64_t>(v));
  return Scalar::from_float(static_cast<double>(v));
}

/// The value a scalar takes once stored as dtype t, read back as a double.
double stored_as(const Scalar& s, DType t) {
  alignas(16) unsigned char buf[16];
  s.store(t, buf);
  return visit_dtype(t, [&]<class T>() -> double {
    T v;
    std::memcpy(&v, buf, sizeof(T));
    if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
      return static_cast<double>(v.real());
    else if constexpr (is_narrow_float_v<T>) return static_cast<double>(static_cast<float>(v));
    else return static_cast<double>(v);
  });
}

/// The value a scalar takes once stored as the integer dtype t (OverflowError when it does not
/// fit, as NumPy), as 64 bits (sign-extended): arange's integer arithmetic is modulo 2^64.
std::uint64_t stored_bits(const Scalar& s, DType t) {
  alignas(16) unsigned char buf[16];
  s.store(t, buf);
  return visit_dtype(t, [&]<class T>() -> std::uint64_t {
    if constexpr (std::is_integral_v<T>) {
      T v;
      std::memcpy(&v, buf, sizeof(T));
      return static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
    } else {
      throw TypeError(cat("arange: ", name(t), " is not an integer dtype"));
    }
  });
}

std::int64_t arange_length(const Scalar& start, const Scalar& stop, const Scalar& step) {
  if (is_integral(start) && is_integral(stop) && is_integral(step)) {  // exact over int64 and uint64
    const __int128 span = as_int128(stop) - as_int128(start), st = as_int128(step);
    __int128 n = span / st;
    if (n * st != span && ((span > 0) == (st > 0))) ++n;  // ceil
    if (n > std::numeric_limits<std::int64_t>::max() / 16)
      throw ValueError(
          cat("Maximum allowed size exceeded: arange(", start.str(), ", ", stop.str(), ", ", step.str(), ")"));
    return n > 0 ? static_cast<std::int64_t>(n) : 0;
  }
  const double n = std::ceil((as_double(stop) - as_double(start)) / as_double(step));
  if (std::isnan(n)) throw ValueError("arange: cannot compute length");
  if (n > static_cast<double>(std::numeric_limits<std::int64_t>::max() / 16))
    throw ValueError(
        cat("Maximum allowed size exceeded: arange(", start.str(), ", ", stop.str(), ", ", step.str(), ")"));
  return n > 0 ? static_cast<std::int64_t>(n) : 0;
}

}  // namespace

Array zeros(const Shape& shape, DType t, Device device) {
  bool zeroed = false;
  Array out(Storage::allocate_for(shape, t, device, &zeroed), shape, c_strides(shape), 0, t);
  alignas(16) unsigned char zero[16] = {};
  if (!zeroed && out.size()) backend_for(device).fill(out, zero);
  return out;
}

Array arange(const Scalar& start_in, const std::optional<Scalar>& stop_in, const std::optional<Scalar>& step_in,
             std::optional<DType> dtype, Device device) {
  const Scalar start = stop_in ? start_in : Scalar::from_int(0);
  const Scalar stop = stop_in ? *stop_in : start_in;
  const Scalar step = step_in.value_or(Scalar::from_int(1));
  for (const Scalar* s : {&start, &stop, &step})
    if (s->kind == WeakKind::complex) throw NotImplementedError("arange with complex arguments is not supported");
  if (as_double(step) == 0) throw ZeroDivisionError("division by zero: arange's step is 0");
  const bool all_int = is_integral(start) && is_integral(stop) && is_integral(step);
  // NumPy: int64 promoted with each argument's own dtype; a Python int past int64 is uint64,
  // and int64 with uint64 is float64
  bool any_big = false;
  for (const Scalar* s : {&start, &stop, &step}) any_big = any_big || s->big_unsigned || s->beyond;
  const DType t = dtype.value_or(all_int && !any_big ? DType::int64 : DType::float64);
  const std::int64_t n = arange_length(start, stop, step);
  if (t == DType::bool_ && n > 2)
    throw TypeError("arange() is only supported for booleans when the result has at most length 2.");
  // NumPy stores the first two values in the result dtype (OverflowError when they do not fit)
  // and continues with their difference; start + step is exact for integer arguments
  const Scalar second = all_int ? scalar_of_int128(as_int128(start) + as_int128(step))
                                : Scalar::from_float(as_double(start) + as_double(step));
  Array out = Array::empty({n}, t, device);
  if (n == 0) return out;
  if (is_integer(t)) {
    const std::uint64_t first = stored_bits(start, t);
    const std::uint64_t delta = n > 1 ? stored_bits(second, t) - first : 0;
    backend_for(device).arange_integer(out, first, delta);
  } else {
    const double first = stored_as(start, t);
    const double delta = n > 1 ? stored_as(second, t) - first : 0.0;
    backend_for(device).arange(out, first, delta);
  }
  return out;
}

Array eye(std::int64_t n, std::optional<std::int64_t> m_in, std::int64_t k, DType dtype, Device device) {
  const std::int64_t m = m_in.value_or(n);
  Array out = zeros({n, m}, dtype, device);
  const std::int64_t len = k >= 0 ? std::min(n, m - k) : std::min(n + k, m);
  if (len <= 0) return out;
  const Array diagonal = out.view({len}, {m + 1}, k >= 0 ? k : -k * m);
  alignas(16) unsigned char one[16];
  Scalar::from_int(1).store(dtype, one);
  backend_for(device).fill(diagonal, one);
  return out;
}

std::vector<Array> meshgrid(const std::vector<Array>& xs, std::string_view indexing, bool sparse, bool copy) {
  if (indexing != "xy" && indexing != "ij") throw ValueError("Valid values for `indexing` are 'xy' and 'ij'.");
  const int nd = static_cast<int>(xs.size());
  std::vector<Array> out;
  for (int i = 0; i < nd; ++i) {
    Shape shape(nd, 1);
    int at = i;
    if (indexing == "xy" && nd > 1 && i < 2) at = 1 - i;  // Cartesian: x varies along columns
    shape[at] = -1;
    out.push_back(reshape(xs[i], shape));
  }
  if (!sparse) out = broadcast_arrays(out);
  if (copy)
    for (Array& a : out) a = reshape(a, a.shape(), 'C', true);
  return out;
}

}  // namespace cupric
