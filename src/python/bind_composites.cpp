// bind_composites.cpp — Python bindings of the composed elementwise functions
// (cupric/elementwise.hpp): isclose, allclose, array_equal, nan_to_num, real, imag, round,
// clip, angle, and the ndarray methods/properties that NumPy has for them.
#include "convert.hpp"
#include "py_types.hpp"
#include "cupric/elementwise.hpp"
#include "cupric/errors.hpp"
#include "cupric/ufunc.hpp"

namespace cupric::py {

namespace {
Array optional_operand(nb::handle obj) {
  if (!obj.is_valid() || obj.is_none()) return {};
  return operand_from_py(obj);
}

Array out_array(nb::handle out) {
  if (out.is_none()) return {};
  if (!nb::isinstance<Array>(out))
    throw TypeError(
        cat("out= must be a cupric array, got ", nb::cast<std::string>(nb::str(nb::type_name(out.type())))));
  return nb::cast<Array>(out);
}

std::optional<double> optional_double(nb::handle obj) {
  if (obj.is_none()) return std::nullopt;
  return nb::cast<double>(nb::float_(obj));
}

NdarrayResult clip_py(nb::handle x, nb::handle min, nb::handle max, nb::handle out, nb::handle a_min,
                      nb::handle a_max) {
  if ((!a_min.is_none() && !min.is_none()) || (!a_max.is_none() && !max.is_none()))
    throw TypeError("clip() got a bound both as min/max and as a_min/a_max; pass each bound once");
  const nb::handle lo = a_min.is_none() ? min : a_min;
  const nb::handle hi = a_max.is_none() ? max : a_max;
  Array r = clip(array_from_py(x), optional_operand(lo), optional_operand(hi), out_array(out));
  return result_to_py(std::move(r), out);
}

NdarrayResult round_py(nb::handle x, int decimals, nb::handle out) {
  return result_to_py(round(array_from_py(x), decimals, out_array(out)), out);
}

bool array_equal_py(nb::handle a, nb::handle b, bool equal_nan) {
  Array x, y;
  try {
    x = array_from_py(a);
    y = array_from_py(b);
  } catch (const std::exception&) {
    PyErr_Clear();
    return false;  // NumPy: what cannot be an array is not equal to one
  }
  return array_equal(x, y, equal_nan);
}
}  // namespace

void bind_composites(nb::module_& m) {
  m.def(
      "isclose",
      [](ArrayLike a, ArrayLike b, FloatLike rtol, FloatLike atol, bool equal_nan) {
        const std::optional<Device> d = device_of_arrays({a, b});
        return isclose(operand_from_py(a, d), operand_from_py(b, d), operand_from_py(rtol, d), operand_from_py(atol, d),
                       equal_nan);
      },
      nb::arg("a"), nb::arg("b"), nb::arg("rtol") = 1e-5, nb::arg("atol") = 1e-8, nb::arg("equal_nan") = false,
      "|a - b| <= atol + rtol * |b| elementwise (NumPy's isclose, inf and NaN rules included).");
  m.def(
      "allclose",
      [](ArrayLike a, ArrayLike b, FloatLike rtol, FloatLike atol, bool equal_nan) {
        const std::optional<Device> d = device_of_arrays({a, b});
        return allclose(operand_from_py(a, d), operand_from_py(b, d), operand_from_py(rtol, d),
                        operand_from_py(atol, d), equal_nan);
      },
      nb::arg("a"), nb::arg("b"), nb::arg("rtol") = 1e-5, nb::arg("atol") = 1e-8, nb::arg("equal_nan") = false,
      "True when isclose(a, b) holds everywhere.");
  m.def(
      "array_equal", [](ArrayLike a1, ArrayLike a2, bool equal_nan) { return array_equal_py(a1, a2, equal_nan); },
      nb::arg("a1"), nb::arg("a2"), nb::arg("equal_nan") = false,
      "True when a1 and a2 have the same shape and elements.");
  m.def(
      "nan_to_num",
      [](ArrayLike x, bool copy, ScalarLike nan, ScalarLike posinf, ScalarLike neginf) {
        return nan_to_num(array_from_py(x), copy, nb::cast<double>(nb::float_(nan)), optional_double(posinf),
                          optional_double(neginf));
      },
      nb::arg("x"), nb::arg("copy") = true, nb::arg("nan") = 0.0, nb::arg("posinf") = nb::none(),
      nb::arg("neginf") = nb::none(), "Replaces NaN and infinities with finite numbers.");
  m.def(
      "real", [](ArrayLike x) { return real(array_from_py(x)); }, nb::arg("x"),
      "The real part (a view of complex arrays).");
  m.def(
      "imag", [](ArrayLike x) { return imag(array_from_py(x)); }, nb::arg("x"),
      "The imaginary part (a view of complex arrays; zeros for real ones).");
  for (const char* name : {"round", "around"})
    m.def(
        name, [](ArrayLike x, int decimals, OutArray out) { return round_py(x, decimals, out); }, nb::arg("x"),
        nb::arg("decimals") = 0, nb::arg("out") = nb::none(), "Rounds half to even at `decimals` digits.");
  // clip and angle replace the table's ufuncs of the same name with NumPy's fuller signatures
  nb::delattr(m, "clip");
  m.def(
      "clip",
      [](ArrayLike x, ArrayLike min, ArrayLike max, OutArray out, ArrayLike a_min, ArrayLike a_max) {
        return clip_py(x, min, max, out, a_min, a_max);
      },
      nb::arg("x"), nb::arg("min") = nb::none(), nb::arg("max") = nb::none(), nb::arg("out") = nb::none(),
      nb::kw_only(), nb::arg("a_min") = nb::none(), nb::arg("a_max") = nb::none(),
      "Limits x to [min, max]; a None bound is no bound.");
  nb::delattr(m, "angle");
  m.def(
      "angle", [](ArrayLike z, bool deg) { return angle(array_from_py(z), deg); }, nb::arg("z"), nb::arg("deg") = false,
      "The argument of complex numbers (radians, or degrees with deg=True).");

  nb::handle cls = ndarray_type();
  def_property(cls, "real", [](const Array& a) { return real(a); });
  def_property(cls, "imag", [](const Array& a) { return imag(a); });
  def_method(
      cls, "round", [](nb::handle self, int decimals, OutArray out) { return round_py(self, decimals, out); },
      nb::arg("decimals") = 0, nb::arg("out") = nb::none());
  def_method(
      cls, "clip",
      [](nb::handle self, ArrayLike min, ArrayLike max, OutArray out) {
        return clip_py(self, min, max, out, nb::none(), nb::none());
      },
      nb::arg("min") = nb::none(), nb::arg("max") = nb::none(), nb::arg("out") = nb::none());
  for (const char* name : {"conj", "conjugate"})
    def_method(cls, name, [](const Array& a) { return apply_ufunc("conjugate", {a}); });
}

}  // namespace cupric::py
