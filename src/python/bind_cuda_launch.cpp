// bind_cuda_launch.cpp — cupric.cuda, part 4: Kernel, LaunchConfig and launch(). Arguments are
// classified here (exact-type checks first: int, float, Buffer, bool) and packed by the C++
// ArgPacker; the hot path allocates nothing and makes one driver call.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <unordered_set>

#include "bind_cuda.hpp"
#include "py_types.hpp"
#include "cupric/cuda/errors.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/device.hpp"
#include "cupric/runtime/kernel.hpp"

namespace cupric::py {
using namespace cupric::runtime;

namespace {

PyTypeObject* stream_type = nullptr;
PyTypeObject* buffer_type = nullptr;

void pack_int(ArgPacker& p, PyObject* o) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow == 0) {
    if (v == -1 && PyErr_Occurred()) throw nb::python_error();
    return p.add_int(v);
  }
  unsigned long long u = overflow > 0 ? PyLong_AsUnsignedLongLong(o) : 0;
  if (overflow < 0 || (u == static_cast<unsigned long long>(-1) && PyErr_Occurred())) {
    PyErr_Clear();
    throw OverflowError(
        cat("argument ", p.count(), ": ", nb::cast<std::string>(nb::str(o)), " does not fit in 64 bits"));
  }
  p.add_uint(u);
}

/// Typed scalars through the buffer protocol (NumPy scalars, ctypes values): 0-d buffers only.
bool pack_typed_scalar(ArgPacker& p, PyObject* o) {
  if (!PyObject_CheckBuffer(o)) return false;
  Py_buffer view;
  if (PyObject_GetBuffer(o, &view, PyBUF_ND | PyBUF_FORMAT) != 0) {
    PyErr_Clear();
    return false;
  }
  struct Release {
    Py_buffer* v;
    ~Release() { PyBuffer_Release(v); }
  } release{&view};
  if (view.ndim != 0)
    throw TypeError(cat("argument ", p.count(), " is a host buffer (", Py_TYPE(o)->tp_name,
                        "); kernels take device memory: copy it into a cu.cuda.Buffer (or pass a NumPy scalar "
                        "for a scalar parameter)"));
  p.add_bytes(view.buf, static_cast<std::size_t>(view.len), 0, Py_TYPE(o)->tp_name);
  return true;
}

/// The device arrays among a launch's arguments: the launch stream waits for their producers
/// first, and cupric arrays are noted as written by it (a kernel may write any of them).
struct DeviceArguments {
  static constexpr std::size_t kInline = 8;
  DeviceArgument inline_args[kInline];
  std::vector<DeviceArgument> more;
  std::size_t count = 0;
  void add(const DeviceArgument& a) {
    if (!a.storage && !a.has_stream) return;
    if (count < kInline) inline_args[count] = a;
    else more.push_back(a);
    ++count;
  }
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t i = 0; i < count; ++i) f(i < kInline ? inline_args[i] : more[i - kInline]);
  }
};

void pack_slow(ArgPacker& p, nb::handle h, const StreamState* stream, DeviceArguments& arrays) {
  PyObject* o = h.ptr();
  if (pack_typed_scalar(p, o)) return;
  if (PyLong_Check(o)) return pack_int(p, o);
  if (PyFloat_Check(o)) return p.add_float(PyFloat_AsDouble(o));
  std::uint64_t address = 0;
  DeviceArgument arg;
  std::optional<cuda::CUstream> consumer;
  if (stream) consumer = stream->handle;
  if (device_pointer_from_py(h, &address, consumer, &arg)) {
    arrays.add(arg);
    return p.add_pointer(address, Py_TYPE(o)->tp_name);
  }
  throw TypeError(cat("argument ", p.count(), " has type ", Py_TYPE(o)->tp_name,
                      ": kernel arguments are ints, floats, bools, NumPy scalars, cupric Buffers, or device arrays "
                      "(__cuda_array_interface__ or DLPack on CUDA)"));
}

