// cupric/runtime/device_timer.hpp — device times of kernels and copies for the profiler: while a
// profile records, each launch or copy is bracketed by a pair of CUDA events (pooled), resolved
// into device start/end times on the profiler's clock when the profile's events are taken.
#pragma once

#include <cstdint>
#include <string>

#include "cupric/cuda/driver_api.hpp"
#include "cupric/profiler.hpp"

namespace cupric::runtime {

/// One bracketed piece of device work; begin() does nothing unless the profiler records. While
/// CUPTI records (runtime/cupti.hpp) a launch is matched to its CUPTI record by correlation id
/// instead (allow_cupti=false keeps the events: library calls launch several kernels of their own).
class DeviceTimer {
 public:
  DeviceTimer() = default;
  ~DeviceTimer();  ///< ends CUPTI's tag when the work raised before end()
  DeviceTimer(const DeviceTimer&) = delete;
  DeviceTimer& operator=(const DeviceTimer&) = delete;
  /// Records the start event on `stream` of `device` (when recording and not capturing a graph).
  void begin(cuda::CUstream stream, int device, bool capturing, bool allow_cupti = true);
  /// Records the end event and queues the event (kernel or transfer) for resolution.
  void end(profiler::EventKind kind, std::string name, std::string detail, double bytes, std::uint64_t stream_serial);
  bool active() const { return start_ != nullptr || cupti_; }

 private:
  cuda::CUstream stream_ = nullptr;
  cuda::CUevent start_ = nullptr;
  int device_ = 0;
  bool cupti_ = false;
  std::uint64_t external_ = 0;  // our CUPTI correlation tag while cupti_
  std::int64_t t0_ns_ = 0;
};

}  // namespace cupric::runtime
