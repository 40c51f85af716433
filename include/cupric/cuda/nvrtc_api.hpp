// cupric/cuda/nvrtc_api.hpp — our own declarations of the NVRTC (run-time CUDA C++ compiler)
// and nvJitLink (device linker) entry points; the loader fills the tables at first use.
#pragma once

#include <cstddef>

namespace cupric::cuda {

using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;
constexpr nvrtcResult NVRTC_SUCCESS = 0;
constexpr nvrtcResult NVRTC_ERROR_COMPILATION = 6;

// X(member, symbol, required, return type, parameter list)
#define CUPRIC_NVRTC_FUNCTIONS(X)                                                                      \
  X(GetErrorString, nvrtcGetErrorString, true, const char*, (nvrtcResult))                             \
  X(Version, nvrtcVersion, true, nvrtcResult, (int*, int*))                                            \
  X(CreateProgram, nvrtcCreateProgram, true, nvrtcResult,                                              \
    (nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*))            \
  X(DestroyProgram, nvrtcDestroyProgram, true, nvrtcResult, (nvrtcProgram*))                           \
  X(CompileProgram, nvrtcCompileProgram, true, nvrtcResult, (nvrtcProgram, int, const char* const*))   \
  X(GetPTXSize, nvrtcGetPTXSize, true, nvrtcResult, (nvrtcProgram, std::size_t*))                      \
  X(GetPTX, nvrtcGetPTX, true, nvrtcResult, (nvrtcProgram, char*))                                     \
  X(GetCUBINSize, nvrtcGetCUBINSize, true, nvrtcResult, (nvrtcProgram, std::size_t*))                  \
  X(GetCUBIN, nvrtcGetCUBIN, true, nvrtcResult, (nvrtcProgram, char*))                                 \
  X(GetLTOIRSize, nvrtcGetLTOIRSize, false, nvrtcResult, (nvrtcProgram, std::size_t*))                 \
  X(GetLTOIR, nvrtcGetLTOIR, false, nvrtcResult, (nvrtcProgram, char*))                                \
  X(GetProgramLogSize, nvrtcGetProgramLogSize, true, nvrtcResult, (nvrtcProgram, std::size_t*))        \
  X(GetProgramLog, nvrtcGetProgramLog, true, nvrtcResult, (nvrtcProgram, char*))                       \
  X(AddNameExpression, nvrtcAddNameExpression, true, nvrtcResult, (nvrtcProgram, const char*))         \
  X(GetLoweredName, nvrtcGetLoweredName, true, nvrtcResult, (nvrtcProgram, const char*, const char**)) \
  X(GetNumSupportedArchs, nvrtcGetNumSupportedArchs, false, nvrtcResult, (int*))                       \
  X(GetSupportedArchs, nvrtcGetSupportedArchs, false, nvrtcResult, (int*))

struct NvrtcApi {
#define CUPRIC_DECLARE_ENTRY(member, symbol, required, ret, params) ret(*member) params = nullptr;
  CUPRIC_NVRTC_FUNCTIONS(CUPRIC_DECLARE_ENTRY)
#undef CUPRIC_DECLARE_ENTRY
  int major = 0, minor = 0;  ///< nvrtcVersion
};

using nvJitLinkResult = int;
using nvJitLinkHandle = struct nvJitLink*;
constexpr nvJitLinkResult NVJITLINK_SUCCESS = 0;
enum nvJitLinkInputType : int {
  NVJITLINK_INPUT_NONE = 0,
  NVJITLINK_INPUT_CUBIN = 1,
  NVJITLINK_INPUT_PTX = 2,
  NVJITLINK_INPUT_LTOIR = 3,
  NVJITLINK_INPUT_FATBIN = 4,
  NVJITLINK_INPUT_OBJECT = 5,
  NVJITLINK_INPUT_LIBRARY = 6,
  NVJITLINK_INPUT_ANY = 10,
};

// nvJitLink exports versioned names (__nvJitLinkCreate_13_0); the loader falls back to the
// 12.0 names and then the plain ones, so that an older library still loads.
#define CUPRIC_NVJITLINK_FUNCTIONS(X)                                                                               \
  X(Create, __nvJitLinkCreate_13_0, true, nvJitLinkResult, (nvJitLinkHandle*, unsigned int, const char**))          \
  X(Destroy, __nvJitLinkDestroy_13_0, true, nvJitLinkResult, (nvJitLinkHandle*))                                    \
  X(AddData, __nvJitLinkAddData_13_0, true, nvJitLinkResult,                                                        \
    (nvJitLinkHandle, nvJitLinkInputType, const void*, std::size_t, const char*))                                   \
  X(Complete, __nvJitLinkComplete_13_0, true, nvJitLinkResult, (nvJitLinkHandle))                                   \
  X(GetLinkedCubinSize, __nvJitLinkGetLinkedCubinSize_13_0, true, nvJitLinkResult, (nvJitLinkHandle, std::size_t*)) \
  X(GetLinkedCubin, __nvJitLinkGetLinkedCubin_13_0, true, nvJitLinkResult, (nvJitLinkHandle, void*))                \
  X(GetLinkedPtxSize, __nvJitLinkGetLinkedPtxSize_13_0, true, nvJitLinkResult, (nvJitLinkHandle, std::size_t*))     \
  X(GetLinkedPtx, __nvJitLinkGetLinkedPtx_13_0, true, nvJitLinkResult, (nvJitLinkHandle, char*))                    \
  X(GetErrorLogSize, __nvJitLinkGetErrorLogSize_13_0, true, nvJitLinkResult, (nvJitLinkHandle, std::size_t*))       \
  X(GetErrorLog, __nvJitLinkGetErrorLog_13_0, true, nvJitLinkResult, (nvJitLinkHandle, char*))                      \
  X(GetInfoLogSize, __nvJitLinkGetInfoLogSize_13_0, true, nvJitLinkResult, (nvJitLinkHandle, std::size_t*))         \
  X(GetInfoLog, __nvJitLinkGetInfoLog_13_0, true, nvJitLinkResult, (nvJitLinkHandle, char*))                        \
  X(Version, nvJitLinkVersion, false, nvJitLinkResult, (unsigned int*, unsigned int*))

struct NvJitLinkApi {
#define CUPRIC_DECLARE_ENTRY(member, symbol, required, ret, params) ret(*member) params = nullptr;
  CUPRIC_NVJITLINK_FUNCTIONS(CUPRIC_DECLARE_ENTRY)
#undef CUPRIC_DECLARE_ENTRY
  unsigned major = 0, minor = 0;
};

}  // namespace cupric::cuda