inline void pack_one(ArgPacker& p, nb::handle h, const StreamState* stream, DeviceArguments& arrays) {
  PyObject* o = h.ptr();
  PyTypeObject* t = Py_TYPE(o);
  if (t == &PyLong_Type) return pack_int(p, o);
  if (t == &PyFloat_Type) return p.add_float(PyFloat_AS_DOUBLE(o));
  if (t == buffer_type) {
    const Buffer* b = nb::inst_ptr<Buffer>(h);
    if (b->closed()) throw ValueError(cat("argument ", p.count(), " is a closed Buffer"));
    return p.add_pointer(b->ptr(), "a cupric Buffer");
  }
  if (t == &PyBool_Type) return p.add_bool(o == Py_True);
  pack_slow(p, h, stream, arrays);
}

/// `stream`: where the launch goes (DLPack producers order their work before it), or null.
void pack_all(ArgPacker& p, const nb::args& args, const StreamState* stream, DeviceArguments& arrays) {
  PyObject* tuple = args.ptr();
  Py_ssize_t n = PyTuple_GET_SIZE(tuple);
  for (Py_ssize_t i = 0; i < n; ++i) pack_one(p, nb::handle(PyTuple_GET_ITEM(tuple, i)), stream, arrays);
}

/// Packs and launches on `stream`, after the producers of its device arrays.
void launch_packed(StreamState& stream, const LaunchConfig& config, const Kernel& kernel, const nb::args& args) {
  ArgPacker packer(kernel.param_sizes_known() ? &kernel.param_sizes() : nullptr, kernel.interned_name());
  DeviceArguments arrays;
  pack_all(packer, args, &stream, arrays);
  arrays.for_each([&](const DeviceArgument& a) { order_before_use(a, stream); });
  launch(stream.handle, &stream, config, kernel, packer);
  arrays.for_each([&](const DeviceArgument& a) { note_written(a, stream); });
}

std::array<unsigned, 3> dims_from_py(nb::handle obj, const char* what, unsigned fill) {
  std::array<unsigned, 3> d{fill, fill, fill};
  auto get = [&](nb::handle v) {
    long long n = nb::cast<long long>(v);
    if (n <= 0 || n > 0xffffffffLL) throw ValueError(cat(what, " dimensions must be positive, got ", n));
    return static_cast<unsigned>(n);
  };
  if (PyLong_Check(obj.ptr())) {
    d = {get(obj), 1, 1};
    return d;
  }
  std::size_t n = nb::len(obj);
  if (n < 1 || n > 3) throw ValueError(cat(what, " must be an int or a tuple of 1 to 3 ints, got ", n, " values"));
  d = {1, 1, 1};
  for (std::size_t i = 0; i < n; ++i) d[i] = get(obj[i]);
  return d;
}

nb::tuple dims_to_py(const std::array<unsigned, 3>& d) { return nb::make_tuple(d[0], d[1], d[2]); }

