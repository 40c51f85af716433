// tile_launch_args.cpp — reading the arguments of cupric.tile launch plans with exact types and dtype
// identities, so that an argument a plan takes is one the Python path would specialise the same way.
#include "tile_launch_args.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "convert.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/device.hpp"

namespace cupric::py {

namespace {

/// Interned attribute names, made once.
struct Names {
  PyObject *dtype, *ndim, *is_cuda, *get_device, *data_ptr, *shape, *stride, *cai, *typestr, *data, *strides,
      *stream, *mask, *dlpack_device, *item;
  Names() {
    auto s = [](const char* n) { return PyUnicode_InternFromString(n); };
    dtype = s("dtype"), ndim = s("ndim"), is_cuda = s("is_cuda"), get_device = s("get_device");
    data_ptr = s("data_ptr"), shape = s("shape"), stride = s("stride"), cai = s("__cuda_array_interface__");
    typestr = s("typestr"), data = s("data"), strides = s("strides"), stream = s("stream"), mask = s("mask");
    dlpack_device = s("__dlpack_device__"), item = s("item");
  }
};
const Names& names() {
  static const Names* n = new Names();  // leaked: lives as long as the interpreter's strings
  return *n;
}

PyObject* torch_tensor_type = nullptr;  // torch.Tensor, once a plan met one

/// An attribute or method result as an owned reference; null (error cleared) when it failed.
struct Ref {
  PyObject* p;
  explicit Ref(PyObject* o) : p(o) {
    if (!p) PyErr_Clear();
  }
  Ref(const Ref&) = delete;
  ~Ref() { Py_XDECREF(p); }
  explicit operator bool() const { return p != nullptr; }
};

bool as_ll(PyObject* o, long long* v) {
  if (!PyLong_Check(o)) return false;
  int overflow = 0;
  *v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow || (*v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return false;
  }
  return true;
}

/// Extents from a tuple of ints (torch.Size is a tuple); strides in elements from a tuple of
/// ints, divided by `item` when they are in bytes.
bool read_ints(PyObject* t, int n, long long* out, long long item = 1) {
  if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != n) return false;
  for (int i = 0; i < n; ++i) {
    long long v;
    if (!as_ll(PyTuple_GET_ITEM(t, i), &v) || v % item != 0) return false;
    out[i] = v / item;
  }
  return true;
}

void c_strides(int n, const long long* shape, long long* strides) {
  long long s = 1;
  for (int i = n - 1; i >= 0; --i) {
    strides[i] = s;
    s *= shape[i] > 1 ? shape[i] : 1;
  }
}

bool same_constant(PyObject* v, PyObject* c) {
  if (v == c) return true;
  if (Py_TYPE(v) != Py_TYPE(c)) return false;  // 1, 1.0 and True are other specialisations
  if (PyTuple_Check(v) || PyList_Check(v)) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
    if (n != PySequence_Fast_GET_SIZE(c)) return false;
    for (Py_ssize_t i = 0; i < n; ++i)
      if (!same_constant(PySequence_Fast_GET_ITEM(v, i), PySequence_Fast_GET_ITEM(c, i))) return false;
    return true;
  }
  const int r = PyObject_RichCompareBool(v, c, Py_EQ);
  if (r < 0) PyErr_Clear();
  return r == 1;
}

bool read_cupric(const PlanParam& p, PyObject* o, int device, ReadArg& out) {
  nb::handle h(o);
  if (!nb::isinstance<Array>(h)) return false;
  const Array& a = *nb::inst_ptr<Array>(h);
  const Device d = a.device();
  if (device < 0 ? !d.is_cpu() : (d.is_cpu() || d.index != device)) return false;
  if (a.dtype() != p.dtype || a.ndim() != p.ndim || (p.written && !a.writeable())) return false;
  out.view.data = a.data();
  out.storage = device < 0 ? nullptr : a.storage().get();
  for (int k = 0; k < p.ndim; ++k) {
    out.view.shape[k] = a.shape()[static_cast<std::size_t>(k)];
    out.view.strides[k] = a.strides()[static_cast<std::size_t>(k)];
  }
  return true;
}

