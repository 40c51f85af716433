// bind_manipulation.cpp — reshape, transposes, squeeze/expand_dims, ravel/flatten, broadcasting,
// concatenate/stack and where, as namespace functions and ndarray methods (semantics in
// src/array/manipulation.cpp and joining.cpp).
#include <nanobind/stl/vector.h>

#include "convert.hpp"
#include "py_types.hpp"
#include "cupric/errors.hpp"
#include "cupric/indexing.hpp"
#include "cupric/manipulation.hpp"

namespace cupric::py {

namespace {
Array as_array(nb::handle obj) { return nb::isinstance<Array>(obj) ? nb::cast<Array>(obj) : array_from_py(obj); }

bool is_integer_like(nb::handle obj) {
  return PyLong_Check(obj.ptr()) || (PyIndex_Check(obj.ptr()) && !PySequence_Check(obj.ptr()));
}

/// An int or a sequence of ints (shapes, axes).
Shape ints_from_py(nb::handle obj, const char* what) {
  if (is_integer_like(obj)) return {int64_from_py(obj)};
  if (!PySequence_Check(obj.ptr()) || PyUnicode_Check(obj.ptr()) || PyBytes_Check(obj.ptr()))
    throw TypeError(cat(what, " must be an int or a sequence of ints, got ", nb::cast<std::string>(nb::repr(obj))));
  Shape out;  // up to 8 inline: no allocation for a usual shape
  for (nb::handle d : obj) {
    if (!is_integer_like(d))
      throw TypeError(cat("'", nb::cast<std::string>(nb::str(nb::type_name(d.type()))),
                          "' object cannot be interpreted as an integer"));
    out.push_back(int64_from_py(d));
  }
  return out;
}

std::optional<std::vector<std::int64_t>> optional_ints(nb::handle obj, const char* what) {
  if (obj.is_none()) return std::nullopt;
  return ints_from_py(obj, what);
}

char order_from_py(nb::handle obj) {
  if (obj.is_none()) return 'C';
  const std::string s = str_from_py(obj, "order");
  if (s.size() != 1 || (s[0] != 'C' && s[0] != 'F' && s[0] != 'A'))
    throw ValueError(cat("order must be one of 'C', 'F', 'A', got '", s, "'"));
  return s[0];
}

std::optional<bool> optional_bool(nb::handle obj, const char* what) {
  if (obj.is_none()) return std::nullopt;
  return bool_from_py(obj, what);
}

/// a.reshape(2, 3), a.reshape((2, 3)) and a.reshape(shape=(2, 3)).
Shape shape_from_args(nb::args args) {
  if (nb::len(args) == 1) return ints_from_py(args[0], "shape");
  Shape s;
  for (nb::handle d : args) {
    if (!is_integer_like(d))
      throw TypeError(cat("'", nb::cast<std::string>(nb::str(nb::type_name(d.type()))),
                          "' object cannot be interpreted as an integer"));
    s.push_back(int64_from_py(d));
  }
  return s;
}

std::vector<Array> arrays_from_py(nb::handle seq) {
  if (nb::isinstance<Array>(seq)) {  // NumPy iterates over the first axis of an array argument
    const Array a = nb::cast<Array>(seq);
    std::vector<Array> out;
    for (std::int64_t i = 0; i < (a.ndim() ? a.shape()[0] : 0); ++i)
      out.push_back(getitem(a, {IndexItem::from_int(i)}));
    return out;
  }
  std::vector<Array> out;
  for (nb::handle x : seq) out.push_back(as_array(x));
  return out;
}

nb::tuple tuple_of_arrays(const std::vector<Array>& arrays) {
  nb::list l;
  for (const Array& a : arrays) l.append(nb::cast(a));
  return nb::tuple(l);
}

Array reshape_py(const Array& a, const Shape& shape, nb::handle order, nb::handle copy) {
  return reshape(a, shape, order_from_py(order), optional_bool(copy, "copy"));
}

void bind_functions(nb::module_& m) {
  m.def(
      "reshape",
      [](ArrayLike a, ShapeLike shape, OrderLike order, BoolLike copy) {
        return reshape_py(as_array(a), ints_from_py(shape, "shape"), order, copy);
      },
      nb::arg("a"), nb::arg("shape"), nb::arg("order") = "C", nb::kw_only(), nb::arg("copy") = nb::none());
  m.def(
      "transpose",
      [](ArrayLike a, AxisLike axes) {
        return axes.is_none() ? transpose(as_array(a)) : permute_dims(as_array(a), ints_from_py(axes, "axes"));
      },
      nb::arg("a"), nb::arg("axes") = nb::none());
  m.def(
      "permute_dims", [](ArrayLike a, AxisLike axes) { return permute_dims(as_array(a), ints_from_py(axes, "axes")); },
      nb::arg("a"), nb::arg("axes"));
  m.def("matrix_transpose", [](ArrayLike a) { return matrix_transpose(as_array(a)); }, nb::arg("x"));
  m.def(
      "swapaxes", [](ArrayLike a, std::int64_t i, std::int64_t j) { return swapaxes(as_array(a), i, j); }, nb::arg("a"),
      nb::arg("axis1"), nb::arg("axis2"));
  m.def(
      "moveaxis",
      [](ArrayLike a, ArrayLike src, ArrayLike dst) {
        return moveaxis(as_array(a), ints_from_py(src, "source"), ints_from_py(dst, "destination"));
      },
      nb::arg("a"), nb::arg("source"), nb::arg("destination"));
  m.def(
      "squeeze", [](ArrayLike a, AxisLike axis) { return squeeze(as_array(a), optional_ints(axis, "axis")); },
      nb::arg("a"), nb::arg("axis") = nb::none());
  m.def(
      "expand_dims", [](ArrayLike a, AxisLike axis) { return expand_dims(as_array(a), ints_from_py(axis, "axis")); },
      nb::arg("a"), nb::arg("axis"));
  m.def(
      "ravel", [](ArrayLike a, OrderLike order) { return ravel(as_array(a), order_from_py(order)); }, nb::arg("a"),
      nb::arg("order") = "C");
  m.def(
      "broadcast_to",
      [](ArrayLike a, ShapeLike shape) { return broadcast_view(as_array(a), ints_from_py(shape, "shape")); },
      nb::arg("array"), nb::arg("shape"));
  // a list, as the Array API has it (NumPy's tuple unpacks the same way)
  m.def("broadcast_arrays",
        [](nb::args args) { return nb::list(tuple_of_arrays(broadcast_arrays(arrays_from_py(args)))); });
  m.def("broadcast_shapes", [](nb::args args) {
    std::vector<Shape> shapes;
    for (nb::handle s : args) shapes.push_back(ints_from_py(s, "shape"));
    nb::list l;
    for (auto d : broadcast_shapes(shapes)) l.append(d);
    return nb::tuple(l);
  });
  auto concat = [](ArrayLike arrays, AxisLike axis, DTypeLike dtype, const std::string& casting) {
    std::optional<std::int64_t> ax;
    if (!axis.is_none()) ax = int64_from_py(axis);
    return concatenate(arrays_from_py(arrays), ax, optional_dtype(dtype), casting_from_name(casting));
  };
  m.def("concatenate", concat, nb::arg("arrays"), nb::arg("axis").none() = 0, nb::kw_only(),
        nb::arg("dtype") = nb::none(), nb::arg("casting") = "same_kind");
  m.def("concat", concat, nb::arg("arrays"), nb::arg("axis").none() = 0, nb::kw_only(), nb::arg("dtype") = nb::none(),
        nb::arg("casting") = "same_kind");
  m.def(
      "stack",
      [](ArrayLike arrays, std::int64_t axis, DTypeLike dtype, const std::string& casting) {
        return stack(arrays_from_py(arrays), axis, optional_dtype(dtype), casting_from_name(casting));
      },
      nb::arg("arrays"), nb::arg("axis") = 0, nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("casting") = "same_kind");
  m.def(
      "where",
      [](ArrayLike cond, ArrayLike x, ArrayLike y) -> ArraysResult {
        if (x.is_none() != y.is_none()) throw ValueError("either both or neither of x and y should be given");
        if (x.is_none()) return nb::borrow<ArraysResult>(tuple_of_arrays(nonzero(as_array(cond))));
        const std::optional<Device> d = device_of_arrays({cond, x, y});
        return nb::borrow<ArraysResult>(
            nb::cast(where(operand_from_py(cond, d), operand_from_py(x, d), operand_from_py(y, d))));
      },
      nb::arg("condition"), nb::arg("x") = nb::none(), nb::arg("y") = nb::none());
  m.def("nonzero", [](ArrayLike a) { return tuple_of_arrays(nonzero(as_array(a))); }, nb::arg("a").none());
  m.def("flatnonzero", [](ArrayLike a) { return nonzero(ravel(as_array(a))).at(0); }, nb::arg("a").none());
  m.def(
      "argwhere",
      [](ArrayLike a) {
        const Array x = as_array(a);
        // NumPy: a 0-d array is one element of no dimensions, so (1, 0) or (0, 0)
        if (x.ndim() == 0) return Array::empty({nonzero(reshape(x, {1})).at(0).size(), 0}, DType::int64, x.device());
        return stack(nonzero(x), 1);  // one row of indices per nonzero element
      },
      nb::arg("a").none());
}

void bind_methods() {
  nb::handle cls = ndarray_type();
  def_method(cls, "nonzero", [](const Array& a) { return tuple_of_arrays(nonzero(a)); });
  def_method(cls, "reshape", [](const Array& a, nb::args shape, nb::kwargs kwargs) {
    if (kwargs.size() == 0) return reshape_py(a, shape_from_args(shape), nb::none(), nb::none());  // a.reshape(2, 3)
    nb::handle order = kwargs.contains("order") ? nb::handle(kwargs["order"]) : nb::none();
    nb::handle copy = kwargs.contains("copy") ? nb::handle(kwargs["copy"]) : nb::none();
    for (auto [key, value] : kwargs) {
      const std::string k = nb::cast<std::string>(key);
      if (k == "shape") return reshape_py(a, ints_from_py(value, "shape"), order, copy);
      if (k != "order" && k != "copy") throw TypeError(cat("'", k, "' is an invalid keyword argument for reshape()"));
    }
    return reshape_py(a, shape_from_args(shape), order, copy);
  });
  def_method(cls, "transpose", [](const Array& a, nb::args axes) {
    if (nb::len(axes) == 0 || (nb::len(axes) == 1 && axes[0].is_none())) return transpose(a);
    return permute_dims(a, shape_from_args(axes));
  });
  def_method(
      cls, "swapaxes", [](const Array& a, std::int64_t i, std::int64_t j) { return swapaxes(a, i, j); },
      nb::arg("axis1"), nb::arg("axis2"));
  def_method(
      cls, "squeeze", [](const Array& a, AxisLike axis) { return squeeze(a, optional_ints(axis, "axis")); },
      nb::arg("axis") = nb::none());
  def_method(
      cls, "ravel", [](const Array& a, OrderLike order) { return ravel(a, order_from_py(order)); },
      nb::arg("order") = "C");
  def_method(
      cls, "flatten", [](const Array& a, OrderLike order) { return flatten(a, order_from_py(order)); },
      nb::arg("order") = "C");
  def_property(cls, "T", [](const Array& a) { return transpose(a); });
  def_property(cls, "mT", [](const Array& a) { return matrix_transpose(a); });
}
}  // namespace

void bind_manipulation(nb::module_& m) {
  bind_functions(m);
  bind_methods();
}

}  // namespace cupric::py
