// bind_cuda_backend.cpp — private hooks of the CUDA array backend for tests and tools: the rendered
// kernel sources and compiling them with NVRTC (no GPU needed; `python -m cupric.cache warm` compiles
// them through these, counting them on a terminal).
#include <nanobind/stl/pair.h>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bind_cuda.hpp"
#include "convert.hpp"
#include "cupric/cuda/kernel_catalogue.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/device.hpp"
#include "cupric/runtime/stream.hpp"

namespace cupric::py {

namespace {
/// __cuda_array_interface__ (version 3) of a CUDA array; AttributeError for others, so that
/// hasattr() answers False for CPU arrays as consumers expect.
nb::dict cuda_array_interface(const Array& a) {
  if (a.device().is_cpu())
    throw nb::attribute_error("__cuda_array_interface__ is only available for CUDA arrays; this one is on cpu");
  if (is_ml_dtype(a.dtype()))
    throw nb::attribute_error(cat(name(a.dtype()), " arrays have no __cuda_array_interface__ typestr").c_str());
  nb::dict d;
  d["typestr"] = std::string(a.itemsize() == 1 ? "|" : "<") + info(a.dtype()).typestr_code;
  nb::list shape, strides;
  for (auto n : a.shape()) shape.append(n);
  for (auto s : a.strides()) strides.append(s * a.itemsize());
  d["shape"] = nb::tuple(shape);
  d["strides"] = a.is_c_contiguous() ? nb::none() : nb::object(nb::tuple(strides));
  d["data"] = nb::make_tuple(a.size() ? reinterpret_cast<std::uintptr_t>(a.data()) : 0, !a.writeable());
  d["version"] = 3;
  // the consumer synchronises on the stream where the data is ready: the one that wrote it last
  // (1 = the legacy default stream); None once that work is done
  const std::optional<cuda::CUstream> ready =
      runtime::ready_stream(a.device().index, a.storage() ? a.storage()->last_writer() : 0);
  d["stream"] = ready ? nb::object(nb::int_(runtime::protocol_handle(*ready))) : nb::none();
  return d;
}
}  // namespace

void order_before_use(const DeviceArgument& arg, runtime::StreamState& stream) {
  if (arg.storage) runtime::wait_for_writer(stream, arg.storage->last_writer());
  else if (arg.has_stream) runtime::wait_for_handle(stream.handle, stream.device, arg.stream);
}

void note_written(const DeviceArgument& arg, const runtime::StreamState& stream) {
  if (arg.storage) arg.storage->set_last_writer(stream.serial);
}

void bind_cuda_backend(nb::module_& m) {
  namespace cb = cuda_backend;
  def_property(ndarray_type(), "__cuda_array_interface__", &cuda_array_interface);
  m.def("_cuda_kernel_sources", &cb::all_sources, nb::arg("common_only") = false,
        "(label, CUDA C++ source) of every array kernel family for every dtype.");
  m.def("_cuda_kernel_batches", &cb::batched_sources, nb::arg("common_only") = false, nb::arg("per_batch") = 64,
        "The kernel sources packed many to a translation unit (for compile tests).");
  m.def("_cuda_device_include", &cb::device_include_dir);
  m.def(
      "_cuda_kernel_cache_key",
      [](const std::string& source, const std::string& arch) {
        return cb::kernel_program(source, arch).cache_key(runtime::CodeKind::cubin, {}, "any");
      },
      nb::arg("source"), nb::arg("arch") = "sm_90a",
      "The compile cache key of an array kernel's source (it covers the device headers' contents).");
  m.def(
      "_cuda_compile_kernel_source",
      [](const std::string& source, const std::string& arch, bool use_cache, bool syntax_only) {
        const runtime::Program p = cb::kernel_program(
            source, arch, syntax_only ? std::vector<std::string>{"-fdevice-syntax-only"} : std::vector<std::string>{});
        nb::gil_scoped_release release;
        return p.compile(syntax_only ? runtime::CodeKind::ptx : runtime::CodeKind::cubin, {}, use_cache).code().size();
      },
      nb::arg("source"), nb::arg("arch") = "sm_90a", nb::arg("use_cache") = true, nb::arg("syntax_only") = false,
      "Compiles one array-kernel source as the backend does; returns the cubin's size.");
}

}  // namespace cupric::py
