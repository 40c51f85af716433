// bind_cuda.hpp — helpers shared by the bind_cuda*.cpp files (cupric.cuda): streams and device
// pointers from Python objects, and the binders of each part.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>
#include <string>

#include "cupric/runtime/memory.hpp"
#include "cupric/runtime/stream.hpp"

namespace nb = nanobind;

namespace cupric {
class Storage;
}

namespace cupric::py {

/// None (the current stream of `device`), a cupric Stream, an int handle, or another
/// library's stream (the __cuda_stream__ protocol, PyTorch's .cuda_stream, CuPy's .ptr).
runtime::Stream stream_from_py(nb::handle obj, int device = -1);

/// A stream number of the DLPack and __cuda_array_interface__ protocols as a driver handle:
/// 1 is the legacy default stream, 2 the per-thread default stream, larger ones are handles;
/// 0 (ambiguous in both protocols) and negative numbers raise ValueError naming `what`.
cuda::CUstream protocol_stream(long long value, const char* what);

/// The consumer's stream of `__dlpack__(stream=...)` for an array on CUDA device `device`, as the
/// Array API numbers them: None is the legacy default stream, -1 means "do not synchronise"
/// (nullopt), other ints as protocol_stream; objects with __cuda_stream__ and other libraries'
/// streams are accepted too.
std::optional<runtime::Stream> dlpack_consumer_stream(nb::handle stream, int device);

/// What a kernel argument that is a device array brings besides its address: the cupric
/// storage it writes (noted as written by the launch stream), or the stream its producer said
/// the data is ready on (__cuda_array_interface__ v3), which the launch stream waits for.
struct DeviceArgument {
  Storage* storage = nullptr;
  bool has_stream = false;
  cuda::CUstream stream = nullptr;
};

/// The device address of a cupric Buffer, or of a device array the importer reads (cupric, PyTorch,
/// __cuda_array_interface__, DLPack producers, asked to order their work before `consumer`:
/// nullopt, the current stream); false when `obj` is none of those, or host memory.
bool device_pointer_from_py(nb::handle obj, std::uint64_t* address,
                            std::optional<cuda::CUstream> consumer = std::nullopt, DeviceArgument* info = nullptr);
/// Makes `stream` wait for what produces a device argument (its writer or its CAI stream).
void order_before_use(const DeviceArgument& arg, runtime::StreamState& stream);
/// Notes a cupric argument as written by work just queued on `stream`.
void note_written(const DeviceArgument& arg, const runtime::StreamState& stream);

void bind_cuda_core(nb::module_& m);     // errors, loader, Device, Stream, Event, Graph
void bind_cuda_memory(nb::module_& m);   // pools, Buffer, DLPack
void bind_cuda_program(nb::module_& m);  // Program, ObjectCode, Linker, compile cache
void bind_cuda_launch(nb::module_& m);   // Kernel, LaunchConfig, launch, argument packing
void bind_cuda_nccl(nb::module_& m);     // NCCL: unique ids, communicators, collectives

}  // namespace cupric::py
