// bind_cuda_memory.cpp — cupric.cuda, part 2: memory pools and their statistics, Buffer (copies,
// fill, DLPack and __cuda_array_interface__ export), and device pointers from other libraries.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include <optional>

#include "bind_cuda.hpp"
#include "convert.hpp"
#include "py_types.hpp"
#include "foreign_array.hpp"
#include "cupric/cuda/errors.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/dlpack.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/device.hpp"

namespace cupric::py {
using namespace cupric::runtime;

namespace {

// our declarations of the DLPack ABI (include/cupric/dlpack.hpp)
using dlpack::DLDataType;
using dlpack::DLDevice;
using dlpack::DLManagedTensor;
using dlpack::DLTensor;
using dlpack::kDLCPU;
using dlpack::kDLCUDA;
using dlpack::kDLCUDAHost;
using dlpack::kDLCUDAManaged;

struct DLPackHolder {
  DLManagedTensor tensor;
  std::shared_ptr<Buffer> buffer;
  std::int64_t shape[1];
};

void dlpack_deleter(DLManagedTensor* t) { delete static_cast<DLPackHolder*>(t->manager_ctx); }

void dlpack_capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "used_dltensor")) return;  // a consumer took ownership
  auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (t && t->deleter) t->deleter(t);
  PyErr_Clear();
}

std::pair<int, int> dlpack_device(const Buffer& b) {
  switch (b.kind()) {
    case MemoryKind::device: return {kDLCUDA, b.device()};
    case MemoryKind::pinned: return {kDLCUDAHost, 0};
    case MemoryKind::managed: return {kDLCUDAManaged, b.device()};
  }
  return {kDLCUDA, b.device()};
}

/// Makes the consumer's stream (the DLPack protocol's `stream`) wait for the buffer's stream.
void order_for_consumer(const Buffer& b, nb::handle stream) {
  if (std::optional<Stream> consumer = dlpack_consumer_stream(stream, b.device()))
    wait_for_handle(consumer->handle(), b.device(), b.stream().handle());
}

nb::object dlpack_export(const std::shared_ptr<Buffer>& b, nb::handle stream) {
  if (b->closed()) throw ValueError("__dlpack__: the buffer was closed");
  if (b->kind() != MemoryKind::pinned) order_for_consumer(*b, stream);
  auto* holder = new DLPackHolder{};
  holder->buffer = b;
  holder->shape[0] = static_cast<std::int64_t>(b->size());
  DLTensor& t = holder->tensor.dl_tensor;
  t.data = reinterpret_cast<void*>(b->ptr());
  auto [type, id] = dlpack_device(*b);
  t.device = {type, id};
  t.ndim = 1;
  t.dtype = {1 /* kDLUInt */, 8, 1};
  t.shape = holder->shape;
  holder->tensor.manager_ctx = holder;
  holder->tensor.deleter = dlpack_deleter;
  PyObject* capsule = PyCapsule_New(&holder->tensor, "dltensor", dlpack_capsule_destructor);
  if (!capsule) {
    delete holder;
    throw nb::python_error();
  }
  return nb::steal(capsule);
}

nb::dict cuda_array_interface(const Buffer& b) {
  if (b.closed()) throw ValueError("__cuda_array_interface__: the buffer was closed");
  nb::dict d;
  d["shape"] = nb::make_tuple(b.size());
  d["typestr"] = "|u1";
  d["data"] = nb::make_tuple(b.ptr(), false);
  d["version"] = 3;
  d["strides"] = nb::none();
  std::uintptr_t h = b.stream().handle_value();
  d["stream"] = h == 0 ? std::uintptr_t{1} : h;  // CAI: 1 is the legacy default stream
  return d;
}

MemoryKind kind_from_name(const std::string& kind) {
  if (kind == "device") return MemoryKind::device;
  if (kind == "pinned") return MemoryKind::pinned;
  if (kind == "managed") return MemoryKind::managed;
  throw ValueError(cat("memory kind must be 'device', 'pinned' or 'managed', got '", kind, "'"));
}

const char* kind_name(MemoryKind k) {
  return k == MemoryKind::device ? "device" : k == MemoryKind::pinned ? "pinned" : "managed";
}

nb::dict stats_dict(const PoolStats& s) {
  nb::dict d;
  d["bytes_in_use"] = s.bytes_in_use;
  d["peak_bytes_in_use"] = s.peak_bytes_in_use;
  d["bytes_cached"] = s.bytes_cached;
  d["allocations"] = s.allocations;
  d["cache_hits"] = s.cache_hits;
  d["driver_allocations"] = s.driver_allocations;
  d["oom_retries"] = s.oom_retries;
  d["driver_reserved_bytes"] = s.driver_reserved_bytes;
  d["driver_used_bytes"] = s.driver_used_bytes;
  return d;
}

