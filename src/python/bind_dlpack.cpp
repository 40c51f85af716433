// bind_dlpack.cpp — the Python side of DLPack: ndarray.__dlpack__ / __dlpack_device__ produce
// capsules ("dltensor" or "dltensor_versioned"), cupric.from_dlpack consumes any producer's.
// The tensor conversions themselves live in src/array/dlpack.cpp. Also ndarray._view_as, the
// bit reinterpretation that hands bfloat16 to NumPy (as ml_dtypes.bfloat16) without a copy.
#include <nanobind/stl/tuple.h>

#include <vector>

#include "bind_cuda.hpp"
#include "convert.hpp"
#include "cupric/dlpack.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/stream.hpp"

namespace cupric::py {

namespace {
using dlpack::DLManagedTensor;
using dlpack::DLManagedTensorVersioned;

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";
constexpr const char* kUsedLegacyName = "used_dltensor";
constexpr const char* kUsedVersionedName = "used_dltensor_versioned";

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

/// Frees a capsule's tensor unless a consumer took it (then the capsule was renamed "used_...").
template <class Managed>
void destroy_capsule(PyObject* capsule, const char* name) {
  if (!PyCapsule_IsValid(capsule, name)) return;
  ErrorStash stash;
  auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (m && m->deleter) m->deleter(m);
}
void destroy_legacy(PyObject* c) { destroy_capsule<DLManagedTensor>(c, kLegacyName); }
void destroy_versioned(PyObject* c) { destroy_capsule<DLManagedTensorVersioned>(c, kVersionedName); }

template <class Managed>
nb::object make_capsule(Managed* m, const char* name, PyCapsule_Destructor destructor) {
  PyObject* cap = PyCapsule_New(m, name, destructor);
  if (!cap) {
    m->deleter(m);
    throw nb::python_error();
  }
  return nb::steal(cap);
}

std::optional<bool> optional_bool(nb::handle obj) {
  if (obj.is_none()) return std::nullopt;
  return nb::cast<bool>(obj);
}

/// The stream that last wrote a CUDA array (0 when not known: the current stream stands for it).
std::uint64_t writer_of(const Array& a) {
  const std::uint64_t w = a.storage() ? a.storage()->last_writer() : 0;
  return w ? w : runtime::current_stream_state(a.device().index).serial;
}

/// The exported array: `self`, or a copy of it (copy=True, or another dl_device). A copy is
/// queued on the current stream, after the work that writes `self`.
Array exported_array(const Array& self, nb::handle dl_device, std::optional<bool> want_copy, std::uint64_t* flags) {
  std::optional<Device> target;
  if (!dl_device.is_none()) {
    nb::sequence seq = nb::borrow<nb::sequence>(dl_device);
    if (nb::len(seq) != 2) throw ValueError("dl_device must be a (device_type, device_id) pair");
    target = dlpack::device_from_dlpack({nb::cast<std::int32_t>(nb::int_(seq[0])), nb::cast<std::int32_t>(seq[1])});
    if (*target == self.device()) target.reset();
  }
  if (target && want_copy == false)
    throw BufferError(
        cat("exporting a ", self.device().str(), " array to ", target->str(), " needs a copy, but copy=False"));
  if (!target && !want_copy.value_or(false)) return self;
  if (!self.device().is_cpu()) {
    const int device = self.device().index;
    runtime::wait_for_writer(runtime::current_stream_state(device).handle, device, writer_of(self));
  }
  *flags |= dlpack::kFlagIsCopied;
  return convert_array(self, std::nullopt, target, target ? std::nullopt : std::optional<bool>(true));
}

nb::object dlpack_export(const Array& self, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                         nb::handle copy) {
  std::uint64_t flags = 0;
  const Array a = exported_array(self, dl_device, optional_bool(copy), &flags);
  if (a.device().is_cpu()) {
    if (!stream.is_none())
      throw ValueError(cat("stream must be None for CPU arrays, got ", nb::cast<std::string>(nb::repr(stream))));
  } else if (std::optional<runtime::Stream> consumer = dlpack_consumer_stream(stream, a.device().index)) {
    // the consumer's stream waits for the work that writes the array (an event; the host goes on)
    runtime::wait_for_writer(consumer->handle(), a.device().index, writer_of(a));
  }
  bool versioned = false;
  if (!max_version.is_none()) {
    nb::sequence v = nb::borrow<nb::sequence>(max_version);
    versioned = nb::len(v) >= 1 && nb::cast<long>(v[0]) >= 1;
  }
  if (versioned) return make_capsule(dlpack::export_versioned(a, flags), kVersionedName, destroy_versioned);
  return make_capsule(dlpack::export_legacy(a), kLegacyName, destroy_legacy);
}

/// Takes the tensor out of a capsule and marks the capsule used, as the protocol requires.
Array import_capsule(nb::handle capsule) {
  PyObject* p = capsule.ptr();
  if (PyCapsule_IsValid(p, kVersionedName)) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(p, kVersionedName));
    Array a = dlpack::import_versioned(m);  // throws before taking ownership
    PyCapsule_SetName(p, kUsedVersionedName);
    return a;
  }
  if (PyCapsule_IsValid(p, kLegacyName)) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(p, kLegacyName));
    Array a = dlpack::import_legacy(m);
    PyCapsule_SetName(p, kUsedLegacyName);
    return a;
  }
  if (PyCapsule_IsValid(p, kUsedLegacyName) || PyCapsule_IsValid(p, kUsedVersionedName))
    throw ValueError("this DLPack capsule was already consumed (a capsule can be imported once)");
  const char* name = PyCapsule_GetName(p);
  PyErr_Clear();
  throw TypeError(cat("not a DLPack capsule (its name is '", name ? name : "NULL", "')"));
}

