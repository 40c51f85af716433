// cupric/runtime/device.hpp — CUDA devices: count, the calling thread's current device, cached
// properties, the primary context (retained on first use), synchronize and memory info.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <utility>

#include "cupric/cuda/driver_api.hpp"

namespace cupric::runtime {

struct DeviceProperties {
  std::string name;
  std::string pci_bus_id;
  int major = 0, minor = 0;  ///< compute capability
  std::string arch;          ///< "sm_90"
  int multiprocessor_count = 0;
  std::size_t total_memory = 0;
  int l2_cache_size = 0;
  int max_persisting_l2_cache_size = 0;
  int max_shared_memory_per_block = 0;
  int max_shared_memory_per_block_optin = 0;
  int max_shared_memory_per_multiprocessor = 0;
  int total_constant_memory = 0;
  int clock_rate_khz = 0;
  int memory_clock_rate_khz = 0;
  int memory_bus_width = 0;
  int warp_size = 0;
  int max_threads_per_block = 0;
  int max_threads_per_multiprocessor = 0;
  int max_blocks_per_multiprocessor = 0;
  int max_registers_per_block = 0;
  int max_registers_per_multiprocessor = 0;
  std::array<int, 3> max_block_dim{}, max_grid_dim{};
  int async_engine_count = 0;
  bool integrated = false, managed_memory = false, concurrent_managed_access = false;
  bool cooperative_launch = false, cluster_launch = false, memory_pools_supported = false;
  bool ecc_enabled = false, stream_priorities_supported = false;
};

class Device {
 public:
  /// The device `index` (checked against count()).
  explicit Device(int index);
  static int count();
  /// The calling thread's current device (0 unless set_current / `with device:` changed it).
  static Device current();
  /// current()'s index, without loading the driver (an array interface names no device: the
  /// consumer assumes this one).
  static int current_index();
  static void set_current(int index);

  int index() const { return index_; }
  cuda::CUdevice handle() const;
  /// The primary context (retained at first use; shared with the CUDA runtime, CuPy, PyTorch).
  cuda::CUcontext context() const;
  /// Makes the primary context current on this thread (cheap when it already is).
  void activate() const;
  const DeviceProperties& properties() const;
  int attribute(cuda::CUdevice_attribute attribute) const;
  void synchronize() const;
  /// (free, total) bytes of device memory.
  std::pair<std::size_t, std::size_t> memory_info() const;
  /// (least, greatest) stream priorities; lower numbers run first.
  std::pair<int, int> stream_priority_range() const;

  bool operator==(const Device& other) const { return index_ == other.index_; }

 private:
  int index_;
};

/// Makes the primary context of `device` current (what every runtime call does first).
void activate_device(int device);

}  // namespace cupric::runtime
