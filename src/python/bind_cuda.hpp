// bind_cuda.hpp — helpers shared by the bind_cuda*.cpp files (cupric.cuda): streams and device
// pointers from Python objects, and the binders of each part.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <string>

#include "cupric/runtime/memory.hpp"
#include "cupric/runtime/stream.hpp"

namespace nb = nanobind;

namespace cupric::py {

/// None (the current stream of `device`), a cupric Stream, an int handle, or another
/// library's stream (the __cuda_stream__ protocol, PyTorch's .cuda_stream, CuPy's .ptr).
runtime::Stream stream_from_py(nb::handle obj, int device = -1);

/// The device address of a cupric Buffer, an object with __cuda_array_interface__, or a
/// DLPack producer on a CUDA device; false when `obj` is none of those.
bool device_pointer_from_py(nb::handle obj, std::uint64_t* address);

void bind_cuda_core(nb::module_& m);     // errors, loader, Device, Stream, Event, Graph
void bind_cuda_memory(nb::module_& m);   // pools, Buffer, DLPack
void bind_cuda_program(nb::module_& m);  // Program, ObjectCode, Linker, compile cache
void bind_cuda_launch(nb::module_& m);   // Kernel, LaunchConfig, launch, argument packing

}  // namespace cupric::py
