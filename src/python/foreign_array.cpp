// foreign_array.cpp — the one foreign-array importer (foreign_array.hpp): the readers of cupric,
// NumPy and PyTorch arrays (each ending in the shared check, check_foreign_array's rules), the
// choice of reader, views of imports, and the Python binding. The interface dicts and DLPack
// capsules are read in foreign_protocols.cpp.
#include "foreign_array.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <string>
#include <utility>
#include <vector>

#include "convert.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/device.hpp"
#include "cupric/runtime/stream.hpp"
#include "foreign_protocols.hpp"
#include "py_types.hpp"

namespace cupric::py {

const char* kind_name(ForeignKind k) {
  switch (k) {
    case ForeignKind::cupric: return "cupric";
    case ForeignKind::numpy: return "numpy";
    case ForeignKind::torch: return "torch";
    case ForeignKind::array_interface: return "array_interface";
    case ForeignKind::cuda_array_interface: return "cuda_array_interface";
    case ForeignKind::dlpack: return "dlpack";
  }
  return "?";
}

namespace {

/// The type of numpy.ndarray or torch.Tensor once that module is imported (kept for the process:
/// neither class is ever replaced); null before.
PyTypeObject* imported_type(PyTypeObject*& slot, const char* module, const char* name) {
  if (slot) return slot;
  PyObject* m = PyImport_GetModule(nb::str(module).ptr());  // only a module already imported
  if (!m) {
    PyErr_Clear();
    return nullptr;
  }
  PyObject* t = PyObject_GetAttrString(m, name);
  Py_DECREF(m);
  if (t && PyType_Check(t)) slot = reinterpret_cast<PyTypeObject*>(t);  // the reference is kept
  else Py_XDECREF(t);
  PyErr_Clear();
  return slot;
}

PyTypeObject* numpy_ndarray_type() {
  static PyTypeObject* t = nullptr;
  return imported_type(t, "numpy", "ndarray");
}

PyTypeObject* torch_tensor_type() {
  static PyTypeObject* t = nullptr;
  return imported_type(t, "torch", "Tensor");
}

bool is_instance(PyObject* o, PyTypeObject* t) { return t && PyObject_TypeCheck(o, t); }

/// An attribute as a new reference; a Python error is thrown when reading it fails.
nb::object attr(PyObject* o, PyObject* name) {
  PyObject* v = PyObject_GetAttr(o, name);
  if (!v) throw nb::python_error();
  return nb::steal(v);
}

/// A method's result as a new reference; a Python error is thrown when the call fails.
nb::object call_method(PyObject* o, PyObject* name) {
  PyObject* v = PyObject_CallMethodNoArgs(o, name);
  if (!v) throw nb::python_error();
  return nb::steal(v);
}

// ---- readers ------------------------------------------------------------------------------------

bool read_cupric(PyObject* o, const ImportOptions& opt, ForeignArray& out) {
  nb::handle h(o);
  if (!nb::isinstance<Array>(h)) return false;
  const Array& a = *nb::inst_ptr<Array>(h);
  if (opt.device_only && a.device().is_cpu()) return false;
  out.data = reinterpret_cast<std::uintptr_t>(a.data());
  out.dtype = a.dtype();
  out.shape = a.shape();
  out.strides = a.strides();
  out.device = a.device();
  out.readonly = !a.writeable();
  out.owner = nb::borrow(h);
  out.storage = a.device().is_cpu() ? nullptr : a.storage().get();
  return true;
}

bool read_numpy(PyObject* o, const ImportOptions& opt, ForeignArray& out) {
  if (!is_instance(o, numpy_ndarray_type()) || opt.device_only) return false;
  const Names& n = names();
  out.dtype = dtype_from_numpy(o, attr(o, n.dtype));
  Py_buffer view;
  if (PyObject_GetBuffer(o, &view, PyBUF_STRIDES) != 0) throw nb::python_error();
  out.data = reinterpret_cast<std::uintptr_t>(view.buf);
  out.shape.assign(view.shape, view.shape + view.ndim);
  Strides bytes(view.strides, view.strides + view.ndim);
  // C-contiguous arrays get C strides, as their __array_interface__ says (strides None): NumPy may
  // keep other strides on empty or length-1 dimensions
  const bool c_order = PyBuffer_IsContiguous(&view, 'C') != 0;
  out.readonly = view.readonly != 0;
  PyBuffer_Release(&view);  // the array itself (the owner) keeps the memory
  if (opt.copy_unaligned && any_unaligned(bytes, itemsize(out.dtype))) {
    nb::object copy = nb::module_::import_("numpy").attr("ascontiguousarray")(nb::handle(o));
    return read_numpy(copy.ptr(), opt, out);  // (aligned now)
  }
  out.device = Device::cpu();
  out.owner = nb::borrow(o);
  finish(out, "numpy.ndarray", c_order ? nullptr : &bytes);
  return true;
}

/// The DType of a torch dtype object, by identity after the first time (torch's dtypes are
/// singletons): "torch.float32" -> float32.
DType torch_dtype(PyObject* dtype) {
  static std::vector<std::pair<PyObject*, DType>> known;  // strong references, kept
  for (const auto& [p, d] : known)
    if (p == dtype) return d;
  const std::string text = nb::cast<std::string>(nb::str(nb::handle(dtype)));
  const std::string name = text.rfind("torch.", 0) == 0 ? text.substr(6) : text;
  DType d;
  try {
    d = dtype_from_name(name);
  } catch (const TypeError&) {
    throw TypeError(cat("a PyTorch tensor of dtype ", text, " has no cupric dtype"));
  }
  known.emplace_back(nb::handle(dtype).inc_ref().ptr(), d);
  return d;
}

bool read_torch(PyObject* o, const ImportOptions& opt, ForeignArray& out) {
  if (!is_instance(o, torch_tensor_type())) return false;
  const Names& n = names();
  const bool on_cuda = attr(o, n.is_cuda).ptr() == Py_True;
  if (opt.device_only && !on_cuda) return false;
  out.dtype = torch_dtype(attr(o, n.dtype).ptr());
  out.device = Device::cpu();
  if (on_cuda) {
    const auto index = interface_int<long long>(call_method(o, n.get_device).ptr(), "torch.Tensor", "device");
    if (index < 0 || index > INT32_MAX)
      throw ValueError(cat("torch.Tensor: get_device() gave ", index, " for a CUDA tensor (not a device index)"));
    out.device = Device::cuda(static_cast<int>(index));
  }
  out.shape = interface_ints(attr(o, n.shape).ptr(), "torch.Tensor", "shape");
  const Strides elements = interface_ints(call_method(o, n.stride).ptr(), "torch.Tensor", "strides");
  out.data = interface_int<std::uintptr_t>(call_method(o, n.data_ptr).ptr(), "torch.Tensor", "data pointer");
  Strides bytes;
  const std::string problem = foreign_byte_strides("torch.Tensor", elements, itemsize(out.dtype), bytes);
  if (!problem.empty()) throw ValueError(problem);
  out.owner = nb::borrow(o);
  finish(out, "torch.Tensor", &bytes);
  return true;
}

}  // namespace

DType dtype_from_numpy(nb::handle obj, nb::handle dtype) {
  if (std::optional<DType> d = known_numpy_dtype(dtype)) return *d;
  // an equal dtype that is not NumPy's own instance, or one cupric lacks: named by its typestr,
  // as the array interface names it
  InterfaceLayout l;
  l.typestr = nb::cast<std::string>(dtype.attr("str"));
  l.itemsize = nb::cast<std::int64_t>(dtype.attr("itemsize"));
  return dtype_from_typestr(obj, l);
}

std::optional<ForeignKind> foreign_kind(nb::handle obj, std::span<const ForeignKind> order) {
  PyObject* o = obj.ptr();
  const Names& n = names();
  for (ForeignKind k : order) {
    bool is = false;
    switch (k) {
      case ForeignKind::cupric: is = nb::isinstance<Array>(obj); break;
      case ForeignKind::numpy: is = is_instance(o, numpy_ndarray_type()); break;
      case ForeignKind::torch: is = is_instance(o, torch_tensor_type()); break;
      case ForeignKind::array_interface: is = has_attr(o, n.array_interface); break;
      case ForeignKind::cuda_array_interface: is = has_attr(o, n.cuda_array_interface); break;
      case ForeignKind::dlpack: is = PyCapsule_CheckExact(o) || has_attr(o, n.dlpack); break;
    }
    if (is) return k;
  }
  return std::nullopt;
}

bool import_as(nb::handle obj, ForeignKind kind, const ImportOptions& options, ForeignArray& out) {
  out.kind = kind;
  out.stream.reset();
  out.storage = nullptr;
  out.readonly = false;
  PyObject* o = obj.ptr();
  switch (kind) {
    case ForeignKind::cupric: return read_cupric(o, options, out);
    case ForeignKind::numpy: return read_numpy(o, options, out);
    case ForeignKind::torch: return read_torch(o, options, out);
    case ForeignKind::array_interface: return read_array_interface(o, options, out);
    case ForeignKind::cuda_array_interface: return read_cuda_array_interface(o, options, out);
    case ForeignKind::dlpack: return read_dlpack(o, options, out);
  }
  return false;
}

std::optional<ForeignArray> import_foreign(nb::handle obj, std::span<const ForeignKind> order,
                                           const ImportOptions& options) {
  const std::optional<ForeignKind> kind = foreign_kind(obj, order);
  if (!kind) return std::nullopt;
  ForeignArray out;
  if (!import_as(obj, *kind, options, out)) return std::nullopt;
  return out;
}

Array to_array(const ForeignArray& f) {
  if (f.kind == ForeignKind::cupric) return *nb::inst_ptr<Array>(f.owner);
  PyObject* owner = f.owner.inc_ref().ptr();
  const auto nbytes = static_cast<std::size_t>(shape_size(f.shape) * itemsize(f.dtype));
  auto storage = std::make_shared<Storage>(f.device, reinterpret_cast<void*>(f.data), nbytes, [owner](void*) {
    nb::gil_scoped_acquire gil;
    Py_DECREF(owner);
  });
  Array a(storage, f.shape, f.strides, 0, f.dtype);
  if (f.readonly) a.set_writeable(false);
  if (!f.device.is_cpu()) {
    const int device = f.device.index;
    runtime::StreamState& current = runtime::current_stream_state(device);
    if (f.stream) runtime::wait_for_handle(current.handle, device, *f.stream);
    storage->set_last_writer(current.serial);  // ready on the current stream from here on
  }
  return a;
}

// ---- Python --------------------------------------------------------------------------------------

namespace {
nb::tuple int_tuple(const SmallVector<std::int64_t, 8>& v) {
  nb::object t = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(v.size())));
  if (!t.is_valid()) throw nb::python_error();
  for (std::size_t i = 0; i < v.size(); ++i)
    PyTuple_SET_ITEM(t.ptr(), static_cast<Py_ssize_t>(i), PyLong_FromLongLong(v[i]));
  return nb::borrow<nb::tuple>(t);
}

