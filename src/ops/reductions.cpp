// reductions.cpp — the reductions of the reduction table (sum, prod, min, max, any, all, ...),
// count_nonzero, argmin, argmax: axes, NumPy's accumulation dtypes, out=, where= and initial=,
// and the shared helpers of reduction_internal.hpp. The backend does the arithmetic; every check happens before it
// runs.
#include <algorithm>

#include "cupric/errors.hpp"
#include "cupric/profiler.hpp"
#include "cupric/reduction.hpp"
#include "cupric/ufunc.hpp"
#include "cupric/reduction_table.hpp"
#include "reduction_internal.hpp"

namespace cupric {

int normalize_axis(int axis, int ndim) {
  if (axis < -ndim || axis >= ndim)
    throw AxisError(cat("axis ", axis, " is out of bounds for array of dimension ", ndim));
  return axis < 0 ? axis + ndim : axis;
}

std::vector<int> normalize_axes(const Axes& axes, int ndim) {
  std::vector<int> out;
  if (!axes) {
    for (int d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  for (int a : *axes) out.push_back(normalize_axis(a, ndim));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) throw ValueError("duplicate value in 'axis'");
  return out;
}

DType sum_dtype(DType t) {
  if (is_bool(t) || (is_signed_integer(t) && itemsize(t) < 8)) return DType::int64;
  if (is_unsigned_integer(t) && itemsize(t) < 8) return DType::uint64;
  return t;
}

namespace detail {

ReducePlan plan_reduction(const Array& a, const Axes& axis, bool keepdims, bool ufunc_like) {
  ReducePlan p;
  const bool zero_d_quirk =
      ufunc_like && a.ndim() == 0 && axis && axis->size() == 1 && ((*axis)[0] == 0 || (*axis)[0] == -1);
  if (!zero_d_quirk) p.axes = normalize_axes(axis, a.ndim());
  p.keep_shape = a.shape();
  for (int d : p.axes) {
    p.count *= a.shape()[d];
    p.keep_shape[d] = 1;
  }
  for (int d = 0; d < a.ndim(); ++d) {
    const bool reduced = std::find(p.axes.begin(), p.axes.end(), d) != p.axes.end();
    if (!reduced) p.result_shape.push_back(a.shape()[d]);
    else if (keepdims) p.result_shape.push_back(1);
  }
  return p;
}

Array reshaped(const Array& contiguous, const Shape& shape) {
  return contiguous.view(shape, c_strides(shape), contiguous.offset());
}

Array ravel(const Array& a) {
  const Array c = astype(a, a.dtype());  // a itself when already contiguous
  return c.view({c.size()}, {1}, c.offset());
}

void copy_into(const Array& src, const Array& dst) {
  if (dst.size() == 0) return;
  backend_for(dst.device()).cast(elementwise_plan({&src, &dst}, dst.shape()));
}

Array astype(const Array& a, DType t) {
  if (a.dtype() == t && a.is_c_contiguous()) return a;
  Array out = Array::empty(a.shape(), t, a.device());
  copy_into(a, out);
  return out;
}

void check_out(const Array& out, const Shape& shape, Device device, std::string_view op) {
  if (!out.defined()) return;
  if (!(out.device() == device))
    throw ValueError(cat(op, ": out= is on ", out.device().str(), " but the input is on ", device.str()));
  if (out.ndim() != static_cast<int>(shape.size()))
    throw ValueError(cat("output parameter for reduction operation ", op, " has the wrong number of dimensions: Found ",
                         out.ndim(), " but expected ", shape.size()));
  if (out.shape() != shape)
    throw ValueError(cat("output parameter for reduction operation ", op, " has shape ", shape_str(out.shape()),
                         " but the result has shape ", shape_str(shape)));
  out.check_writeable();
}

Array deliver(const Array& r, const ReducePlan& plan, bool keepdims, DType dtype, const Array& out) {
  const Array v = keepdims ? r : reshaped(r, plan.result_shape);
  if (out.defined()) {
    copy_into(v, out);
    return out;
  }
  return astype(v, dtype);
}

void check_where(const Array& where, const Array& a) {
  if (!where.defined()) return;
  if (where.dtype() != DType::bool_)
    throw TypeError(cat("where= must be a bool array, got ", name(where.dtype()),
                        " (Cannot cast array data from dtype('", name(where.dtype()),
                        "') to dtype('bool') according to the rule 'safe')"));
  if (!(where.device() == a.device()))
    throw ValueError(cat("where= is on ", where.device().str(), " but the input is on ", a.device().str()));
  if (broadcast_shapes(a.shape(), where.shape()) != a.shape())
    throw ValueError(cat("where= of shape ", shape_str(where.shape()), " does not broadcast to the input's shape ",
                         shape_str(a.shape())));
}

Array masked_input(const Array& a, const Array& where, DType t, const Scalar& fill) {
  Array m = Array::empty(a.shape(), t, a.device());
  if (m.size() == 0) return m;
  alignas(16) unsigned char value[16];
  fill.store(t, value);
  backend_for(a.device()).fill(m, value);
  UfuncOptions opt;  // m = a where the mask holds (maximum(a, a) is a copy for every dtype)
  opt.out = m;
  opt.where = where;
  opt.casting = Casting::unsafe;
  apply_ufunc("maximum", {a, a}, opt);
  return m;
}

Array count_true(const Array& where, const Shape& shape, const ReducePlan& plan, DType t) {
  const Array mask = broadcast_to(where, shape);
  Array r = Array::empty(plan.keep_shape, t, where.device());
  backend_for(where.device()).reduce(ReduceOp::sum, mask, r, plan.axes);
  return r;
}

Array not_nan_mask(const Array& a, const Array& where) {
  Array keep = apply_ufunc("equal", {a, a});  // false exactly where a is NaN (either part if complex)
  if (where.defined()) keep = apply_ufunc("logical_and", {keep, where});
  return keep;
}

Array reduce_raw(ReduceOp op, const Array& a, const ReducePlan& plan, DType acc, const Array& where,
                 const Scalar& identity) {
  const Array src = where.defined() ? masked_input(a, where, acc, identity) : a;
  Array r = Array::empty(plan.keep_shape, acc, a.device());
  backend_for(a.device()).reduce(op, src, r, plan.axes);
  return r;
}

}  // namespace detail

namespace {
using namespace detail;

/// r = ufunc(r, initial), in r's dtype.
void combine_initial(const Array& r, const char* ufunc, const Scalar& initial) {
  if (initial.kind == WeakKind::complex && !is_complex(r.dtype()))
    throw TypeError(cat("initial=", initial.str(), " is complex but the reduction accumulates in ", name(r.dtype())));
  UfuncOptions opt;
  opt.out = r;
  opt.casting = Casting::unsafe;
  apply_ufunc(ufunc, {r, scalar_array(initial, r.dtype(), r.device())}, opt);
}

/// The accumulation dtype: bool for logical rows; else dtype=, else promoted with out=, else the
/// row's result dtype (NumPy's sum dtype for sums and products, the input's for extremes).
DType accumulate_dtype(const ReductionRow& row, const Array& a, const ReduceOptions& o) {
  if (row.acc == AccRule::boolean) return DType::bool_;
  if (o.dtype) return *o.dtype;
  if (o.out.defined()) return promote_types(a.dtype(), o.out.dtype());
  return reduction_result_dtype(row, a.dtype());
}

/// Rows with an identity (sum, prod, any, all): `initial` is combined through the row's ufunc.
Array reduce_with_identity(const ReductionRow& row, const Array& a, const ReduceOptions& o) {
  const DType acc = accumulate_dtype(row, a, o);
  const ReducePlan p = plan_reduction(a, o.axis, o.keepdims, true);
  check_out(o.out, p.result_shape, a.device(), row.ufunc);
  check_where(o.where, a);
  const Array r = reduce_raw(row.op, a, p, acc, o.where, empty_value(row));
  if (o.initial) combine_initial(r, row.ufunc, *o.initial);
  return deliver(r, p, o.keepdims, acc, o.out);
}

/// Rows without one (min, max, fmin, fmax): an empty reduction or a where= mask needs `initial`.
Array reduce_extreme(const ReductionRow& row, const Array& a, const ReduceOptions& o) {
  const char* ufunc = row.ufunc;
  const ReducePlan p = plan_reduction(a, o.axis, o.keepdims, true);
  check_out(o.out, p.result_shape, a.device(), ufunc);
  check_where(o.where, a);
  if (o.where.defined() && !o.initial)
    throw ValueError(cat("reduction operation '", ufunc,
                         "' does not have an identity, so to use a where mask one has to specify 'initial'"));
  if (p.count == 0 && !o.initial)
    throw ZeroSizeError(cat("zero-size array to reduction operation ", ufunc, " which has no identity"));
  const DType acc = accumulate_dtype(row, a, o);
  if (o.initial && o.initial->kind == WeakKind::complex && !is_complex(acc))
    throw TypeError(cat("initial=", o.initial->str(), " is complex but the reduction runs in ", name(acc)));
  Array r;
  if (p.count == 0) {
    r = Array::empty(p.keep_shape, acc, a.device());
    alignas(16) unsigned char value[16];
    o.initial->store(acc, value);
    if (r.size()) backend_for(a.device()).fill(r, value);
  } else {
    r = reduce_raw(row.op, a, p, acc, o.where, o.initial.value_or(Scalar{}));
    if (o.initial) combine_initial(r, ufunc, *o.initial);
  }
  return deliver(r, p, o.keepdims, acc, o.out);
}

Array arg_extreme(ArgReduceOp op, const char* what, const Array& a, std::optional<int> axis, bool keepdims,
                  const Array& out) {
  Array src = a;
  int ax = 0;
  Shape result_shape;
  if (!axis || a.ndim() == 0) {
    if (axis && *axis != 0 && *axis != -1) normalize_axis(*axis, 0);  // throws AxisError
    src = ravel(a);
    if (keepdims) result_shape.assign(a.ndim(), 1);
  } else {
    ax = normalize_axis(*axis, a.ndim());
    result_shape = a.shape();
    if (keepdims) result_shape[ax] = 1;
    else result_shape.erase(result_shape.begin() + ax);
  }
  if (src.shape()[ax] == 0) throw ValueError(cat("attempt to get ", what, " of an empty sequence"));
  if (out.defined()) {
    if (!is_integer(out.dtype()))
      throw TypeError(cat(what, ": out= must have an integer dtype, got ", name(out.dtype()),
                          " (Cannot cast array data from dtype('int64') to dtype('", name(out.dtype()), "'))"));
    if (out.shape() != result_shape)
      throw ValueError(cat(what, ": out= has shape ", shape_str(out.shape()), " but the result has shape ",
                           shape_str(result_shape)));
    if (!(out.device() == a.device()))
      throw ValueError(cat(what, ": out= is on ", out.device().str(), " but the input is on ", a.device().str()));
    out.check_writeable();
  }
  Shape keep = src.shape();
  keep[ax] = 1;
  const Array r = Array::empty(keep, DType::int64, a.device());
  backend_for(a.device()).arg_reduce(op, src, r, ax);
  const Array v = reshaped(r, result_shape);
  if (!out.defined()) return v;
  copy_into(v, out);
  return out;
}
}  // namespace

Array reduce(ReduceOp op, const Array& a, const ReduceOptions& o) {
  const ReductionRow& row = reduction_row(op);
  const bool has_identity = row.identity == cu::Identity::zero || row.identity == cu::Identity::one;
  profiler::OpScope profiled(profiler::OpModel::reduction, row.name, {&a});
  Array r = has_identity ? reduce_with_identity(row, a, o) : reduce_extreme(row, a, o);
  profiled.output(r);
  return r;
}

Array sum(const Array& a, const ReduceOptions& o) { return reduce(ReduceOp::sum, a, o); }
Array prod(const Array& a, const ReduceOptions& o) { return reduce(ReduceOp::prod, a, o); }

Array any(const Array& a, const ReduceOptions& o) {
  if (o.initial) throw TypeError("any() got an unexpected keyword argument 'initial'");
  return reduce(ReduceOp::any, a, o);
}

Array all(const Array& a, const ReduceOptions& o) {
  if (o.initial) throw TypeError("all() got an unexpected keyword argument 'initial'");
  return reduce(ReduceOp::all, a, o);
}

Array min(const Array& a, const ReduceOptions& o) { return reduce(ReduceOp::min, a, o); }
Array max(const Array& a, const ReduceOptions& o) { return reduce(ReduceOp::max, a, o); }

Array nanmin(const Array& a, const ReduceOptions& o) {
  return is_inexact(a.dtype()) ? reduce(ReduceOp::fmin, a, o) : min(a, o);
}
Array nanmax(const Array& a, const ReduceOptions& o) {
  return is_inexact(a.dtype()) ? reduce(ReduceOp::fmax, a, o) : max(a, o);
}

Array count_nonzero(const Array& a, const Axes& axis, bool keepdims) {
  const ReducePlan p = plan_reduction(a, axis, keepdims);
  const Array nonzero = astype(a, DType::bool_);
  const Array r = Array::empty(p.keep_shape, DType::int64, a.device());
  backend_for(a.device()).reduce(ReduceOp::sum, nonzero, r, p.axes);
  return deliver(r, p, keepdims, DType::int64, {});
}

Array argmin(const Array& a, std::optional<int> axis, bool keepdims, const Array& out) {
  profiler::OpScope profiled(profiler::OpModel::reduction, "argmin", {&a});
  Array r = arg_extreme(ArgReduceOp::argmin, "argmin", a, axis, keepdims, out);
  profiled.output(r);
  return r;
}
Array argmax(const Array& a, std::optional<int> axis, bool keepdims, const Array& out) {
  profiler::OpScope profiled(profiler::OpModel::reduction, "argmax", {&a});
  Array r = arg_extreme(ArgReduceOp::argmax, "argmax", a, axis, keepdims, out);
  profiled.output(r);
  return r;
}

}  // namespace cupric
