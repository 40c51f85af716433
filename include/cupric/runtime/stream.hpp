// cupric/runtime/stream.hpp — streams (owned or wrapped from other libraries), the per-thread
// current stream that `with stream:` sets, and events.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "cupric/cuda/driver_api.hpp"

namespace cupric::runtime {

class Event;
class Graph;

struct StreamState {
  cuda::CUstream handle = nullptr;  ///< null: the device's default (legacy) stream
  int device = 0;
  bool owned = false;                             ///< destroyed with this state
  std::shared_ptr<void> keepalive;                ///< owner of a wrapped stream (a CuPy or PyTorch stream object)
  bool capturing = false;                         ///< inside begin_capture/end_capture through cupric
  std::atomic<const char*> last_kernel{nullptr};  ///< interned name, for error messages
  ~StreamState();
};

class Stream {
 public:
  /// A new stream on `device`; lower `priority` runs first; non_blocking: no implicit
  /// synchronisation with the legacy default stream.
  static Stream create(int device, int priority = 0, bool non_blocking = true);
  /// The device's default stream (the legacy stream, handle 0).
  static Stream default_stream(int device);
  /// The calling thread's current stream on `device` (-1: the current device).
  static Stream current(int device = -1);
  /// Wraps a stream made elsewhere. `device` < 0 asks the driver; `keepalive` holds its owner.
  static Stream wrap(std::uintptr_t handle, int device = -1, std::shared_ptr<void> keepalive = nullptr);

  void synchronize() const;
  /// True when all work on the stream has finished.
  bool query() const;
  void wait(const Event& event) const;
  void wait(const Stream& other) const;
  /// Records `event` (or a new timing-disabled one) on this stream and returns it.
  Event record() const;
  void record(const Event& event) const;

  /// Stream capture: everything enqueued until end_capture becomes a graph.
  void begin_capture(cuda::CUstreamCaptureMode mode = cuda::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) const;
  Graph end_capture() const;
  bool is_capturing() const;

  cuda::CUstream handle() const { return state_->handle; }
  std::uintptr_t handle_value() const { return reinterpret_cast<std::uintptr_t>(state_->handle); }
  int device() const { return state_->device; }
  int priority() const;
  bool non_blocking() const;
  bool owned() const { return state_->owned; }
  const std::shared_ptr<StreamState>& state() const { return state_; }
  bool operator==(const Stream& o) const { return handle() == o.handle() && device() == o.device(); }

  /// `with stream:` — makes this stream (and its device) current on this thread until exit().
  void enter() const;
  static void exit();

 private:
  explicit Stream(std::shared_ptr<StreamState> s) : state_(std::move(s)) {}
  std::shared_ptr<StreamState> state_;
};

struct EventState {
  cuda::CUevent handle = nullptr;
  int device = 0;
  bool timing = true;
  bool recorded = false;
  ~EventState();
};

class Event {
 public:
  /// timing=false makes record and wait cheaper; blocking_sync makes synchronize() sleep
  /// instead of spin.
  static Event create(int device = -1, bool timing = true, bool blocking_sync = false);
  void record(const Stream& stream) const;
  void synchronize() const;
  bool query() const;
  /// Milliseconds from this event to `end` (both recorded and complete, both with timing).
  float elapsed_ms(const Event& end) const;
  cuda::CUevent handle() const { return state_->handle; }
  int device() const { return state_->device; }
  bool timing() const { return state_->timing; }

 private:
  explicit Event(std::shared_ptr<EventState> s) : state_(std::move(s)) {}
  std::shared_ptr<EventState> state_;
};

}  // namespace cupric::runtime