bool read_torch(const PlanParam& p, PyObject* o, int device, ReadArg& out) {
  const Names& n = names();
  if (torch_tensor_type == nullptr || !PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(torch_tensor_type)))
    return false;
  Ref dtype(PyObject_GetAttr(o, n.dtype));
  if (dtype.p != p.token.ptr()) return false;
  Ref is_cuda(PyObject_GetAttr(o, n.is_cuda));
  Ref dev(PyObject_CallMethodNoArgs(o, n.get_device));
  long long index;
  if (is_cuda.p != Py_True || !dev || !as_ll(dev.p, &index) || index != device) return false;
  Ref shape(PyObject_GetAttr(o, n.shape));
  Ref strides(PyObject_CallMethodNoArgs(o, n.stride));
  Ref ptr(PyObject_CallMethodNoArgs(o, n.data_ptr));
  if (!shape || !strides || !ptr || !read_ints(shape.p, p.ndim, out.view.shape) ||
      !read_ints(strides.p, p.ndim, out.view.strides))
    return false;
  const unsigned long long address = PyLong_AsUnsignedLongLong(ptr.p);
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  out.view.data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(address));
  return true;
}

/// check_foreign_array's rules for a layout read from __cuda_array_interface__ (strides in elements).
bool valid_foreign(const PlanParam& p, std::uintptr_t data, const cupric_tile_array& view, bool strided) {
  const std::int64_t item = itemsize(p.dtype);
  Shape shape(view.shape, view.shape + p.ndim);
  Strides bytes(view.strides, view.strides + p.ndim);
  for (auto& s : bytes) s *= item;  // exact: read_ints divided them by the item size
  return foreign_array_problem("__cuda_array_interface__", data, shape, strided ? &bytes : nullptr, item).empty();
}

bool cai_device_is(const PlanParam& p, PyObject* o, int device) {
  if (!p.dlpack_device) return runtime::Device::current().index() == device;
  Ref d(PyObject_CallMethodNoArgs(o, names().dlpack_device));
  long long kind, index;
  if (!d || !PyTuple_Check(d.p) || PyTuple_GET_SIZE(d.p) != 2 || !as_ll(PyTuple_GET_ITEM(d.p, 0), &kind) ||
      !as_ll(PyTuple_GET_ITEM(d.p, 1), &index))
    return false;
  return (kind == 2 || kind == 13) && index == device;  // kDLCUDA, kDLCUDAManaged
}

bool read_cai(const PlanParam& p, PyObject* o, int device, ReadArg& out) {
  const Names& n = names();
  if (!cai_device_is(p, o, device)) return false;
  Ref iface(PyObject_GetAttr(o, n.cai));
  if (!iface || !PyDict_Check(iface.p)) return false;
  PyObject* typestr = PyDict_GetItemWithError(iface.p, n.typestr);
  if (!typestr || !PyUnicode_Check(typestr) || PyUnicode_Compare(typestr, p.token.ptr()) != 0) {
    PyErr_Clear();
    return false;
  }
  PyObject* mask = PyDict_GetItemWithError(iface.p, n.mask);
  PyObject* shape = PyDict_GetItemWithError(iface.p, n.shape);
  PyObject* data = PyDict_GetItemWithError(iface.p, n.data);
  PyObject* strides = PyDict_GetItemWithError(iface.p, n.strides);
  PyObject* stream = PyDict_GetItemWithError(iface.p, n.stream);
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  if ((mask && mask != Py_None) || !shape || !read_ints(shape, p.ndim, out.view.shape)) return false;
  if (!strides || strides == Py_None) {
    c_strides(p.ndim, out.view.shape, out.view.strides);
  } else if (!read_ints(strides, p.ndim, out.view.strides, itemsize(p.dtype))) {
    return false;  // not multiples of the item size: the Python path says so
  }
  long long address;
  if (!data || !PyTuple_Check(data) || PyTuple_GET_SIZE(data) < 1 || !as_ll(PyTuple_GET_ITEM(data, 0), &address))
    return false;
  if (!valid_foreign(p, static_cast<std::uintptr_t>(address), out.view, strides && strides != Py_None))
    return false;  // the Python path reports the problem
  out.view.data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(address));
  out.has_stream = stream && stream != Py_None;
  if (out.has_stream) {
    long long s;
    // 0 (ambiguous) and bad values: the Python path says so
    if (!as_ll(stream, &s) || s <= 0) return false;
    out.stream = static_cast<std::uintptr_t>(s == 1 ? 0 : s);  // 1: the legacy default stream
  }
  return true;
}

