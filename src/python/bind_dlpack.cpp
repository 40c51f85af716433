// bind_dlpack.cpp — the Python side of DLPack: ndarray.__dlpack__ / __dlpack_device__ produce
// capsules ("dltensor" or "dltensor_versioned"); cupric.from_dlpack consumes any producer's
// through the importer (foreign_array.hpp). The tensor conversions live in src/array/dlpack.cpp.
// Also ndarray._view_as, the bit reinterpretation that hands bfloat16 to NumPy without a copy.
#include <nanobind/stl/tuple.h>

#include "bind_cuda.hpp"
#include "convert.hpp"
#include "cupric/dlpack.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/stream.hpp"
#include "foreign_array.hpp"
#include "foreign_protocols.hpp"
#include "py_types.hpp"

namespace cupric::py {

namespace {
using dlpack::DLManagedTensor;
using dlpack::DLManagedTensorVersioned;

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";

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

nb::object dlpack_export(const Array& self, StreamLike stream, DLPackVersion max_version, DLPackDevice dl_device,
                         BoolLike copy) {
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

Array from_dlpack(DLPackSource obj, DeviceLike device, BoolLike copy) {
  const std::optional<Device> target = optional_device(device);
  const std::optional<bool> want_copy = optional_bool(copy);
  ForeignArray f;  // through the importer: the stream handshake, checks, taking the tensor
  if (!import_as(obj, ForeignKind::dlpack, {}, f))
    throw TypeError(
        cat("from_dlpack() needs an object with __dlpack__ (a NumPy, CuPy, PyTorch, JAX... array) or a "
            "DLPack capsule, got ",
            nb::cast<std::string>(nb::str(nb::type_name(obj.type())))));
  const Array a = to_array(f);  // device memory: ready on the current stream from here on
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
