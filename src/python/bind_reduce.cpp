// bind_reduce.cpp — the reductions and scans as module functions (cu.sum, cu.argmax,
// cu.cumulative_sum, ...) with NumPy's signatures, and as ndarray methods (x.sum(), ...).
// Only argument conversion lives here; the semantics are in src/ops/{reductions,statistics,scans}.cpp.
#include <nanobind/stl/string.h>

#include "convert.hpp"
#include "py_types.hpp"
#include "cupric/errors.hpp"
#include "cupric/reduction.hpp"
#include "cupric/reduction_table.hpp"

namespace cupric::py {

/// The Python result: the out= object itself when one was given.
NdarrayResult result_to_py(const Array& r, nb::handle out) {
  if (!out.is_none()) return nb::borrow<NdarrayResult>(PyTuple_Check(out.ptr()) ? nb::borrow<nb::tuple>(out)[0] : out);
  return nb::borrow<NdarrayResult>(nb::cast(r));
}

namespace {
/// An integer argument as Python's operator.index() reads it (bool and float are refused).
int int_from_py(nb::handle obj) {
  if (PyBool_Check(obj.ptr()) || !PyIndex_Check(obj.ptr()))
    throw TypeError(cat("'", nb::cast<std::string>(nb::str(nb::type_name(obj.type()))),
                        "' object cannot be interpreted as an integer"));
  nb::object index = nb::steal(PyNumber_Index(obj.ptr()));
  if (!index.is_valid()) throw nb::python_error();
  const long long v = PyLong_AsLongLong(index.ptr());
  if (PyErr_Occurred()) throw nb::python_error();
  if (v < -(1LL << 30) || v > (1LL << 30)) throw AxisError(cat("axis ", v, " is out of bounds"));
  return static_cast<int>(v);
}

Axes axes_from_py(nb::handle axis) {
  if (axis.is_none()) return std::nullopt;
  std::vector<int> axes;
  if (PyTuple_Check(axis.ptr()) || PyList_Check(axis.ptr())) {
    for (nb::handle item : axis) axes.push_back(int_from_py(item));
  } else {
    axes.push_back(int_from_py(axis));
  }
  return axes;
}

std::optional<int> single_axis_from_py(nb::handle axis) {
  if (axis.is_none()) return std::nullopt;
  return int_from_py(axis);
}

/// A flag as Python's truth value (NumPy accepts np.True_, 1, ...).
bool truthy(nb::handle flag) {
  const int v = PyObject_IsTrue(flag.ptr());
  if (v < 0) throw nb::python_error();
  return v != 0;
}

/// out= may be an array, a 1-tuple holding one, or None.
Array out_from_py(nb::handle out) {
  if (out.is_none()) return {};
  if (PyTuple_Check(out.ptr()) && nb::len(out) == 1) return out_from_py(nb::borrow<nb::tuple>(out)[0]);
  if (!nb::isinstance<Array>(out))
    throw TypeError(
        cat("out= must be a cupric array, got ", nb::cast<std::string>(nb::str(nb::type_name(out.type())))));
  return nb::cast<Array>(out);
}

/// initial=: a Python or NumPy scalar (None: not given).
std::optional<Scalar> initial_from_py(nb::handle initial) {
  if (initial.is_none()) return std::nullopt;
  if (is_python_scalar(initial)) return scalar_from_py(initial);
  if (PyIndex_Check(initial.ptr())) return scalar_from_py(nb::steal(PyNumber_Index(initial.ptr())));
  const Array a = array_from_py(initial);
  if (a.ndim() != 0) throw TypeError(cat("initial= must be a scalar, got an array of shape ", shape_str(a.shape())));
  return scalar_from_py(nb::module_::import_("builtins").attr(is_complex(a.dtype()) ? "complex" : "float")(initial));
}

struct Common {
  Array a;
  ReduceOptions options;
};

/// Converts the arguments every reduction shares.
Common common_from_py(nb::handle a, nb::handle axis, nb::handle out, nb::handle keepdims, nb::handle where) {
  Common c;
  c.a = array_from_py(a);
  c.options.axis = axes_from_py(axis);
  c.options.out = out_from_py(out);
  c.options.keepdims = truthy(keepdims);
  if (!where.is_none() && !(PyBool_Check(where.ptr()) && where.ptr() == Py_True))
    c.options.where = array_from_py(where, std::nullopt, c.a.device());
  return c;
}

double ddof_from_py(nb::handle ddof, nb::handle correction) {
  if (!correction.is_none()) {
    if (!ddof.is_none() && float_from_py(ddof, "ddof") != 0)
      throw ValueError("ddof and correction can't be provided simultaneously.");
    return float_from_py(correction, "correction");
  }
  return ddof.is_none() ? 0.0 : float_from_py(ddof, "ddof");
}

using WithDtype = Array (*)(const Array&, const ReduceOptions&);
using WithDdof = Array (*)(const Array&, const ReduceOptions&, double);
using Scan = Array (*)(const Array&, const ScanOptions&);

/// Registers fn as cu.<name>(first, ...) and, when `method`, as ndarray.<name>(...) (self first).
template <class F, class... Extra>
void def_both(nb::module_& m, const char* name, const char* first, bool method, F fn, const Extra&... extra) {
  m.def(name, fn, nb::arg(first), extra...);
  if (method) def_method(ndarray_type(), name, fn, extra...);
}

void bind_sums(nb::module_& m) {
  // sum, prod, nansum, nanprod: (a, axis, dtype, out, keepdims, initial, where)
  struct Entry {
    const char* name;
    WithDtype fn;
    bool method;
  };
  for (const Entry& e : {Entry{"sum", &sum, true}, Entry{"prod", &prod, true}, Entry{"nansum", &nansum, false},
                         Entry{"nanprod", &nanprod, false}}) {
    const WithDtype fn = e.fn;
    def_both(
        m, e.name, "a", e.method,
        [fn](ArrayLike a, AxisLike axis, DTypeLike dtype, OutArray out, BoolLike keepdims, ScalarLike initial,
             ArrayLike where) {
          Common c = common_from_py(a, axis, out, keepdims, where);
          c.options.dtype = optional_dtype(dtype);
          c.options.initial = initial_from_py(initial);
          return result_to_py(fn(c.a, c.options), out);
        },
        nb::arg("axis") = nb::none(), nb::arg("dtype") = nb::none(), nb::arg("out") = nb::none(),
        nb::arg("keepdims") = false, nb::arg("initial") = nb::none(), nb::arg("where") = nb::none());
  }
  // min, max, nanmin, nanmax: (a, axis, out, keepdims, initial, where)
  for (const Entry& e :
       {Entry{"min", &min, true}, Entry{"max", &max, true}, Entry{"amin", &min, false}, Entry{"amax", &max, false},
        Entry{"nanmin", &nanmin, false}, Entry{"nanmax", &nanmax, false}}) {
    const WithDtype fn = e.fn;
    def_both(
        m, e.name, "a", e.method,
        [fn](ArrayLike a, AxisLike axis, OutArray out, BoolLike keepdims, ScalarLike initial, ArrayLike where) {
          Common c = common_from_py(a, axis, out, keepdims, where);
          c.options.initial = initial_from_py(initial);
          return result_to_py(fn(c.a, c.options), out);
        },
        nb::arg("axis") = nb::none(), nb::arg("out") = nb::none(), nb::arg("keepdims") = false,
        nb::arg("initial") = nb::none(), nb::arg("where") = nb::none());
  }
  // any, all: (a, axis, out, keepdims, *, where)
  for (const Entry& e : {Entry{"any", &any, true}, Entry{"all", &all, true}}) {
    const WithDtype fn = e.fn;
    def_both(
        m, e.name, "a", e.method,
        [fn](ArrayLike a, AxisLike axis, OutArray out, BoolLike keepdims, ArrayLike where) {
          Common c = common_from_py(a, axis, out, keepdims, where);
          return result_to_py(fn(c.a, c.options), out);
        },
        nb::arg("axis") = nb::none(), nb::arg("out") = nb::none(), nb::arg("keepdims") = false, nb::kw_only(),
        nb::arg("where") = nb::none());
  }
}

void bind_statistics(nb::module_& m) {
  struct Entry {
    const char* name;
    WithDtype fn;
    bool method;
  };
  // mean, nanmean: (a, axis, dtype, out, keepdims, *, where)
  for (const Entry& e : {Entry{"mean", &mean, true}, Entry{"nanmean", &nanmean, false}}) {
    const WithDtype fn = e.fn;
    def_both(
        m, e.name, "a", e.method,
        [fn](ArrayLike a, AxisLike axis, DTypeLike dtype, OutArray out, BoolLike keepdims, ArrayLike where) {
          Common c = common_from_py(a, axis, out, keepdims, where);
          c.options.dtype = optional_dtype(dtype);
          return result_to_py(fn(c.a, c.options), out);
        },
        nb::arg("axis") = nb::none(), nb::arg("dtype") = nb::none(), nb::arg("out") = nb::none(),
        nb::arg("keepdims") = false, nb::kw_only(), nb::arg("where") = nb::none());
  }
  // var, std, nanvar, nanstd: (a, axis, dtype, out, ddof, keepdims, *, where, correction)
  struct DdofEntry {
    const char* name;
    WithDdof fn;
    bool method;
  };
  for (const DdofEntry& e : {DdofEntry{"var", &var, true}, DdofEntry{"std", &stddev, true},
                             DdofEntry{"nanvar", &nanvar, false}, DdofEntry{"nanstd", &nanstddev, false}}) {
    const WithDdof fn = e.fn;
    def_both(
        m, e.name, "a", e.method,
        [fn](ArrayLike a, AxisLike axis, DTypeLike dtype, OutArray out, FloatLike ddof, BoolLike keepdims,
             ArrayLike where, FloatLike correction) {
          Common c = common_from_py(a, axis, out, keepdims, where);
          c.options.dtype = optional_dtype(dtype);
          return result_to_py(fn(c.a, c.options, ddof_from_py(ddof, correction)), out);
        },
        nb::arg("axis") = nb::none(), nb::arg("dtype") = nb::none(), nb::arg("out") = nb::none(), nb::arg("ddof") = 0,
        nb::arg("keepdims") = false, nb::kw_only(), nb::arg("where") = nb::none(), nb::arg("correction") = nb::none());
  }
  def_both(
      m, "count_nonzero", "a", false,
      [](ArrayLike a, AxisLike axis, BoolLike keepdims) {
        return count_nonzero(array_from_py(a), axes_from_py(axis), truthy(keepdims));
      },
      nb::arg("axis") = nb::none(), nb::kw_only(), nb::arg("keepdims") = false);
}

void bind_arg_and_scans(nb::module_& m) {
  using Arg = Array (*)(const Array&, std::optional<int>, bool, const Array&);
  struct ArgEntry {
    const char* name;
    Arg fn;
    bool method;
  };
  for (const ArgEntry& e : {ArgEntry{"argmin", &argmin, true}, ArgEntry{"argmax", &argmax, true},
                            ArgEntry{"nanargmin", &nanargmin, false}, ArgEntry{"nanargmax", &nanargmax, false}}) {
    const Arg f = e.fn;
    def_both(
        m, e.name, "a", e.method,
        [f](ArrayLike a, AxisLike axis, OutArray out, BoolLike keepdims) {
          return result_to_py(f(array_from_py(a), single_axis_from_py(axis), truthy(keepdims), out_from_py(out)), out);
        },
        nb::arg("axis") = nb::none(), nb::arg("out") = nb::none(), nb::kw_only(), nb::arg("keepdims") = false);
  }
  // cumsum, cumprod, nancumsum, nancumprod: (a, axis, dtype, out)
  struct ScanEntry {
    const char* name;
    Scan fn;
    bool method;
  };
  for (const ScanEntry& e : {ScanEntry{"cumsum", &cumsum, true}, ScanEntry{"cumprod", &cumprod, true},
                             ScanEntry{"nancumsum", &nancumsum, false}, ScanEntry{"nancumprod", &nancumprod, false}}) {
    const Scan f = e.fn;
    def_both(
        m, e.name, "a", e.method,
        [f](ArrayLike a, AxisLike axis, DTypeLike dtype, OutArray out) {
          ScanOptions o;
          o.axis = single_axis_from_py(axis);
          o.dtype = optional_dtype(dtype);
          o.out = out_from_py(out);
          return result_to_py(f(array_from_py(a), o), out);
        },
        nb::arg("axis") = nb::none(), nb::arg("dtype") = nb::none(), nb::arg("out") = nb::none());
  }
  // cumulative_sum, cumulative_prod: (x, /, *, axis, dtype, out, include_initial)
  for (auto [name, fn] : {std::pair<const char*, Scan>{"cumulative_sum", &cumulative_sum},
                          std::pair<const char*, Scan>{"cumulative_prod", &cumulative_prod}}) {
    const Scan f = fn;
    def_both(
        m, name, "x", false,
        [f](ArrayLike x, AxisLike axis, DTypeLike dtype, OutArray out, BoolLike include_initial) {
          ScanOptions o;
          o.axis = single_axis_from_py(axis);
          o.dtype = optional_dtype(dtype);
          o.out = out_from_py(out);
          o.include_initial = truthy(include_initial);
          return result_to_py(f(array_from_py(x), o), out);
        },
        nb::kw_only(), nb::arg("axis") = nb::none(), nb::arg("dtype") = nb::none(), nb::arg("out") = nb::none(),
        nb::arg("include_initial") = false);
  }
}

/// The reduction table (include/cupric/reduction_table.def) for tests and the tile frontend: its rows,
/// and any row run by name (cu.sum(x) is _reduce("sum", x)).
void bind_table(nb::module_& m) {
  m.def(
      "_reduction_table",
      [] {
        static const char* const kSeeds[] = {"identity", "data"};
        static const char* const kAcc[] = {"sum", "product", "same", "boolean"};
        nb::list rows;
        for (const ReductionRow& r : kReductionRows) {
          nb::dict d;
          d["name"] = r.name;
          d["ufunc"] = r.ufunc;
          d["identity"] = r.identity_name;
          d["seed"] = kSeeds[static_cast<int>(r.seed)];
          d["acc"] = kAcc[static_cast<int>(r.acc)];
          d["nan"] = r.nan_name;
          rows.append(d);
        }
        nb::list scans;
        for (const ScanRow& s : kScanRows) scans.append(nb::make_tuple(s.name, reduction_row(s.reduction).name));
        return nb::make_tuple(rows, scans);
      },
      "([row dicts: name, ufunc, identity, seed, acc, nan], [(scan, reduction)]) of reduction_table.def.");
  m.def(
      "_reduce",
      [](const std::string& name, ArrayLike a, AxisLike axis, BoolLike keepdims) {
        const ReductionRow* row = find_reduction(name);
        if (!row) throw ValueError(cat("no reduction named '", name, "' in the reduction table"));
        Common c = common_from_py(a, axis, nb::none(), keepdims, nb::none());
        return cupric::reduce(row->op, c.a, c.options);
      },
      nb::arg("name"), nb::arg("a"), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false,
      "The reduction table's row `name` over `axis`, with its default dtype.");
}
}  // namespace

void bind_reduce(nb::module_& m) {
  bind_table(m);
  bind_sums(m);
  bind_statistics(m);
  bind_arg_and_scans(m);
}

}  // namespace cupric::py