/// The CUDA device an exporter says its data is on (__dlpack_device__), or -1.
int producer_cuda_device(nb::handle obj) {
  if (!nb::hasattr(obj, "__dlpack_device__")) return -1;
  nb::object d = obj.attr("__dlpack_device__")();
  const int type = nb::cast<int>(d[0]);
  return type == dlpack::kDLCUDA || type == dlpack::kDLCUDAManaged ? nb::cast<int>(d[1]) : -1;
}

/// A capsule from `obj.__dlpack__`, asking for DLPack 1.x and, for CUDA data, passing cupric's
/// current stream on that device so that the producer orders its work before what cupric queues
/// next. Producers that know neither keyword are asked with fewer; *ordered says whether the
/// stream was taken.
nb::object request_capsule(nb::handle obj, int cuda_device, bool* ordered) {
  nb::object method = obj.attr("__dlpack__");
  nb::object stream = nb::none();
  if (cuda_device >= 0) stream = nb::int_(runtime::protocol_handle(runtime::current_stream_state(cuda_device).handle));
  nb::dict newest, with_stream, bare;  // a TypeError means a producer older than a keyword: ask with fewer
  newest["max_version"] = nb::make_tuple(dlpack::kVersion.major, dlpack::kVersion.minor);
  if (cuda_device >= 0) {
    newest["stream"] = stream;
    with_stream["stream"] = stream;
  }
  std::vector<nb::dict> tries = {newest, bare};
  if (cuda_device >= 0) tries.insert(tries.begin() + 1, with_stream);
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

Array from_dlpack(nb::handle obj, nb::handle device, nb::handle copy) {
  const std::optional<Device> target = optional_device(device);
  const std::optional<bool> want_copy = optional_bool(copy);
  nb::object capsule;
  bool ordered = false;
  if (PyCapsule_CheckExact(obj.ptr())) {  // a bare capsule, as older libraries hand out
    capsule = nb::borrow(obj);
  } else if (nb::isinstance<Array>(obj) || nb::hasattr(obj, "__dlpack__")) {
    capsule = request_capsule(obj, producer_cuda_device(obj), &ordered);
  } else {
    throw TypeError(
        cat("from_dlpack() needs an object with __dlpack__ (a NumPy, CuPy, PyTorch, JAX... array) or a "
            "DLPack capsule, got ",
            nb::cast<std::string>(nb::str(nb::type_name(obj.type())))));
  }
  Array a = import_capsule(capsule);
  if (!a.device().is_cpu()) {
    const int dev = a.device().index;
    runtime::StreamState& current = runtime::current_stream_state(dev);
    // without a stream the producer ordered its work before the legacy default stream (the
    // protocol's None): the current stream waits for that one
    if (!ordered) runtime::wait_for_handle(current.handle, dev, nullptr);
    a.storage()->set_last_writer(current.serial);  // ready on the current stream from here on
  }
  const Device d = target.value_or(a.device());
  if (!(d == a.device()) && want_copy == false)
    throw BufferError(cat("importing a ", a.device().str(), " tensor on ", d.str(), " needs a copy, but copy=False"));
  return convert_array(a, std::nullopt, d, want_copy.value_or(false) ? std::optional<bool>(true) : std::nullopt);
}
}  // namespace

void bind_dlpack(nb::module_& m) {
  nb::handle cls = ndarray_type();
  def_method(cls, "__dlpack__", &dlpack_export, nb::kw_only(), nb::arg("stream") = nb::none(),
             nb::arg("max_version") = nb::none(), nb::arg("dl_device") = nb::none(), nb::arg("copy") = nb::none(),
             "Exports the array as a DLPack capsule (versioned when max_version >= (1, 0)); zero-copy unless "
             "copy=True or dl_device is another device.");
  def_method(
      cls, "__dlpack_device__",
      [](const Array& a) {
        const dlpack::DLDevice d = dlpack::to_dlpack(a.device());
        return nb::make_tuple(d.device_type, d.device_id);
      },
      "(device_type, device_id) as DLPack numbers them: (1, 0) for the CPU, (2, N) for cuda:N.");
  def_method(
      cls, "_view_as", [](const Array& a, nb::handle dtype) { return a.view_as(dtype_from_py(dtype)); },
      "The same bytes as another dtype of equal itemsize (NumPy interop of bfloat16 goes through uint16).");
  m.def("from_dlpack", &from_dlpack, nb::arg("x"), nb::kw_only(), nb::arg("device") = nb::none(),
        nb::arg("copy") = nb::none(),
        "An array sharing the memory of any DLPack producer (NumPy, CuPy, PyTorch, JAX, ...); copies only for "
        "copy=True or another device.");
}

}  // namespace cupric::py
