// thread_pool.hpp — the CPU backend's workers: one pool sized to the cores
// (CUPRIC_NUM_THREADS overrides), and parallel_for that only splits work big enough to pay.
#pragma once

#include <cstdint>
#include <functional>

namespace cupric::cpu {

/// More threads than cores only add switching: a pool takes at most this many per core, or
/// kMinMaxThreads on small machines (where tests oversubscribe on purpose).
inline constexpr int kThreadsPerCore = 4;
inline constexpr int kMinMaxThreads = 64;
/// The largest thread count (CUPRIC_NUM_THREADS is clamped to it).
int max_threads();
/// Number of threads parallel_for uses (including the caller).
int num_threads();
/// Changes it (1 = run everything on the calling thread). Values < 1 mean "all cores"; above
/// max_threads() a ValueError. A smaller count ends the workers it no longer needs.
void set_num_threads(std::int64_t n);

/// Calls body(begin, end) over [0, n) in chunks of at least `grain` items, spread over the
/// pool; the calling thread takes part. Runs inline when n <= grain or with one thread.
/// The first exception thrown by a chunk is rethrown after all chunks finish.
void parallel_for(std::int64_t n, std::int64_t grain, const std::function<void(std::int64_t, std::int64_t)>& body);

}  // namespace cupric::cpu
