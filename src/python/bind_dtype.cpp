// bind_dtype.cpp — cupric.dtype objects (cu.float32, ...), result_type, can_cast, finfo, iinfo.
#include <nanobind/stl/pair.h>

#include "convert.hpp"
#include "cupric/errors.hpp"
#include "cupric/ufunc.hpp"

namespace cupric::py {

namespace {
bool dtype_equal(const PyDType& self, nb::handle other) {
  try {
    return dtype_from_py(other) == self.dtype;
  } catch (const std::exception&) {
    PyErr_Clear();
    return false;
  }
}

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
  nb::class_<PyDType>(m, "dtype", "A cupric element type (compares equal to NumPy's dtype of the same name).")
      .def("__init__", [](PyDType* self, nb::handle obj) { new (self) PyDType{dtype_from_py(obj)}; })
      .def_prop_ro("name", [](const PyDType& d) { return std::string(name(d.dtype)); })
      .def_prop_ro("itemsize", [](const PyDType& d) { return itemsize(d.dtype); })
      .def_prop_ro("kind", [](const PyDType& d) { return std::string(1, static_cast<char>(kind(d.dtype))); })
      .def_prop_ro("char", [](const PyDType& d) { return std::string(1, dtype_code(d.dtype)); })
      .def_prop_ro("str", [](const PyDType& d) {
        const auto& i = info(d.dtype);
        return std::string(i.itemsize == 1 ? "|" : "<") + i.typestr_code;
      })
      .def_prop_ro("numpy", [](const PyDType& d) -> nb::object {
        nb::object np = nb::module_::import_("numpy");
        if (d.dtype == DType::bfloat16) return np.attr("dtype")(nb::module_::import_("ml_dtypes").attr("bfloat16"));
        return np.attr("dtype")(name(d.dtype));
      }, "The matching numpy.dtype (bfloat16 needs ml_dtypes).")
      .def("__eq__", &dtype_equal)
      .def("__ne__", [](const PyDType& a, nb::handle b) { return !dtype_equal(a, b); })
      .def("__hash__", [](const PyDType& d) { return nb::hash(nb::str(name(d.dtype))); })
      .def("__repr__", [](const PyDType& d) { return cat("dtype('", name(d.dtype), "')"); })
      .def("__str__", [](const PyDType& d) { return std::string(name(d.dtype)); })
      .def("__call__", [](const PyDType& d, nb::handle value) { return array_from_py(value, d.dtype); },
           "Makes a 0-d array of this dtype: cu.float32(1.5).");

  for (int i = 0; i < kNumDTypes; ++i) {
    const DType t = static_cast<DType>(i);
    m.attr(t == DType::bool_ ? "bool_" : name(t)) = PyDType{t};
  }
  m.attr("bool") = PyDType{DType::bool_};

  m.def("result_type", [](nb::args args) {
    std::vector<TypeOperand> ops;
    for (nb::handle a : args) ops.push_back(type_operand(a));
    return PyDType{result_type(ops)};
  }, "NumPy 2 result_type: arrays, dtypes and Python scalars (weak, NEP 50).");
  m.def("promote_types", [](nb::handle a, nb::handle b) { return PyDType{promote_types(dtype_from_py(a), dtype_from_py(b))}; });
  m.def("can_cast", [](nb::handle from, nb::handle to, const std::string& casting) {
    if (is_python_scalar(from))
      throw TypeError("can_cast() does not support Python int, float or complex; use a dtype or an array");
    const DType f = nb::isinstance<Array>(from) ? nb::cast<const Array&>(from).dtype() : dtype_from_py(from);
    return can_cast(f, dtype_from_py(to), casting_from_name(casting));
  }, nb::arg("from_"), nb::arg("to"), nb::arg("casting") = "safe");

  m.def("_finfo", [](nb::handle t) {
    const FloatInfo f = finfo(nb::isinstance<Array>(t) ? nb::cast<const Array&>(t).dtype() : dtype_from_py(t));
    nb::dict d;
    d["bits"] = f.bits; d["eps"] = f.eps; d["max"] = f.max; d["min"] = f.min; d["tiny"] = f.tiny;
    d["smallest_normal"] = f.tiny; d["smallest_subnormal"] = f.smallest_subnormal; d["resolution"] = f.resolution;
    d["precision"] = f.precision; d["nmant"] = f.nmant; d["nexp"] = f.nexp; d["minexp"] = f.minexp;
    d["maxexp"] = f.maxexp; d["dtype"] = PyDType{f.dtype};
    return d;
  });
  m.def("_iinfo", [](nb::handle t) {
    const IntInfo i = iinfo(nb::isinstance<Array>(t) ? nb::cast<const Array&>(t).dtype() : dtype_from_py(t));
    nb::dict d;
    d["bits"] = i.bits; d["min"] = i.min; d["max"] = i.max; d["dtype"] = PyDType{i.dtype};
    return d;
  });
}

}  // namespace cupric::py
