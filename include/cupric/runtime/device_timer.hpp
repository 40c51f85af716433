// cupric/runtime/device_timer.hpp — device times of kernels and copies for the profiler: while a
// profile records, each launch or copy is bracketed by a pair of CUDA events (pooled), resolved
// into device start/end times on the profiler's clock when the profile's events are taken.
#pragma once

#include <cstdint>
#include <string>

#include "cupric/cuda/driver_api.hpp"
#include "cupric/profiler.hpp"

namespace cupric::runtime {

/// One bracketed piece of device work; begin() does nothing unless the profiler records.
class DeviceTimer {
 public:
  /// Records the start event on `stream` of `device` (when recording and not capturing a graph).
  void begin(cuda::CUstream stream, int device, bool capturing);
  /// Records the end event and queues the event (kernel or transfer) for resolution.
  void end(profiler::EventKind kind, std::string name, std::string detail, double bytes, std::uint64_t stream_serial);
  bool active() const { return start_ != nullptr; }

 private:
  cuda::CUstream stream_ = nullptr;
  cuda::CUevent start_ = nullptr;
  int device_ = 0;
  std::int64_t t0_ns_ = 0;
};

}  // namespace cupric::runtime
