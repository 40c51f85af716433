// cupric/cuda/driver_api.hpp — our own declarations of the CUDA driver API entry points cupric
// uses (no CUDA header is needed at build time). The table is an X-macro so that the loader,
// and a test that compares it with the real cuda.h, walk the same list.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cupric::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUevent = struct CUevent_st*;
using CUstream = struct CUstream_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphNode = struct CUgraphNode_st*;
using CUgraphExec = struct CUgraphExec_st*;
using CUmemoryPool = struct CUmemPoolHandle_st*;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
constexpr CUresult CUDA_ERROR_DEINITIALIZED = 4;
constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_INVALID_HANDLE = 400;
constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
constexpr CUresult CUDA_ERROR_ILLEGAL_ADDRESS = 700;
constexpr CUresult CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701;
constexpr CUresult CUDA_ERROR_LAUNCH_TIMEOUT = 702;
constexpr CUresult CUDA_ERROR_ASSERT = 710;
constexpr CUresult CUDA_ERROR_HARDWARE_STACK_ERROR = 714;
constexpr CUresult CUDA_ERROR_ILLEGAL_INSTRUCTION = 715;
constexpr CUresult CUDA_ERROR_MISALIGNED_ADDRESS = 716;
constexpr CUresult CUDA_ERROR_INVALID_ADDRESS_SPACE = 717;
constexpr CUresult CUDA_ERROR_INVALID_PC = 718;
constexpr CUresult CUDA_ERROR_LAUNCH_FAILED = 719;
constexpr CUresult CUDA_ERROR_TENSOR_MEMORY_LEAK = 721;
constexpr CUresult CUDA_ERROR_ECC_UNCORRECTABLE = 214;
constexpr CUresult CUDA_ERROR_NVLINK_UNCORRECTABLE = 220;
constexpr CUresult CUDA_ERROR_CONTAINED = 226;
constexpr CUresult CUDA_ERROR_UNKNOWN = 999;

enum CUdevice_attribute : int {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY = 9,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12,
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
  CU_DEVICE_ATTRIBUTE_ECC_ENABLED = 32,
  CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
  CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
  CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
  CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT = 40,
  CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
  CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED = 78,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
  CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
  CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83,
  CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89,
  CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR = 106,
  CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE = 108,
  CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,
  CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH = 120,
};

