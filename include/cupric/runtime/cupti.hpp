// cupric/runtime/cupti.hpp — kernel and copy device times from CUPTI's activity API, loaded at
// first use (the nvidia-cuda-cupti wheel or a toolkit's extras/CUPTI; entry points declared here,
// no CUPTI header at build time). A launch is bracketed by an external correlation id of ours,
// which CUPTI's records tie to the kernels and copies it made.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace cupric::runtime::cupti {

/// dlopens `path` and starts recording kernels and copies; false (and nothing on) when the
/// library or an entry point is missing or CUPTI refuses. `problem` says why.
bool start(const std::string& path, std::string& problem);
/// Flushes CUPTI's buffers and stops recording (the matched times stay until taken). The work
/// recorded must have finished (synchronise first): CUPTI's forced flush hands over records of
/// running work without timestamps.
void stop();
/// What CUPTI delivered since the last call: kernel and copy records, those of them without
/// timestamps, and external correlation records (the profiler's note when kernels went unmatched).
struct Counts {
  std::uint64_t records = 0, untimed = 0, correlations = 0;
};
Counts take_counts();
/// The newest CUPTI API version whose record layout was checked against its headers.
std::uint32_t newest_checked_version();
bool active();
/// Tags the calling thread's next CUDA calls with a new id of ours (0 when CUPTI is off) until
/// pop_external().
std::uint64_t push_external();
void pop_external();
/// The device span (first start, last end) of the work the calls tagged `id` made, on the
/// profiler's clock, once (after stop(), which flushes); nullopt when CUPTI recorded none.
std::optional<std::pair<std::int64_t, std::int64_t>> take_times(std::uint64_t id);

}  // namespace cupric::runtime::cupti
