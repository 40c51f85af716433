// foreign_protocols.cpp — the importer's readers of __array_interface__ and
// __cuda_array_interface__ dicts (NumPy's errors for malformed fields) and of DLPack producers and
// capsules (the stream handshake, and taking the tensor as the protocol asks), plus the helpers
// all readers share.
#include "foreign_protocols.hpp"

#include <nanobind/stl/string.h>

#include <cstring>
#include <vector>

#include "convert.hpp"
#include "cupric/dlpack.hpp"
#include "cupric/runtime/device.hpp"
#include "cupric/runtime/stream.hpp"

namespace cupric::py {

Names::Names() {
  auto s = [](const char* n) { return PyUnicode_InternFromString(n); };
  dtype = s("dtype"), is_cuda = s("is_cuda"), get_device = s("get_device"), data_ptr = s("data_ptr");
  shape = s("shape"), stride = s("stride"), array_interface = s("__array_interface__");
  cuda_array_interface = s("__cuda_array_interface__"), dlpack = s("__dlpack__");
  dlpack_device = s("__dlpack_device__"), typestr = s("typestr"), data = s("data"), strides = s("strides");
  stream = s("stream"), mask = s("mask"), ref = s("__ref"), version = s("version");
}

const Names& names() {
  static const Names* n = new Names();  // leaked: lives as long as the interpreter's strings
  return *n;
}

PyObject* lookup_attr(PyObject* obj, PyObject* name) {
  PyObject* v = nullptr;
#if PY_VERSION_HEX >= 0x030D0000
  if (PyObject_GetOptionalAttr(obj, name, &v) < 0) PyErr_Clear();
#else
  if (_PyObject_LookupAttr(obj, name, &v) < 0) PyErr_Clear();  // no AttributeError is made for a miss
#endif
  return v;
}

bool has_attr(PyObject* obj, PyObject* name) {
  PyObject* v = lookup_attr(obj, name);
  Py_XDECREF(v);
  return v != nullptr;
}

void throw_not_an_int(nb::handle v, const char* protocol, const char* field) {
  nb::python_error e;
  if (!e.matches(PyExc_TypeError)) throw e;
  throw TypeError(cat(protocol, ": ", field, " ", nb::cast<std::string>(nb::repr(v)), ": ",
                      nb::cast<std::string>(nb::str(e.value()))));
}

Shape interface_ints(PyObject* seq, const char* protocol, const char* field) {
  if (!PyTuple_Check(seq))
    throw TypeError(cat(protocol, ": ", field, " must be a tuple, got ", nb::cast<std::string>(nb::repr(seq))));
  const Py_ssize_t n = PyTuple_GET_SIZE(seq);
  if (n > kMaxDims)
    throw ValueError(cat(protocol, ": number of dimensions must be within [0, ", kMaxDims, "], got ", n));
  Shape out(static_cast<std::size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* v = PyTuple_GET_ITEM(seq, i);
    int overflow = 1;
    if (PyLong_CheckExact(v)) out[static_cast<std::size_t>(i)] = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow) {
      const std::string entry = cat(field, " entry");
      out[static_cast<std::size_t>(i)] = interface_int<std::int64_t>(v, protocol, entry.c_str());
    }
  }
  return out;
}

void finish(ForeignArray& out, const char* protocol, const Strides* byte_strides) {
  const std::int64_t item = itemsize(out.dtype);
  const std::string problem = foreign_array_problem(protocol, out.data, out.shape, byte_strides, item);
  if (!problem.empty()) throw ValueError(problem);
  if (!byte_strides) {
    out.strides = c_strides(out.shape);
    return;
  }
  out.strides.resize(byte_strides->size());
  for (std::size_t d = 0; d < byte_strides->size(); ++d) out.strides[d] = (*byte_strides)[d] / item;
}

bool any_unaligned(const Strides& byte_strides, std::int64_t itemsize) {
  for (auto s : byte_strides)
    if (s % itemsize != 0) return true;
  return false;
}