bool read_numpy(const PlanParam& p, PyObject* o, ReadArg& out) {
  if (Py_TYPE(o) != reinterpret_cast<PyTypeObject*>(p.type.ptr())) return false;
  Ref dtype(PyObject_GetAttr(o, names().dtype));
  if (dtype.p != p.token.ptr()) return false;
  if (PyObject_GetBuffer(o, &out.buffer, PyBUF_STRIDES | (p.written ? PyBUF_WRITABLE : 0)) != 0) {
    PyErr_Clear();
    return false;
  }
  out.holds_buffer = true;
  const Py_ssize_t item = out.buffer.itemsize;
  if (out.buffer.ndim != p.ndim || item != itemsize(p.dtype)) return false;
  out.view.data = out.buffer.buf;
  for (int k = 0; k < p.ndim; ++k) {
    if (out.buffer.strides[k] % item != 0) return false;  // NumPy would copy: the Python path decides
    out.view.shape[k] = out.buffer.shape[k];
    out.view.strides[k] = out.buffer.strides[k] / item;
  }
  return true;
}

PyObject* module_attr(const char* module, const char* attr) {
  PyObject* m = PyImport_GetModule(nb::str(module).ptr());  // only modules already imported
  if (!m) {
    PyErr_Clear();
    return nullptr;
  }
  PyObject* a = PyObject_GetAttrString(m, attr);
  Py_DECREF(m);
  if (!a) PyErr_Clear();
  return a;  // new reference
}

bool is_instance_of(nb::handle value, const char* module, const char* type) {
  PyObject* t = module_attr(module, type);
  if (!t) return false;
  const int r = PyType_Check(t) ? PyObject_IsInstance(value.ptr(), t) : 0;
  Py_DECREF(t);
  if (r < 0) PyErr_Clear();
  return r == 1;
}

std::optional<PlanParam> classify_array(nb::handle value, PlanParam p, int device) {
  if (nb::isinstance<Array>(value)) {
    p.kind = ArgKind::cupric;
  } else if (device < 0) {
    if (!is_instance_of(value, "numpy", "ndarray")) return std::nullopt;
    p.kind = ArgKind::numpy;
    p.token = value.attr("dtype");
    p.type = nb::borrow(value.type());
  } else if (is_instance_of(value, "torch", "Tensor")) {
    if (torch_tensor_type == nullptr) torch_tensor_type = module_attr("torch", "Tensor");  // kept for the process
    p.kind = ArgKind::torch;
    p.token = value.attr("dtype");
  } else {
    Ref iface(PyObject_GetAttr(value.ptr(), names().cai));  // a producer that refuses it goes through DLPack
    PyObject* found = iface && PyDict_Check(iface.p) ? PyDict_GetItemString(iface.p, "typestr") : nullptr;
    if (found == nullptr || !PyUnicode_Check(found)) return std::nullopt;
    nb::object typestr = nb::borrow(found);
    const std::string t = nb::cast<std::string>(typestr);
    if (t.size() < 2 || t[1] == 'V') return std::nullopt;  // opaque types (PyTorch's bfloat16) go through DLPack
    p.kind = ArgKind::cai;
    p.token = typestr;
    p.dlpack_device = nb::hasattr(value, "__dlpack_device__");
  }
  return p;
}

}  // namespace

