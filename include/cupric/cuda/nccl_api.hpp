// cupric/cuda/nccl_api.hpp — our own declarations of the NCCL 2 entry points cupric calls, from
// NVIDIA's documented C API (nccl.h); the loader fills the table at first use (loader.hpp: nccl_api()).
#pragma once

#include <cstddef>

#include "cupric/cuda/driver_api.hpp"

namespace cupric::cuda {

using ncclComm_t = struct ncclComm*;
using ncclResult_t = int;
constexpr int ncclSuccess = 0;
constexpr int kNcclUniqueIdBytes = 128;
struct ncclUniqueId {
  char internal[kNcclUniqueIdBytes];
};
// ncclDataType_t
enum ncclDataType : int {
  ncclInt8 = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclFloat32 = 7,
  ncclFloat64 = 8,
  ncclBfloat16 = 9,
};
// ncclRedOp_t
enum ncclRedOp : int { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4 };

#define CUPRIC_NCCL_FUNCTIONS(X)                                                                             \
  X(GetVersion, ncclGetVersion, true, ncclResult_t, (int*))                                                  \
  X(GetUniqueId, ncclGetUniqueId, true, ncclResult_t, (ncclUniqueId*))                                       \
  X(CommInitRank, ncclCommInitRank, true, ncclResult_t, (ncclComm_t*, int, ncclUniqueId, int))               \
  X(CommInitAll, ncclCommInitAll, true, ncclResult_t, (ncclComm_t*, int, const int*))                        \
  X(CommDestroy, ncclCommDestroy, true, ncclResult_t, (ncclComm_t))                                          \
  X(CommAbort, ncclCommAbort, true, ncclResult_t, (ncclComm_t))                                              \
  X(CommCount, ncclCommCount, true, ncclResult_t, (ncclComm_t, int*))                                        \
  X(CommCuDevice, ncclCommCuDevice, true, ncclResult_t, (ncclComm_t, int*))                                  \
  X(CommUserRank, ncclCommUserRank, true, ncclResult_t, (ncclComm_t, int*))                                  \
  X(GetErrorString, ncclGetErrorString, true, const char*, (ncclResult_t))                                   \
  X(GetLastError, ncclGetLastError, false, const char*, (ncclComm_t))                                        \
  X(AllReduce, ncclAllReduce, true, ncclResult_t,                                                            \
    (const void*, void*, std::size_t, ncclDataType, ncclRedOp, ncclComm_t, CUstream))                        \
  X(Reduce, ncclReduce, true, ncclResult_t,                                                                  \
    (const void*, void*, std::size_t, ncclDataType, ncclRedOp, int, ncclComm_t, CUstream))                   \
  X(Broadcast, ncclBroadcast, true, ncclResult_t,                                                            \
    (const void*, void*, std::size_t, ncclDataType, int, ncclComm_t, CUstream))                              \
  X(AllGather, ncclAllGather, true, ncclResult_t,                                                            \
    (const void*, void*, std::size_t, ncclDataType, ncclComm_t, CUstream))                                   \
  X(ReduceScatter, ncclReduceScatter, true, ncclResult_t,                                                    \
    (const void*, void*, std::size_t, ncclDataType, ncclRedOp, ncclComm_t, CUstream))                        \
  X(Send, ncclSend, true, ncclResult_t, (const void*, std::size_t, ncclDataType, int, ncclComm_t, CUstream)) \
  X(Recv, ncclRecv, true, ncclResult_t, (void*, std::size_t, ncclDataType, int, ncclComm_t, CUstream))       \
  X(GroupStart, ncclGroupStart, true, ncclResult_t, ())                                                      \
  X(GroupEnd, ncclGroupEnd, true, ncclResult_t, ())

struct NcclApi {
#define CUPRIC_DECLARE_ENTRY(member, symbol, required, ret, params) ret(*member) params = nullptr;
  CUPRIC_NCCL_FUNCTIONS(CUPRIC_DECLARE_ENTRY)
#undef CUPRIC_DECLARE_ENTRY
  int version = 0;  ///< NCCL_VERSION_CODE: major * 10000 + minor * 100 + patch
};

}  // namespace cupric::cuda