std::optional<std::pair<int, int>> dlpack_device(PyObject* obj) {
  PyObject* method = lookup_attr(obj, names().dlpack_device);
  if (!method) return std::nullopt;
  nb::object m = nb::steal(method);
  nb::object d = m();
  if (!(PyTuple_Check(d.ptr()) || PyList_Check(d.ptr())) || PySequence_Size(d.ptr()) != 2)
    throw TypeError(cat("__dlpack_device__() must return a (device_type, device_id) pair of ints, got ",
                        nb::cast<std::string>(nb::repr(d))));
  nb::object type = nb::steal(PySequence_GetItem(d.ptr(), 0)), id = nb::steal(PySequence_GetItem(d.ptr(), 1));
  if (!type.is_valid() || !id.is_valid()) throw nb::python_error();
  const auto device_type = interface_int<std::int32_t>(type, "__dlpack_device__()", "device type");
  const auto device_id = interface_int<std::int32_t>(id, "__dlpack_device__()", "device id");
  if (device_id < 0) throw ValueError(cat("__dlpack_device__(): device id ", device_id, " is negative"));
  return std::pair<int, int>{device_type, device_id};
}

// ---- the array interfaces ------------------------------------------------------------------------

namespace {

nb::handle interface_field(PyObject* iface, PyObject* key, const char* protocol) {
  PyObject* v = PyDict_GetItemWithError(iface, key);
  if (v) return v;
  if (PyErr_Occurred()) throw nb::python_error();
  throw ValueError(cat("Missing ", protocol, " ", nb::cast<std::string>(nb::handle(key))));
}

/// The item size a typestr ("<f8", "|b1", "<V2") gives.
std::int64_t typestr_itemsize(const std::string& typestr, const char* protocol) {
  const bool ok = typestr.size() >= 3 && typestr.size() <= 6 && std::strchr("<>|=", typestr[0]) &&
                  typestr.find_first_not_of("0123456789", 2) == std::string::npos;
  const std::int64_t n = ok ? std::stoll(typestr.substr(2)) : 0;
  if (n < 1) throw TypeError(cat(protocol, ": arrays of typestr '", typestr, "' are not supported by cupric"));
  return n;
}

/// The dict's "version": the protocol's versions are 0 to 3 (3 added "stream"); a newer one may
/// add rules a consumer must follow, so it is refused rather than read as version 3.
long long cai_version(PyObject* iface) {
  PyObject* v = PyDict_GetItemWithError(iface, names().version);
  if (!v) {
    if (PyErr_Occurred()) throw nb::python_error();
    throw ValueError("Missing __cuda_array_interface__ version");
  }
  if (!PyLong_Check(v) || PyBool_Check(v))
    throw TypeError(cat("__cuda_array_interface__: version must be an int, got ", nb::cast<std::string>(nb::repr(v))));
  const auto version = interface_int<long long>(v, "__cuda_array_interface__", "version");
  if (version < 0 || version > 3)
    throw ValueError(cat("__cuda_array_interface__: version ", version, " is not one cupric reads (0 to 3)"));
  return version;
}

Strides element_strides(const InterfaceLayout& l) {
  if (!l.byte_strides) return c_strides(l.shape);
  Strides out(l.byte_strides->size());
  for (std::size_t d = 0; d < out.size(); ++d) out[d] = (*l.byte_strides)[d] / l.itemsize;
  return out;
}

}  // namespace

