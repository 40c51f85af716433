// device_timer.cpp — the profiler's CUDA-event timing of kernels and copies (the fallback where
// CUPTI is not measuring): pooled events, a reference event per device synchronised once per
// profile to map device time onto the profiler's host clock, and the flush that resolves them.
#include "cupric/runtime/device_timer.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "cupric/cuda/errors.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/runtime/cupti.hpp"
#include "cupric/runtime/device.hpp"

namespace cupric::runtime {
using namespace cupric::cuda;

namespace {
struct Pending {
  profiler::Event event;
  CUevent start = nullptr, end = nullptr;
  std::uint64_t correlation = 0;  // our CUPTI tag: timed by CUPTI instead of events when not 0
};
struct Reference {
  CUevent event = nullptr;
  std::int64_t host_ns = 0;
};

std::mutex g_mutex;
std::vector<Pending> g_pending;
std::map<int, std::vector<CUevent>> g_free;  // by device
std::map<int, Reference> g_reference;        // this profile's, by device

CUevent take_event(int device) {  // under g_mutex
  auto& pool = g_free[device];
  if (!pool.empty()) {
    CUevent e = pool.back();
    pool.pop_back();
    return e;
  }
  CUevent e = nullptr;
  check(driver().EventCreate(&e, 0), "cuEventCreate (profiler)");
  return e;
}

/// The device's reference event of this profile: recorded and waited for once, so that its host
/// time is known; other events' device times are offsets from it.
const Reference& reference(int device, CUstream stream) {  // under g_mutex
  auto it = g_reference.find(device);
  if (it != g_reference.end()) return it->second;
  Reference r{take_event(device), 0};
  check(driver().EventRecord(r.event, stream), "cuEventRecord (profiler)");
  check(driver().EventSynchronize(r.event), "cuEventSynchronize (profiler)");
  r.host_ns = profiler::now_ns();
  return g_reference.emplace(device, r).first->second;
}

/// Waits for the devices whose work CUPTI timed: its forced flush would hand over the records of
/// kernels still running without timestamps.
void finish_cupti_work() {  // under g_mutex
  std::vector<int> devices;
  for (const Pending& p : g_pending)
    if (p.correlation && std::find(devices.begin(), devices.end(), p.event.device) == devices.end())
      devices.push_back(p.event.device);
  for (int d : devices) Device(d).synchronize();
}

void resolve(std::vector<profiler::Event>& out) {
  {
    std::lock_guard lock(g_mutex);
    finish_cupti_work();
  }
  cupti::stop();  // flushes CUPTI's records first
  std::lock_guard lock(g_mutex);
  for (Pending& p : g_pending) {
    if (p.correlation) {
      if (auto times = cupti::take_times(p.correlation)) std::tie(p.event.gpu_t0_ns, p.event.gpu_t1_ns) = *times;
      p.event.detail += p.event.detail.empty() ? "cupti" : " (cupti)";
      out.push_back(std::move(p.event));
      continue;
    }
    const Reference& ref = g_reference.at(p.event.device);
    float from_ref = 0, duration = 0;
    if (driver().EventSynchronize(p.end) == CUDA_SUCCESS &&
        driver().EventElapsedTime(&from_ref, ref.event, p.start) == CUDA_SUCCESS &&
        driver().EventElapsedTime(&duration, p.start, p.end) == CUDA_SUCCESS) {
      p.event.gpu_t0_ns = ref.host_ns + static_cast<std::int64_t>(from_ref * 1e6);
      p.event.gpu_t1_ns = p.event.gpu_t0_ns + static_cast<std::int64_t>(duration * 1e6);
    }
    g_free[p.event.device].push_back(p.start);
    g_free[p.event.device].push_back(p.end);
    out.push_back(std::move(p.event));
  }
  g_pending.clear();
  for (auto& [device, ref] : g_reference) g_free[device].push_back(ref.event);
  g_reference.clear();
}
}  // namespace

DeviceTimer::~DeviceTimer() {
  if (cupti_) cupti::pop_external();
}

void DeviceTimer::begin(CUstream stream, int device, bool capturing, bool allow_cupti) {
  if (!profiler::recording() || capturing) return;
  profiler::add_flush_hook(&resolve);
  if (allow_cupti && cupti::active()) {
    external_ = cupti::push_external();
    cupti_ = external_ != 0;
  }
  if (cupti_) {
    stream_ = stream;
    device_ = device;
    t0_ns_ = profiler::now_ns();
    return;
  }
  std::lock_guard lock(g_mutex);
  reference(device, stream);
  start_ = take_event(device);
  stream_ = stream;
  device_ = device;
  t0_ns_ = profiler::now_ns();
  check(driver().EventRecord(start_, stream), "cuEventRecord (profiler)");
}

void DeviceTimer::end(profiler::EventKind kind, std::string name, std::string detail, double bytes,
                      std::uint64_t stream_serial) {
  if (!start_ && !cupti_) return;
  Pending p;
  if (cupti_) {
    cupti_ = false;
    cupti::pop_external();
    p.correlation = external_;
  }
  std::lock_guard lock(g_mutex);
  if (!p.correlation) {
    p.start = start_;
    p.end = take_event(device_);
    start_ = nullptr;
    check(driver().EventRecord(p.end, stream_), "cuEventRecord (profiler)");
  }
  profiler::Event& e = p.event;
  e.kind = kind;
  e.name = std::move(name);
  e.detail = std::move(detail);
  e.device = device_;
  e.thread = profiler::thread_number();
  e.stream = stream_serial;
  e.t0_ns = t0_ns_;
  e.t1_ns = profiler::now_ns();
  e.bytes = bytes;
  g_pending.push_back(std::move(p));
}

}  // namespace cupric::runtime
