// foreign_protocols.hpp — the importer's readers of the protocols that describe memory in Python
// objects (the array interface dicts, DLPack capsules) and the helpers every reader shares.
// Internal to foreign_array.cpp and foreign_protocols.cpp; consumers use foreign_array.hpp.
#pragma once

#include <nanobind/nanobind.h>

#include <optional>
#include <string>
#include <utility>

#include "cupric/errors.hpp"
#include "foreign_array.hpp"

namespace cupric::py {

/// Keeps a pending Python exception aside while a capsule destructor runs (destructors may run
/// while an exception is being raised and must not clobber it).
class ErrorStash {
 public:
#if PY_VERSION_HEX >= 0x030C0000
  ErrorStash() : exc_(PyErr_GetRaisedException()) {}
  ~ErrorStash() { PyErr_SetRaisedException(exc_); }

 private:
  PyObject* exc_;
#else
  ErrorStash() { PyErr_Fetch(&type_, &value_, &tb_); }
  ~ErrorStash() { PyErr_Restore(type_, value_, tb_); }

 private:
  PyObject *type_ = nullptr, *value_ = nullptr, *tb_ = nullptr;
#endif
};

/// Interned attribute and key names, made once.
struct Names {
  PyObject *dtype, *is_cuda, *get_device, *data_ptr, *shape, *stride, *array_interface, *cuda_array_interface, *dlpack,
      *dlpack_device, *typestr, *data, *strides, *stream, *mask, *ref, *version;
  Names();
};
const Names& names();

/// obj.name as a new reference, or null when it has none (or reading it raises: the error is
/// cleared, as hasattr() would).
PyObject* lookup_attr(PyObject* obj, PyObject* name);
bool has_attr(PyObject* obj, PyObject* name);

/// Raises the pending error of PyNumber_Index(v): a TypeError gets the protocol, field and value
/// in front of NumPy's words.
[[noreturn]] void throw_not_an_int(nb::handle v, const char* protocol, const char* field);

/// An integer field of a protocol (extents, strides, pointers, streams): NumPy's TypeError for
/// non-integers ("'float' object cannot be interpreted as an integer", after the field and value),
/// a ValueError naming the field and value when it does not fit.
template <class Int>
Int interface_int(nb::handle v, const char* protocol, const char* field) {
  nb::object index = nb::steal(PyNumber_Index(v.ptr()));
  if (!index.is_valid()) throw_not_an_int(v, protocol, field);
  Int out{};
  if (!nb::try_cast(index, out))
    throw ValueError(cat(protocol, ": ", field, " ", nb::cast<std::string>(nb::str(index)), " is out of range"));
  return out;
}
/// A tuple of them (at most 64): TypeError when `seq` is not a tuple.
Shape interface_ints(PyObject* seq, const char* protocol, const char* field);

/// What an __array_interface__ or __cuda_array_interface__ dict describes, read with NumPy's errors
/// (missing fields, non-integers).
struct InterfaceLayout {
  std::string typestr;
  std::int64_t itemsize = 0;  ///< from the typestr ("<f8": 8)
  Shape shape;
  std::optional<Strides> byte_strides;  ///< nullopt: C-contiguous
  std::uintptr_t data = 0;
  bool readonly = false;
};
/// Reads and checks (check_foreign_array) an interface dict; `protocol` names it in messages.
/// `unaligned_ok`: strides that are not multiples of the itemsize are left to the caller.
InterfaceLayout read_interface(nb::handle iface, const char* protocol, bool unaligned_ok = false);
/// The DType a typestr names (the V2 of a bfloat16 producer through its .dtype): TypeError
/// naming the typestr otherwise.
DType dtype_from_typestr(nb::handle obj, const InterfaceLayout& layout);

/// The shared check of what a reader found (check_foreign_array's rules: ValueError naming
/// `protocol`), then its strides in elements; `byte_strides` null: C order.
void finish(ForeignArray& out, const char* protocol, const Strides* byte_strides);
bool any_unaligned(const Strides& byte_strides, std::int64_t itemsize);

inline constexpr int dlpack_cuda = 2, dlpack_cuda_host = 3, dlpack_cuda_managed = 13;
/// (device type, id) from __dlpack_device__, or nullopt when the object has none: TypeError when it
/// gives no pair of ints, ValueError for a negative id.
std::optional<std::pair<int, int>> dlpack_device(PyObject* obj);

bool read_array_interface(PyObject* obj, const ImportOptions& options, ForeignArray& out);
bool read_cuda_array_interface(PyObject* obj, const ImportOptions& options, ForeignArray& out);
bool read_dlpack(PyObject* obj, const ImportOptions& options, ForeignArray& out);

}  // namespace cupric::py
