// sorting.cpp — sort, argsort, ndarray.sort and searchsorted: axis handling, dtype
// promotion and the checks NumPy makes; the backend sorts rows along the last axis and searches.
#include "cupric/sorting.hpp"

#include "cupric/backend.hpp"
#include "cupric/errors.hpp"
#include "cupric/profiler.hpp"
#include "cupric/indexing.hpp"
#include "cupric/manipulation.hpp"
#include "cupric/reduction.hpp"
#include "cupric/ufunc.hpp"

namespace cupric {

namespace {

/// Sorts (values and/or indices) along `axis` of `a`; returns {values, indices} in a's layout.
std::pair<Array, Array> sort_along(const Array& a, std::optional<int> axis, bool descending, bool want_values,
                                   bool want_indices) {
  profiler::OpScope profiled(profiler::OpModel::sort, want_values ? "sort" : "argsort", {&a});
  Array src = a;
  int ax = 0;
  if (!axis) {
    src = ravel(a);
  } else {
    ax = normalize_axis(*axis, a.ndim());  // a 0-d array has no axis -1 either: AxisError, as NumPy's
  }
  const int last = src.ndim() - 1;
  const Array moved = ax == last ? src : moveaxis(src, {ax}, {last});
  Array values = want_values ? Array::empty(moved.shape(), a.dtype(), a.device()) : Array();
  Array indices = want_indices ? Array::empty(moved.shape(), DType::int64, a.device()) : Array();
  if (moved.size()) backend_for(a.device()).sort(moved, values, indices, descending);
  auto back = [&](const Array& r) { return !r.defined() || ax == last ? r : moveaxis(r, {last}, {ax}); };
  std::pair<Array, Array> result{back(values), back(indices)};
  profiled.output(want_values ? result.first : result.second);
  return result;
}

/// `a` converted to `t` (itself when it has it already).
Array converted(const Array& a, DType t) {
  if (a.dtype() == t && a.weak() == WeakKind::none) return a;
  Array out = Array::empty(a.shape(), t, a.device());
  copy_into(out, a);
  return out;
}

/// The value of a 0-d int64 array, on the host.
std::int64_t host_int(const Array& a) {
  std::int64_t v = 0;
  backend_for(a.device()).copy_to_host(&v, a.data(), sizeof(v));
  return v;
}

void check_sorter(const Array& sorter, std::int64_t n) {
  if (sorter.ndim() != 1 || sorter.size() != n)
    throw ValueError(cat("sorter.size must equal a.size: sorter has shape ", shape_str(sorter.shape()), " and a has ",
                         n, " elements"));
  if (!is_integer(sorter.dtype()) || is_bool(sorter.dtype()))
    throw TypeError(cat("sorter must be an integer array, got ", name(sorter.dtype())));
  if (n == 0) return;
  const Array as64 = converted(sorter, DType::int64);
  const std::int64_t lo = host_int(min(as64)), hi = host_int(max(as64));
  if (lo < 0 || hi >= n)
    throw ValueError(cat("Sorter index out of range: indices must be in [0, ", n, "), got ", lo < 0 ? lo : hi));
}
}  // namespace

Array sort(const Array& a, std::optional<int> axis, bool descending) {
  return sort_along(a, axis, descending, true, false).first;
}

Array argsort(const Array& a, std::optional<int> axis, bool descending) {
  return sort_along(a, axis, descending, false, true).second;
}

void sort_in_place(const Array& a, int axis, bool descending) {
  a.check_writeable();
  const Array sorted = sort_along(a, axis, descending, true, false).first;
  copy_into(a, sorted);
}

Array searchsorted(const Array& sorted, const Array& v, bool right, const Array& sorter) {
  if (sorted.ndim() != 1)
    throw ValueError(
        cat("searchsorted: the sorted array must be 1-dimensional, got shape ", shape_str(sorted.shape())));
  const bool weak = v.weak() != WeakKind::none;  // a Python scalar: a host value, on no device
  if (!weak && !(sorted.device() == v.device()))
    throw ValueError(cat("searchsorted: the sorted array is on ", sorted.device().str(), " but the values are on ",
                         v.device().str(), "; move one with .to_device()"));
  const DType t = result_type({{sorted.dtype(), sorted.weak()}, {v.dtype(), v.weak()}});
  Array hay = converted(sorted, t);
  if (sorter.defined()) {
    check_sorter(sorter, sorted.size());
    hay = getitem(hay, {IndexItem::from_array(sorter)});
  }
  Array needles = converted(v, t);
  if (!(needles.device() == sorted.device())) {  // a weak scalar moves to the array's device
    Array moved = Array::empty(needles.shape(), t, sorted.device());
    backend_for(sorted.device())
        .copy_from_host(moved.data(), needles.data(), static_cast<std::size_t>(needles.nbytes()));
    needles = moved;
  }
  Array out = Array::empty(needles.shape(), DType::int64, sorted.device());
  if (out.size()) backend_for(sorted.device()).search_sorted(hay, needles, out, right);
  return out;
}

namespace {
/// The first k elements of the 1-d `a` as an array of their own (so a's spare room is freed).
Array first_k(const Array& a, std::int64_t k) {
  Array out = Array::empty({k}, a.dtype(), a.device());
  if (k) copy_into(out, a.view({k}, {1}, 0));
  return out;
}
}  // namespace

UniqueResult unique_flat(const Array& a, bool want_index, bool want_inverse, bool want_counts, bool equal_nan) {
  if (is_complex(a.dtype()))
    throw TypeError(
        cat("unique_flat takes real elements, got ", name(a.dtype()), " (complex unique composes in Python)"));
  const Device dev = a.device();
  const std::int64_t n = a.size();
  const Array flat = reshape(a, {n});
  const bool want_perm = want_index || want_inverse;
  UniqueResult r;
  Array sorted = Array::empty({n}, a.dtype(), dev);
  Array perm = want_perm ? Array::empty({n}, DType::int64, dev) : Array();
  Array values = Array::empty({n}, a.dtype(), dev);
  Array index = want_index ? Array::empty({n}, DType::int64, dev) : Array();
  Array ends = want_counts ? Array::empty({n + 1}, DType::int64, dev) : Array();
  if (want_inverse) r.inverse = Array::empty(a.shape(), DType::int64, dev);
  Backend& be = backend_for(dev);
  std::int64_t k = 0;
  if (n) {
    be.sort(flat, sorted, perm, false);
    k = be.unique_runs(sorted, perm, values, index, ends, r.inverse, equal_nan);
  }
  r.values = first_k(values, k);
  if (want_index) r.index = first_k(index, k);
  if (want_counts)
    r.counts = k ? apply_ufunc("subtract", {ends.view({k}, {1}, 1), ends.view({k}, {1}, 0)})
                 : Array::empty({0}, DType::int64, dev);
  return r;
}

Array select_ranks(const Array& a, const Array& ranks) {
  if (is_complex(a.dtype())) throw TypeError(cat("select_ranks takes real numbers, got ", name(a.dtype())));
  if (!is_integer(ranks.dtype()))
    throw TypeError(cat("select_ranks: ranks must be integers, got ", name(ranks.dtype())));
  const std::int64_t n = a.size();
  const Array flat = ascontiguous(reshape(a, {n}));
  const Array want = ascontiguous(converted(reshape(ranks, {ranks.size()}), DType::int64));
  std::vector<std::int64_t> host(static_cast<std::size_t>(want.size()));
  backend_for(want.device()).copy_to_host(host.data(), want.data(), host.size() * sizeof(std::int64_t));
  for (const std::int64_t r : host)
    if (r < 0 || r >= n) throw IndexError(cat("rank ", r, " is out of bounds for ", n, " elements"));
  profiler::OpScope profiled(profiler::OpModel::sort, "select_ranks", {&a});
  Array out = Array::empty({want.size()}, a.dtype(), a.device());
  backend_for(a.device()).select_ranks(flat, host, out);
  profiled.output(out);
  return out;
}

}  // namespace cupric
