// bind_creation.cpp — arange, linspace, logspace, eye, identity, tri, tril, triu, meshgrid
// (semantics in src/array/creation.cpp). `device=None` means the default device.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <limits>

#include "convert.hpp"
#include "py_types.hpp"
#include "cupric/creation.hpp"
#include "cupric/errors.hpp"

namespace cupric::py {

namespace {
Array as_array(nb::handle obj) { return nb::isinstance<Array>(obj) ? nb::cast<Array>(obj) : array_from_py(obj); }

/// A number argument: Python scalars, NumPy scalars and 0-d arrays (through .item()).
Scalar number_from_py(nb::handle obj, const char* what) {
  if (is_python_scalar(obj)) return scalar_from_py(obj, /*huge_ints=*/true);  // stored values still must fit
  if (nb::hasattr(obj, "item")) return number_from_py(obj.attr("item")(), what);
  if (PyIndex_Check(obj.ptr())) return scalar_from_py(nb::int_(obj));
  throw TypeError(cat(what, " must be a number, got ", nb::cast<std::string>(nb::repr(obj))));
}

std::optional<Scalar> optional_number(nb::handle obj, const char* what) {
  if (obj.is_none()) return std::nullopt;
  return number_from_py(obj, what);
}

std::optional<std::int64_t> optional_int(nb::handle obj) {
  if (obj.is_none()) return std::nullopt;
  return int64_from_py(obj);
}

/// A diagonal offset: any Python integer, saturated to int64 (past the matrix, every offset
/// means the same, so saturating changes no result).
std::int64_t diagonal_offset(nb::handle obj) {
  nb::object index = nb::steal(PyNumber_Index(obj.ptr()));
  if (!index.is_valid()) throw nb::python_error();
  int overflow = 0;
  const long long k = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow)
    return overflow > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
  return k;
}

/// Explicit device, else the device of the first array argument, else the default device.
Device device_for(nb::handle device, std::initializer_list<Array> operands) {
  if (!device.is_none()) return device_from_py(device);
  for (const Array& a : operands)
    if (a.defined() && a.weak() == WeakKind::none) return a.device();
  return default_device();
}

DType dtype_or(nb::handle dtype, DType dflt) { return optional_dtype(dtype).value_or(dflt); }
}  // namespace

void bind_creation(nb::module_& m) {
  m.def(
      "arange",
      [](ScalarLike start, ScalarLike stop, ScalarLike step, DTypeLike dtype, DeviceLike device) {
        return arange(number_from_py(start, "start"), optional_number(stop, "stop"), optional_number(step, "step"),
                      optional_dtype(dtype), device_from_py(device));
      },
      nb::arg("start"), nb::arg("stop") = nb::none(), nb::arg("step") = nb::none(), nb::kw_only(),
      nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none());

  m.def(
      "linspace",
      [](ArrayLike start, ArrayLike stop, std::int64_t num, bool endpoint, bool retstep, DTypeLike dtype,
         std::int64_t axis, DeviceLike device) -> ArraysResult {
        const Array a = operand_from_py(start), b = operand_from_py(stop);
        Array step;
        Array y = linspace(a, b, num, endpoint, optional_dtype(dtype), axis, device_for(device, {a, b}), &step);
        if (!retstep) return nb::borrow<ArraysResult>(nb::cast(y));
        nb::object s = nb::cast(step);
        return nb::borrow<ArraysResult>(nb::make_tuple(y, step.ndim() == 0 ? s.attr("item")() : s));
      },
      nb::arg("start"), nb::arg("stop"), nb::arg("num") = 50, nb::arg("endpoint") = true, nb::arg("retstep") = false,
      nb::arg("dtype") = nb::none(), nb::arg("axis") = 0, nb::kw_only(), nb::arg("device") = nb::none());

  m.def(
      "logspace",
      [](ScalarLike start, ScalarLike stop, std::int64_t num, bool endpoint, ScalarLike base, DTypeLike dtype,
         std::int64_t axis, DeviceLike device) {
        const Array a = operand_from_py(start), b = operand_from_py(stop), c = operand_from_py(base);
        return logspace(a, b, num, endpoint, c, optional_dtype(dtype), axis, device_for(device, {a, b, c}));
      },
      nb::arg("start"), nb::arg("stop"), nb::arg("num") = 50, nb::arg("endpoint") = true, nb::arg("base") = 10.0,
      nb::arg("dtype") = nb::none(), nb::arg("axis") = 0, nb::kw_only(), nb::arg("device") = nb::none());

  m.def(
      "eye",
      [](std::int64_t n, ArrayLike m_, IntLike k, DTypeLike dtype, DeviceLike device) {
        return eye(n, optional_int(m_), diagonal_offset(k), dtype_or(dtype, DType::float64), device_from_py(device));
      },
      nb::arg("N"), nb::arg("M") = nb::none(), nb::arg("k") = 0, nb::arg("dtype") = nb::none(), nb::kw_only(),
      nb::arg("device") = nb::none());
  m.def(
      "identity",
      [](std::int64_t n, DTypeLike dtype, DeviceLike device) {
        return eye(n, std::nullopt, 0, dtype_or(dtype, DType::float64), device_from_py(device));
      },
      nb::arg("n"), nb::arg("dtype") = nb::none(), nb::kw_only(), nb::arg("device") = nb::none());
  m.def(
      "tri",
      [](std::int64_t n, ArrayLike m_, IntLike k, DTypeLike dtype, DeviceLike device) {
        return tri(n, optional_int(m_), diagonal_offset(k), dtype_or(dtype, DType::float64), device_from_py(device));
      },
      nb::arg("N"), nb::arg("M") = nb::none(), nb::arg("k") = 0, nb::arg("dtype") = nb::none(), nb::kw_only(),
      nb::arg("device") = nb::none());
  m.def(
      "tril", [](ArrayLike a, IntLike k) { return tril(as_array(a), diagonal_offset(k)); }, nb::arg("m"),
      nb::arg("k") = 0);
  m.def(
      "triu", [](ArrayLike a, IntLike k) { return triu(as_array(a), diagonal_offset(k)); }, nb::arg("m"),
      nb::arg("k") = 0);

  m.def(
      "meshgrid",
      [](nb::args xs, bool copy, bool sparse, const std::string& indexing) {
        std::vector<Array> arrays;
        for (nb::handle x : xs) arrays.push_back(as_array(x));
        nb::list out;
        for (const Array& a : meshgrid(arrays, indexing, sparse, copy)) out.append(nb::cast(a));
        return out;  // a list, as the Array API has it (NumPy's tuple unpacks the same way)
      },
      nb::arg("xi"), nb::arg("copy") = true, nb::arg("sparse") = false, nb::arg("indexing") = "xy");
}

}  // namespace cupric::py
