// cupric/cuda/errors.hpp — the CUDA error hierarchy of the C++ core: every failed driver, NVRTC
// or nvJitLink call becomes a CudaError that carries the error's name, code and the operation.
// The bindings map them to cupric.cuda.CUDAError and its subclasses.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include "cupric/cuda/driver_api.hpp"

namespace cupric::cuda {

struct CudaError : std::runtime_error {
  CudaError(std::string message, int code, std::string name, std::string operation, bool sticky)
      : std::runtime_error(std::move(message)),
        code(code),
        name(std::move(name)),
        operation(std::move(operation)),
        sticky(sticky) {}
  int code;               ///< CUresult / nvrtcResult / nvJitLinkResult (-1 for loader errors)
  std::string name;       ///< "CUDA_ERROR_ILLEGAL_ADDRESS", "NVRTC_ERROR_COMPILATION", ...
  std::string operation;  ///< the call that failed, with context: "cuStreamSynchronize"
  bool sticky;            ///< the context is corrupted: the process must restart to use the GPU
};

/// A CUDA library (the driver, NVRTC, nvJitLink) or a GPU is missing.
struct LibraryNotFoundError : CudaError {
  LibraryNotFoundError(std::string message, std::string library)
      : CudaError(std::move(message), -1, "LIBRARY_NOT_FOUND", "load " + library, false), library(std::move(library)) {}
  std::string library;
};

struct OutOfMemoryError : CudaError {
  OutOfMemoryError(std::string message, std::string operation, std::size_t requested, std::size_t free_bytes)
      : CudaError(std::move(message), CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", std::move(operation),
                  false),
        requested(requested),
        free_bytes(free_bytes) {}
  std::size_t requested, free_bytes;
};

/// NVRTC or nvJitLink rejected the input; `log` is the compiler's full log.
struct CompileError : CudaError {
  CompileError(std::string message, int code, std::string name, std::string operation, std::string log)
      : CudaError(std::move(message), code, std::move(name), std::move(operation), false), log(std::move(log)) {}
  std::string log;
};

/// The driver's name for an error code ("CUDA_ERROR_ILLEGAL_ADDRESS").
std::string error_name(CUresult code);
/// True for the errors after which the context cannot be used again.
bool is_sticky(CUresult code);
/// Throws CudaError for `code` (never returns). `context` is appended to the message.
[[noreturn]] void throw_driver_error(CUresult code, const char* operation, const std::string& context = {});

/// Adds context to sticky errors (the runtime lists the kernels launched last, with their streams).
using ErrorContextHook = std::string (*)(CUresult code);
void set_error_context_hook(ErrorContextHook hook);

/// Checks a driver call: `check(drv.StreamSynchronize(s), "cuStreamSynchronize")`.
inline void check(CUresult code, const char* operation) {
  if (code != CUDA_SUCCESS) [[unlikely]]
    throw_driver_error(code, operation);
}

}  // namespace cupric::cuda
