// bind_cuda.cpp — cupric.cuda, part 1: the exception classes, the loader (is_available,
// versions), Device, Stream, Event and graphs. Nothing here touches CUDA at import.
#include "bind_cuda.hpp"
#include "py_types.hpp"

#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>

#include "cupric/cuda/errors.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/device.hpp"
#include "cupric/runtime/graph.hpp"

namespace cupric::py {
using namespace cupric::runtime;

namespace {

PyObject* cuda_error_type = nullptr;
PyObject* oom_error_type = nullptr;
PyObject* compile_error_type = nullptr;
PyObject* not_found_error_type = nullptr;

void raise_cuda(PyObject* type, const cuda::CudaError& e, void (*extra)(nb::object&, const cuda::CudaError&)) {
  nb::object inst = nb::steal(PyObject_CallFunction(type, "s", e.what()));
  if (!inst.is_valid()) return;  // the call set an error already
  inst.attr("code") = e.code;
  inst.attr("name") = e.name;
  inst.attr("operation") = e.operation;
  inst.attr("sticky") = e.sticky;
  if (extra) extra(inst, e);
  PyErr_SetObject(type, inst.ptr());
}

}  // namespace

void translate_cuda_error(const std::exception_ptr& p) {
  try {
    std::rethrow_exception(p);
  } catch (const cuda::OutOfMemoryError& e) {
    raise_cuda(oom_error_type, e, [](nb::object& o, const cuda::CudaError& base) {
      const auto& oom = static_cast<const cuda::OutOfMemoryError&>(base);
      o.attr("requested") = oom.requested;
      o.attr("free") = oom.free_bytes;
    });
  } catch (const cuda::CompileError& e) {
    raise_cuda(compile_error_type, e, [](nb::object& o, const cuda::CudaError& base) {
      o.attr("log") = static_cast<const cuda::CompileError&>(base).log;
    });
  } catch (const cuda::LibraryNotFoundError& e) {
    raise_cuda(not_found_error_type, e, [](nb::object& o, const cuda::CudaError& base) {
      o.attr("library") = static_cast<const cuda::LibraryNotFoundError&>(base).library;
    });
  } catch (const cuda::CudaError& e) {
    raise_cuda(cuda_error_type, e, nullptr);
  }
}

namespace {

PyObject* new_exception(nb::module_& m, const char* name, PyObject* bases, const char* doc) {
  std::string qualified = std::string("cupric.cuda.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (!type) throw nb::python_error();
  m.attr(name) = nb::handle(type);
  return type;
}

void bind_errors(nb::module_& m) {
  cuda_error_type = new_exception(m, "CUDAError", PyExc_RuntimeError,
                                  "A CUDA call failed. Attributes: code, name (CUDA_ERROR_...), operation, sticky "
                                  "(True: the context is unusable and the process must restart).");
  nb::object oom_bases = nb::make_tuple(nb::handle(cuda_error_type), nb::handle(PyExc_MemoryError));
  oom_error_type = new_exception(m, "OutOfMemoryError", oom_bases.ptr(),
                                 "Device memory is exhausted. Attributes: requested, free (bytes).");
  compile_error_type = new_exception(m, "CompileError", cuda_error_type,
                                     "NVRTC or nvJitLink rejected the code. Attribute: log (the full log).");
  not_found_error_type = new_exception(m, "LibraryNotFoundError", cuda_error_type,
                                       "A CUDA library (the driver, NVRTC, nvJitLink) is missing. Attribute: library.");
  // (raised through the module's one translator, translate_cpp_error, which calls translate_cuda_error)
}

void bind_loader(nb::module_& m) {
  cuda::set_site_packages_provider([] {
    std::vector<std::string> dirs;
    if (!Py_IsInitialized()) return dirs;
    nb::gil_scoped_acquire gil;
    try {
      for (nb::handle p : nb::module_::import_("sys").attr("path"))
        if (nb::isinstance<nb::str>(p)) dirs.push_back(nb::cast<std::string>(p));
    } catch (const std::exception&) {
    }
    return dirs;
  });
  m.def("is_available", &cuda::is_available,
        "True when the CUDA driver loads and sees a GPU (never raises; loads the driver on first call).");
  m.def("versions", [] {
    nb::dict out;
    for (const auto& info : cuda::library_versions()) {
      std::string key = info.name.find("nvrtc") != std::string::npos       ? "nvrtc"
                        : info.name.find("nvJitLink") != std::string::npos ? "nvjitlink"
                                                                           : "driver";
      nb::dict d;
      d["found"] = info.found;
      d["version"] = info.found ? nb::object(nb::make_tuple(info.major, info.minor)) : nb::none();
      d["path"] = info.found ? nb::object(nb::str(info.path.c_str())) : nb::none();
      d["error"] = info.found ? nb::none() : nb::object(nb::str(info.error.c_str()));
      out[key.c_str()] = d;
    }
    return out;
  });
  m.def("_library_candidates", &cuda::library_candidates);
  // 0 where there is no driver (a laptop without a GPU), as the docs promise; errors of a driver
  // that is present still raise
  m.def(
      "device_count", [] { return cuda::is_available() ? Device::count() : 0; },
      "The number of CUDA devices (0 when no driver or no GPU is present).");
}

// Every DeviceProperties field, once: bound as a Device property and listed in properties().
// (hand-laid: clang-format lays out a list of macro calls differently on each pass)
// clang-format off
#define CUPRIC_DEVICE_PROPERTIES(X) \
  X(name) \
  X(pci_bus_id) \
  X(arch) \
  X(multiprocessor_count) \
  X(total_memory) \
  X(l2_cache_size) \
  X(max_persisting_l2_cache_size) \
  X(max_shared_memory_per_block) \
  X(max_shared_memory_per_block_optin) \
  X(max_shared_memory_per_multiprocessor) \
  X(total_constant_memory) \
  X(clock_rate_khz) \
  X(memory_clock_rate_khz) \
  X(memory_bus_width) \
  X(warp_size) \
  X(max_threads_per_block) \
  X(max_threads_per_multiprocessor) \
  X(max_blocks_per_multiprocessor) \
  X(max_registers_per_block) \
  X(max_registers_per_multiprocessor) \
  X(max_block_dim) \
  X(max_grid_dim) \
  X(async_engine_count) \
  X(integrated) \
  X(managed_memory) \
  X(concurrent_managed_access) \
  X(cooperative_launch) \
  X(cluster_launch) \
  X(memory_pools_supported) \
  X(ecc_enabled) \
  X(stream_priorities_supported)
// clang-format on

void bind_device(nb::module_& m) {
  nb::class_<Device> cls(m, "Device", "A CUDA device. Device() is the calling thread's current device.");
  cls.def(
         "__init__",
         [](Device* self, std::optional<int> index) { new (self) Device(index ? *index : Device::current().index()); },
         nb::arg("index") = nb::none())
      .def_static("count", &Device::count)
      .def_static("current", &Device::current)
      .def_prop_ro("index", &Device::index)
      // two attributes, not every property: a tile kernel's first launch asks for it (properties()
      // costs ~1 ms on the H200: the device's name, PCI id and memory size)
      .def_prop_ro("compute_capability",
                   [](const Device& d) {
                     return nb::make_tuple(d.attribute(cuda::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                                           d.attribute(cuda::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
                   })
      .def(
          "set_current", [](const Device& d) { Device::set_current(d.index()); },
          "Makes this the calling thread's current device.")
      .def("__enter__",
           [](const Device& d) {
             Stream::current(d.index()).enter();
             return d;
           })
      .def("__exit__", [](const Device&, nb::args) { Stream::exit(); })
      .def("synchronize", &Device::synchronize, nb::call_guard<nb::gil_scoped_release>())
      .def("memory_info", &Device::memory_info, "(free, total) bytes.")
      .def("stream_priority_range", &Device::stream_priority_range, "(least, greatest); lower runs first.")
      .def_prop_ro("default_stream", [](const Device& d) { return Stream::default_stream(d.index()); })
      .def(
          "create_stream",
          [](const Device& d, int priority, bool non_blocking) {
            return Stream::create(d.index(), priority, non_blocking);
          },
          nb::arg("priority") = 0, nb::arg("non_blocking") = true)
      .def("properties",
           [](const Device& d) {
             const DeviceProperties& p = d.properties();
             nb::dict out;
#define CUPRIC_PROPERTY_ITEM(field) out[#field] = p.field;
             CUPRIC_DEVICE_PROPERTIES(CUPRIC_PROPERTY_ITEM)
#undef CUPRIC_PROPERTY_ITEM
             out["compute_capability"] = nb::make_tuple(p.major, p.minor);
             return out;
           })
      .def("__eq__",
           [](const Device& a, nb::handle b) { return nb::isinstance<Device>(b) && nb::cast<const Device&>(b) == a; })
      .def("__hash__", [](const Device& d) { return std::hash<int>()(d.index()); })
      .def("__repr__", [](const Device& d) { return cat("<cupric.cuda.Device ", d.index(), ">"); });
#define CUPRIC_PROPERTY_DEF(field) cls.def_prop_ro(#field, [](const Device& d) { return d.properties().field; });
  CUPRIC_DEVICE_PROPERTIES(CUPRIC_PROPERTY_DEF)
#undef CUPRIC_PROPERTY_DEF
}

cuda::CUstreamCaptureMode capture_mode(const std::string& mode) {
  if (mode == "global") return cuda::CU_STREAM_CAPTURE_MODE_GLOBAL;
  if (mode == "thread_local") return cuda::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
  if (mode == "relaxed") return cuda::CU_STREAM_CAPTURE_MODE_RELAXED;
  throw ValueError(cat("capture mode must be 'global', 'thread_local' or 'relaxed', got '", mode, "'"));
}

int device_arg(std::optional<int> device) { return device ? *device : -1; }

void bind_stream(nb::module_& m) {
  nb::class_<Stream>(m, "Stream", "A CUDA stream. `with stream:` makes it current for what cupric launches.")
      .def(
          "__init__",
          [](Stream* self, std::optional<int> device, int priority, bool non_blocking) {
            new (self) Stream(Stream::create(device_arg(device), priority, non_blocking));
          },
          nb::arg("device") = nb::none(), nb::arg("priority") = 0, nb::arg("non_blocking") = true)
      .def_static(
          "from_handle",
          [](std::uintptr_t handle, std::optional<int> device) { return Stream::wrap(handle, device_arg(device)); },
          nb::arg("handle"), nb::arg("device") = nb::none(), "Wraps a raw CUstream (not owned).")
      .def_static(
          "from_external", [](StreamLike obj) { return stream_from_py(obj); }, nb::arg("obj"),
          "Wraps another library's stream (not owned; its owner is kept alive): an object with "
          "__cuda_stream__ (cuda.core), a PyTorch stream (.cuda_stream), a CuPy stream (.ptr) or an int handle. "
          "`with cu.cuda.Stream.from_external(torch.cuda.current_stream()):` runs cupric's work on PyTorch's "
          "stream.")
      .def_static(
          "wrap", [](StreamLike obj) { return stream_from_py(obj); }, nb::arg("obj"), "The same as from_external.")
      .def_prop_ro("handle", &Stream::handle_value)
      .def_prop_ro("device", &Stream::device)
      .def_prop_ro("priority", &Stream::priority)
      .def_prop_ro("non_blocking", &Stream::non_blocking)
      .def_prop_ro("owned", &Stream::owned)
      .def("synchronize", &Stream::synchronize, nb::call_guard<nb::gil_scoped_release>())
      .def("query", &Stream::query, "True when all queued work has finished.")
      .def(
          "wait",
          [](const Stream& s, EventOrStream what) {
            if (nb::isinstance<Event>(what)) return s.wait(nb::cast<const Event&>(what));
            s.wait(stream_from_py(what));
          },
          nb::arg("event_or_stream"), "Makes later work on this stream wait for an event or another stream.")
      .def(
          "record",
          [](const Stream& s, std::optional<Event> e) {
            if (!e) return s.record();
            s.record(*e);
            return *e;
          },
          nb::arg("event") = nb::none())
      .def(
          "begin_capture", [](const Stream& s, const std::string& mode) { s.begin_capture(capture_mode(mode)); },
          nb::arg("mode") = "thread_local")
      .def("end_capture", &Stream::end_capture)
      .def_prop_ro("is_capturing", &Stream::is_capturing)
      .def("__cuda_stream__", [](const Stream& s) { return nb::make_tuple(0, s.handle_value()); })
      .def("__enter__",
           [](const Stream& s) {
             s.enter();
             return s;
           })
      .def("__exit__", [](const Stream&, nb::args) { Stream::exit(); })
      .def("__eq__",
           [](const Stream& a, nb::handle b) { return nb::isinstance<Stream>(b) && nb::cast<const Stream&>(b) == a; })
      .def("__hash__", [](const Stream& s) { return std::hash<std::uintptr_t>()(s.handle_value()); })
      .def("__repr__", [](const Stream& s) {
        return cat("<cupric.cuda.Stream handle=0x", std::hex, s.handle_value(), std::dec, " device=", s.device(),
                   s.handle_value() == 0 ? " (default)" : "", ">");
      });
  m.def(
      "current_stream", [](std::optional<int> d) { return Stream::current(device_arg(d)); },
      nb::arg("device") = nb::none());
  m.def(
      "default_stream", [](std::optional<int> d) { return Stream::default_stream(device_arg(d)); },
      nb::arg("device") = nb::none());

  nb::class_<Event>(m, "Event", "A CUDA event: record on a stream, wait for it, time between two.")
      .def(
          "__init__",
          [](Event* self, std::optional<int> device, bool timing, bool blocking_sync) {
            new (self) Event(Event::create(device_arg(device), timing, blocking_sync));
          },
          nb::arg("device") = nb::none(), nb::arg("timing") = true, nb::arg("blocking_sync") = false)
      .def(
          "record",
          [](const Event& e, StreamLike stream) {
            e.record(stream_from_py(stream, e.device()));
            return e;
          },
          nb::arg("stream") = nb::none())
      .def("synchronize", &Event::synchronize, nb::call_guard<nb::gil_scoped_release>())
      .def("query", &Event::query)
      .def("elapsed_time", &Event::elapsed_ms, nb::arg("end"), "Milliseconds from this event to `end`.")
      .def(
          "__sub__", [](const Event& end, const Event& start) { return start.elapsed_ms(end); },
          "end - start: milliseconds between the two events.")
      .def_prop_ro("handle", [](const Event& e) { return reinterpret_cast<std::uintptr_t>(e.handle()); })
      .def_prop_ro("device", &Event::device)
      .def_prop_ro("timing", &Event::timing);

  nb::class_<GraphExec>(m, "GraphExec", "An instantiated graph: launch() replays it.")
      .def(
          "launch", [](const GraphExec& g, StreamLike stream) { g.launch(stream_from_py(stream)); },
          nb::arg("stream") = nb::none())
      .def(
          "upload", [](const GraphExec& g, StreamLike stream) { g.upload(stream_from_py(stream)); },
          nb::arg("stream") = nb::none());
  nb::class_<Graph>(m, "Graph", "A CUDA graph made by stream capture.")
      .def_prop_ro("num_nodes", &Graph::num_nodes)
      .def("instantiate", &Graph::instantiate, nb::arg("auto_free_on_launch") = true);
}

}  // namespace

runtime::Stream stream_from_py(nb::handle obj, int device) {
  if (obj.is_none()) return Stream::current(device);
  if (nb::isinstance<Stream>(obj)) return nb::cast<Stream>(obj);
  auto keep = [](nb::handle o) {
    Py_INCREF(o.ptr());
    return std::shared_ptr<void>(o.ptr(), [](void* p) {
      if (!Py_IsInitialized()) return;
      nb::gil_scoped_acquire gil;
      Py_DECREF(static_cast<PyObject*>(p));
    });
  };
  if (PyLong_Check(obj.ptr())) return Stream::wrap(nb::cast<std::uintptr_t>(obj), device);
  if (nb::hasattr(obj, "__cuda_stream__")) {  // a method (cuda.core) or, in some libraries, a property
    nb::object info = obj.attr("__cuda_stream__");
    if (PyCallable_Check(info.ptr())) info = info();
    return Stream::wrap(nb::cast<std::uintptr_t>(info[1]), device, keep(obj));
  }
  for (const char* attr : {"cuda_stream", "ptr"})  // PyTorch, CuPy
    if (nb::hasattr(obj, attr)) return Stream::wrap(nb::cast<std::uintptr_t>(obj.attr(attr)), device, keep(obj));
  throw TypeError(
      cat("expected a stream (cupric.cuda.Stream, an object with __cuda_stream__, a PyTorch or CuPy "
          "stream, an int handle or None), got ",
          nb::cast<std::string>(nb::str(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr())))))));
}

cuda::CUstream protocol_stream(long long value, const char* what) {
  if (value == 0)
    throw ValueError(cat(what,
                         ": stream 0 is ambiguous (it could be the legacy or the per-thread default stream); "
                         "pass 1 for the legacy default stream, 2 for the per-thread one, or a stream handle"));
  if (value < 0) throw ValueError(cat(what, ": a stream must be a positive handle, 1 or 2, got ", value));
  return reinterpret_cast<cuda::CUstream>(value == 1 ? 0 : static_cast<std::uintptr_t>(value));
}

std::optional<runtime::Stream> dlpack_consumer_stream(nb::handle stream, int device) {
  if (stream.is_none()) return Stream::default_stream(device);  // the Array API: None is the legacy stream
  if (PyLong_Check(stream.ptr())) {
    const auto value = nb::cast<long long>(stream);
    if (value == -1) return std::nullopt;  // the consumer asks for no synchronisation
    return Stream::wrap(reinterpret_cast<std::uintptr_t>(protocol_stream(value, "__dlpack__")), device);
  }
  return stream_from_py(stream, device);
}

void bind_cuda_core(nb::module_& m) {
  bind_errors(m);
  bind_loader(m);
  bind_device(m);
  bind_stream(m);
}

void bind_cuda(nb::module_& parent) {
  nb::module_ m = parent.def_submodule("_cuda", "cupric.cuda: the CUDA runtime (bindings)");
  bind_cuda_core(m);
  bind_cuda_memory(m);
  bind_cuda_program(m);
  bind_cuda_launch(m);
  bind_cuda_nccl(m);
}

}  // namespace cupric::py