std::optional<PlanParam> classify(nb::handle value, nb::handle fact, int device) {
  PlanParam p;
  if (fact.is_none() || (nb::isinstance<nb::str>(fact) && nb::cast<std::string>(fact) == "fixed")) {
    p.kind = fact.is_none() ? ArgKind::constant : ArgKind::fixed;
    p.token = nb::borrow(value);
    return p;
  }
  auto [kind, dtype, ndim, written, keyed] = nb::cast<std::tuple<std::string, nb::handle, int, bool, bool>>(fact);
  p.dtype = dtype_from_py(dtype);
  p.ndim = ndim;
  p.written = written;
  p.keyed = keyed;
  if (kind == "array") {
    if (ndim < 0 || ndim > CUPRIC_TILE_MAX_DIMS) return std::nullopt;
    std::optional<PlanParam> a = classify_array(value, std::move(p), device);
    if (a && keyed) {  // the shape, as a launch reads it
      a->keyed = false;
      ReadArg r;
      if (!match_param(*a, value.ptr(), device, r)) return std::nullopt;
      a->keyed = true;
      a->key_shape.assign(r.view.shape, r.view.shape + ndim);
    }
    return a;
  }
  if (keyed) p.key = nb::borrow(value);
  if (itemsize(p.dtype) > 8) return std::nullopt;  // scalars travel in 8-byte slots
  PyTypeObject* t = Py_TYPE(value.ptr());
  if (kind == "weak" && t == &PyBool_Type) {
    p.kind = ArgKind::weak_bool;
  } else if (kind == "weak" && t == &PyLong_Type) {
    p.kind = ArgKind::weak_int;
  } else if (kind == "weak" && t == &PyFloat_Type) {
    p.kind = ArgKind::weak_float;
  } else if (kind == "typed" && is_instance_of(value, "numpy", "generic")) {
    p.kind = ArgKind::typed;
    p.token = nb::borrow(value.type());
  } else {
    return std::nullopt;
  }
  return p;
}

namespace {

bool match_array(const PlanParam& p, PyObject* v, int device, ReadArg& out) {
  out.release();
  out.has_stream = false;
  out.storage = nullptr;
  out.ndim = p.ndim;
  bool ok = false;
  switch (p.kind) {
    case ArgKind::cupric:
      ok = read_cupric(p, v, device, out);
      break;
    case ArgKind::torch:
      ok = read_torch(p, v, device, out);
      break;
    case ArgKind::cai:
      ok = read_cai(p, v, device, out);
      break;
    case ArgKind::numpy:
      ok = read_numpy(p, v, out);
      break;
    default:
      break;
  }
  if (!ok || !p.keyed) return ok;
  for (int k = 0; k < p.ndim; ++k)
    if (out.view.shape[k] != p.key_shape[static_cast<std::size_t>(k)]) return false;
  return true;
}

bool match_scalar(const PlanParam& p, PyObject* v) {
  bool ok = false;
  switch (p.kind) {
    case ArgKind::weak_bool:
      ok = Py_TYPE(v) == &PyBool_Type;
      break;
    case ArgKind::weak_int:
      ok = Py_TYPE(v) == &PyLong_Type;
      break;
    case ArgKind::weak_float:
      ok = Py_TYPE(v) == &PyFloat_Type;
      break;
    case ArgKind::typed:
      ok = reinterpret_cast<PyObject*>(Py_TYPE(v)) == p.token.ptr();
      break;
    default:
      break;
  }
  if (!ok || !p.keyed) return ok;
  const int r = PyObject_RichCompareBool(v, p.key.ptr(), Py_EQ);
  if (r < 0) PyErr_Clear();
  return r == 1;
}

}  // namespace

bool match_param(const PlanParam& p, PyObject* v, int device, ReadArg& out) {
  out.value = v;
  if (p.kind == ArgKind::constant) return same_constant(v, p.token.ptr());
  if (is_array_kind(p.kind)) return match_array(p, v, device, out);
  return match_scalar(p, v);
}

void store_scalar(const PlanParam& p, PyObject* v, void* dst) {
  if (p.kind != ArgKind::typed) return scalar_from_py(nb::handle(v)).store(p.dtype, dst);
  nb::object item = nb::steal(PyObject_CallMethodNoArgs(v, names().item));  // as the Python path: v.item()
  if (!item.is_valid()) throw nb::python_error();
  scalar_from_py(item).store(p.dtype, dst);
}

