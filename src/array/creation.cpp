// creation.cpp — arange, linspace/logspace, eye/tri/tril/triu and meshgrid, composed from
// the backend's fill and arange and from ufuncs, following NumPy's algorithms step by step so
// that results match it bit for bit where NumPy's own arithmetic allows.
#include "cupric/creation.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "cupric/backend.hpp"
#include "cupric/errors.hpp"
#include "cupric/indexing.hpp"
#include "cupric/manipulation.hpp"
#include "cupric/ufunc.hpp"

namespace cupric {

namespace {
bool is_integral(const Scalar& s) { return s.kind == WeakKind::integer || s.kind == WeakKind::boolean; }

double as_double(const Scalar& s) {
  switch (s.kind) {
    case WeakKind::boolean:
      return s.b ? 1.0 : 0.0;
    case WeakKind::integer:
      return s.beyond ? s.f : s.big_unsigned ? static_cast<double>(s.u) : static_cast<double>(s.i);
    case WeakKind::floating:
      return s.f;
    default:
      return s.c.real();
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
    else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>)
      return static_cast<double>(static_cast<float>(v));
    else
      return static_cast<double>(v);
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

Array cast_to(const Array& a, DType t) {
  if (a.dtype() == t) return a;
  Array out = Array::empty(a.shape(), t, a.device());
  if (out.size()) backend_for(a.device()).cast(elementwise_plan({&a, &out}, a.shape()));
  return out;
}

Array weak_int(std::int64_t v) { return scalar_array(Scalar::from_int(v)); }
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

namespace {
/// NumPy's "ensure inexact" result type of start and stop: integers and bools become float64.
DType linspace_dtype(const Array& start, const Array& stop) {
  return result_type(
      {{start.dtype(), start.weak()}, {stop.dtype(), stop.weak()}, {DType::float64, WeakKind::floating}});
}

/// `a` on `device` (weak Python scalars stay as they are: every ufunc takes them).
Array on_device(const Array& a, Device device) {
  if (a.weak() != WeakKind::none || a.device() == device) return a;
  Array src = a;
  if (!a.device().is_cpu()) {  // through the host
    src = Array::empty(a.shape(), a.dtype(), Device::cpu());
    Array dense = Array::empty(a.shape(), a.dtype(), a.device());
    if (a.size()) backend_for(a.device()).cast(elementwise_plan({&a, &dense}, a.shape()));
    backend_for(a.device()).copy_to_host(src.data(), dense.data(), static_cast<std::size_t>(dense.nbytes()));
  } else if (!a.is_c_contiguous()) {
    src = Array::empty(a.shape(), a.dtype(), Device::cpu());
    if (a.size()) backend_for(a.device()).cast(elementwise_plan({&a, &src}, a.shape()));
  }
  Array out = Array::empty(a.shape(), a.dtype(), device);
  if (device.is_cpu()) std::memcpy(out.data(), src.data(), static_cast<std::size_t>(src.nbytes()));
  else backend_for(device).copy_from_host(out.data(), src.data(), static_cast<std::size_t>(src.nbytes()));
  return out;
}

bool any_zero(const Array& a) {
  const Array is_zero = apply_ufunc("equal", {a, weak_int(0)});
  return nonzero(reshape(is_zero, {-1})).front().size() > 0;
}
}  // namespace

Array linspace(const Array& start_in, const Array& stop_in, std::int64_t num, bool endpoint, std::optional<DType> dtype,
               std::int64_t axis, Device device, Array* step_out) {
  const Array start = on_device(start_in, device), stop = on_device(stop_in, device);
  if (num < 0) throw ValueError(cat("Number of samples, ", num, ", must be non-negative."));
  const std::int64_t div = endpoint ? num - 1 : num;
  const DType dt = linspace_dtype(start, stop);
  Shape result{num};  // checked before any work (moving the samples' axis changes no size)
  for (auto d : broadcast_shapes(start.shape(), stop.shape())) result.push_back(d);
  check_shape(result, std::max(itemsize(dt), itemsize(dtype.value_or(dt))));
  UfuncOptions in_dt;
  in_dt.dtype = dt;
  const Array delta = on_device(apply_ufunc("subtract", {stop, start}, in_dt), device);
  Shape column(delta.ndim() + 1, 1);
  column[0] = -1;
  Array y = reshape(arange(Scalar::from_int(0), Scalar::from_int(num), std::nullopt, dt, device), column);
  Array step;
  if (div > 0) {
    step = apply_ufunc("divide", {delta, weak_int(div)});
    if (any_zero(step)) {  // denormal steps: divide first (NumPy gh-5437)
      y = apply_ufunc("multiply", {apply_ufunc("divide", {y, weak_int(div)}), delta});
    } else {
      y = apply_ufunc("multiply", {y, step});
    }
  } else {
    step = scalar_array(Scalar::from_float(std::numeric_limits<double>::quiet_NaN()), DType::float64);
    y = apply_ufunc("multiply", {y, delta});
  }
  UfuncOptions into_y;
  into_y.out = y;
  apply_ufunc("add", {y, start}, into_y);
  if (endpoint && num > 1) setitem(y, {IndexItem::from_int(-1), IndexItem::ellipsis()}, stop);
  if (axis != 0) y = moveaxis(y, {0}, {axis});
  if (dtype && is_integer(*dtype)) {
    UfuncOptions in_place;
    in_place.out = y;
    apply_ufunc("floor", {y}, in_place);
  }
  if (step_out) *step_out = step;
  return cast_to(y, dtype.value_or(dt));
}

namespace {
/// NumPy's np.array(a, ndmin=nd): a strong array (weak scalars take their default dtype) with
/// leading length-1 axes up to nd.
Array strong_with_ndim(const Array& a, int nd) {
  Array s = a.weak() != WeakKind::none ? scalar_array(scalar_of_weak(a), a.dtype(), a.device()) : a;
  Shape padded(std::max(0, nd - s.ndim()), 1);
  padded.insert(padded.end(), s.shape().begin(), s.shape().end());
  return reshape(s, padded);
}
}  // namespace

Array logspace(const Array& start_in, const Array& stop_in, std::int64_t num, bool endpoint, const Array& base_in,
               std::optional<DType> dtype, std::int64_t axis, Device device) {
  Array base = base_in.defined() ? base_in : scalar_array(Scalar::from_float(10.0));
  Array start = start_in, stop = stop_in;
  if (base.ndim() > 0) {  // NumPy: an array base broadcasts against the samples' axis too
    const int ndmax = static_cast<int>(broadcast_shapes({start.shape(), stop.shape(), base.shape()}).size());
    start = strong_with_ndim(start, ndmax);
    stop = strong_with_ndim(stop, ndmax);
    base = expand_dims(strong_with_ndim(base, ndmax), {axis});
  }
  const Array y = linspace(start, stop, num, endpoint, std::nullopt, axis, device);
  const Array out = apply_ufunc("power", {on_device(base, device), y});
  return dtype ? cast_to(out, *dtype) : out;
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

namespace {
/// A diagonal offset k of an n x m matrix moved into [-n, m]: past either end the diagonal
/// misses every element just the same, and -k, m - k and k - 1 cannot overflow any more.
std::int64_t clamp_diagonal(std::int64_t k, std::int64_t n, std::int64_t m) { return std::clamp(k, -n, m); }
}  // namespace

Array tri(std::int64_t n, std::optional<std::int64_t> m_in, std::int64_t k_in, DType dtype, Device device) {
  const std::int64_t m = m_in.value_or(n);
  // the result first: its size is checked (negative extents too) and its memory had before any work
  UfuncOptions into_result;
  into_result.out = Array::empty({n, m}, dtype, device);
  if (into_result.out.size() == 0) return into_result.out;
  const std::int64_t k = clamp_diagonal(k_in, n, m);
  // NumPy: greater_equal.outer(arange(N), arange(-k, M - k))
  const Array rows = reshape(arange(Scalar::from_int(n), std::nullopt, std::nullopt, DType::int64, device), {n, 1});
  const Array cols = arange(Scalar::from_int(-k), Scalar::from_int(m - k), std::nullopt, DType::int64, device);
  return apply_ufunc("greater_equal", {rows, cols}, into_result);
}

namespace {
/// tri of the matrix shape of `a` (its last two axes; a 1-d array counts as square) at diagonal
/// k + shift, k clamped first so that the shift cannot overflow.
Array tri_mask(const Array& a, std::int64_t k, int shift, const char* what) {
  if (a.ndim() == 0) throw ValueError(cat(what, ": input must be at least 1-d, got a 0-d array"));
  const std::int64_t cols = a.shape().back();
  const std::int64_t rows = a.ndim() >= 2 ? a.shape()[a.ndim() - 2] : cols;
  return tri(rows, cols, clamp_diagonal(k, rows, cols) + shift, DType::bool_, a.device());
}
}  // namespace

Array tril(const Array& a, std::int64_t k) {
  return where(tri_mask(a, k, 0, "tril"), a, scalar_array(Scalar::from_int(0), a.dtype(), a.device()));
}

Array triu(const Array& a, std::int64_t k) {
  return where(tri_mask(a, k, -1, "triu"), scalar_array(Scalar::from_int(0), a.dtype(), a.device()), a);
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
