// stream.cpp — streams, the thread's current stream per device (`with stream:`), events, and
// graphs made by stream capture.
#include "cupric/runtime/stream.hpp"

#include <mutex>
#include <unordered_map>
#include <vector>

#include "cupric/cuda/errors.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/device.hpp"
#include "cupric/runtime/graph.hpp"

namespace cupric::runtime {
using namespace cupric::cuda;

namespace {

// Current stream per device for this thread (null entry: the default stream), and the stack of
// what `with stream:` replaced. The last answer is cached (the ops' hot path asks every time);
// `with` blocks drop the cache.
struct ThreadStreams {
  std::unordered_map<int, std::shared_ptr<StreamState>> current;
  struct Saved {
    int device;
    int stream_device;
    std::shared_ptr<StreamState> stream;
  };
  std::vector<Saved> saved;
  int cached_device = -1;
  std::shared_ptr<StreamState> cached;
};
thread_local ThreadStreams thread_streams;

std::shared_ptr<StreamState> default_state(int device) {
  static std::mutex mutex;
  static std::unordered_map<int, std::shared_ptr<StreamState>>* defaults =
      new std::unordered_map<int, std::shared_ptr<StreamState>>();  // never destroyed: used at exit
  std::lock_guard lock(mutex);
  auto& s = (*defaults)[device];
  if (!s) {
    s = std::make_shared<StreamState>();
    s->device = device;
  }
  return s;
}

int resolve_device(int device) { return device < 0 ? Device::current().index() : device; }

const std::shared_ptr<StreamState>& current_state(int device) {
  auto& ts = thread_streams;
  if (ts.cached_device != device) {
    auto it = ts.current.find(device);
    ts.cached = it != ts.current.end() && it->second ? it->second : default_state(device);
    ts.cached_device = device;
  }
  return ts.cached;
}

}  // namespace

StreamState& current_stream_state(int device) { return *current_state(device); }

Stream Stream::create(int device, int priority, bool non_blocking) {
  device = resolve_device(device);
  poll_dropped_streams();
  Device(device).activate();
  auto s = std::make_shared<StreamState>();
  s->device = device;
  s->owned = true;
  check(driver().StreamCreateWithPriority(&s->handle, non_blocking ? kStreamNonBlocking : kStreamDefault, priority),
        "cuStreamCreateWithPriority");
  return Stream(std::move(s));
}

Stream Stream::default_stream(int device) {
  device = resolve_device(device);
  (void)Device(device);  // validates
  return Stream(default_state(device));
}

Stream Stream::current(int device) { return Stream(current_state(resolve_device(device))); }

Stream Stream::wrap(std::uintptr_t handle, int device, std::shared_ptr<void> keepalive) {
  if (handle == 1) handle = 0;  // CU_STREAM_LEGACY: the default stream, as handle 0 is for the driver API
  auto h = reinterpret_cast<CUstream>(handle);
  if (device < 0) {
    if (handle == 0 || handle == 2) {
      device = Device::current().index();
    } else {
      const DriverApi& d = driver();
      CUcontext ctx = nullptr;
      check(d.StreamGetCtx(h, &ctx), "cuStreamGetCtx");
      CUcontext saved = nullptr;
      d.CtxGetCurrent(&saved);
      CUdevice dev = 0;
      check(d.CtxSetCurrent(ctx), "cuCtxSetCurrent");
      CUresult rc = d.CtxGetDevice(&dev);
      d.CtxSetCurrent(saved);
      check(rc, "cuCtxGetDevice");
      device = dev;
    }
  }
  if (handle == 0) return default_stream(device);
  auto s = std::make_shared<StreamState>();
  s->handle = h;
  s->device = device;
  s->keepalive = std::move(keepalive);
  return Stream(std::move(s));
}

void Stream::synchronize() const {
  Device(device()).activate();
  check(driver().StreamSynchronize(handle()), "cuStreamSynchronize");  // a fault: the error names recent launches
}

bool Stream::query() const {
  Device(device()).activate();
  CUresult rc = driver().StreamQuery(handle());
  if (rc == CUDA_ERROR_NOT_READY) return false;
  check(rc, "cuStreamQuery");
  return true;
}

void Stream::wait(const Event& event) const {
  Device(device()).activate();
  check(driver().StreamWaitEvent(handle(), event.handle(), 0), "cuStreamWaitEvent");
}

void Stream::wait(const Stream& other) const {
  if (other == *this) return;
  Event e = Event::create(other.device(), false);
  e.record(other);
  wait(e);
}

Event Stream::record() const {
  Event e = Event::create(device(), false);
  e.record(*this);
  return e;
}

void Stream::record(const Event& event) const { event.record(*this); }

int Stream::priority() const {
  int p = 0;
  check(driver().StreamGetPriority(handle(), &p), "cuStreamGetPriority");
  return p;
}

bool Stream::non_blocking() const {
  unsigned flags = 0;
  check(driver().StreamGetFlags(handle(), &flags), "cuStreamGetFlags");
  return (flags & kStreamNonBlocking) != 0;
}

void Stream::begin_capture(CUstreamCaptureMode mode) const {
  if (!handle())
    throw ValueError("the default (legacy) stream cannot be captured: capture a stream made by cu.cuda.Stream()");
  Device(device()).activate();
  check(driver().StreamBeginCapture(handle(), mode), "cuStreamBeginCapture");
  state_->capturing = true;
}

Graph Stream::end_capture() const {
  Device(device()).activate();
  CUgraph g = nullptr;
  state_->capturing = false;
  check(driver().StreamEndCapture(handle(), &g), "cuStreamEndCapture");
  return Graph(g, device());
}

bool Stream::is_capturing() const {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  Device(device()).activate();
  check(driver().StreamIsCapturing(handle(), &status), "cuStreamIsCapturing");
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

void Stream::enter() const {
  auto& ts = thread_streams;
  int prev_device = Device::current().index();
  auto it = ts.current.find(device());
  ts.saved.push_back({prev_device, device(), it == ts.current.end() ? nullptr : it->second});
  Device::set_current(device());
  ts.current[device()] = state_;
  ts.cached_device = -1;
}

void Stream::exit() {
  auto& ts = thread_streams;
  if (ts.saved.empty()) throw ValueError("Stream.__exit__ without a matching __enter__");
  auto saved = std::move(ts.saved.back());
  ts.saved.pop_back();
  ts.current[saved.stream_device] = std::move(saved.stream);
  ts.cached_device = -1;
  ts.cached.reset();
  Device::set_current(saved.device);
}

// --- events ---------------------------------------------------------------------------------

EventState::~EventState() {
  if (handle && loaded_driver()) driver().EventDestroy(handle);
}

Event Event::create(int device, bool timing, bool blocking_sync) {
  device = resolve_device(device);
  Device(device).activate();
  auto s = std::make_shared<EventState>();
  s->device = device;
  s->timing = timing;
  unsigned flags = (timing ? 0u : kEventDisableTiming) | (blocking_sync ? kEventBlockingSync : 0u);
  check(driver().EventCreate(&s->handle, flags), "cuEventCreate");
  return Event(std::move(s));
}

void Event::record(const Stream& stream) const {
  if (stream.device() != device())
    throw ValueError(cat("cannot record an event of device ", device(), " on a stream of device ", stream.device()));
  Device(device()).activate();
  check(driver().EventRecord(handle(), stream.handle()), "cuEventRecord");
  state_->recorded = true;
}

void Event::synchronize() const {
  Device(device()).activate();
  check(driver().EventSynchronize(handle()), "cuEventSynchronize");
}

bool Event::query() const {
  Device(device()).activate();
  CUresult rc = driver().EventQuery(handle());
  if (rc == CUDA_ERROR_NOT_READY) return false;
  check(rc, "cuEventQuery");
  return true;
}

float Event::elapsed_ms(const Event& end) const {
  if (!timing() || !end.timing())
    throw ValueError("elapsed time needs two events created with timing=True (this one has timing disabled)");
  if (!state_->recorded || !end.state_->recorded)
    throw ValueError("elapsed time needs two recorded events: call record() on both first");
  float ms = 0;
  Device(device()).activate();
  const DriverApi& d = driver();
  check(d.EventElapsedTime(&ms, handle(), end.handle()), "cuEventElapsedTime");
  return ms;
}

// --- graphs ---------------------------------------------------------------------------------

struct Graph::State {
  CUgraph handle = nullptr;
  int device = 0;
  ~State() {
    if (handle && loaded_driver()) driver().GraphDestroy(handle);
  }
};

Graph::Graph(CUgraph handle, int device) : state_(std::make_shared<State>()) {
  state_->handle = handle;
  state_->device = device;
}
CUgraph Graph::handle() const { return state_->handle; }
int Graph::device() const { return state_->device; }

std::size_t Graph::num_nodes() const {
  std::size_t n = 0;
  check(driver().GraphGetNodes(handle(), nullptr, &n), "cuGraphGetNodes");
  return n;
}

GraphExec Graph::instantiate(bool auto_free_on_launch) const {
  Device(device()).activate();
  CUgraphExec exec = nullptr;
  check(driver().GraphInstantiateWithFlags(&exec, handle(),
                                           auto_free_on_launch ? kGraphInstantiateFlagAutoFreeOnLaunch : 0),
        "cuGraphInstantiateWithFlags");
  return GraphExec(exec, device());
}

struct GraphExec::State {
  CUgraphExec handle = nullptr;
  int device = 0;
  ~State() {
    if (handle && loaded_driver()) driver().GraphExecDestroy(handle);
  }
};

GraphExec::GraphExec(CUgraphExec handle, int device) : state_(std::make_shared<State>()) {
  state_->handle = handle;
  state_->device = device;
}
CUgraphExec GraphExec::handle() const { return state_->handle; }

void GraphExec::launch(const Stream& stream) const {
  Device(state_->device).activate();
  check(driver().GraphLaunch(handle(), stream.handle()), "cuGraphLaunch");
}

void GraphExec::upload(const Stream& stream) const {
  Device(state_->device).activate();
  check(driver().GraphUpload(handle(), stream.handle()), "cuGraphUpload");
}

}  // namespace cupric::runtime
