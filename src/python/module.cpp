// module.cpp — the one NB_MODULE: maps C++ exceptions to Python's, then binds each area.
#include <string_view>
#include <system_error>

#include "convert.hpp"
#include "cupric/errors.hpp"

namespace cupric::py {
void bind_dtype(nb::module_& m);
void bind_array(nb::module_& m);
void bind_ufunc(nb::module_& m);
void bind_extensions(nb::module_& m);  // areas that add to the ndarray class (see bind_extensions.cpp)
}  // namespace cupric::py

namespace {
/// cupric.AxisError: a subclass of numpy.exceptions.AxisError (itself a ValueError and an
/// IndexError), or of both builtins when NumPy is missing.
/// cupric.AxisError: a ValueError and an IndexError, made without importing NumPy (import time).
PyObject* make_axis_error() {
  nb::object bases = nb::make_tuple(nb::handle(PyExc_ValueError), nb::handle(PyExc_IndexError));
  return PyErr_NewExceptionWithDoc(
      "cupric.AxisError", "An axis argument is out of range (a ValueError and an IndexError).", bases.ptr(), nullptr);
}
PyObject* g_axis_error = nullptr;

/// The class raised: once NumPy is loaded, a subclass of both cupric.AxisError and
/// numpy.exceptions.AxisError, so that either `except` clause catches it.
PyObject* axis_error_to_raise() {
  static PyObject* both = nullptr;
  if (both) return both;
  if (!PyDict_GetItemString(PyImport_GetModuleDict(), "numpy")) return g_axis_error;
  try {
    nb::object np_axis_error = nb::module_::import_("numpy.exceptions").attr("AxisError");
    nb::object bases = nb::make_tuple(nb::handle(g_axis_error), np_axis_error);
    both = PyErr_NewException("cupric.AxisError", bases.ptr(), nullptr);
  } catch (nb::python_error&) {
    return g_axis_error;
  }
  return both ? both : g_axis_error;
}
}  // namespace

NB_MODULE(_cupric, m) {
  using namespace cupric;
  // Objects that Python itself keeps past the module's teardown (pytest's parameter lists,
  // hypothesis' strategies) are reported as leaks at exit; they are not ours to free.
  nb::set_leak_warnings(false);
  g_axis_error = make_axis_error();
  m.attr("AxisError") = nb::handle(g_axis_error);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) { py::translate_cpp_error(p); });
  py::bind_dtype(m);
  py::bind_array(m);
  py::bind_ufunc(m);
  py::bind_extensions(m);
}

