// bind_inspect.cpp — cupric._cupric._kernel_analysis: a compiled kernel's resources from
// its cubin, the occupancy calculator, and the sources the CUDA backend renders for a recorded op
// (what `cupric.inspect` and `kernel.inspect` report; none of it needs a GPU).
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "convert.hpp"
#include "py_types.hpp"
#include "cupric/cuda/kernel_catalogue.hpp"
#include "cupric/runtime/kernel_analysis.hpp"
#include "cupric/runtime/program.hpp"

namespace cupric::py {

namespace {

nb::dict resources_dict(const runtime::KernelResources& k) {
  nb::dict d;
  d["name"] = k.name;
  d["registers"] = k.registers;
  d["max_registers"] = k.max_registers;
  d["local_bytes"] = k.frame_bytes;
  d["max_stack_bytes"] = k.max_stack_bytes;
  d["static_shared_bytes"] = k.static_shared_bytes;
  d["constant_bytes"] = k.constant_bytes;
  d["param_bytes"] = k.param_bytes;
  d["code_bytes"] = k.code_bytes;
  d["max_threads"] = nb::make_tuple(k.max_threads[0], k.max_threads[1], k.max_threads[2]);
  d["required_threads"] = nb::make_tuple(k.required_threads[0], k.required_threads[1], k.required_threads[2]);
  return d;
}

nb::dict limits_dict(const runtime::ArchLimits& a) {
  nb::dict d;
  d["sm"] = a.sm;
  d["example"] = a.example;
  d["max_warps_per_sm"] = a.max_warps_per_sm;
  d["max_blocks_per_sm"] = a.max_blocks_per_sm;
  d["max_threads_per_block"] = a.max_threads_per_block;
  d["registers_per_sm"] = a.registers_per_sm;
  d["max_registers_per_block"] = a.max_registers_per_block;
  d["max_registers_per_thread"] = a.max_registers_per_thread;
  d["register_unit"] = a.register_unit;
  d["warp_schedulers"] = a.warp_schedulers;
  d["shared_per_sm"] = a.shared_per_sm;
  d["max_shared_per_block"] = a.max_shared_per_block;
  d["reserved_shared_per_block"] = a.reserved_shared_per_block;
  d["shared_unit"] = a.shared_unit;
  return d;
}

/// "sm_90a", "90" or 90 -> 90
int sm_number(nb::handle arch) {
  if (nb::isinstance<nb::int_>(arch)) return nb::cast<int>(arch);
  return runtime::parse_arch(nb::cast<std::string>(arch)).first;
}

}  // namespace

void bind_inspect(nb::module_& m) {
  nb::module_ k = m.def_submodule("_kernel_analysis", "Kernel resources from cubins, occupancy, rendered op kernels.");
  k.def(
      "read_cubin",
      [](nb::bytes image) {
        nb::list out;
        for (const auto& r : runtime::read_cubin(std::string_view(image.c_str(), image.size())))
          out.append(resources_dict(r));
        return out;
      },
      nb::arg("image"), "Each kernel of a cubin (ELF) as a dict of the resources ptxas recorded.");
  k.def(
      "arch_limits", [](ArchLike arch) { return limits_dict(runtime::arch_limits(sm_number(arch))); }, nb::arg("arch"),
      "The SM limits occupancy is computed from, for 'sm_90a', '90' or 90.");
  k.def("known_archs", [] {
    std::vector<int> out;
    for (const auto& a : runtime::known_arch_limits()) out.push_back(a.sm);
    return out;
  });
  k.def(
      "occupancy",
      [](ArchLike arch, int threads, int registers, std::int64_t shared_bytes) {
        const runtime::Occupancy o =
            runtime::occupancy(runtime::arch_limits(sm_number(arch)), threads, registers, shared_bytes);
        nb::dict d;
        d["blocks_per_sm"] = o.blocks_per_sm;
        d["warps_per_sm"] = o.warps_per_sm;
        d["fraction"] = o.fraction;
        d["limited_by"] = o.limited_by;
        d["by_warps"] = o.by_warps;
        d["by_blocks"] = o.by_blocks;
        d["by_registers"] = o.by_registers;
        d["by_shared"] = o.by_shared;
        return d;
      },
      nb::arg("arch"), nb::arg("threads"), nb::arg("registers"), nb::arg("shared_bytes") = 0,
      "Resident blocks and warps per SM, the fraction of the SM's warps and the limiting resource.");
  k.def(
      "op_sources",
      [](const std::string& name, nb::list inputs, std::vector<bool> weak, nb::list outputs, bool contiguous) {
        cuda_backend::OpSignature op;
        op.name = name;
        for (nb::handle t : inputs) op.inputs.push_back(dtype_from_py(t));
        for (nb::handle t : outputs) op.outputs.push_back(dtype_from_py(t));
        op.weak = std::move(weak);
        op.contiguous = contiguous;
        return cuda_backend::op_sources(op);
      },
      nb::arg("name"), nb::arg("inputs"), nb::arg("weak"), nb::arg("outputs"), nb::arg("contiguous") = true,
      "(label, source) of each kernel the CUDA backend renders for a recorded op; [] when it launches none.");
  k.def("kernel_arch", &cuda_backend::kernel_arch, nb::arg("device"),
        "The arch the CUDA backend compiles a device's kernels for ('sm_90a' on Hopper).");
  k.def(
      "compile_array_kernel",
      [](const std::string& source, const std::string& arch) {
        const runtime::Program p = cuda_backend::kernel_program(source, arch, {"--ptxas-options=-v"});
        runtime::ObjectCode code = [&] {
          nb::gil_scoped_release release;
          // one NVRTC run gives the cubin and its PTX; the compile cache keeps both with the log
          return p.compile(runtime::CodeKind::cubin, {}, true, true);
        }();
        return nb::make_tuple(nb::bytes(code.code().data(), code.code().size()), code.log(),
                              nb::bytes(code.ptx().data(), code.ptx().size()));
      },
      nb::arg("source"), nb::arg("arch"),
      "(cubin, log, ptx) of an array kernel's source compiled as the backend does (one NVRTC run, through the "
      "compile cache), with ptxas' report in the log.");
}

}  // namespace cupric::py