struct HostView {
  Py_buffer view{};
  bool ok = false;
  HostView(nb::handle obj, bool writable) {
    ok = PyObject_GetBuffer(obj.ptr(), &view, (writable ? PyBUF_WRITABLE : 0) | PyBUF_C_CONTIGUOUS) == 0;
    if (!ok) PyErr_Clear();
  }
  ~HostView() {
    if (ok) PyBuffer_Release(&view);
  }
};

std::size_t checked_size(std::size_t n, const Buffer& b, std::size_t offset, const char* what) {
  if (offset > b.size() || n > b.size() - offset)
    throw ValueError(
        cat("Buffer.", what, ": ", n, " bytes at offset ", offset, " do not fit a buffer of ", b.size(), " bytes"));
  return n;
}

/// The bytes of a device array source: it must be C-contiguous (or `nbytes` is given).
std::size_t device_nbytes(const ForeignArray& f, std::optional<std::size_t> nbytes) {
  if (nbytes) return *nbytes;
  const Strides c = c_strides(f.shape);
  for (std::size_t d = 0; d < c.size(); ++d)
    if (f.shape[d] > 1 && c[d] != f.strides[d])
      throw ValueError("Buffer.copy_from: the source array is not contiguous");
  return static_cast<std::size_t>(shape_size(f.shape) * itemsize(f.dtype));  // fits: the importer checked it
}

void copy_from(Buffer& b, ArrayLike src, StreamLike stream_obj, std::size_t offset, std::optional<std::size_t> nbytes) {
  Stream s = stream_from_py(stream_obj, b.device());
  if (nb::isinstance<Buffer>(src)) {
    const Buffer& from = nb::cast<const Buffer&>(src);
    if (from.closed()) throw ValueError("the buffer was closed");
    b.copy_from_device(from.ptr(), checked_size(nbytes.value_or(from.size()), b, offset, "copy_from"), s, offset);
    return;
  }
  ImportOptions device_array;
  device_array.consumer_stream = s.handle();
  device_array.device_only = true;
  if (std::optional<ForeignArray> f = import_foreign(src, kArgumentOrder, device_array)) {
    order_before_use(f->device_argument(), *s.state());
    b.copy_from_device(f->data, checked_size(device_nbytes(*f, nbytes), b, offset, "copy_from"), s, offset);
    return;
  }
  HostView host(src, false);
  if (!host.ok)
    throw TypeError(
        "Buffer.copy_from: the source must be a Buffer, a device array (__cuda_array_interface__ / "
        "DLPack) or a contiguous host buffer (bytes, bytearray, NumPy array)");
  std::size_t n = checked_size(static_cast<std::size_t>(host.view.len), b, offset, "copy_from");
  nb::gil_scoped_release release;
  b.copy_from_host(host.view.buf, n, s, offset);
}

nb::object copy_to(const Buffer& b, ArrayLike dst, StreamLike stream_obj, std::size_t offset) {
  Stream s = stream_from_py(stream_obj, b.device());
  if (dst.is_none()) {
    nb::bytes out = nb::steal<nb::bytes>(
        PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(b.size() - std::min(offset, b.size()))));
    char* p = PyBytes_AsString(out.ptr());
    std::size_t n = checked_size(b.size() - std::min(offset, b.size()), b, offset, "copy_to");
    nb::gil_scoped_release release;
    b.copy_to_host(p, n, s, offset);
    s.synchronize();
    return out;
  }
  std::uint64_t address = 0;
  if (nb::isinstance<Buffer>(dst)) {
    Buffer& d = nb::cast<Buffer&>(dst);
    std::size_t n = checked_size(std::min(d.size(), b.size() - std::min(offset, b.size())), b, offset, "copy_to");
    d.copy_from_device(b.ptr() + offset, n, s, 0);
    return nb::borrow(dst);
  }
  if (device_pointer_from_py(dst, &address))
    throw TypeError(
        "Buffer.copy_to: copy into a foreign device array with its own library, or wrap the "
        "destination as a cupric Buffer");
  HostView host(dst, true);
  if (!host.ok)
    throw TypeError(
        "Buffer.copy_to: the destination must be None (returns bytes), a Buffer, or a writable "
        "contiguous host buffer (bytearray, NumPy array)");
  std::size_t n = checked_size(static_cast<std::size_t>(host.view.len), b, offset, "copy_to");
  {
    nb::gil_scoped_release release;
    b.copy_to_host(host.view.buf, n, s, offset);
    s.synchronize();
  }
  return nb::borrow(dst);
}

void fill(Buffer& b, ScalarLike value, StreamLike stream_obj) {
  Stream s = stream_from_py(stream_obj, b.device());
  if (PyLong_Check(value.ptr())) {
    long long v = nb::cast<long long>(value);
    if (v < 0 || v > 255)
      throw ValueError(cat("Buffer.fill: an int fills bytes and must be in [0, 255], got ", v,
                           "; pass numpy.uint32(x) (or another 2- or 4-byte scalar) for wider patterns"));
    return b.fill(static_cast<std::uint32_t>(v), 1, s);
  }
  HostView host(value, false);
  if (!host.ok || host.view.ndim != 0 || (host.view.len != 1 && host.view.len != 2 && host.view.len != 4))
    throw TypeError("Buffer.fill: the value must be an int in [0, 255] or a 1-, 2- or 4-byte NumPy scalar");
  std::uint32_t pattern = 0;
  std::memcpy(&pattern, host.view.buf, static_cast<std::size_t>(host.view.len));
  b.fill(pattern, static_cast<int>(host.view.len), s);
}

}  // namespace