enum CUfunction_attribute : int {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2,
  CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_PTX_VERSION = 5,
  CU_FUNC_ATTRIBUTE_BINARY_VERSION = 6,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

enum CUpointer_attribute : int {
  CU_POINTER_ATTRIBUTE_CONTEXT = 1,
  CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
};

enum CUmemorytype : int {
  CU_MEMORYTYPE_HOST = 1,
  CU_MEMORYTYPE_DEVICE = 2,
  CU_MEMORYTYPE_ARRAY = 3,
  CU_MEMORYTYPE_UNIFIED = 4,
};

enum CUstreamCaptureMode : int {
  CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
  CU_STREAM_CAPTURE_MODE_RELAXED = 2,
};

enum CUstreamCaptureStatus : int {
  CU_STREAM_CAPTURE_STATUS_NONE = 0,
  CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
  CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2,
};

enum CUmemPool_attribute : int {
  CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES = 1,
  CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC = 2,
  CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 3,
  CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4,
  CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT = 5,
  CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH = 6,
  CU_MEMPOOL_ATTR_USED_MEM_CURRENT = 7,
  CU_MEMPOOL_ATTR_USED_MEM_HIGH = 8,
};

enum CUlaunchAttributeID : int {
  CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2,
  CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
};

// Flags (plain constants: some of these are macros in cuda.h, so they keep our own names).
constexpr unsigned kStreamDefault = 0x0;
constexpr unsigned kStreamNonBlocking = 0x1;
constexpr unsigned kEventDefault = 0x0;
constexpr unsigned kEventBlockingSync = 0x1;
constexpr unsigned kEventDisableTiming = 0x2;
constexpr unsigned kMemAttachGlobal = 0x1;
constexpr unsigned kMemHostAllocPortable = 0x1;
constexpr unsigned long long kGraphInstantiateFlagAutoFreeOnLaunch = 0x1;

union CUlaunchAttributeValue {
  char pad[64];
  int cooperative;
  struct {
    unsigned int x, y, z;
  } clusterDim;
  void* align_as_pointer_;
};

struct CUlaunchAttribute {
  CUlaunchAttributeID id;
  char pad[8 - sizeof(CUlaunchAttributeID)];
  CUlaunchAttributeValue value;
};

struct CUlaunchConfig {
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute* attrs;
  unsigned int numAttrs;
};

// X(member, symbol, required, return type, parameter list). `symbol` is the versioned name that
// cuda.h's macros resolve to (cuMemAlloc -> cuMemAlloc_v2); optional entries may be null.
#define CUPRIC_CUDA_DRIVER_FUNCTIONS(X)                                                                            \
  X(GetErrorName, cuGetErrorName, true, CUresult, (CUresult, const char**))                                        \
  X(GetErrorString, cuGetErrorString, true, CUresult, (CUresult, const char**))                                    \
  X(Init, cuInit, true, CUresult, (unsigned int))                                                                  \
  X(DriverGetVersion, cuDriverGetVersion, true, CUresult, (int*))                                                  \
  X(DeviceGetCount, cuDeviceGetCount, true, CUresult, (int*))                                                      \
  X(DeviceGet, cuDeviceGet, true, CUresult, (CUdevice*, int))                                                      \
  X(DeviceGetName, cuDeviceGetName, true, CUresult, (char*, int, CUdevice))                                        \
  X(DeviceGetAttribute, cuDeviceGetAttribute, true, CUresult, (int*, CUdevice_attribute, CUdevice))                \
  X(DeviceTotalMem, cuDeviceTotalMem_v2, true, CUresult, (std::size_t*, CUdevice))                                 \
  X(DeviceGetPCIBusId, cuDeviceGetPCIBusId, true, CUresult, (char*, int, CUdevice))                                \
  X(DevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, true, CUresult, (CUcontext*, CUdevice))                      \
  X(CtxSetCurrent, cuCtxSetCurrent, true, CUresult, (CUcontext))                                                   \
  X(CtxGetCurrent, cuCtxGetCurrent, true, CUresult, (CUcontext*))                                                  \
  X(CtxGetDevice, cuCtxGetDevice, true, CUresult, (CUdevice*))                                                     \
  X(CtxSynchronize, cuCtxSynchronize, true, CUresult, ())                                                          \
  X(CtxGetStreamPriorityRange, cuCtxGetStreamPriorityRange, true, CUresult, (int*, int*))                          \
  X(MemGetInfo, cuMemGetInfo_v2, true, CUresult, (std::size_t*, std::size_t*))                                     \
  X(StreamCreateWithPriority, cuStreamCreateWithPriority, true, CUresult, (CUstream*, unsigned int, int))          \
  X(StreamDestroy, cuStreamDestroy_v2, true, CUresult, (CUstream))                                                 \
  X(StreamSynchronize, cuStreamSynchronize, true, CUresult, (CUstream))                                            \
  X(StreamQuery, cuStreamQuery, true, CUresult, (CUstream))                                                        \
  X(StreamWaitEvent, cuStreamWaitEvent, true, CUresult, (CUstream, CUevent, unsigned int))                         \
  X(StreamGetPriority, cuStreamGetPriority, true, CUresult, (CUstream, int*))                                      \
  X(StreamGetFlags, cuStreamGetFlags, true, CUresult, (CUstream, unsigned int*))                                   \
  X(StreamGetCtx, cuStreamGetCtx, true, CUresult, (CUstream, CUcontext*))                                          \
  X(StreamBeginCapture, cuStreamBeginCapture_v2, true, CUresult, (CUstream, CUstreamCaptureMode))                  \
  X(StreamEndCapture, cuStreamEndCapture, true, CUresult, (CUstream, CUgraph*))                                    \
  X(StreamIsCapturing, cuStreamIsCapturing, true, CUresult, (CUstream, CUstreamCaptureStatus*))                    \
  X(EventCreate, cuEventCreate, true, CUresult, (CUevent*, unsigned int))                                          \
  X(EventDestroy, cuEventDestroy_v2, true, CUresult, (CUevent))                                                    \
  X(EventRecord, cuEventRecord, true, CUresult, (CUevent, CUstream))                                               \
  X(EventSynchronize, cuEventSynchronize, true, CUresult, (CUevent))                                               \
  X(EventQuery, cuEventQuery, true, CUresult, (CUevent))                                                           \
  X(EventElapsedTime, cuEventElapsedTime_v2, false, CUresult, (float*, CUevent, CUevent))                          \
  X(MemAlloc, cuMemAlloc_v2, true, CUresult, (CUdeviceptr*, std::size_t))                                          \
  X(MemFree, cuMemFree_v2, true, CUresult, (CUdeviceptr))                                                          \
  X(MemAllocAsync, cuMemAllocAsync, false, CUresult, (CUdeviceptr*, std::size_t, CUstream))                        \
  X(MemFreeAsync, cuMemFreeAsync, false, CUresult, (CUdeviceptr, CUstream))                                        \
  X(MemHostAlloc, cuMemHostAlloc, true, CUresult, (void**, std::size_t, unsigned int))                             \
  X(MemFreeHost, cuMemFreeHost, true, CUresult, (void*))                                                           \
  X(MemAllocManaged, cuMemAllocManaged, true, CUresult, (CUdeviceptr*, std::size_t, unsigned int))                 \
  X(MemcpyAsync, cuMemcpyAsync, true, CUresult, (CUdeviceptr, CUdeviceptr, std::size_t, CUstream))                 \
  X(MemcpyHtoDAsync, cuMemcpyHtoDAsync_v2, true, CUresult, (CUdeviceptr, const void*, std::size_t, CUstream))      \
  X(MemcpyDtoHAsync, cuMemcpyDtoHAsync_v2, true, CUresult, (void*, CUdeviceptr, std::size_t, CUstream))            \
  X(MemsetD8Async, cuMemsetD8Async, true, CUresult, (CUdeviceptr, unsigned char, std::size_t, CUstream))           \
  X(MemsetD16Async, cuMemsetD16Async, true, CUresult, (CUdeviceptr, unsigned short, std::size_t, CUstream))        \
  X(MemsetD32Async, cuMemsetD32Async, true, CUresult, (CUdeviceptr, unsigned int, std::size_t, CUstream))          \
  X(PointerGetAttribute, cuPointerGetAttribute, true, CUresult, (void*, CUpointer_attribute, CUdeviceptr))         \
  X(DeviceGetDefaultMemPool, cuDeviceGetDefaultMemPool, false, CUresult, (CUmemoryPool*, CUdevice))                \
  X(MemPoolSetAttribute, cuMemPoolSetAttribute, false, CUresult, (CUmemoryPool, CUmemPool_attribute, void*))       \
  X(MemPoolGetAttribute, cuMemPoolGetAttribute, false, CUresult, (CUmemoryPool, CUmemPool_attribute, void*))       \
  X(MemPoolTrimTo, cuMemPoolTrimTo, false, CUresult, (CUmemoryPool, std::size_t))                                  \
  X(ModuleLoadData, cuModuleLoadData, true, CUresult, (CUmodule*, const void*))                                    \
  X(ModuleUnload, cuModuleUnload, true, CUresult, (CUmodule))                                                      \
  X(ModuleGetFunction, cuModuleGetFunction, true, CUresult, (CUfunction*, CUmodule, const char*))                  \
  X(FuncGetAttribute, cuFuncGetAttribute, true, CUresult, (int*, CUfunction_attribute, CUfunction))                \
  X(FuncSetAttribute, cuFuncSetAttribute, true, CUresult, (CUfunction, CUfunction_attribute, int))                 \
  X(FuncGetParamInfo, cuFuncGetParamInfo, false, CUresult, (CUfunction, std::size_t, std::size_t*, std::size_t*))  \
  /* the enums of cuTensorMapEncodeTiled (CUDA 12+) as int */                                                      \
  X(TensorMapEncodeTiled, cuTensorMapEncodeTiled, false, CUresult,                                                 \
    (void*, int, unsigned int, void*, const std::uint64_t*, const std::uint64_t*, const std::uint32_t*,            \
     const std::uint32_t*, int, int, int, int))                                                                    \
  X(LaunchKernel, cuLaunchKernel, true, CUresult,                                                                  \
    (CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, \
     CUstream, void**, void**))                                                                                    \
  X(LaunchKernelEx, cuLaunchKernelEx, false, CUresult, (const CUlaunchConfig*, CUfunction, void**, void**))        \
  X(LaunchCooperativeKernel, cuLaunchCooperativeKernel, true, CUresult,                                            \
    (CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, \
     CUstream, void**))                                                                                            \
  X(OccupancyMaxActiveBlocksPerMultiprocessor, cuOccupancyMaxActiveBlocksPerMultiprocessor, true, CUresult,        \
    (int*, CUfunction, int, std::size_t))                                                                          \
  X(GraphInstantiateWithFlags, cuGraphInstantiateWithFlags, true, CUresult,                                        \
    (CUgraphExec*, CUgraph, unsigned long long))                                                                   \
  X(GraphLaunch, cuGraphLaunch, true, CUresult, (CUgraphExec, CUstream))                                           \
  X(GraphUpload, cuGraphUpload, true, CUresult, (CUgraphExec, CUstream))                                           \
  X(GraphDestroy, cuGraphDestroy, true, CUresult, (CUgraph))                                                       \
  X(GraphExecDestroy, cuGraphExecDestroy, true, CUresult, (CUgraphExec))                                           \
  X(GraphGetNodes, cuGraphGetNodes, true, CUresult, (CUgraph, CUgraphNode*, std::size_t*))

/// Entry points of libcuda.so.1, filled by the loader. Optional ones are null on old drivers.
struct DriverApi {
#define CUPRIC_DECLARE_ENTRY(member, symbol, required, ret, params) ret(*member) params = nullptr;
  CUPRIC_CUDA_DRIVER_FUNCTIONS(CUPRIC_DECLARE_ENTRY)
#undef CUPRIC_DECLARE_ENTRY
  int version = 0;  ///< cuDriverGetVersion: 13000 for CUDA 13.0
};

}  // namespace cupric::cuda