InterfaceLayout read_interface(nb::handle iface_obj, const char* protocol, bool unaligned_ok) {
  PyObject* iface = iface_obj.ptr();
  if (!PyDict_Check(iface))
    throw TypeError(
        cat(protocol, " must be a dict, got ", nb::cast<std::string>(nb::repr(nb::type_name(iface_obj.type())))));
  const Names& n = names();
  InterfaceLayout out;
  nb::handle typestr = interface_field(iface, n.typestr, protocol);
  if (!PyUnicode_Check(typestr.ptr()))
    throw TypeError(cat(protocol, ": typestr must be a str, got ", nb::cast<std::string>(nb::repr(typestr))));
  out.typestr = nb::cast<std::string>(typestr);
  out.itemsize = typestr_itemsize(out.typestr, protocol);
  out.shape = interface_ints(interface_field(iface, n.shape, protocol).ptr(), protocol, "shape");
  PyObject* strides = PyDict_GetItemWithError(iface, n.strides);
  if (strides && strides != Py_None) out.byte_strides = interface_ints(strides, protocol, "strides");
  nb::handle data = interface_field(iface, n.data, protocol);
  if (!PyTuple_Check(data.ptr()) || PyTuple_GET_SIZE(data.ptr()) != 2)
    throw TypeError(
        cat(protocol, ": data must be a (pointer, read_only) tuple, got ", nb::cast<std::string>(nb::repr(data))));
  out.data = interface_int<std::uintptr_t>(PyTuple_GET_ITEM(data.ptr(), 0), protocol, "data pointer");
  const int readonly = PyObject_IsTrue(PyTuple_GET_ITEM(data.ptr(), 1));
  if (readonly < 0) throw nb::python_error();
  out.readonly = readonly != 0;
  const bool unaligned = out.byte_strides && any_unaligned(*out.byte_strides, out.itemsize);
  if (!(unaligned && unaligned_ok && out.byte_strides->size() == out.shape.size()))
    check_foreign_array(protocol, out.data, out.shape, out.byte_strides ? &*out.byte_strides : nullptr, out.itemsize);
  return out;
}

DType dtype_from_typestr(nb::handle obj, const InterfaceLayout& l) {
  const std::string& typestr = l.typestr;
  const char order = typestr[0];
  const std::string code = typestr.substr(1);
  if (order == '>' && code != "b1" && code != "i1" && code != "u1")
    throw TypeError(cat("big-endian arrays (typestr '", typestr,
                        "') are not supported: convert with a.astype(a.dtype.newbyteorder('='))"));
  if (nb::hasattr(obj, "dtype")) {  // PyTorch's and ml_dtypes' bfloat16 and float8s: known by name
    const std::string n = nb::cast<std::string>(nb::str(nb::handle(obj.attr("dtype"))));
    for (int i = 0; i < kNumDTypes; ++i) {
      const DType t = static_cast<DType>(i);
      if (is_ml_dtype(t) && itemsize(t) == l.itemsize && (n == name(t) || n == cat("torch.", name(t)))) return t;
    }
  }
  for (int i = 0; i < kNumDTypes; ++i) {
    const DType t = static_cast<DType>(i);
    if (!is_ml_dtype(t) && code == info(t).typestr_code && itemsize(t) == l.itemsize) return t;
  }
  throw TypeError(cat("arrays of typestr '", typestr, "' are not supported by cupric"));
}

bool read_array_interface(PyObject* o, const ImportOptions& opt, ForeignArray& out) {
  if (opt.device_only) return false;
  PyObject* found = lookup_attr(o, names().array_interface);
  if (!found) return false;
  nb::object iface = nb::steal(found);
  const InterfaceLayout l = read_interface(iface, "__array_interface__", opt.copy_unaligned);
  if (l.byte_strides && any_unaligned(*l.byte_strides, l.itemsize)) {  // copy_unaligned: a contiguous copy
    nb::object copy = nb::module_::import_("numpy").attr("ascontiguousarray")(nb::handle(o));
    return import_as(copy, ForeignKind::numpy, opt, out);
  }
  out.dtype = dtype_from_typestr(o, l);
  out.data = l.data;
  out.shape = l.shape;
  out.strides = element_strides(l);
  out.device = Device::cpu();
  out.readonly = l.readonly;
  // a NumPy scalar's interface points into a temporary array kept alive by its "__ref" entry
  PyObject* ref = PyDict_GetItemWithError(iface.ptr(), names().ref);
  out.owner = nb::borrow(ref ? ref : o);
  return true;
}