void bind_kernel(nb::module_& m) {
  nb::class_<Kernel>(m, "Kernel", "A kernel of loaded object code: attributes, occupancy, parameter sizes.")
      .def_prop_ro("name", &Kernel::name)
      .def_prop_ro("device", &Kernel::device)
      .def_prop_ro("handle", [](const Kernel& k) { return reinterpret_cast<std::uintptr_t>(k.function()); })
      .def_prop_ro(
          "param_sizes",
          [](const Kernel& k) -> nb::object {
            if (!k.param_sizes_known()) return nb::none();
            return nb::cast(k.param_sizes());
          },
          "Byte size of each parameter (None when the driver cannot tell: older than CUDA 12.4).")
      .def_prop_ro("num_registers", &Kernel::num_registers)
      .def_prop_ro("static_shared_memory", &Kernel::static_shared_memory)
      .def_prop_ro("local_memory", &Kernel::local_memory)
      .def_prop_ro("const_memory",
                   [](const Kernel& k) { return k.attribute(cuda::CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES); })
      .def_prop_ro("max_threads_per_block", &Kernel::max_threads_per_block)
      .def_prop_ro("ptx_version", [](const Kernel& k) { return k.attribute(cuda::CU_FUNC_ATTRIBUTE_PTX_VERSION); })
      .def_prop_ro("binary_version",
                   [](const Kernel& k) { return k.attribute(cuda::CU_FUNC_ATTRIBUTE_BINARY_VERSION); })
      .def_prop_rw("max_dynamic_shared_memory", &Kernel::max_dynamic_shared_memory,
                   &Kernel::set_max_dynamic_shared_memory,
                   "Dynamic shared memory a launch may use; set it to go above 48 KiB.")
      .def("occupancy", &Kernel::occupancy, nb::arg("block_size"), nb::arg("dynamic_shared_memory") = 0,
           "Maximum active blocks per SM for this block size and dynamic shared memory.")
      .def("attributes",
           [](const Kernel& k) {
             nb::dict d;
             d["num_registers"] = k.num_registers();
             d["static_shared_memory"] = k.static_shared_memory();
             d["local_memory"] = k.local_memory();
             d["const_memory"] = k.attribute(cuda::CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
             d["max_threads_per_block"] = k.max_threads_per_block();
             d["max_dynamic_shared_memory"] = k.max_dynamic_shared_memory();
             d["ptx_version"] = k.attribute(cuda::CU_FUNC_ATTRIBUTE_PTX_VERSION);
             d["binary_version"] = k.attribute(cuda::CU_FUNC_ATTRIBUTE_BINARY_VERSION);
             return d;
           })
      .def("__repr__",
           [](const Kernel& k) { return cat("<cupric.cuda.Kernel '", k.name(), "' device=", k.device(), ">"); });
}

void bind_launch_config(nb::module_& m) {
  nb::class_<LaunchConfig>(m, "LaunchConfig", "Grid, block, dynamic shared memory, cluster and cooperative flag.")
      .def(
          "__init__",
          [](LaunchConfig* self, Dims3Like grid, Dims3Like block, unsigned shared_memory, Dims3Like cluster,
             bool cooperative) {
            new (self) LaunchConfig();
            self->grid = dims_from_py(grid, "grid", 1);
            self->block = dims_from_py(block, "block", 1);
            self->shared_memory = shared_memory;
            if (!cluster.is_none()) self->cluster = dims_from_py(cluster, "cluster", 1);
            self->cooperative = cooperative;
          },
          nb::arg("grid") = 1, nb::arg("block") = 1, nb::arg("shared_memory") = 0, nb::arg("cluster") = nb::none(),
          nb::arg("cooperative") = false)
      .def_prop_ro("grid", [](const LaunchConfig& c) { return dims_to_py(c.grid); })
      .def_prop_ro("block", [](const LaunchConfig& c) { return dims_to_py(c.block); })
      .def_prop_ro("shared_memory", [](const LaunchConfig& c) { return c.shared_memory; })
      .def_prop_ro("cluster",
                   [](const LaunchConfig& c) -> nb::object {
                     return c.cluster[0] ? nb::object(dims_to_py(c.cluster)) : nb::none();
                   })
      .def_prop_ro("cooperative", [](const LaunchConfig& c) { return c.cooperative; })
      .def("__repr__", [](const LaunchConfig& c) {
        return cat("LaunchConfig(grid=(", c.grid[0], ", ", c.grid[1], ", ", c.grid[2], "), block=(", c.block[0], ", ",
                   c.block[1], ", ", c.block[2], "), shared_memory=", c.shared_memory, ")");
      });
}

/// Launch sites: the first Python frame outside the cupric package, as an interned
/// "file:line" (or null). Runs on every launch while recording is on. A launch straight from
/// user code (an array op, cu.cuda.launch) is looked up in a direct-mapped cache by code object
/// and instruction, so that the line table and the string are made once per call site.
std::string cupric_package_dir;

const char* intern_site(PyFrameObject* frame, const char* file) {
  static auto* sites = new std::unordered_set<std::string>();  // never freed: read after faults
  return sites->insert(cat(file, ":", PyFrame_GetLineNumber(frame))).first->c_str();
}

bool in_package(const char* file) {
  return !cupric_package_dir.empty() && std::strncmp(file, cupric_package_dir.data(), cupric_package_dir.size()) == 0;
}

const char* python_launch_site() {
  if (!Py_IsInitialized() || !PyGILState_Check()) return nullptr;
  struct Entry {
    PyCodeObject* code = nullptr;  // a reference, so that the address is not reused while cached
    int lasti = -1;
    const char* site = nullptr;
  };
  static Entry cache[256];
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  if (!frame) return nullptr;
  PyCodeObject* code = PyFrame_GetCode(frame);
#if PY_VERSION_HEX >= 0x030B0000
  const int lasti = PyFrame_GetLasti(frame);
#else
  const int lasti = frame->f_lasti;
#endif
  Entry& e = cache[(reinterpret_cast<std::uintptr_t>(code) >> 4 ^ static_cast<std::uintptr_t>(lasti)) & 255];
  if (e.code == code && e.lasti == lasti) {
    Py_DECREF(code);
    return e.site;
  }
  const char* file = PyUnicode_AsUTF8(code->co_filename);
  if (file && !in_package(file)) {
    Py_XDECREF(e.code);
    e = {code, lasti, intern_site(frame, file)};  // keeps the reference
    return e.site;
  }
  Py_DECREF(code);
  Py_INCREF(frame);
  const char* site = nullptr;
  while (frame && !site) {  // launched by cupric's Python code (tile kernels): the caller's line
    PyFrameObject* back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
    if (!frame) break;
    PyCodeObject* outer = PyFrame_GetCode(frame);
    const char* outer_file = PyUnicode_AsUTF8(outer->co_filename);
    if (outer_file && !in_package(outer_file)) site = intern_site(frame, outer_file);
    Py_DECREF(outer);
  }
  Py_XDECREF(frame);
  if (PyErr_Occurred()) PyErr_Clear();
  return site;
}

}  // namespace

