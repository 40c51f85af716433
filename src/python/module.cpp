// module.cpp — the one NB_MODULE: maps C++ exceptions to Python's, then binds each area.
#include "convert.hpp"
#include "cupric/errors.hpp"

namespace cupric::py {
void bind_dtype(nb::module_& m);
void bind_array(nb::module_& m);
void bind_ufunc(nb::module_& m);
void bind_extensions(nb::module_& m);  // areas that add to the ndarray class (see bind_extensions.cpp)
}  // namespace cupric::py

NB_MODULE(_cupric, m) {
  using namespace cupric;
  // Objects that Python itself keeps past the module's teardown (pytest's parameter lists,
  // hypothesis' strategies) are reported as leaks at exit; they are not ours to free.
  nb::set_leak_warnings(false);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const AxisError& e) {
      nb::object axis_error = nb::module_::import_("numpy").attr("exceptions").attr("AxisError");
      PyErr_SetObject(axis_error.ptr(), nb::str(e.what()).ptr());
    } catch (const ZeroDivisionError& e) {
      PyErr_SetString(PyExc_ZeroDivisionError, e.what());
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
    }
  });
  py::bind_dtype(m);
  py::bind_array(m);
  py::bind_ufunc(m);
  py::bind_extensions(m);
}
