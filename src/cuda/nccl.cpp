// nccl.cpp — communicators and checks over the NCCL table the loader fills (nccl.hpp).
#include "cupric/cuda/nccl.hpp"

#include <utility>

#include "cupric/cuda/errors.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/device.hpp"

namespace cupric::cuda::nccl {

int version() { return nccl_api().version; }

UniqueId unique_id() {
  ncclUniqueId id{};
  check(nccl_api().GetUniqueId(&id), "ncclGetUniqueId");
  UniqueId out;
  for (int i = 0; i < kNcclUniqueIdBytes; ++i) out[static_cast<std::size_t>(i)] = id.internal[i];
  return out;
}

const char* result_name(int result) {
  static const char* const kNames[] = {"ncclSuccess",       "ncclUnhandledCudaError", "ncclSystemError",
                                       "ncclInternalError", "ncclInvalidArgument",    "ncclInvalidUsage",
                                       "ncclRemoteError",   "ncclInProgress"};
  return result >= 0 && result < 8 ? kNames[result] : "ncclUnknownResult";
}

void check(int result, const std::string& call, ncclComm_t comm) {
  if (result == ncclSuccess) return;
  const NcclApi& api = nccl_api();
  std::string text = api.GetErrorString ? api.GetErrorString(result) : "";
  if (api.GetLastError) {
    const char* last = api.GetLastError(comm);
    if (last != nullptr && *last != '\0') text += cat(" — ", last);
  }
  throw CudaError(cat(call, " failed: ", result_name(result), " (", result, "): ", text), result, result_name(result),
                  call, false);
}

ncclDataType data_type(DType dtype) {
  switch (dtype) {
    case DType::int8: return ncclInt8;
    case DType::uint8: return ncclUint8;
    case DType::int32: return ncclInt32;
    case DType::uint32: return ncclUint32;
    case DType::int64: return ncclInt64;
    case DType::uint64: return ncclUint64;
    case DType::float16: return ncclFloat16;
    case DType::bfloat16: return ncclBfloat16;
    case DType::float32: return ncclFloat32;
    case DType::float64: return ncclFloat64;
    default: break;
  }
  throw TypeError(cat("cupric.cuda.nccl: NCCL has no element type for ", name(dtype),
                      " (int8/16: widen; bool: uint8; complex: view as pairs of floats)"));
}

ncclRedOp reduce_op(const std::string& op) {
  if (op == "sum") return ncclSum;
  if (op == "prod") return ncclProd;
  if (op == "max") return ncclMax;
  if (op == "min") return ncclMin;
  if (op == "avg") return ncclAvg;
  throw ValueError(cat("cupric.cuda.nccl: unknown reduction '", op, "' (sum, prod, max, min, avg)"));
}

Communicator::Communicator(ncclComm_t comm, int device) : comm_(comm), device_(device) {
  check(nccl_api().CommCount(comm_, &size_), "ncclCommCount", comm_);
  check(nccl_api().CommUserRank(comm_, &rank_), "ncclCommUserRank", comm_);
}

Communicator Communicator::init_rank(int nranks, const UniqueId& id, int rank, int device) {
  if (nranks < 1 || rank < 0 || rank >= nranks)
    throw ValueError(cat("cupric.cuda.nccl: rank ", rank, " of ", nranks, " ranks (0 <= rank < nranks, nranks >= 1)"));
  runtime::Device(device).activate();  // NCCL takes the current device
  ncclUniqueId u{};
  for (int i = 0; i < kNcclUniqueIdBytes; ++i) u.internal[i] = id[static_cast<std::size_t>(i)];
  ncclComm_t comm = nullptr;
  check(nccl_api().CommInitRank(&comm, nranks, u, rank), cat("ncclCommInitRank(nranks=", nranks, ", rank=", rank, ")"));
  return Communicator(comm, device);
}

std::vector<Communicator> Communicator::init_all(const std::vector<int>& devices) {
  if (devices.empty()) throw ValueError("cupric.cuda.nccl: init_all needs at least one device");
  for (int d : devices) runtime::Device check_index(d);  // a device that does not exist: its error
  std::vector<ncclComm_t> comms(devices.size(), nullptr);
  check(nccl_api().CommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()), "ncclCommInitAll");
  std::vector<Communicator> out;
  for (std::size_t i = 0; i < devices.size(); ++i) out.push_back(Communicator(comms[i], devices[i]));
  return out;
}

Communicator::Communicator(Communicator&& other) noexcept
    : comm_(std::exchange(other.comm_, nullptr)), size_(other.size_), rank_(other.rank_), device_(other.device_) {}

Communicator& Communicator::operator=(Communicator&& other) noexcept {
  if (this != &other) {
    try {
      destroy();
    } catch (...) {  // a failed destroy leaves nothing to do
    }
    comm_ = std::exchange(other.comm_, nullptr);
    size_ = other.size_, rank_ = other.rank_, device_ = other.device_;
  }
  return *this;
}

Communicator::~Communicator() {
  try {
    destroy();
  } catch (...) {  // destructors do not throw; close() reports failures
  }
}

void Communicator::destroy() {
  if (comm_ == nullptr) return;
  ncclComm_t c = std::exchange(comm_, nullptr);
  runtime::Device(device_).activate();
  check(nccl_api().CommDestroy(c), "ncclCommDestroy");
}

void Communicator::abort() {
  if (comm_ == nullptr) return;
  ncclComm_t c = std::exchange(comm_, nullptr);
  check(nccl_api().CommAbort(c), "ncclCommAbort");
}

void group_start() { check(nccl_api().GroupStart(), "ncclGroupStart"); }
void group_end() { check(nccl_api().GroupEnd(), "ncclGroupEnd"); }

}  // namespace cupric::cuda::nccl
