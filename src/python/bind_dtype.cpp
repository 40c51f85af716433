// bind_dtype.cpp — dtype look-ups (dtypes are NumPy's), result_type, can_cast, finfo, iinfo.
#include <nanobind/stl/pair.h>

#include "convert.hpp"
#include "py_types.hpp"
#include "cupric/errors.hpp"
#include "cupric/ufunc.hpp"

namespace cupric::py {

namespace {
/// Arrays, dtypes and Python scalars (or their types) as result_type sees them.
TypeOperand type_operand(nb::handle obj) {
  if (nb::isinstance<Array>(obj)) {
    const Array& a = nb::cast<const Array&>(obj);
    return {a.dtype(), a.weak()};
  }
  if (is_weak_scalar(obj)) {
    Scalar s = scalar_from_py(obj);
    return {default_dtype(s.kind), s.kind};
  }
  if (nb::hasattr(obj, "dtype") && !nb::isinstance<nb::type_object>(obj)) return {dtype_from_py(obj.attr("dtype"))};
  return {dtype_from_py(obj)};
}
}  // namespace

void bind_dtype(nb::module_& m) {
  // cupric's dtypes are NumPy's (cu.float32 is numpy.float32, x.dtype is a numpy.dtype): the
  // Python package binds the names lazily; these give the canonical objects for any dtype-like.
  m.def(
      "_as_dtype", [](DTypeLike obj) { return dtype_to_py(dtype_from_py(obj)); },
      "The numpy.dtype of any dtype-like cupric accepts (bfloat16 through ml_dtypes).");
  m.def(
      "_scalar_type", [](DTypeLike obj) { return scalar_type_to_py(dtype_from_py(obj)); },
      "The NumPy scalar type of a dtype-like: numpy.float32, ml_dtypes.bfloat16, ...");
  m.def(
      "_dtype_kind", [](DTypeLike obj) { return std::string(1, static_cast<char>(kind(dtype_from_py(obj)))); },
      "NumPy's kind letter of a dtype-like, with 'f' for bfloat16 (whose NumPy kind is 'V').");

  m.def(
      "result_type",
      [](nb::args args) {
        std::vector<TypeOperand> ops;
        for (nb::handle a : args) ops.push_back(type_operand(a));
        return nb::borrow<DTypeResult>(dtype_to_py(result_type(ops)));
      },
      "NumPy 2 result_type: arrays, dtypes and Python scalars (weak, NEP 50).");
  m.def(
      "promote_types",
      [](DTypeLike type1, DTypeLike type2) {
        return nb::borrow<DTypeResult>(dtype_to_py(promote_types(dtype_from_py(type1), dtype_from_py(type2))));
      },
      nb::arg("type1"), nb::arg("type2"));
  m.def(
      "can_cast",
      [](ArrayLike from, DTypeLike to, const std::string& casting) {
        if (is_python_scalar(from))
          throw TypeError("can_cast() does not support Python int, float or complex; use a dtype or an array");
        const DType f = nb::isinstance<Array>(from) ? nb::cast<const Array&>(from).dtype() : dtype_from_py(from);
        return can_cast(f, dtype_from_py(to), casting_from_name(casting));
      },
      nb::arg("from_"), nb::arg("to"), nb::arg("casting") = "safe");

  m.def("_finfo", [](nb::handle t) {
    const FloatInfo f = finfo(nb::isinstance<Array>(t) ? nb::cast<const Array&>(t).dtype() : dtype_from_py(t));
    nb::dict d;
    d["bits"] = f.bits;
    d["eps"] = f.eps;
    d["max"] = f.max;
    d["min"] = f.min;
    d["tiny"] = f.tiny;
    d["smallest_normal"] = f.tiny;
    d["smallest_subnormal"] = f.smallest_subnormal;
    d["resolution"] = f.resolution;
    d["precision"] = f.precision;
    d["nmant"] = f.nmant;
    d["nexp"] = f.nexp;
    d["minexp"] = f.minexp;
    d["maxexp"] = f.maxexp;
    d["dtype"] = dtype_to_py(f.dtype);
    return d;
  });
  m.def("_iinfo", [](nb::handle t) {
    const IntInfo i = iinfo(nb::isinstance<Array>(t) ? nb::cast<const Array&>(t).dtype() : dtype_from_py(t));
    nb::dict d;
    d["bits"] = i.bits;
    d["min"] = i.min;
    d["max"] = i.max;
    d["dtype"] = dtype_to_py(i.dtype);
    return d;
  });
}

}  // namespace cupric::py