void pack_array(runtime::ArgPacker& packer, const ReadArg& a) {
  packer.add_pointer(reinterpret_cast<std::uintptr_t>(a.view.data), "an array");
  for (int k = 0; k < a.ndim; ++k) packer.add_int(a.view.shape[k]);
  for (int k = 0; k < a.ndim; ++k) packer.add_int(a.view.strides[k]);
}

namespace {
/// The number of blocks, or -1 when it passes 2^63 - 1 (extents >= 0).
long long grid_blocks(const long long g[3]) {
  long long n = 1;
  for (int i = 0; i < 3; ++i)
    if (__builtin_mul_overflow(n, g[i], &n)) return -1;
  return n;
}
}  // namespace

bool grid_from_ints(PyObject* grid, long long g[3]) {
  g[0] = g[1] = g[2] = 1;
  if (PyLong_CheckExact(grid)) return as_ll(grid, &g[0]) && g[0] >= 0;
  if (!PyTuple_CheckExact(grid)) return false;
  const Py_ssize_t n = PyTuple_GET_SIZE(grid);
  if (n < 1 || n > 3) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* d = PyTuple_GET_ITEM(grid, i);
    if (!PyLong_CheckExact(d) || !as_ll(d, &g[i]) || g[i] < 0) return false;
  }
  return grid_blocks(g) >= 0;
}

void grid_from_py(nb::handle grid, long long g[3]) {
  g[0] = g[1] = g[2] = 1;
  const std::string given = nb::cast<std::string>(nb::repr(grid));
  nb::object dims = PyIndex_Check(grid.ptr()) ? nb::make_tuple(grid) : nb::borrow(grid);
  nb::object seq = nb::steal(PySequence_Fast(dims.ptr(), ""));
  if (!seq.is_valid()) {
    PyErr_Clear();
    throw TypeError(cat("a grid is an int or a tuple of 1 to 3 ints, got ", given));
  }
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.ptr());
  if (n < 1 || n > 3) throw ValueError(cat("a grid has 1 to 3 dimensions, got ", given));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* d = PySequence_Fast_GET_ITEM(seq.ptr(), i);
    if (!PyIndex_Check(d)) throw TypeError(cat("grid extents must be integers, got ", given));
    nb::object v = nb::steal(PyNumber_Index(d));
    if (!v.is_valid()) throw nb::python_error();
    int overflow = 0;
    g[i] = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
    if (overflow > 0) throw ValueError(cat("grid ", given, " has more than 2**63 - 1 blocks"));
    if (overflow < 0 || g[i] < 0) throw ValueError(cat("grid extents must be >= 0, got ", given));
  }
  if (grid_blocks(g) < 0) throw ValueError(cat("grid ", given, " has more than 2**63 - 1 blocks"));
}

void check_cuda_grid(const long long g[3]) {
  constexpr long long max_yz = 65535;
  if (g[0] > 2147483647LL || g[1] > max_yz || g[2] > max_yz)
    throw ValueError(cat("grid (", g[0], ", ", g[1], ", ", g[2], ") is too large for CUDA (x up to 2^31-1, y and z up to ",
                         max_yz, "); put the largest extent first"));
}

void run_host_kernel(const tile::HostKernel& k, const std::int64_t grid[3], const std::vector<void*>& args) {
  const long long g[3] = {grid[0], grid[1], grid[2]};
  if (g[0] < 0 || g[1] < 0 || g[2] < 0 || grid_blocks(g) < 0)  // grid_from_py's rules, for every CPU launch
    throw ValueError(
        cat("grid (", g[0], ", ", g[1], ", ", g[2], ") must have extents >= 0 and at most 2**63 - 1 blocks"));
  cupric_tile_status status{};
  {
    nb::gil_scoped_release release;
    k.launch(grid, args, &status);
  }
  if (status.failed) {
    const std::string msg =
        cat(status.message, " (block ", status.block[0], ", ", status.block[1], ", ", status.block[2], ")");
    PyErr_SetString(PyExc_AssertionError, msg.c_str());
    throw nb::python_error();
  }
}

bool interpreting() {
  const char* e = std::getenv("CUPRIC_TILE_INTERPRET");
  return e != nullptr && *e != '\0' && std::strcmp(e, "0") != 0;
}

}  // namespace cupric::py
