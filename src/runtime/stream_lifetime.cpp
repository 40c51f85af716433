// stream_lifetime.cpp — what outlives a stream: the registry of live streams by serial, streams
// dropped with work pending (destroyed once it completes), ordering a consumer after the stream
// that last wrote memory (DLPack, __cuda_array_interface__, frees), and the launch rings that
// fault reports read.
#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cupric/cuda/errors.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/device.hpp"
#include "cupric/runtime/stream.hpp"

namespace cupric::runtime {
using namespace cupric::cuda;

void release_stream_blocks(StreamState* stream);  // memory_pool.cpp

namespace {

std::atomic<std::uint64_t> next_serial{1};
std::atomic<std::uint64_t> launch_count{0};
std::atomic<LaunchSiteHook> site_hook{nullptr};

struct LaunchInfo {
  const char* kernel = nullptr;
  const char* site = nullptr;
  std::uint64_t order = 0;
  std::uintptr_t stream = 0;
  int device = 0;
  bool dropped = false;
};
using RingCopy = std::array<LaunchInfo, LaunchRing::kSize>;

RingCopy copy_ring(const StreamState& s, bool dropped) {
  RingCopy out;
  for (unsigned i = 0; i < LaunchRing::kSize; ++i) {
    const LaunchRing::Entry& e = s.launches.entries[i];
    out[i] = {e.kernel.load(std::memory_order_relaxed),
              e.site.load(std::memory_order_relaxed),
              e.order.load(std::memory_order_relaxed),
              reinterpret_cast<std::uintptr_t>(s.handle),
              s.device,
              dropped};
  }
  return out;
}

/// A stream dropped while its work was pending (or had failed): `tail` completes with that
/// work; then an owned handle is destroyed. Its launches stay readable for fault reports.
struct Dropped {
  int device = 0;
  CUstream handle = nullptr;  ///< destroyed once tail completes when `owned`
  bool owned = false;
  CUevent tail = nullptr;  ///< null: the stream had failed (kept for reports only)
  RingCopy launches;
};

// Bounds: past kMaxDropped pending streams the oldest is waited for (host) and released.
constexpr std::size_t kMaxDropped = 1024;
constexpr std::size_t kPollPerCall = 16;

struct Registry {
  std::mutex mutex;
  std::unordered_map<std::uint64_t, StreamState*> live;
  std::map<std::uint64_t, Dropped> dropped;  ///< by serial: oldest streams first
};
Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: streams die during exit
  return *r;
}

/// Releases a dropped stream whose work is complete. Caller holds the registry's mutex.
void release(Dropped& d) {
  const DriverApi& api = driver();
  if (d.tail) api.EventDestroy(d.tail);
  if (d.owned && d.handle) api.StreamDestroy(d.handle);
}

/// Releases the dropped streams whose work is done, looking at the `limit` oldest (caller holds
/// the mutex); past kMaxDropped the oldest is waited for.
void poll_locked(Registry& r, std::size_t limit = kPollPerCall) {
  const DriverApi& api = driver();
  std::size_t seen = 0;
  for (auto it = r.dropped.begin(); it != r.dropped.end() && seen < limit; ++seen) {
    Dropped& d = it->second;
    if (d.tail && api.EventQuery(d.tail) == CUDA_SUCCESS) {
      release(d);
      it = r.dropped.erase(it);
    } else {
      ++it;
    }
  }
  while (r.dropped.size() > kMaxDropped) {
    Dropped& d = r.dropped.begin()->second;
    if (d.tail) api.EventSynchronize(d.tail);  // errors: the stream is released all the same
    release(d);
    r.dropped.erase(r.dropped.begin());
  }
}

/// An event of `device` for one record-then-wait: one per thread and device, reused (a wait
/// uses the record made before it, so recording again later is safe).
CUevent scratch_event(int device) {
  struct Events {
    std::unordered_map<int, CUevent> by_device;
    ~Events() {
      if (const DriverApi* api = loaded_driver())
        for (auto& [dev, e] : by_device) api->EventDestroy(e);
    }
  };
  thread_local Events events;
  CUevent& e = events.by_device[device];
  if (!e) check(driver().EventCreate(&e, kEventDisableTiming), "cuEventCreate");
  return e;
}

bool same_stream(CUstream a, CUstream b) {
  auto norm = [](CUstream s) { return reinterpret_cast<std::uintptr_t>(s) == 1 ? nullptr : s; };
  return norm(a) == norm(b);
}

std::string describe(const LaunchInfo& l) {
  std::string where = l.stream == 0 ? std::string("the default stream") : cat("stream 0x", std::hex, l.stream);
  return cat("'", l.kernel, "' on ", where, std::dec, " of cuda:", l.device, l.dropped ? " (dropped)" : "",
             l.site ? cat(" from ", l.site) : std::string());
}

}  // namespace

// ---- launch rings --------------------------------------------------------------------------

void LaunchRing::record(const char* kernel, const char* site) {
  // plain load and store, not an atomic increment: the order only ranks launches in a report
  const std::uint64_t order = launch_count.load(std::memory_order_relaxed) + 1;
  launch_count.store(order, std::memory_order_relaxed);
  const unsigned i = next.load(std::memory_order_relaxed);
  next.store(i + 1, std::memory_order_relaxed);
  Entry& e = entries[i % kSize];
  e.kernel.store(kernel, std::memory_order_relaxed);
  e.site.store(site, std::memory_order_relaxed);
  e.order.store(order, std::memory_order_relaxed);
}