namespace cupric::py {

namespace {
/// Text written by the C++ standard library or a container ("std::bad_cast", "vector::_M_range_check:
/// ...", "SmallVector::at", "stoi") names C++ internals, not the user's problem: such messages of
/// standard exceptions are replaced (cupric's own errors, errors.hpp, keep theirs).
bool is_library_text(std::string_view s) {
  static constexpr std::string_view markers[] = {"::",
                                                 "basic_string",
                                                 "bad_cast",
                                                 "bad_alloc",
                                                 "bad_any_cast",
                                                 "bad_function_call",
                                                 "bad optional access",
                                                 "bad variant access",
                                                 "bad_weak_ptr"};
  for (std::string_view m : markers)
    if (s.find(m) != std::string_view::npos) return true;
  return s.empty() || (s.size() <= 6 && s.starts_with("sto"));  // std::stoi and friends say only "stoi"
}

void raise(PyObject* type, const std::exception& e, const char* instead) {
  PyErr_SetString(type, is_library_text(e.what()) ? instead : e.what());
}

/// The standard library's exceptions, as NumPy would name the same failure.
void translate_std_error(const std::exception_ptr& p) {
  try {
    std::rethrow_exception(p);
  } catch (const std::bad_alloc&) {  // (bad_array_new_length too)
    PyErr_SetString(PyExc_MemoryError, "out of host memory");
  } catch (const std::bad_cast&) {  // nanobind's cast_error: a Python object of the wrong type
    PyErr_SetString(PyExc_TypeError, "an argument has the wrong type for this function");
  } catch (const std::length_error& e) {
    raise(PyExc_ValueError, e, "array is too big: a requested size exceeds what can be allocated");
  } catch (const std::out_of_range& e) {
    raise(PyExc_IndexError, e, "index out of range");
  } catch (const std::overflow_error& e) {
    raise(PyExc_OverflowError, e, "a value is out of range");
  } catch (const std::underflow_error& e) {
    raise(PyExc_OverflowError, e, "a value is out of range");
  } catch (const std::invalid_argument& e) {
    raise(PyExc_ValueError, e, "invalid value");
  } catch (const std::domain_error& e) {
    raise(PyExc_ValueError, e, "a value is outside the function's domain");
  } catch (const std::range_error& e) {
    raise(PyExc_ValueError, e, "a result is out of range");
  } catch (const std::system_error& e) {
    nb::object args = nb::make_tuple(e.code().value(), e.code().message());
    PyErr_SetObject(PyExc_OSError, args.ptr());
  } catch (const std::exception& e) {
    raise(PyExc_RuntimeError, e, "internal error in cupric (a C++ library exception); please report it");
  } catch (...) {
    PyErr_SetString(PyExc_SystemError, "internal error in cupric (an unknown C++ exception); please report it");
  }
}

/// cupric's own exceptions (errors.hpp); rethrows any other.
void translate_cupric_error(const std::exception_ptr& p) {
  try {
    std::rethrow_exception(p);
  } catch (const AxisError& e) {
    PyErr_SetString(axis_error_to_raise(), e.what());
  } catch (const ZeroDivisionError& e) {
    PyErr_SetString(PyExc_ZeroDivisionError, e.what());
  } catch (const LinAlgError& e) {
    raise_linalg_error(e.what());
  } catch (const ZeroSizeError& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const ValueError& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const TypeError& e) {
    PyErr_SetString(PyExc_TypeError, e.what());
  } catch (const IndexError& e) {
    PyErr_SetString(PyExc_IndexError, e.what());
  } catch (const OverflowError& e) {
    PyErr_SetString(PyExc_OverflowError, e.what());
  } catch (const NotImplementedError& e) {
    PyErr_SetString(PyExc_NotImplementedError, e.what());
  } catch (const BufferError& e) {
    PyErr_SetString(PyExc_BufferError, e.what());
  } catch (const MemoryError& e) {
    PyErr_SetString(PyExc_MemoryError, e.what());
  } catch (const FloatingPointError& e) {
    PyErr_SetString(PyExc_FloatingPointError, e.what());
  }
}

/// nanobind's own exceptions (a Python error in flight, or a builtin it names); rethrows any other.
void translate_nanobind_error(const std::exception_ptr& p) {
  try {
    std::rethrow_exception(p);
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const nb::builtin_exception& e) {
    using K = nb::exception_type;
    PyObject* type = e.type() == K::stop_iteration    ? PyExc_StopIteration
                     : e.type() == K::index_error     ? PyExc_IndexError
                     : e.type() == K::key_error       ? PyExc_KeyError
                     : e.type() == K::value_error     ? PyExc_ValueError
                     : e.type() == K::type_error      ? PyExc_TypeError
                     : e.type() == K::buffer_error    ? PyExc_BufferError
                     : e.type() == K::import_error    ? PyExc_ImportError
                     : e.type() == K::attribute_error ? PyExc_AttributeError
                                                      : PyExc_RuntimeError;
    PyErr_SetString(type, e.what());
  }
}
}  // namespace

void translate_cpp_error(const std::exception_ptr& p) noexcept {
  // each stage sets the error for its own kinds and rethrows the rest to the next
  using Stage = void (*)(const std::exception_ptr&);
  static constexpr Stage stages[] = {&translate_nanobind_error, &translate_cuda_error, &translate_cupric_error};
  std::exception_ptr current = p;
  for (Stage stage : stages) {
    try {
      stage(current);
      return;
    } catch (...) {
      current = std::current_exception();
    }
  }
  translate_std_error(current);
}

void set_python_error(const std::exception_ptr& p) noexcept { translate_cpp_error(p); }

}  // namespace cupric::py
