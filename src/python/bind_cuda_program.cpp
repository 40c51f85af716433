// bind_cuda_program.cpp — cupric.cuda, part 3: Program (NVRTC), ObjectCode and Linker (nvJitLink);
// the compile cache they go through is bound in bind_compile_cache.cpp.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>

#include "bind_cuda.hpp"
#include "py_types.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/kernel.hpp"
#include "cupric/runtime/program.hpp"

namespace cupric::py {
using namespace cupric::runtime;

namespace {

std::vector<std::pair<std::string, std::string>> defines_from_py(nb::handle defines) {
  std::vector<std::pair<std::string, std::string>> out;
  if (defines.is_none()) return out;
  if (nb::isinstance<nb::dict>(defines)) {
    for (auto [k, v] : nb::cast<nb::dict>(defines))
      out.emplace_back(nb::cast<std::string>(nb::str(k)), v.is_none() ? "" : nb::cast<std::string>(nb::str(v)));
    return out;
  }
  for (nb::handle item : defines) {
    std::string s = nb::cast<std::string>(item);
    auto eq = s.find('=');
    out.emplace_back(s.substr(0, eq), eq == std::string::npos ? "" : s.substr(eq + 1));
  }
  return out;
}

nb::bytes as_bytes(const std::string& s) { return nb::bytes(s.data(), s.size()); }

CodeKind kind_for_file(const std::string& path, std::optional<std::string> kind) {
  if (kind) return code_kind_from_name(*kind);
  auto dot = path.rfind('.');
  std::string ext = dot == std::string::npos ? "" : path.substr(dot + 1);
  if (ext == "ptx" || ext == "cubin" || ext == "fatbin" || ext == "ltoir") return code_kind_from_name(ext);
  throw ValueError(cat("cannot tell the code kind of '", path, "' from its extension: pass kind='cubin' (or 'ptx', ",
                       "'fatbin', 'ltoir')"));
}

void bind_program(nb::module_& m) {
  nb::class_<Program>(m, "Program", "CUDA C++ source compiled at run time by NVRTC (through the compile cache).")
      .def(
          "__init__",
          [](Program* self, std::string source, std::string name, std::optional<std::string> arch, std::string std_,
             DefinesLike defines, std::vector<std::string> include_paths, bool lineinfo, bool device_debug,
             bool fast_math, bool relocatable, std::vector<std::string> extra) {
            ProgramOptions o;
            o.arch = arch.value_or("");
            o.std = std::move(std_);
            o.defines = defines_from_py(defines);
            o.include_paths = std::move(include_paths);
            o.lineinfo = lineinfo;
            o.device_debug = device_debug;
            o.fast_math = fast_math;
            o.relocatable = relocatable;
            o.extra = std::move(extra);
            if (!o.arch.empty()) parse_arch(o.arch);  // reject a bad arch now, not at compile
            new (self) Program(std::move(source), std::move(name), std::move(o));
          },
          nb::arg("source"), nb::arg("name") = "program.cu", nb::kw_only(), nb::arg("arch") = nb::none(),
          nb::arg("std") = "c++17", nb::arg("defines") = nb::none(),
          nb::arg("include_paths") = std::vector<std::string>{}, nb::arg("lineinfo") = false,
          nb::arg("device_debug") = false, nb::arg("fast_math") = false, nb::arg("relocatable") = false,
          nb::arg("extra") = std::vector<std::string>{})
      .def(
          "compile",
          [](const Program& p, const std::string& target, std::vector<std::string> names, bool cache, bool with_ptx) {
            cuda::nvrtc();  // load (or fail) with the GIL held; the compile itself runs without it
            CodeKind kind = code_kind_from_name(target);
            (void)p.resolved_arch();  // may query the device: do it before releasing the GIL
            nb::gil_scoped_release release;
            return p.compile(kind, names, cache, with_ptx);
          },
          nb::arg("target") = "cubin", nb::arg("name_expressions") = std::vector<std::string>{},
          nb::arg("cache") = true, nb::arg("with_ptx") = false,
          "Compiles to 'cubin', 'ptx' or 'ltoir'; with_ptx=True keeps a cubin's PTX from the same NVRTC run "
          "(ObjectCode.ptx). Raises CompileError with NVRTC's log.")
      .def(
          "cache_key",
          [](const Program& p, const std::string& target, std::vector<std::string> names,
             std::optional<std::string> version) {
            std::string v = version ? *version : cat(cuda::nvrtc().major, ".", cuda::nvrtc().minor);
            return p.cache_key(code_kind_from_name(target), names, v);
          },
          nb::arg("target") = "cubin", nb::arg("name_expressions") = std::vector<std::string>{},
          nb::arg("nvrtc_version") = nb::none())
      .def(
          "nvrtc_arguments",
          [](const Program& p, const std::string& target) {
            return nvrtc_arguments(p.options(), code_kind_from_name(target), p.resolved_arch());
          },
          nb::arg("target") = "cubin", "The options NVRTC receives for this target.")
      .def_prop_ro("arch", &Program::resolved_arch)
      .def_prop_ro("source", &Program::source);

  nb::class_<ObjectCode>(m, "ObjectCode",
                         "Compiled code (cubin, PTX, fatbin or LTO-IR); loads per device on first use.")
      .def(
          "__init__",
          [](ObjectCode* self, nb::bytes code, const std::string& kind, std::string name) {
            new (self) ObjectCode(code_kind_from_name(kind), std::string(code.c_str(), code.size()), std::move(name));
          },
          nb::arg("code"), nb::arg("kind"), nb::arg("name") = "<bytes>")
      .def_static(
          "from_file",
          [](const std::string& path, std::optional<std::string> kind) {
            return ObjectCode::from_file(path, kind_for_file(path, kind));
          },
          nb::arg("path"), nb::arg("kind") = nb::none())
      .def_prop_ro("code", [](const ObjectCode& c) { return as_bytes(c.code()); })
      .def_prop_ro("kind", [](const ObjectCode& c) { return code_kind_name(c.kind()); })
      .def_prop_ro("name", &ObjectCode::name)
      .def_prop_ro("log", &ObjectCode::log)
      .def_prop_ro("ptx", &ObjectCode::ptx, "The PTX (of a PTX object, or kept by compile(with_ptx=True)), else ''.")
      .def_prop_ro("lowered_names", &ObjectCode::lowered_names)
      .def(
          "get_kernel",
          [](const ObjectCode& c, const std::string& name, std::optional<int> device) {
            return c.get_kernel(name, device ? *device : -1);
          },
          nb::arg("name"), nb::arg("device") = nb::none())
      .def("__repr__", [](const ObjectCode& c) {
        return cat("<cupric.cuda.ObjectCode ", code_kind_name(c.kind()), " '", c.name(), "' ", c.code().size(),
                   " bytes>");
      });

  nb::class_<Linker>(m, "Linker", "nvJitLink: links PTX, cubin, fatbin and LTO-IR into one cubin.")
      .def(
          "__init__",
          [](Linker* self, nb::args objects, std::string arch, std::vector<std::string> options) {
            new (self) Linker(std::move(arch), std::move(options));
            for (nb::handle o : objects) self->add(nb::cast<const ObjectCode&>(o));
          },
          nb::arg("objects"), nb::kw_only(), nb::arg("arch"), nb::arg("options") = std::vector<std::string>{})
      .def("add", &Linker::add)
      .def(
          "link",
          [](const Linker& l, const std::string& target) {
            cuda::nvjitlink();
            return l.link(code_kind_from_name(target));
          },
          nb::arg("target") = "cubin");
}

}  // namespace

void bind_cuda_program(nb::module_& m) { bind_program(m); }

}  // namespace cupric::py