namespace {
/// The stream a version-3 dict says the data is ready on: nullopt for none (or None), checked by
/// the stream rules of the protocol (an int, not 0, not negative).
std::optional<cuda::CUstream> cai_stream(PyObject* iface, long long version) {
  PyObject* stream = PyDict_GetItemWithError(iface, names().stream);
  if (!stream) {
    if (PyErr_Occurred()) throw nb::python_error();
    return std::nullopt;
  }
  if (stream == Py_None) return std::nullopt;
  if (version < 3)  // older consumers ignore it: the producer could not rely on it being waited for
    throw ValueError(
        cat("__cuda_array_interface__: stream is a field of version 3, but this dict is version ", version));
  if (PyBool_Check(stream))
    throw TypeError(
        cat("__cuda_array_interface__: stream must be an int or None, got ", nb::cast<std::string>(nb::repr(stream))));
  return protocol_stream(interface_int<long long>(stream, "__cuda_array_interface__", "stream"),
                         "__cuda_array_interface__");
}
}  // namespace

bool read_cuda_array_interface(PyObject* o, const ImportOptions&, ForeignArray& out) {
  const Names& n = names();
  PyObject* found = lookup_attr(o, n.cuda_array_interface);
  if (!found) return false;
  nb::object iface = nb::steal(found);
  const InterfaceLayout l = read_interface(iface, "__cuda_array_interface__");  // (a dict from here on)
  const long long version = cai_version(iface.ptr());
  PyObject* mask = PyDict_GetItemWithError(iface.ptr(), n.mask);
  if (mask && mask != Py_None) throw ValueError("__cuda_array_interface__ with a mask is not supported");
  out.stream = cai_stream(iface.ptr(), version);
  out.dtype = dtype_from_typestr(o, l);
  out.data = l.data;
  out.shape = l.shape;
  out.strides = element_strides(l);
  out.readonly = l.readonly;
  // the device the producer says (__dlpack_device__), else the current one (the protocol's assumption)
  const std::optional<std::pair<int, int>> d = dlpack_device(o);
  const bool said = d && (d->first == dlpack_cuda || d->first == dlpack_cuda_managed);
  out.device = Device::cuda(said ? d->second : runtime::Device::current_index());
  out.owner = nb::borrow(o);
  return true;
}

// ---- DLPack --------------------------------------------------------------------------------------

namespace {
using dlpack::DLManagedTensor;
using dlpack::DLManagedTensorVersioned;

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";
constexpr const char* kUsedLegacyName = "used_dltensor";
constexpr const char* kUsedVersionedName = "used_dltensor_versioned";
constexpr const char* kOwnerName = "cupric.dlpack_owner";  // a taken tensor, freed when the last view goes

template <class Managed>
void free_owned(PyObject* capsule) {
  ErrorStash stash;
  auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule, kOwnerName));
  if (m && m->deleter) m->deleter(m);
}

/// A capsule from `method` (obj.__dlpack__), asking for DLPack 1.x and, for CUDA data, passing
/// `stream` so that the producer orders its work before it. Producers that know neither keyword
/// are asked with fewer; *ordered says whether the stream was taken.
nb::object request_capsule(nb::handle method, std::optional<cuda::CUstream> stream, bool* ordered) {
  nb::dict newest, with_stream, bare;  // a TypeError means a producer older than a keyword: ask with fewer
  newest["max_version"] = nb::make_tuple(dlpack::kVersion.major, dlpack::kVersion.minor);
  std::vector<nb::dict> tries = {newest, bare};
  if (stream) {
    nb::int_ handle(runtime::protocol_handle(*stream));
    newest["stream"] = handle;
    with_stream["stream"] = handle;
    tries.insert(tries.begin() + 1, with_stream);
  }
  for (std::size_t i = 0;; ++i) {
    try {
      nb::object capsule = method(**tries[i]);
      *ordered = tries[i].contains("stream");
      return capsule;
    } catch (nb::python_error& e) {
      if (!e.matches(PyExc_TypeError) || i + 1 == tries.size()) throw;
    }
  }
}

