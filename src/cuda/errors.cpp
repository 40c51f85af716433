// errors.cpp — turns CUresult codes into CudaError messages: the driver's name and text for the
// code, the failed call, and for sticky errors the note that the process must restart.
#include "cupric/cuda/errors.hpp"

#include <atomic>

#include "cupric/cuda/loader.hpp"
#include "cupric/errors.hpp"

namespace cupric::cuda {
namespace {
std::atomic<ErrorContextHook> error_context_hook{nullptr};
}

void set_error_context_hook(ErrorContextHook hook) { error_context_hook.store(hook); }

std::string error_name(CUresult code) {
  const char* name = nullptr;
  if (const DriverApi* d = loaded_driver(); d && d->GetErrorName(code, &name) == CUDA_SUCCESS && name) return name;
  return cat("CUDA_ERROR_", code);
}

bool is_sticky(CUresult code) {
  switch (code) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_NVLINK_UNCORRECTABLE:
    case CUDA_ERROR_CONTAINED: return true;
    default: return false;
  }
}

void throw_driver_error(CUresult code, const char* operation, const std::string& context) {
  std::string name = error_name(code);
  const char* text = nullptr;
  if (const DriverApi* d = loaded_driver()) d->GetErrorString(code, &text);
  bool sticky = is_sticky(code);
  std::string message = cat(operation, " failed: ", name, " (", code, ")", text ? cat(": ", text) : "", context);
  if (sticky) {
    // a fault shows at a later call, often an unrelated one (even a launch): name what ran before
    if (ErrorContextHook hook = error_context_hook.load()) message += hook(code);
    message +=
        ". This error is sticky: the CUDA context is now unusable and the process must restart to use the GPU "
        "again (run with CUDA_LAUNCH_BLOCKING=1 or compute-sanitizer to find the faulting kernel)";
  }
  if (code == CUDA_ERROR_OUT_OF_MEMORY) throw OutOfMemoryError(message, operation, 0, 0);
  throw CudaError(message, code, name, operation, sticky);
}

}  // namespace cupric::cuda
