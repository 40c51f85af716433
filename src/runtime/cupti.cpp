// cupti.cpp — the CUPTI activity API for the profiler: our own declarations of the entry points
// cupric calls, buffers handed to CUPTI, and the kernel / memcpy records' times by correlation id.
// Where each field sits depends on CUPTI's version (kRecordLayouts, chosen by cuptiGetVersion).
#include "cupric/runtime/cupti.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "cupric/profiler.hpp"

namespace cupric::runtime::cupti {

namespace {
using Result = int;  // CUptiResult: 0 is CUPTI_SUCCESS
constexpr std::uint32_t kKindMemcpy = 1, kKindDriver = 4, kKindConcurrentKernel = 10, kKindExternalCorrelation = 39;
/// The kinds cupric enables. CUPTI writes an external correlation record only beside a driver or
/// runtime API record ("the activity API record will be preceded by ..."), so the driver API's
/// records must be on too, though cupric reads none of them: without them no kernel is matched.
constexpr std::uint32_t kKinds[] = {kKindConcurrentKernel, kKindMemcpy, kKindDriver, kKindExternalCorrelation};
constexpr std::uint32_t kExternalCustom0 = 3;
using RequestFn = void (*)(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records);
using CompleteFn = void (*)(void* context, std::uint32_t stream, std::uint8_t* buffer, std::size_t size,
                            std::size_t valid);

/// Where the fields cupric reads sit in the records of a range of CUPTI API versions (the kernel
/// record is CUpti_ActivityKernelN, the copy CUpti_ActivityMemcpyN, N by version). Checked with
/// offsetof against CUPTI 13.5's headers (cupti_activity.h, and cupti_activity_deprecated.h for
/// the older records): Kernel4..Kernel13 and Memcpy..Memcpy7 keep start at 16, end at 24 and the
/// correlation id at 92 / 44; CUpti_ActivityExternalCorrelation has our id at 8 and CUPTI's at 16.
/// CUPTI 13's user-defined records (CUPTI_ACTIVITY_ATTR_USER_DEFINED_RECORDS) would change this;
/// they are off unless asked for, and cupric never asks.
struct RecordLayout {
  std::uint32_t min_version;  ///< cuptiGetVersion: 13 = CUDA 11.0 ... 28 = 12.9 update 1, then 130000 = 13.0
  std::size_t start, end, kernel_correlation, copy_correlation, external_id, external_correlation;
};
constexpr RecordLayout kRecordLayouts[] = {
    {13, 16, 24, 92, 44, 8, 16},  // CUDA 11.0 to 13.5 (the newest checked)
};
constexpr std::uint32_t kNewestChecked = 130500;

struct Api {
  Result (*RegisterCallbacks)(RequestFn, CompleteFn) = nullptr;
  Result (*Enable)(std::uint32_t) = nullptr;
  Result (*Disable)(std::uint32_t) = nullptr;
  Result (*FlushAll)(std::uint32_t) = nullptr;
  Result (*GetNextRecord)(std::uint8_t*, std::size_t, void**) = nullptr;
  Result (*GetTimestamp)(std::uint64_t*) = nullptr;
  Result (*PushExternal)(std::uint32_t, std::uint64_t) = nullptr;
  Result (*PopExternal)(std::uint32_t, std::uint64_t*) = nullptr;
  Result (*GetVersion)(std::uint32_t*) = nullptr;
};

Api g_api;
const RecordLayout* g_layout = nullptr;
bool g_loaded = false, g_active = false;
Counts g_counts;               // since the last take_counts()
std::int64_t g_offset_ns = 0;  // profiler clock minus CUPTI's
std::atomic<std::uint64_t> g_next_id{1};
std::mutex g_mutex;                                                                // guards the two maps
std::unordered_map<std::uint32_t, std::pair<std::int64_t, std::int64_t>> g_times;  // by CUPTI's correlation id
std::unordered_multimap<std::uint64_t, std::uint32_t> g_external;                  // our id -> correlation ids
constexpr std::size_t kBufferBytes = 4 << 20;

template <class T>
T read_at(const std::uint8_t* record, std::size_t offset) {
  T value;
  std::memcpy(&value, record + offset, sizeof(T));
  return value;
}

void request_buffer(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void complete_buffer(void*, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t valid) {
  void* record = nullptr;
  std::lock_guard lock(g_mutex);
  while (valid && g_api.GetNextRecord(buffer, valid, &record) == 0) {
    const auto* r = static_cast<const std::uint8_t*>(record);
    const auto kind = read_at<std::uint32_t>(r, 0);
    const RecordLayout& l = *g_layout;
    if (kind == kKindExternalCorrelation) {
      ++g_counts.correlations;
      g_external.emplace(read_at<std::uint64_t>(r, l.external_id), read_at<std::uint32_t>(r, l.external_correlation));
      continue;
    }
    if (kind != kKindConcurrentKernel && kind != kKindMemcpy) continue;
    ++g_counts.records;
    const auto start = static_cast<std::int64_t>(read_at<std::uint64_t>(r, l.start));
    const auto end = static_cast<std::int64_t>(read_at<std::uint64_t>(r, l.end));
    if (start == 0 && end == 0) {  // CUPTI: "timestamp information could not be collected"
      ++g_counts.untimed;          // work still running at a forced flush
      continue;
    }
    const auto correlation = read_at<std::uint32_t>(r, kind == kKindMemcpy ? l.copy_correlation : l.kernel_correlation);
    g_times[correlation] = {start + g_offset_ns, end + g_offset_ns};
  }
  std::free(buffer);
}

/// The layout of CUPTI API `version`'s records; null for versions older than any known. Newer
/// versions than the newest checked get its layout (CUPTI appends fields at the end of records).
const RecordLayout* layout_for(std::uint32_t version) {
  const RecordLayout* found = nullptr;
  for (const RecordLayout& l : kRecordLayouts)
    if (version >= l.min_version) found = &l;
  return found;
}

template <class F>
bool bind(void* lib, const char* name, F& slot) {
  slot = reinterpret_cast<F>(dlsym(lib, name));
  return slot != nullptr;
}

bool load(const std::string& path, std::string& problem) {
  if (g_loaded) return true;
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    problem = std::string("cannot load ") + path + ": " + (why ? why : "unknown error");
    return false;
  }
  Api api;
  const bool ok = bind(lib, "cuptiActivityRegisterCallbacks", api.RegisterCallbacks) &&
                  bind(lib, "cuptiActivityEnable", api.Enable) && bind(lib, "cuptiActivityDisable", api.Disable) &&
                  bind(lib, "cuptiActivityFlushAll", api.FlushAll) &&
                  bind(lib, "cuptiActivityGetNextRecord", api.GetNextRecord) &&
                  bind(lib, "cuptiGetTimestamp", api.GetTimestamp) &&
                  bind(lib, "cuptiActivityPushExternalCorrelationId", api.PushExternal) &&
                  bind(lib, "cuptiActivityPopExternalCorrelationId", api.PopExternal) &&
                  bind(lib, "cuptiGetVersion", api.GetVersion);
  if (!ok) {
    problem = path + " lacks a CUPTI activity entry point";
    return false;
  }
  std::uint32_t version = 0;
  api.GetVersion(&version);
  g_layout = layout_for(version);
  if (!g_layout) {
    problem = path + " is CUPTI API version " + std::to_string(version) +
              ", older than any whose record layout cupric knows (CUDA 11.0, version 13)";
    return false;
  }
  if (api.RegisterCallbacks(&request_buffer, &complete_buffer) != 0) {
    problem = "cuptiActivityRegisterCallbacks failed";
    return false;
  }
  g_api = api;
  g_loaded = true;  // the library stays loaded: CUPTI keeps our callbacks
  return true;
}
}  // namespace

bool start(const std::string& path, std::string& problem) {
  if (!load(path, problem)) return false;
  Result rc = 0;
  for (std::uint32_t kind : kKinds)
    if (rc == 0) rc = g_api.Enable(kind);
  if (rc != 0) {
    problem = "cuptiActivityEnable failed with CUPTI error " + std::to_string(rc) +
              " (no GPU, or another profiler attached?)";
    for (std::uint32_t kind : kKinds) g_api.Disable(kind);
    return false;
  }
  std::uint64_t cupti_now = 0;
  g_api.GetTimestamp(&cupti_now);
  g_offset_ns = profiler::now_ns() - static_cast<std::int64_t>(cupti_now);
  g_active = true;
  return true;
}

void stop() {
  if (!g_active) return;
  g_api.FlushAll(1);
  for (std::uint32_t kind : kKinds) g_api.Disable(kind);
  g_active = false;
}

bool active() { return g_active; }

Counts take_counts() {
  std::lock_guard lock(g_mutex);
  return std::exchange(g_counts, Counts{});
}

std::uint32_t newest_checked_version() { return kNewestChecked; }

std::uint64_t push_external() {
  if (!g_active) return 0;
  const std::uint64_t id = g_next_id.fetch_add(1, std::memory_order_relaxed);
  return g_api.PushExternal(kExternalCustom0, id) == 0 ? id : 0;
}

void pop_external() {
  std::uint64_t last = 0;
  if (g_loaded) g_api.PopExternal(kExternalCustom0, &last);
}

std::optional<std::pair<std::int64_t, std::int64_t>> take_times(std::uint64_t id) {
  std::lock_guard lock(g_mutex);
  std::optional<std::pair<std::int64_t, std::int64_t>> span;
  auto [first, last] = g_external.equal_range(id);
  for (auto it = first; it != last; ++it) {
    auto t = g_times.find(it->second);
    if (t == g_times.end()) continue;
    span =
        span ? std::pair{std::min(span->first, t->second.first), std::max(span->second, t->second.second)} : t->second;
    g_times.erase(t);
  }
  g_external.erase(id);
  return span;
}

}  // namespace cupric::runtime::cupti