void bind_cuda_launch(nb::module_& m) {
  bind_kernel(m);
  bind_launch_config(m);
  stream_type = reinterpret_cast<PyTypeObject*>(nb::type<Stream>().ptr());
  buffer_type = reinterpret_cast<PyTypeObject*>(nb::type<Buffer>().ptr());
  m.def(
      "launch",
      [](StreamLike stream, const LaunchConfig& config, const Kernel& kernel, nb::args args) {
        if (Py_TYPE(stream.ptr()) == stream_type)
          return launch_packed(*nb::inst_ptr<Stream>(stream)->state(), config, kernel, args);
        if (stream.is_none()) return launch_packed(current_stream_state(kernel.device()), config, kernel, args);
        Stream s = stream_from_py(stream, kernel.device());
        launch_packed(*s.state(), config, kernel, args);
      },
      nb::arg("stream").none(), nb::arg("config"), nb::arg("kernel"), nb::arg("args"),
      "launch(stream, config, kernel, *args): stream None is the current stream.");
  m.def(
      "set_launch_sites",
      [](bool on, const std::string& package_dir) {
        cupric_package_dir = package_dir;
        set_launch_site_hook(on ? &python_launch_site : nullptr);
      },
      nb::arg("enabled"), nb::arg("package_dir") = "",
      "Records the Python line of every kernel launch (for fault reports); costs a frame walk per launch.");
  m.def("launch_sites_enabled", [] { return launch_site_hook() != nullptr; });
  m.def("_recent_launches", &recent_launches_report, "The last launches, as a fault report lists them.");
  m.def("_dropped_streams", &poll_dropped_streams, "Polls streams dropped with work pending; returns how many remain.");
  m.def(
      "_pack_arguments",
      [](nb::handle sizes, nb::args args) {
        std::vector<std::uint32_t> param_sizes;
        if (!sizes.is_none()) param_sizes = nb::cast<std::vector<std::uint32_t>>(sizes);
        ArgPacker packer(sizes.is_none() ? nullptr : &param_sizes, "test_kernel");
        DeviceArguments arrays;
        pack_all(packer, args, nullptr, arrays);
        packer.finish();
        std::vector<std::size_t> offsets;
        for (std::size_t i = 0; i < packer.count(); ++i) offsets.push_back(packer.offset(i));
        return nb::make_tuple(nb::bytes(reinterpret_cast<const char*>(packer.data()), packer.size()), offsets);
      },
      nb::arg("param_sizes").none(), nb::arg("args"),
      "Packs arguments as launch() would (for tests): (bytes, offsets).");
}

}  // namespace cupric::py