bool device_pointer_from_py(nb::handle obj, std::uint64_t* address, std::optional<cuda::CUstream> consumer,
                            DeviceArgument* info) {
  if (nb::isinstance<Buffer>(obj)) {
    const Buffer& b = nb::cast<const Buffer&>(obj);
    if (b.closed()) throw ValueError("the buffer was closed");
    *address = b.ptr();
    return true;
  }
  ImportOptions o;
  o.consumer_stream = consumer;
  o.device_only = true;
  const std::optional<ForeignArray> f = import_foreign(obj, kArgumentOrder, o);
  if (!f) return false;
  *address = f->data;
  if (info) *info = f->device_argument();
  return true;
}

void bind_cuda_memory(nb::module_& m) {
  nb::class_<MemoryPool>(m, "MemoryPool", "The stream-ordered caching pool of one device.")
      .def_prop_ro("device", &MemoryPool::device)
      .def("stats", [](const MemoryPool& p) { return stats_dict(p.stats()); })
      .def("free_all_blocks", &MemoryPool::free_all_blocks, nb::call_guard<nb::gil_scoped_release>(),
           "Gives every cached block back to the driver and trims its pool (synchronises the device).");
  m.def(
      "memory_pool",
      [](std::optional<int> d) -> MemoryPool& {
        return MemoryPool::for_device(d ? *d : runtime::Device::current().index());
      },
      nb::arg("device") = nb::none(), nb::rv_policy::reference);
  m.def("pinned_memory_stats", [] { return stats_dict(PinnedPool::global().stats()); });
  m.def("free_pinned_blocks", [] { PinnedPool::global().free_all_blocks(); });
  m.def(
      "memory_info",
      [](std::optional<int> d) { return runtime::Device(d ? *d : runtime::Device::current().index()).memory_info(); },
      nb::arg("device") = nb::none(), "(free, total) bytes of device memory.");

  nb::class_<Buffer>(m, "Buffer", "Owning memory (device, pinned host or managed), freed in stream order.")
      .def_static(
          "allocate",
          [](std::size_t nbytes, StreamLike stream, const std::string& kind, std::optional<int> device) {
            return Buffer::allocate(nbytes, stream_from_py(stream, device ? *device : -1), kind_from_name(kind));
          },
          nb::arg("nbytes"), nb::arg("stream") = nb::none(), nb::arg("kind") = "device", nb::arg("device") = nb::none())
      .def_prop_ro("ptr", &Buffer::ptr)
      .def_prop_ro("size", &Buffer::size)
      .def_prop_ro("device", &Buffer::device)
      .def_prop_ro("kind", [](const Buffer& b) { return kind_name(b.kind()); })
      .def_prop_ro("stream", &Buffer::stream)
      .def_prop_ro("closed", &Buffer::closed)
      .def("__len__", &Buffer::size)
      .def("__int__", &Buffer::ptr)
      .def("copy_from", &copy_from, nb::arg("src"), nb::arg("stream") = nb::none(), nb::arg("offset") = 0,
           nb::arg("nbytes") = nb::none(),
           "Copies a host buffer, a Buffer or a device array into this buffer at byte `offset`.")
      .def("copy_to", &copy_to, nb::arg("dst") = nb::none(), nb::arg("stream") = nb::none(), nb::arg("offset") = 0)
      .def("fill", &fill, nb::arg("value"), nb::arg("stream") = nb::none())
      .def(
          "close",
          [](Buffer& b, StreamLike stream) {
            if (stream.is_none()) return b.close();
            Stream s = stream_from_py(stream, b.device());
            b.close(&s);
          },
          nb::arg("stream") = nb::none())
      .def(
          "__dlpack__",
          [](std::shared_ptr<Buffer> b, StreamLike stream, DLPackVersion, DLPackDevice, BoolLike) {
            return dlpack_export(b, stream);
          },
          nb::arg("stream") = nb::none(), nb::arg("max_version") = nb::none(), nb::arg("dl_device") = nb::none(),
          nb::arg("copy") = nb::none())
      .def("__dlpack_device__",
           [](const Buffer& b) {
             auto [type, id] = dlpack_device(b);
             return nb::make_tuple(type, id);
           })
      .def_prop_ro("__cuda_array_interface__", &cuda_array_interface)
      .def("__repr__", [](const Buffer& b) {
        return cat("<cupric.cuda.Buffer ", kind_name(b.kind()), " ", b.size(), " bytes at 0x", std::hex, b.ptr(),
                   std::dec, " device=", b.device(), b.closed() ? " closed" : "", ">");
      });
}

}  // namespace cupric::py