ForeignKind kind_from_name(const std::string& name) {
  for (ForeignKind k : kArgumentOrder)
    if (name == kind_name(k)) return k;
  throw ValueError(cat("unknown foreign array kind '", name, "'"));
}
}  // namespace

void bind_foreign_array(nb::module_& m) {
  nb::class_<ForeignArray>(m, "ForeignArray",
                           "Another library's array as cupric's importer reads it (nothing copied): ptr (element 0), "
                           "dtype, shape, strides (in elements), device, stream (the driver handle the data is ready "
                           "on, 0 = the legacy default stream; None: nothing to wait for), readonly, owner.")
      .def_prop_ro("kind", [](const ForeignArray& f) { return kind_name(f.kind); })
      .def_prop_ro("ptr", [](const ForeignArray& f) { return f.data; })
      .def_prop_ro("dtype", [](const ForeignArray& f) { return nb::borrow<DTypeResult>(dtype_to_py(f.dtype)); })
      .def_prop_ro("shape", [](const ForeignArray& f) { return int_tuple(f.shape); })
      .def_prop_ro("strides", [](const ForeignArray& f) { return int_tuple(f.strides); })
      .def_prop_ro("ndim", &ForeignArray::ndim)
      .def_prop_ro("device", [](const ForeignArray& f) { return f.device; })
      .def_prop_ro("stream",
                   [](const ForeignArray& f) -> std::optional<std::uintptr_t> {
                     if (!f.stream) return std::nullopt;
                     return reinterpret_cast<std::uintptr_t>(*f.stream);
                   })
      .def_prop_ro("readonly", [](const ForeignArray& f) { return f.readonly; })
      .def_prop_ro("owner", [](const ForeignArray& f) { return f.owner; })
      .def("__repr__", [](const ForeignArray& f) {
        return cat("<cupric ForeignArray ", kind_name(f.kind), " ", name(f.dtype), shape_str(f.shape), " at 0x",
                   std::hex, f.data, std::dec, " on ", f.device.str(), ">");
      });
  m.def(
      "_import_array",
      [](nb::handle obj, std::optional<std::string> kind, bool device_only) -> nb::object {
        ImportOptions o;
        o.device_only = device_only;
        if (kind) {
          ForeignArray out;
          if (!import_as(obj, kind_from_name(*kind), o, out)) return nb::none();
          return nb::cast(std::move(out));
        }
        std::optional<ForeignArray> f = import_foreign(obj, kArgumentOrder, o);
        return f ? nb::cast(std::move(*f)) : nb::none();
      },
      nb::arg("obj"), nb::arg("kind") = nb::none(), nb::arg("device_only") = false,
      "The importer on `obj` (as kernel arguments are read: cupric, NumPy, PyTorch, __array_interface__, "
      "__cuda_array_interface__, DLPack, the first the object is), or as `kind`: a ForeignArray, or None when it "
      "is none of them (device_only: or its memory is on the host).");
  m.def(
      "_foreign_kind",
      [](nb::handle obj) -> nb::object {
        const std::optional<ForeignKind> k = foreign_kind(obj, kArgumentOrder);
        return k ? nb::object(nb::str(kind_name(*k))) : nb::none();
      },
      nb::arg("obj"), "The kind of array the importer would read `obj` as (nothing is read), or None.");
}

}  // namespace cupric::py
