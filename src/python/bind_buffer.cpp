// bind_buffer.cpp — the buffer protocol (PEP 3118) on ndarray: memoryview(x), np.frombuffer,
// struct and ctypes see CPU arrays without a copy. Installed as type slots by bind_array.cpp.
#include <cstdlib>
#include <cstring>

#include "convert.hpp"
#include "cupric/errors.hpp"

namespace cupric::py {

namespace {
/// PEP 3118 format of a dtype (NumPy's choice for each, so NumPy reads back the same dtype).
const char* buffer_format(DType t) {
  constexpr bool long_is_64 = sizeof(long) == 8;
  switch (t) {
    case DType::bool_: return "?";
    case DType::int8: return "b";
    case DType::uint8: return "B";
    case DType::int16: return "h";
    case DType::uint16: return "H";
    case DType::int32: return "i";
    case DType::uint32: return "I";
    case DType::int64: return long_is_64 ? "l" : "q";
    case DType::uint64: return long_is_64 ? "L" : "Q";
    case DType::float16: return "e";
    case DType::float32: return "f";
    case DType::float64: return "d";
    case DType::complex64: return "Zf";
    case DType::complex128: return "Zd";
    case DType::bfloat16:
    case DType::float8_e4m3fn:
    case DType::float8_e5m2: break;
  }
  return nullptr;
}

int fail(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  return -1;
}

bool wants(int flags, int request) { return (flags & request) == request; }

int ndarray_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  view->obj = nullptr;
  const Array& a = *nb::inst_ptr<Array>(self);
  if (!a.device().is_cpu())
    return fail(PyExc_BufferError, cat("a ", a.device().str(),
                                       " array has no buffer protocol; move it with "
                                       "x.to_device(\"cpu\") or use DLPack"));
  const char* format = buffer_format(a.dtype());
  if (!format)
    return fail(PyExc_BufferError, cat(name(a.dtype()),
                                       " has no buffer-protocol format; convert with x.astype(cupric.float32) "
                                       "or exchange it through DLPack"));
  if (wants(flags, PyBUF_WRITABLE) && !a.writeable()) return fail(PyExc_ValueError, "buffer source array is read-only");
  const bool c = a.is_c_contiguous();
  if (wants(flags, PyBUF_C_CONTIGUOUS) && !c) return fail(PyExc_ValueError, "ndarray is not C-contiguous");
  if (wants(flags, PyBUF_F_CONTIGUOUS) && !a.is_f_contiguous())
    return fail(PyExc_ValueError, "ndarray is not Fortran contiguous");
  if (wants(flags, PyBUF_ANY_CONTIGUOUS) && !c && !a.is_f_contiguous())
    return fail(PyExc_ValueError, "ndarray is not contiguous");
  if (!wants(flags, PyBUF_STRIDES) && !c) return fail(PyExc_ValueError, "ndarray is not C-contiguous");

  const int nd = a.ndim();
  // shape then strides, freed by releasebuffer
  auto* dims = static_cast<Py_ssize_t*>(std::malloc(sizeof(Py_ssize_t) * static_cast<std::size_t>(2 * nd + 1)));
  if (!dims) {
    PyErr_NoMemory();
    return -1;
  }
  for (int i = 0; i < nd; ++i) {
    dims[i] = static_cast<Py_ssize_t>(a.shape()[i]);
    dims[nd + i] = static_cast<Py_ssize_t>(a.strides()[i] * a.itemsize());
  }
  view->buf = a.data();
  view->obj = Py_NewRef(self);
  view->len = static_cast<Py_ssize_t>(a.nbytes());
  view->readonly = !a.writeable();
  view->itemsize = static_cast<Py_ssize_t>(a.itemsize());
  view->format = wants(flags, PyBUF_FORMAT) ? const_cast<char*>(format) : nullptr;
  view->ndim = wants(flags, PyBUF_ND) ? nd : 0;  // as NumPy: no shape asked, no dimensions given
  view->shape = wants(flags, PyBUF_ND) ? dims : nullptr;
  view->strides = wants(flags, PyBUF_STRIDES) ? dims + nd : nullptr;
  view->suboffsets = nullptr;
  view->internal = dims;
  return 0;
}

void ndarray_releasebuffer(PyObject*, Py_buffer* view) { std::free(view->internal); }

PyType_Slot g_buffer_slots[] = {
    {Py_bf_getbuffer, reinterpret_cast<void*>(&ndarray_getbuffer)},
    {Py_bf_releasebuffer, reinterpret_cast<void*>(&ndarray_releasebuffer)},
    {0, nullptr},
};
}  // namespace

const PyType_Slot* ndarray_buffer_slots() { return g_buffer_slots; }

}  // namespace cupric::py
