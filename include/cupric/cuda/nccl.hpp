// cupric/cuda/nccl.hpp — collectives between GPUs through NCCL (loaded at first use: loader.hpp):
// unique ids, communicators (one per device and rank), and the checks every call goes through.
// The collectives take device addresses, element counts, a dtype and a stream; cupric.cuda.nccl
// (src/python/bind_nccl.cpp) brings arrays and cupric streams to them.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "cupric/cuda/nccl_api.hpp"
#include "cupric/dtype.hpp"

namespace cupric::cuda::nccl {

using UniqueId = std::array<char, kNcclUniqueIdBytes>;

/// NCCL's version code: major * 10000 + minor * 100 + patch (22703 for 2.27.3).
int version();
/// A new unique id: one rank makes it and hands it to the others (bytes: pickle, send, ...).
UniqueId unique_id();
/// NCCL's name of a result ("ncclInvalidArgument").
const char* result_name(int result);
/// Throws a CudaError naming the call, NCCL's result and its last error text when result != 0.
void check(int result, const std::string& call, ncclComm_t comm = nullptr);
/// The NCCL element type of a dtype (TypeError naming the dtype where NCCL has none: bool, complex).
ncclDataType data_type(DType dtype);
/// "sum", "prod", "max", "min", "avg" (ValueError naming the others).
ncclRedOp reduce_op(const std::string& name);

/// One rank's member of a communicator on one device (destroyed with it).
class Communicator {
 public:
  /// Rank `rank` of `nranks` on `device`; every rank calls it with the same id (it blocks until all
  /// have joined).
  static Communicator init_rank(int nranks, const UniqueId& id, int rank, int device);
  /// One communicator per device of this process, rank i on devices[i].
  static std::vector<Communicator> init_all(const std::vector<int>& devices);

  Communicator(Communicator&& other) noexcept;
  Communicator& operator=(Communicator&& other) noexcept;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ~Communicator();

  ncclComm_t handle() const { return comm_; }
  int size() const { return size_; }
  int rank() const { return rank_; }
  int device() const { return device_; }
  bool closed() const { return comm_ == nullptr; }
  /// Destroys it after its work (ncclCommDestroy); abort() does not wait (ncclCommAbort).
  void destroy();
  void abort();

 private:
  Communicator(ncclComm_t comm, int device);
  ncclComm_t comm_ = nullptr;
  int size_ = 0, rank_ = 0, device_ = 0;
};

/// ncclGroupStart / ncclGroupEnd: the calls between them are issued as one (several devices of one
/// process, send and recv pairs).
void group_start();
void group_end();

}  // namespace cupric::cuda::nccl
