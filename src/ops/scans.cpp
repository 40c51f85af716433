// scans.cpp — cumsum, cumprod (NumPy) and cumulative_sum, cumulative_prod (Array API 2024.12):
// axis handling, accumulation dtypes, include_initial and out=; the backend runs the scan.
#include "cupric/errors.hpp"
#include "cupric/profiler.hpp"
#include "cupric/reduction.hpp"
#include "cupric/reduction_table.hpp"
#include "reduction_internal.hpp"

namespace cupric {

namespace {
using namespace detail;

Array scan_impl(ScanOp op, const char* what, const Array& a, const ScanOptions& o, bool array_api) {
  if (array_api && !o.axis && a.ndim() > 1)
    throw ValueError("For arrays which have more than one dimension ``axis`` argument is required.");
  profiler::OpScope profiled(profiler::OpModel::scan, what, {&a});
  Array src = a;
  int ax = 0;
  if (!o.axis || a.ndim() == 0) {
    if (o.axis && *o.axis != 0 && *o.axis != -1) normalize_axis(*o.axis, 0);  // throws AxisError
    src = ravel(a);
  } else {
    ax = normalize_axis(*o.axis, a.ndim());
  }
  DType acc = sum_dtype(a.dtype());
  if (o.dtype) acc = *o.dtype;
  else if (o.out.defined()) acc = promote_types(a.dtype(), o.out.dtype());

  Shape shape = src.shape();
  if (o.include_initial) shape[ax] += 1;
  if (o.out.defined()) {
    if (!(o.out.device() == a.device()))
      throw ValueError(cat(what, ": out= is on ", o.out.device().str(), " but the input is on ", a.device().str()));
    if (o.out.shape() != shape)
      throw ValueError(
          cat(what, ": out= has shape ", shape_str(o.out.shape()), " but the result has shape ", shape_str(shape)));
    o.out.check_writeable();
  }

  Array r = Array::empty(shape, acc, a.device());
  Array body = r;
  if (o.include_initial) {  // the first slice along the axis holds the identity
    Shape first_shape = shape;
    first_shape[ax] = 1;
    const Array first = r.view(first_shape, r.strides(), r.offset());
    alignas(16) unsigned char value[16];
    empty_value(reduction_row(scan_row(op).reduction)).store(acc, value);
    if (first.size()) backend_for(a.device()).fill(first, value);
    body = r.view(src.shape(), r.strides(), r.offset() + r.strides()[ax]);
  }
  if (src.size()) backend_for(a.device()).scan(op, src, body, ax);
  if (!o.out.defined()) {
    profiled.output(r);
    return r;
  }
  copy_into(r, o.out);
  profiled.output(o.out);
  return o.out;
}
}  // namespace

Array cumsum(const Array& a, const ScanOptions& o) { return scan_impl(ScanOp::cumsum, "cumsum", a, o, false); }
Array cumprod(const Array& a, const ScanOptions& o) { return scan_impl(ScanOp::cumprod, "cumprod", a, o, false); }
Array cumulative_sum(const Array& a, const ScanOptions& o) {
  return scan_impl(ScanOp::cumsum, "cumulative_sum", a, o, true);
}
Array cumulative_prod(const Array& a, const ScanOptions& o) {
  return scan_impl(ScanOp::cumprod, "cumulative_prod", a, o, true);
}

}  // namespace cupric
