// cupric/runtime/stream.hpp — streams (owned or wrapped from other libraries), the per-thread
// current stream that `with stream:` sets, events, and what outlives a stream: its pending work
// (deferred destroy), the writers of memory (ordering hand-offs) and its last launches (faults).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "cupric/cuda/driver_api.hpp"

namespace cupric::runtime {

class Event;
class Graph;

/// The last kernels launched on one stream, for fault reports. Written on every launch without
/// a lock (relaxed atomics, plain stores on x86): a report read while another thread launches on
/// the same stream may mix two entries, which only blurs a diagnostic.
struct LaunchRing {
  static constexpr unsigned kSize = 8;
  struct Entry {
    std::atomic<const char*> kernel{nullptr};  ///< interned name
    std::atomic<const char*> site{nullptr};    ///< interned "file.py:line", when launch sites are recorded
    std::atomic<std::uint64_t> order{0};       ///< process-wide launch number (0: empty)
  };
  Entry entries[kSize];
  std::atomic<unsigned> next{0};
  void record(const char* kernel, const char* site);
};

struct StreamState : std::enable_shared_from_this<StreamState> {
  StreamState();
  cuda::CUstream handle = nullptr;  ///< null: the device's default (legacy) stream
  int device = 0;
  bool owned = false;               ///< destroyed with this state (deferred while work is pending)
  std::shared_ptr<void> keepalive;  ///< owner of a wrapped stream (a CuPy or PyTorch stream object)
  bool capturing = false;           ///< inside begin_capture/end_capture through cupric
  /// Unique in the process, never reused: storages remember the stream that last wrote them by
  /// it (a number, not a pointer, so that it can outlive the stream).
  const std::uint64_t serial;
  /// Work was queued through this state (kernels, copies, memory): a dropped wrapper of another
  /// library's stream is tracked until that work completes only then.
  std::atomic<bool> used{false};
  LaunchRing launches;
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
  /// Handles 0 and 1 (CU_STREAM_LEGACY) are the default stream; 2 is the per-thread default stream.
  static Stream wrap(std::uintptr_t handle, int device = -1, std::shared_ptr<void> keepalive = nullptr);
  /// The live stream whose serial is `serial`, if any.
  static std::optional<Stream> find(std::uint64_t serial);

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
  std::uint64_t serial() const { return state_->serial; }
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

/// The calling thread's current stream on `device` (>= 0) without taking a reference: valid
/// while it stays current. The array ops' hot path (a thread-local cache, no lock).
StreamState& current_stream_state(int device);

// ---- ordering work across streams and libraries (stream_lifetime.cpp) ----------------------

/// A stream handle as the DLPack and __cuda_array_interface__ protocols number them: 1 for the
/// legacy default stream (never 0, which they forbid), 2 for the per-thread one, else the handle.
std::uintptr_t protocol_handle(cuda::CUstream handle);

/// Makes work queued later on `consumer` (a stream of any library on `device`) wait for all work
/// queued so far on the stream with serial `writer` — through an event, the host does not wait.
/// Nothing when `writer` is 0, is the consumer itself, or is a dropped stream whose work is done.
void wait_for_writer(cuda::CUstream consumer, int device, std::uint64_t writer);
/// The same for a cupric stream, with nothing to look up when it wrote last itself.
inline void wait_for_writer(StreamState& consumer, std::uint64_t writer) {
  if (writer != 0 && writer != consumer.serial) wait_for_writer(consumer.handle, consumer.device, writer);
}
/// The same for a stream known only by its handle (another library's).
void wait_for_handle(cuda::CUstream consumer, int device, cuda::CUstream producer);

/// Where data last written by the stream with serial `writer` is ready, for a consumer that
/// synchronises on a stream it is given (__cuda_array_interface__'s "stream"): that stream's
/// handle while it lives; once it was dropped, the current stream, made to wait for its
/// remaining work; none when that work is done.
std::optional<cuda::CUstream> ready_stream(int device, std::uint64_t writer);

/// Streams dropped while work was pending are destroyed once it completes: stream creation and
/// destruction look at the oldest few; this looks at all. Returns how many are still waiting.
std::size_t poll_dropped_streams();

/// The last kernels launched (newest first, across streams, live or dropped) with their streams
/// and, when recorded, the Python lines that launched them: the text fault reports append.
std::string recent_launches_report();

/// Launch sites: when a hook is set, every launch records what it returns (an interned string
/// such as "train.py:42", or null). The Python bindings install one while launch-site
/// recording is on.
using LaunchSiteHook = const char* (*)();
void set_launch_site_hook(LaunchSiteHook hook);
LaunchSiteHook launch_site_hook();

}  // namespace cupric::runtime
