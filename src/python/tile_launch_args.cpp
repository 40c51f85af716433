// tile_launch_args.cpp — reading the arguments of cupric.tile launch plans (arrays through the
// importer, scalars by exact type), so that an argument a plan takes is one the Python path would
// specialise the same way.
#include "tile_launch_args.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "convert.hpp"
#include "cupric/errors.hpp"

namespace cupric::py {

namespace {

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

/// The readers plans use: CPU kernels take cupric and NumPy arrays, CUDA kernels cupric arrays,
/// PyTorch tensors and __cuda_array_interface__ objects (DLPack producers go through the Python
/// path, which asks them for a capsule on the launch's stream).
constexpr ForeignKind kHostSources[] = {ForeignKind::cupric, ForeignKind::numpy};
constexpr ForeignKind kCudaSources[] = {ForeignKind::cupric, ForeignKind::torch, ForeignKind::cuda_array_interface};

std::optional<PlanParam> classify_array(nb::handle value, PlanParam p, int device) {
  const std::optional<ForeignKind> source =
      device < 0 ? foreign_kind(value, kHostSources) : foreign_kind(value, kCudaSources);
  if (!source) return std::nullopt;
  p.kind = ArgKind::array;
  p.source = *source;
  if (*source == ForeignKind::numpy) p.token = nb::borrow(value.type());  // subclasses specialise apart
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

/// Reads an array argument through the importer: false when it is not of the plan's kind, dtype,
/// ndim or device, read-only where the kernel writes, or malformed (the Python path says why).
bool match_array(const PlanParam& p, PyObject* v, int device, ReadArg& out) {
  out.ndim = p.ndim;
  if (p.source == ForeignKind::numpy && Py_TYPE(v) != reinterpret_cast<PyTypeObject*>(p.token.ptr())) return false;
  ForeignArray& a = out.array;
  try {
    if (!import_as(nb::handle(v), p.source, {}, a)) return false;
  } catch (const std::exception&) {
    PyErr_Clear();
    return false;
  }
  if (a.dtype != p.dtype || a.ndim() != p.ndim || (p.written && a.readonly)) return false;  // (CPU: as HostLauncher)
  if (device < 0 ? !a.device.is_cpu() : (a.device.is_cpu() || a.device.index != device)) return false;
  out.view.data = reinterpret_cast<void*>(a.data);
  for (int k = 0; k < p.ndim; ++k) {
    out.view.shape[k] = a.shape[static_cast<std::size_t>(k)];
    out.view.strides[k] = a.strides[static_cast<std::size_t>(k)];
  }
  if (!p.keyed) return true;
  for (int k = 0; k < p.ndim; ++k)
    if (out.view.shape[k] != p.key_shape[static_cast<std::size_t>(k)]) return false;
  return true;
}

bool match_scalar(const PlanParam& p, PyObject* v) {
  bool ok = false;
  switch (p.kind) {
    case ArgKind::weak_bool: ok = Py_TYPE(v) == &PyBool_Type; break;
    case ArgKind::weak_int: ok = Py_TYPE(v) == &PyLong_Type; break;
    case ArgKind::weak_float: ok = Py_TYPE(v) == &PyFloat_Type; break;
    case ArgKind::typed: ok = reinterpret_cast<PyObject*>(Py_TYPE(v)) == p.token.ptr(); break;
    default: break;
  }
  return ok && (!p.keyed || same_value(v, p.key.ptr()));
}

}  // namespace

bool match_param(const PlanParam& p, PyObject* v, int device, ReadArg& out) {
  out.value = v;
  if (p.kind == ArgKind::constant) return same_value(v, p.token.ptr());
  if (is_array_kind(p.kind)) return match_array(p, v, device, out);
  return match_scalar(p, v);
}

void store_scalar(const PlanParam& p, PyObject* v, void* dst) {
  if (p.kind != ArgKind::typed) return scalar_from_py(nb::handle(v)).store(p.dtype, dst);
  static PyObject* const item_name = PyUnicode_InternFromString("item");
  nb::object item = nb::steal(PyObject_CallMethodNoArgs(v, item_name));  // as the Python path: v.item()
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
    throw ValueError(cat("grid (", g[0], ", ", g[1], ", ", g[2],
                         ") is too large for CUDA (x up to 2^31-1, y and z up to ", max_yz,
                         "); put the largest extent first"));
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
  raise_failure(status);
}

void raise_failure(const cupric_tile_status& status) {
  if (!status.failed) return;
  const std::size_t n = strnlen(status.message, sizeof(status.message));  // (a GPU's copy: trust no terminator)
  const std::string msg = cat(std::string(status.message, n), " (block ", status.block[0], ", ", status.block[1], ", ",
                              status.block[2], ")");
  // debug builds' bounds checks are IndexErrors; ct.assert_ failures AssertionErrors
  PyErr_SetString(status.failed == CUPRIC_TILE_BOUNDS_FAILED ? PyExc_IndexError : PyExc_AssertionError, msg.c_str());
  throw nb::python_error();
}

bool interpreting() {
  const char* e = std::getenv("CUPRIC_TILE_INTERPRET");
  return e != nullptr && *e != '\0' && std::strcmp(e, "0") != 0;
}

}  // namespace cupric::py