/// Takes the tensor out of a capsule (checked first: a refused tensor stays the producer's) and
/// marks the capsule used, as the protocol requires; `out.owner` frees it. `said`: the device
/// __dlpack_device__ named, which the tensor must be on (the stream handshake was for it).
template <class Managed>
void take_tensor(PyObject* capsule, const char* name, const char* used, std::optional<Device> said, ForeignArray& out) {
  auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (!m) throw BufferError("null DLPack tensor");
  bool read_only = false;
  dlpack::TensorLayout l;
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) l = dlpack::read_versioned(*m, &read_only);
  else l = dlpack::read_tensor(m->dl_tensor);
  if (said && !(*said == l.device))
    throw BufferError(
        cat("the DLPack tensor is on ", l.device.str(), ", but its producer's __dlpack_device__() said ", said->str()));
  nb::object owner = nb::steal(PyCapsule_New(m, kOwnerName, free_owned<Managed>));
  if (!owner.is_valid()) throw nb::python_error();
  PyCapsule_SetName(capsule, used);
  out.data = reinterpret_cast<std::uintptr_t>(l.data);
  out.dtype = l.dtype;
  out.device = l.device;
  out.shape = std::move(l.shape);
  out.strides = std::move(l.strides);
  out.readonly = read_only;
  out.owner = std::move(owner);
}

void take_capsule(PyObject* p, std::optional<Device> said, ForeignArray& out) {
  if (PyCapsule_IsValid(p, kVersionedName))
    return take_tensor<DLManagedTensorVersioned>(p, kVersionedName, kUsedVersionedName, said, out);
  if (PyCapsule_IsValid(p, kLegacyName))
    return take_tensor<DLManagedTensor>(p, kLegacyName, kUsedLegacyName, said, out);
  if (PyCapsule_IsValid(p, kUsedLegacyName) || PyCapsule_IsValid(p, kUsedVersionedName))
    throw ValueError("this DLPack capsule was already consumed (a capsule can be imported once)");
  const char* name = PyCapsule_CheckExact(p) ? PyCapsule_GetName(p) : nullptr;
  PyErr_Clear();
  throw TypeError(cat("not a DLPack capsule (its name is '", name ? name : "NULL", "')"));
}

}  // namespace

bool read_dlpack(PyObject* o, const ImportOptions& opt, ForeignArray& out) {
  nb::object capsule;
  std::optional<cuda::CUstream> handed;  // the stream the producer ordered its work before
  std::optional<Device> said;            // where __dlpack_device__ says the data is
  if (PyCapsule_CheckExact(o)) {         // a bare capsule, as older libraries hand out: no handshake
    if (opt.device_only) return false;
    capsule = nb::borrow(o);
  } else {
    PyObject* method = lookup_attr(o, names().dlpack);
    if (!method) return false;
    nb::object m = nb::steal(method);
    const std::optional<std::pair<int, int>> d = dlpack_device(o);
    const bool cuda = d && (d->first == dlpack_cuda || d->first == dlpack_cuda_managed);
    if (opt.device_only && !cuda && !(d && d->first == dlpack_cuda_host)) return false;
    // a device type cupric cannot use is refused before the producer makes a capsule (BufferError)
    if (d) said = dlpack::device_from_dlpack({d->first, d->second});
    if (cuda) handed = opt.consumer_stream ? *opt.consumer_stream : runtime::current_stream_state(d->second).handle;
    bool ordered = false;
    capsule = request_capsule(m, handed, &ordered);
    if (!ordered) handed.reset();
  }
  take_capsule(capsule.ptr(), said, out);
  // without a stream the producer ordered its work before the legacy default stream (the protocol's None)
  if (!out.device.is_cpu()) out.stream = handed ? *handed : nullptr;
  return true;
}

}  // namespace cupric::py
