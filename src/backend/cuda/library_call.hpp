// library_call.hpp — the profiler's record of one call into a CUDA library (cuBLAS, cuBLASLt,
// cuSOLVER, cuFFT): a `library` event named after the routine, the library's name first in its
// detail. With the profiler off it costs one branch.
#pragma once

#include <string>
#include <utility>

#include "cupric/errors.hpp"
#include "cupric/profiler.hpp"
#include "cupric/runtime/device_timer.hpp"
#include "cupric/runtime/stream.hpp"

namespace cupric::cuda_backend {

/// Brackets the library's work on `stream` with CUDA events (not CUPTI: a routine launches
/// kernels of its own, and the event pair gives the whole call's device time); recorded when the
/// scope ends, also when the call raised.
class LibraryCall {
 public:
  LibraryCall(const char* library, const char* routine, int device, const runtime::Stream& stream)
      : library_(library), routine_(routine) {
    if (profiler::recording()) [[unlikely]] {
      serial_ = stream.serial();
      timer_.begin(stream.handle(), device, stream.is_capturing(), false);
    }
  }
  LibraryCall(const LibraryCall&) = delete;
  LibraryCall& operator=(const LibraryCall&) = delete;
  ~LibraryCall() {
    if (timer_.active()) [[unlikely]]
      timer_.end(profiler::EventKind::library, routine_, detail_.empty() ? library_ : cat(library_, " ", detail_), 0,
                 serial_);
  }
  /// What the call did ("64x64x64 batch 1"): `make` runs only while the profiler records.
  template <class F>
  void describe(F&& make) {
    if (timer_.active()) [[unlikely]]
      detail_ = make();
  }

 private:
  const char* library_;
  const char* routine_;
  std::string detail_;
  std::uint64_t serial_ = 0;
  runtime::DeviceTimer timer_;
};

}  // namespace cupric::cuda_backend
