// bind_cuda_backend.cpp — private hooks of the CUDA array backend for tests and tools: the rendered
// kernel sources, compiling them with NVRTC (no GPU needed), and warming the compile cache.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "backend/cuda/cuda_backend.hpp"
#include "convert.hpp"
#include "cupric/runtime/device.hpp"

namespace cupric::py {

void bind_cuda_backend(nb::module_& m) {
  namespace cb = cuda_backend;
  m.def("_cuda_kernel_sources", &cb::all_sources, nb::arg("common_only") = false,
        "(label, CUDA C++ source) of every array kernel family for every dtype.");
  m.def("_cuda_kernel_batches", &cb::batched_sources, nb::arg("common_only") = false, nb::arg("per_batch") = 64,
        "The kernel sources packed many to a translation unit (for compile tests).");
  m.def("_cuda_device_include", &cb::device_include_dir);
  m.def(
      "_cuda_compile_kernel_source",
      [](const std::string& source, const std::string& arch, bool use_cache, bool syntax_only) {
        runtime::ProgramOptions o = cb::kernel_options(arch);
        if (syntax_only) o.extra.push_back("-fdevice-syntax-only");
        runtime::Program p(source, "cupric_array_kernels.cu", o);
        nb::gil_scoped_release release;
        return p.compile(syntax_only ? runtime::CodeKind::ptx : runtime::CodeKind::cubin, {}, use_cache).code().size();
      },
      nb::arg("source"), nb::arg("arch") = "sm_90a", nb::arg("use_cache") = true, nb::arg("syntax_only") = false,
      "Compiles one array-kernel source as the backend does; returns the cubin's size.");
  m.def(
      "_cuda_warm_kernels",
      [](bool common_only) {
        const std::string arch = cb::kernel_arch(runtime::Device::current().index());
        std::size_t n = 0;
        for (const auto& [label, source] : cb::all_sources(common_only)) {
          runtime::Program p(source, "cupric_array_kernels.cu", cb::kernel_options(arch));
          nb::gil_scoped_release release;
          p.compile(runtime::CodeKind::cubin);
          ++n;
        }
        return n;
      },
      nb::arg("common_only") = true, "Compiles the common array kernels for the current GPU into the cache.");
}

}  // namespace cupric::py
