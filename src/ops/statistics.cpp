// statistics.cpp — mean, var, std and the nan* reductions, composed from the backend's sums
// and ufuncs the way NumPy composes them (two-pass variance; nan* forms mask NaN out through
// where=), so that dtypes and results follow NumPy's.
#include <algorithm>
#include <limits>

#include "cupric/errors.hpp"
#include "cupric/profiler.hpp"
#include "cupric/reduction.hpp"
#include "cupric/ufunc.hpp"
#include "reduction_internal.hpp"

namespace cupric {

namespace {
using namespace detail;

/// What mean/var accumulate in: dtype=, else float64 for integers and bool, float32 for
/// float16/bfloat16, else the input's dtype.
DType stat_dtype(DType in, std::optional<DType> dtype) {
  if (dtype) return *dtype;
  if (is_bool(in) || is_integer(in)) return DType::float64;
  if (is_narrow_float(in)) return DType::float32;
  return in;
}

/// The dtype mean returns (and var/std before taking the real part): float16 stays float16.
DType stat_result_dtype(DType in, std::optional<DType> dtype) {
  if (dtype) return *dtype;
  if (is_narrow_float(in)) return in;
  return stat_dtype(in, dtype);
}

/// s /= divisor, in s's dtype (unsafe casting, as NumPy's in-place true_divide).
void divide_in_place(const Array& s, const Array& divisor) {
  UfuncOptions opt;
  opt.out = s;
  opt.casting = Casting::unsafe;
  apply_ufunc("divide", {s, divisor}, opt);
}

/// The sum inside a statistic, recorded as the op `sum` (the profiler's table and cu.inspect
/// list it beside the statistic's elementwise ops).
Array inner_sum(const Array& a, const ReducePlan& p, DType acc, const Array& where) {
  profiler::OpScope profiled(profiler::OpModel::reduction, "sum", {&a});
  Array s = reduce_raw(ReduceOp::sum, a, p, acc, where, Scalar::from_int(0));
  profiled.output(s);
  return s;
}

/// Keep-shaped mean in dtype acc; the element counts go to *count (an array with where=).
Array mean_keep(const Array& a, const ReducePlan& p, DType acc, const Array& where, Array* count) {
  const Array s = inner_sum(a, p, acc, where);
  const Array n =
      where.defined() ? count_true(where, a.shape(), p, DType::float64) : weak_float(static_cast<double>(p.count));
  divide_in_place(s, n);
  if (count) *count = n;
  return s;
}

/// A strided view of the real (part 0) or imaginary (part 1) components of a complex array.
Array component_view(const Array& c, int part) {
  Strides strides;
  for (auto s : c.strides()) strides.push_back(2 * s);
  return Array(c.storage(), c.shape(), strides, 2 * c.offset() + part, real_dtype(c.dtype()));
}

/// Keep-shaped variance (two passes: mean, then the mean squared deviation).
Array var_keep(const Array& a, const ReducePlan& p, DType acc, const Array& where, double ddof) {
  Array count;
  const Array mean = mean_keep(a, p, acc, where, &count);
  const Array dev = apply_ufunc("subtract", {a, mean});
  auto square_in_place = [](const Array& x) {  // x *= x (in place, as NumPy: no second temporary)
    UfuncOptions opt;
    opt.out = x;
    apply_ufunc("multiply", {x, x}, opt);
  };
  Array sq = dev;
  if (is_complex(dev.dtype())) {  // |d|^2 = re^2 + im^2, computed in the real part's memory
    const Array re = component_view(dev, 0), im = component_view(dev, 1);
    square_in_place(re);
    square_in_place(im);
    UfuncOptions opt;
    opt.out = re;
    apply_ufunc("add", {re, im}, opt);
    sq = re;
  } else {
    square_in_place(dev);
  }
  const DType acc2 = is_complex(acc) ? real_dtype(acc) : acc;
  const Array s = inner_sum(sq, p, acc2, where);
  Array divisor;
  if (where.defined()) {
    divisor = apply_ufunc("maximum", {apply_ufunc("subtract", {count, weak_float(ddof)}), weak_float(0.0)});
  } else {
    divisor = weak_float(std::max(static_cast<double>(p.count) - ddof, 0.0));
  }
  divide_in_place(s, divisor);
  return s;
}

Array mean_impl(const Array& a, const ReduceOptions& o) {
  const ReducePlan p = plan_reduction(a, o.axis, o.keepdims);
  check_out(o.out, p.result_shape, a.device(), "mean");
  check_where(o.where, a);
  const Array r = mean_keep(a, p, stat_dtype(a.dtype(), o.dtype), o.where, nullptr);
  return deliver(r, p, o.keepdims, stat_result_dtype(a.dtype(), o.dtype), o.out);
}

Array var_impl(const Array& a, const ReduceOptions& o, double ddof, bool sqrt) {
  const ReducePlan p = plan_reduction(a, o.axis, o.keepdims);
  check_out(o.out, p.result_shape, a.device(), sqrt ? "std" : "var");
  check_where(o.where, a);
  const DType acc = stat_dtype(a.dtype(), o.dtype);
  const Array r = var_keep(a, p, acc, o.where, ddof);
  if (sqrt) {
    UfuncOptions opt;
    opt.out = r;
    opt.casting = Casting::unsafe;
    apply_ufunc("sqrt", {r}, opt);
  }
  DType result = stat_result_dtype(a.dtype(), o.dtype);
  if (!o.dtype) result = real_dtype(result);
  return deliver(r, p, o.keepdims, result, o.out);
}

/// The options with where= narrowed to the non-NaN elements.
ReduceOptions skipping_nan(const Array& a, const ReduceOptions& o) {
  check_where(o.where, a);
  ReduceOptions skip = o;
  skip.where = not_nan_mask(a, o.where);
  return skip;
}
}  // namespace

Array mean(const Array& a, const ReduceOptions& o) { return mean_impl(a, o); }
Array var(const Array& a, const ReduceOptions& o, double ddof) { return var_impl(a, o, ddof, false); }
Array stddev(const Array& a, const ReduceOptions& o, double ddof) { return var_impl(a, o, ddof, true); }

Array nansum(const Array& a, const ReduceOptions& o) {
  return is_inexact(a.dtype()) ? sum(a, skipping_nan(a, o)) : sum(a, o);
}
Array nanprod(const Array& a, const ReduceOptions& o) {
  return is_inexact(a.dtype()) ? prod(a, skipping_nan(a, o)) : prod(a, o);
}
Array nanmean(const Array& a, const ReduceOptions& o) {
  return is_inexact(a.dtype()) ? mean_impl(a, skipping_nan(a, o)) : mean_impl(a, o);
}
Array nanvar(const Array& a, const ReduceOptions& o, double ddof) {
  return var_impl(a, is_inexact(a.dtype()) ? skipping_nan(a, o) : o, ddof, false);
}
Array nanstddev(const Array& a, const ReduceOptions& o, double ddof) {
  return var_impl(a, is_inexact(a.dtype()) ? skipping_nan(a, o) : o, ddof, true);
}

namespace {
Array nan_arg_extreme(bool is_max, const Array& a, std::optional<int> axis, bool keepdims, const Array& out) {
  const auto arg = is_max ? &argmax : &argmin;
  if (!is_inexact(a.dtype())) return arg(a, axis, keepdims, out);
  const Array keep = not_nan_mask(a, {});
  ReduceOptions slices;
  if (axis) slices.axis = std::vector<int>{*axis};
  if (a.ndim() == 0) slices.axis.reset();
  const Array every_slice_has_a_number = all(any(keep, slices));
  bool ok = true;  // read on the host (the array may live on a device)
  backend_for(a.device()).copy_to_host(&ok, every_slice_has_a_number.data(), sizeof(bool));
  if (!ok) throw ValueError("All-NaN slice encountered");
  const double fill = is_max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  return arg(masked_input(a, keep, a.dtype(), Scalar::from_float(fill)), axis, keepdims, out);
}

Array nan_scan(bool is_sum, const Array& a, const ScanOptions& o) {
  const auto scan = is_sum ? &cumsum : &cumprod;
  if (!is_inexact(a.dtype())) return scan(a, o);
  return scan(masked_input(a, not_nan_mask(a, {}), a.dtype(), Scalar::from_int(is_sum ? 0 : 1)), o);
}
}  // namespace

Array nanargmin(const Array& a, std::optional<int> axis, bool keepdims, const Array& out) {
  return nan_arg_extreme(false, a, axis, keepdims, out);
}
Array nanargmax(const Array& a, std::optional<int> axis, bool keepdims, const Array& out) {
  return nan_arg_extreme(true, a, axis, keepdims, out);
}
Array nancumsum(const Array& a, const ScanOptions& o) { return nan_scan(true, a, o); }
Array nancumprod(const Array& a, const ScanOptions& o) { return nan_scan(false, a, o); }

}  // namespace cupric
