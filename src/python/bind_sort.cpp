// bind_sort.cpp — sort, argsort and searchsorted as module functions with NumPy's and the Array
// API's signatures, and as ndarray methods (x.sort() in place). Semantics: src/ops/sorting.cpp.
#include <nanobind/stl/string.h>

#include "convert.hpp"
#include "py_types.hpp"
#include "cupric/errors.hpp"
#include "cupric/reduction.hpp"
#include "cupric/sorting.hpp"

namespace cupric::py {

namespace {
/// kind=, order= and side=: a string (or None) the binding reads itself.
class OptionalStr : public nb::object {
 public:
  NB_OBJECT_DEFAULT(OptionalStr, object, "str", accepts_any)
};

/// kind= is accepted as NumPy spells it; every kind sorts stably here.
void check_kind(nb::handle kind) {
  if (kind.is_none()) return;
  const std::string k = str_from_py(kind, "kind");
  if (k.empty() || std::string("qhms").find(static_cast<char>(std::tolower(k[0]))) == std::string::npos)
    throw ValueError(cat("sort kind must be one of 'quick', 'heap', or 'stable' (got '", k, "')"));
}

void check_order(nb::handle order) {
  if (!order.is_none()) throw ValueError("Cannot specify order when the array has no fields.");
}

std::optional<int> axis_from_py(nb::handle axis) {
  if (axis.is_none()) return std::nullopt;
  if (PyBool_Check(axis.ptr()) || !PyIndex_Check(axis.ptr()))
    throw TypeError(cat("'", nb::cast<std::string>(nb::str(nb::type_name(axis.type()))),
                        "' object cannot be interpreted as an integer"));
  const std::int64_t v = int64_from_py(axis);
  if (v < -(1LL << 30) || v > (1LL << 30)) throw AxisError(cat("axis ", v, " is out of bounds"));
  return static_cast<int>(v);
}

bool side_from_py(nb::handle side) {
  const std::string s = str_from_py(side, "side");
  if (s == "left" || s == "l" || s == "L") return false;
  if (s == "right" || s == "r" || s == "R") return true;
  throw ValueError(cat("side must be 'left' or 'right' (got '", s, "')"));
}

Array sorter_from_py(nb::handle sorter, Device device) {
  return sorter.is_none() ? Array() : array_from_py(sorter, std::nullopt, device);
}

using SortFn = Array (*)(const Array&, std::optional<int>, bool);
}  // namespace

void bind_sort(nb::module_& m) {
  // unique's one pass for real dtypes (python/cupric/_sets.py): (values, index, inverse, counts),
  // None for what was not asked
  m.def("_unique_flat", [](const Array& a, bool index, bool inverse, bool counts, bool equal_nan) {
    UniqueResult r = unique_flat(a, index, inverse, counts, equal_nan);
    auto opt = [](const Array& x) { return x.defined() ? nb::cast(x) : nb::none(); };
    return nb::make_tuple(r.values, opt(r.index), opt(r.inverse), opt(r.counts));
  });
  // median and quantile of one long column on a GPU (python/cupric/_quantiles.py)
  m.def("_select_ranks", [](const Array& a, const Array& ranks) { return select_ranks(a, ranks); });
  // for the Python compositions: the AxisError they raise is the core's (NumPy's subclass)
  m.def("_normalize_axis", [](IntLike axis, int ndim) { return normalize_axis(*axis_from_py(axis), ndim); });
  for (auto [name, fn] : {std::pair<const char*, SortFn>{"sort", &sort}, {"argsort", &argsort}}) {
    const SortFn f = fn;
    m.def(
        name,
        [f](ArrayLike a, AxisLike axis, OptionalStr kind, OptionalStr order, bool descending, BoolLike stable) {
          check_kind(kind);
          check_order(order);
          (void)stable;  // every sort is stable
          return f(array_from_py(a), axis_from_py(axis), descending);
        },
        nb::arg("a"), nb::arg("axis").none() = -1, nb::arg("kind").none() = nb::none(),
        nb::arg("order").none() = nb::none(), nb::kw_only(), nb::arg("descending") = false,
        nb::arg("stable").none() = nb::none());
  }
  def_method(
      ndarray_type(), "sort",
      [](const Array& a, IntLike axis, OptionalStr kind, OptionalStr order) {
        check_kind(kind);
        check_order(order);
        const std::optional<int> ax = axis_from_py(axis);
        if (!ax) throw TypeError("ndarray.sort: axis must be an integer, not None");
        sort_in_place(a, *ax);
      },
      nb::arg("axis").none() = -1, nb::arg("kind").none() = nb::none(), nb::arg("order").none() = nb::none());
  def_method(
      ndarray_type(), "argsort",
      [](const Array& a, AxisLike axis, OptionalStr kind, OptionalStr order) {
        check_kind(kind);
        check_order(order);
        return argsort(a, axis_from_py(axis));
      },
      nb::arg("axis").none() = -1, nb::arg("kind").none() = nb::none(), nb::arg("order").none() = nb::none());
  auto search = [](ArrayLike a, ArrayLike v, OptionalStr side, ArrayLike sorter) {
    const Array hay = array_from_py(a);
    // Python scalars stay weak (NEP 50); sequences are read onto the sorted array's device
    const Array needles = nb::isinstance<Array>(v) || is_python_scalar(v)
                              ? operand_from_py(v)
                              : array_from_py(v, std::nullopt, hay.device());
    return searchsorted(hay, needles, side_from_py(side), sorter_from_py(sorter, hay.device()));
  };
  m.def("searchsorted", search, nb::arg("a"), nb::arg("v"), nb::arg("side") = "left",
        nb::arg("sorter").none() = nb::none());
  def_method(
      ndarray_type(), "searchsorted",
      [search](ArrayLike self, ArrayLike v, OptionalStr side, ArrayLike sorter) {
        return search(self, v, side, sorter);
      },
      nb::arg("v"), nb::arg("side") = "left", nb::arg("sorter").none() = nb::none());
}

}  // namespace cupric::py