void set_launch_site_hook(LaunchSiteHook hook) { site_hook.store(hook); }
LaunchSiteHook launch_site_hook() { return site_hook.load(std::memory_order_relaxed); }

std::string recent_launches_report() {
  std::vector<LaunchInfo> all;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    for (auto& [serial, state] : r.live) {
      RingCopy c = copy_ring(*state, false);
      all.insert(all.end(), c.begin(), c.end());
    }
    for (auto& [serial, d] : r.dropped) all.insert(all.end(), d.launches.begin(), d.launches.end());
  }
  std::erase_if(all, [](const LaunchInfo& l) { return l.order == 0 || !l.kernel; });
  if (all.empty()) return {};
  std::sort(all.begin(), all.end(), [](const LaunchInfo& a, const LaunchInfo& b) { return a.order > b.order; });
  constexpr std::size_t kShown = 6;
  std::string out = " (the fault is in one of the kernels still running; the last ones cupric launched, newest first: ";
  for (std::size_t i = 0; i < std::min(all.size(), kShown); ++i) out += cat(i ? "; " : "", describe(all[i]));
  return out + ")";
}

// ---- the registry and dropped streams ------------------------------------------------------

StreamState::StreamState() : serial(next_serial.fetch_add(1, std::memory_order_relaxed)) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.live.emplace(serial, this);
}

StreamState::~StreamState() {
  Registry& r = registry();
  {
    std::lock_guard lock(r.mutex);
    r.live.erase(serial);
  }
  if (!handle || !loaded_driver()) return;
  try {
    Device(device).activate();
    release_stream_blocks(this);  // its cached blocks are freed in its order, so before the tail below
    const DriverApi& api = driver();
    const CUresult q = owned || used.load() ? api.StreamQuery(handle) : CUDA_SUCCESS;
    if (q == CUDA_ERROR_NOT_READY) {  // work pending: keep the stream until an event after it completes
      CUevent tail = nullptr;
      if (api.EventCreate(&tail, kEventDisableTiming) == CUDA_SUCCESS &&
          api.EventRecord(tail, handle) == CUDA_SUCCESS) {
        std::lock_guard lock(r.mutex);
        r.dropped.emplace(serial, Dropped{device, handle, owned, tail, copy_ring(*this, true)});
        poll_locked(r);
        return;
      }
      if (tail) api.EventDestroy(tail);
      api.StreamSynchronize(handle);  // cannot track it: wait here rather than destroy it under its work
    } else if (q != CUDA_SUCCESS) {   // failed (a sticky error): kept for fault reports, never reused
      std::lock_guard lock(r.mutex);
      r.dropped.emplace(serial, Dropped{device, handle, false, nullptr, copy_ring(*this, true)});
      return;
    }
    if (owned) api.StreamDestroy(handle);
  } catch (...) {  // a destructor cannot report; a sticky error surfaces at the next call
  }
}

std::optional<Stream> Stream::find(std::uint64_t serial) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.live.find(serial);
  if (it == r.live.end()) return std::nullopt;
  std::shared_ptr<StreamState> s = it->second->weak_from_this().lock();  // empty while it is being destroyed
  if (!s) return std::nullopt;
  return Stream(std::move(s));
}

std::size_t poll_dropped_streams() {
  if (!loaded_driver()) return 0;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (!r.dropped.empty()) poll_locked(r, r.dropped.size());
  return r.dropped.size();
}

// ---- ordering consumers after writers ------------------------------------------------------

std::uintptr_t protocol_handle(CUstream handle) {
  const auto h = reinterpret_cast<std::uintptr_t>(handle);
  return h == 0 ? 1 : h;
}

void wait_for_handle(CUstream consumer, int device, CUstream producer) {
  if (same_stream(consumer, producer)) return;
  Device(device).activate();
  const DriverApi& api = driver();
  CUevent e = scratch_event(device);
  check(api.EventRecord(e, producer), "cuEventRecord");
  check(api.StreamWaitEvent(consumer, e, 0), "cuStreamWaitEvent");
}

void wait_for_writer(CUstream consumer, int device, std::uint64_t writer) {
  if (writer == 0) return;
  std::optional<Stream> live = Stream::find(writer);
  if (live) return wait_for_handle(consumer, live->device(), live->handle());
  Registry& r = registry();
  std::lock_guard lock(r.mutex);  // held through the wait: a poll could destroy the tail event
  auto it = r.dropped.find(writer);
  if (it == r.dropped.end() || !it->second.tail) return;  // its work is done (or failed: nothing to wait for)
  Device(device).activate();
  check(driver().StreamWaitEvent(consumer, it->second.tail, 0), "cuStreamWaitEvent");
}

std::optional<CUstream> ready_stream(int device, std::uint64_t writer) {
  StreamState& current = current_stream_state(device);
  if (writer == 0 || writer == current.serial) return current.handle;
  if (std::optional<Stream> live = Stream::find(writer)) return live->handle();
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    auto it = r.dropped.find(writer);
    if (it == r.dropped.end() || !it->second.tail) return std::nullopt;  // nothing left to wait for
  }
  wait_for_writer(current.handle, device, writer);
  return current.handle;
}

}  // namespace cupric::runtime
