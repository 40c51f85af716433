// linspace.cpp — linspace and logspace (cupric/creation.hpp): ufunc compositions over an arange,
// following NumPy's algorithm step by step (steps, denormal steps, the exact endpoint, integer
// floors) so that samples match it bit for bit where NumPy's own arithmetic allows.
#include <algorithm>
#include <cstring>
#include <limits>

#include "cupric/backend.hpp"
#include "cupric/creation.hpp"
#include "cupric/errors.hpp"
#include "cupric/indexing.hpp"
#include "cupric/manipulation.hpp"
#include "cupric/ufunc.hpp"

namespace cupric {

namespace {
Array cast_to(const Array& a, DType t) {
  if (a.dtype() == t) return a;
  Array out = Array::empty(a.shape(), t, a.device());
  if (out.size()) backend_for(a.device()).cast(elementwise_plan({&a, &out}, a.shape()));
  return out;
}

Array weak_int(std::int64_t v) { return scalar_array(Scalar::from_int(v)); }

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

}  // namespace cupric
