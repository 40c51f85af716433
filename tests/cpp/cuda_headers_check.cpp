// cuda_headers_check.cpp — compiled (syntax only) by tests/python/cuda/test_declarations.py
// where a CUDA toolkit exists: checks that our own declarations of the driver, NVRTC and
// nvJitLink entry points match the real headers (parameter count and sizes, return size, enum
// values, struct layouts). The package itself never includes a CUDA header.
#include <cuda.h>
#include <nvJitLink.h>
#include <nvrtc.h>

#include <array>
#include <cstddef>

#include "cupric/cuda/driver_api.hpp"
#include "cupric/cuda/nvrtc_api.hpp"

namespace {
template <class F>
struct Shape;
template <class R, class... A>
struct Shape<R (*)(A...)> {
  static constexpr std::size_t result = sizeof(R);
  static constexpr std::array<std::size_t, sizeof...(A)> args{sizeof(A)...};
};
template <class Theirs, class Ours>
constexpr bool same_shape() {
  if constexpr (Shape<Theirs>::args.size() != Shape<Ours>::args.size()) {
    return false;
  } else {
    return Shape<Theirs>::result == Shape<Ours>::result && Shape<Theirs>::args == Shape<Ours>::args;
  }
}
}  // namespace

#define CHECK_ENTRY(member, symbol, required, ret, params)                                    \
  static_assert(same_shape<decltype(&::symbol), decltype(cupric::cuda::DriverApi::member)>(), \
                #symbol " differs from cuda.h");
CUPRIC_CUDA_DRIVER_FUNCTIONS(CHECK_ENTRY)
#undef CHECK_ENTRY
#define CHECK_ENTRY(member, symbol, required, ret, params)                                   \
  static_assert(same_shape<decltype(&::symbol), decltype(cupric::cuda::NvrtcApi::member)>(), \
                #symbol " differs from nvrtc.h");
CUPRIC_NVRTC_FUNCTIONS(CHECK_ENTRY)
#undef CHECK_ENTRY
#define CHECK_ENTRY(member, symbol, required, ret, params)                                       \
  static_assert(same_shape<decltype(&::symbol), decltype(cupric::cuda::NvJitLinkApi::member)>(), \
                #symbol " differs from nvJitLink.h");
CUPRIC_NVJITLINK_FUNCTIONS(CHECK_ENTRY)
#undef CHECK_ENTRY

#define SAME_VALUE(name) static_assert(static_cast<long>(cupric::cuda::name) == static_cast<long>(::name), #name);
SAME_VALUE(CUDA_ERROR_OUT_OF_MEMORY)
SAME_VALUE(CUDA_ERROR_NO_DEVICE)
SAME_VALUE(CUDA_ERROR_NOT_READY)
SAME_VALUE(CUDA_ERROR_NOT_FOUND)
SAME_VALUE(CUDA_ERROR_ILLEGAL_ADDRESS)
SAME_VALUE(CUDA_ERROR_LAUNCH_FAILED)
SAME_VALUE(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
SAME_VALUE(CUDA_ERROR_LAUNCH_TIMEOUT)
SAME_VALUE(CUDA_ERROR_MISALIGNED_ADDRESS)
SAME_VALUE(CUDA_ERROR_INVALID_HANDLE)
SAME_VALUE(CUDA_ERROR_STUB_LIBRARY)
SAME_VALUE(CUDA_ERROR_CONTAINED)
SAME_VALUE(CUDA_ERROR_TENSOR_MEMORY_LEAK)
SAME_VALUE(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
SAME_VALUE(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
SAME_VALUE(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED)
SAME_VALUE(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH)
SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)
SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE)
SAME_VALUE(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)
SAME_VALUE(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS)
SAME_VALUE(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
SAME_VALUE(CU_FUNC_ATTRIBUTE_NUM_REGS)
SAME_VALUE(CU_FUNC_ATTRIBUTE_BINARY_VERSION)
SAME_VALUE(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
SAME_VALUE(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
SAME_VALUE(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)
SAME_VALUE(CU_MEMPOOL_ATTR_USED_MEM_CURRENT)
SAME_VALUE(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
SAME_VALUE(CU_STREAM_CAPTURE_STATUS_INVALIDATED)
SAME_VALUE(CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
SAME_VALUE(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
SAME_VALUE(NVRTC_ERROR_COMPILATION)
SAME_VALUE(NVJITLINK_INPUT_LTOIR)
SAME_VALUE(NVJITLINK_INPUT_FATBIN)
#undef SAME_VALUE
static_assert(cupric::cuda::kStreamNonBlocking == CU_STREAM_NON_BLOCKING);
static_assert(cupric::cuda::kEventDisableTiming == CU_EVENT_DISABLE_TIMING);
static_assert(cupric::cuda::kMemHostAllocPortable == CU_MEMHOSTALLOC_PORTABLE);
static_assert(cupric::cuda::kMemAttachGlobal == CU_MEM_ATTACH_GLOBAL);
static_assert(cupric::cuda::kGraphInstantiateFlagAutoFreeOnLaunch == CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);

static_assert(sizeof(cupric::cuda::CUlaunchAttribute) == sizeof(::CUlaunchAttribute));
static_assert(offsetof(cupric::cuda::CUlaunchAttribute, value) == offsetof(::CUlaunchAttribute, value));
static_assert(sizeof(cupric::cuda::CUlaunchConfig) == sizeof(::CUlaunchConfig));
static_assert(offsetof(cupric::cuda::CUlaunchConfig, hStream) == offsetof(::CUlaunchConfig, hStream));
static_assert(offsetof(cupric::cuda::CUlaunchConfig, attrs) == offsetof(::CUlaunchConfig, attrs));
static_assert(offsetof(cupric::cuda::CUlaunchConfig, numAttrs) == offsetof(::CUlaunchConfig, numAttrs));

int main() { return 0; }
