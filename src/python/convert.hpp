// convert.hpp — turning Python objects into cupric values (dtypes, devices, arrays, operands)
// and small helpers shared by the bind_<area>.cpp files.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/detail/nb_list.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <exception>
#include <optional>
#include <utility>

#include "cupric/array.hpp"

namespace nb = nanobind;

namespace nanobind::detail {
/// Shapes and strides (cupric::SmallVector) cross to and from Python as std::vector does.
template <class T, std::size_t N>
struct type_caster<cupric::SmallVector<T, N>> : list_caster<cupric::SmallVector<T, N>, T> {};
}  // namespace nanobind::detail

namespace cupric::py {

/// Any dtype-like NumPy accepts: "float32", "f4", float, np.float32, np.dtype("f4"),
/// ml_dtypes.bfloat16. Dtypes cupric has no loops for (object, str, datetime) raise TypeError.
DType dtype_from_py(nb::handle obj);
std::optional<DType> optional_dtype(nb::handle obj);  ///< None -> nullopt
/// The numpy.dtype of a DType (dtypes at the Python boundary are NumPy's; bfloat16 is ml_dtypes').
nb::object dtype_to_py(DType t);
/// The NumPy scalar type of a DType: numpy.float32, ml_dtypes.bfloat16, ...
nb::object scalar_type_to_py(DType t);
/// The DType whose NumPy dtype object or scalar type `obj` is (by identity; nothing is imported
/// or converted), nullopt for anything else.
std::optional<DType> known_numpy_dtype(nb::handle obj);

/// "cpu", "cuda:0", a Device, or None (-> the default device).
Device device_from_py(nb::handle obj);
std::optional<Device> optional_device(nb::handle obj);

/// The default device for new arrays (CUPRIC_DEVICE, `with cu.device(...)`, else the first GPU
/// when the CUDA driver sees one, else the CPU; decided lazily at the first call).
Device default_device();
void set_default_device(Device d);

/// NumPy's asarray: cupric arrays, Python scalars and (nested) sequences, other libraries' arrays
/// through the importer (foreign_array.hpp: zero-copy), __array__, the buffer protocol. `copy`: true = always
/// copy, false = never (ValueError when a copy is needed), nullopt = when needed.
Array array_from_py(nb::handle obj, std::optional<DType> dtype = std::nullopt,
                    std::optional<Device> device = std::nullopt, std::optional<bool> copy = std::nullopt);

/// An operand of an operator or ufunc: Python scalars become weak 0-d arrays (NEP 50),
/// everything else goes through array_from_py, onto `device` (nullopt: the default device).
Array operand_from_py(nb::handle obj, std::optional<Device> device = std::nullopt);
/// The device of the first cupric array among a call's operands, or nullopt: NumPy scalars, lists
/// and NumPy arrays beside it go there (np.float32(2) * x works for x on a GPU, as x * 2 does).
std::optional<Device> device_of_arrays(std::initializer_list<nb::handle> operands);

/// operand_from_py for one call, without copying or allocating in the common cases: a cupric
/// array is borrowed from its Python object (which the caller's handle keeps alive), a Python
/// scalar is held inline (InlineScalar). array() is valid while this object lives.
class Operand {
 public:
  /// huge_ints: a Python int past 64 bits is taken (Scalar::beyond) rather than refused with
  /// OverflowError; comparisons answer it exactly, as NumPy 2 does.
  /// device: where a NumPy scalar, list or NumPy array goes (the device of the cupric arrays
  /// beside it in the call, as the Python compositions place them; nullopt: the default device).
  explicit Operand(nb::handle obj, bool huge_ints = false, std::optional<Device> device = std::nullopt);
  Operand(const Operand&) = delete;
  Operand& operator=(const Operand&) = delete;
  const Array& array() const { return *array_; }

 private:
  const Array* array_ = nullptr;
  std::optional<InlineScalar> scalar_;
  Array converted_;  // anything else, through array_from_py
};
bool is_python_scalar(nb::handle obj);  ///< bool, int, float, complex or a subclass (np.float64)
/// Exactly a Python bool/int/float/complex: weak under NEP 50. NumPy scalars (np.float64 is a
/// float subclass) and other subclasses are strong, as in NumPy 2.
bool is_weak_scalar(nb::handle obj);
Scalar scalar_from_py(nb::handle obj, bool huge_ints = false);
/// Whether two arguments are the same value for a compiled specialisation (the launch and call
/// plans' check of a constant): the same type; tuples and lists item by item; floats and complex
/// by their exact value — -0.0 is not 0.0 (x + C differs in its sign of zero), a NaN is itself —
/// as cupric._keys.exact_key keys them in Python; anything else by ==.
bool same_value(PyObject* v, PyObject* c);

/// operator.index(obj) as an int64: Python's TypeError ("'str' object cannot be interpreted as
/// an integer"), OverflowError naming the value when it does not fit.
std::int64_t int64_from_py(nb::handle obj);
/// Keyword arguments of simple types: TypeError naming the argument and the value otherwise
/// ("copy must be a bool, got 'x'"). bool_from_py takes bools, NumPy's bool and the ints 0, 1.
bool bool_from_py(nb::handle obj, const char* what);
double float_from_py(nb::handle obj, const char* what);
std::string str_from_py(nb::handle obj, const char* what);
/// A shape: an int or a sequence of them (NumPy's ValueError "Maximum allowed dimension
/// exceeded" past int64, and "maximum supported dimension ..." past 64 entries, before reading them).
Shape shape_from_py(nb::handle obj);

/// Converts to dtype/device, copying only when needed (or always with copy=true).
Array convert_array(const Array& a, std::optional<DType> dtype, std::optional<Device> device, std::optional<bool> copy);

/// Adds a method to a bound class from any translation unit.
template <class F, class... Extra>
void def_method(nb::handle cls, const char* name, F&& f, const Extra&... extra) {
  nb::object fn = nb::cpp_function(std::forward<F>(f), nb::scope(cls), nb::name(name), nb::is_method(), extra...);
  nb::setattr(cls, name, fn);
}

/// Adds a read-only property to a bound class from any translation unit.
template <class F>
void def_property(nb::handle cls, const char* name, F&& getter) {
  nb::object fget = nb::cpp_function(std::forward<F>(getter), nb::scope(cls), nb::name(name), nb::is_method());
  nb::setattr(cls, name, nb::module_::import_("builtins").attr("property")(fget));
}

/// The bound ndarray class (for other translation units adding methods).
nb::handle ndarray_type();

/// Sets the Python error for a CUDA exception (cupric.cuda.CUDAError and its subclasses) and
/// rethrows any other (bind_cuda.cpp).
void translate_cuda_error(const std::exception_ptr& p);
/// Sets numpy.linalg.LinAlgError (bind_linalg.cpp) for cupric's LinAlgError.
void raise_linalg_error(const char* message);
/// Sets the Python error for any C++ exception: the module's one exception translator
/// (module.cpp). cupric's and CUDA's errors become their Python classes; the standard library's
/// become the matching Python exception with a message of ours, never C++ text ("std::bad_cast").
void translate_cpp_error(const std::exception_ptr& p) noexcept;
/// The same, for raw CPython slots that nanobind does not wrap (a ufunc's tp_call). Call it
/// from a catch (...) block.
void set_python_error(const std::exception_ptr& p) noexcept;

}  // namespace cupric::py
