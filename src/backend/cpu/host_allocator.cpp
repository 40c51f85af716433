// host_allocator.cpp — see host_allocator.hpp.
#include "host_allocator.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <iterator>
#include <unordered_set>

#include "cupric/profiler.hpp"

namespace cupric::cpu {

namespace {
constexpr std::size_t kCached = std::size_t{64} << 10;   // blocks from this size are cached
constexpr std::size_t kLarge = std::size_t{1} << 20;     // from this size: huge-page rounding, calloc'd zeros
constexpr std::size_t kHugePage = std::size_t{2} << 20;  // rounding and alignment of large blocks

std::size_t default_limit() {
  if (const char* env = std::getenv("CUPRIC_HOST_CACHE_MB")) return static_cast<std::size_t>(std::atoll(env)) << 20;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  const std::size_t ram =
      pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : (std::size_t{8} << 30);
  return std::min<std::size_t>(ram / 8, std::size_t{4} << 30);
}

struct Pool {
  std::mutex mutex;
  std::multimap<std::size_t, void*> free_blocks;  // rounded size -> block
  // blocks handed out zeroed by the OS (calloc): their pages may never have been touched, so
  // they go back to the OS when freed instead of into the cache (where reusing them would
  // page-fault on every use, as a fresh allocation does)
  std::unordered_set<void*> zeroed;
  std::size_t cached = 0, hits = 0, misses = 0;
  std::size_t in_use = 0;  // bytes of the pool's blocks (>= kCached) handed out
  std::size_t limit = default_limit();

  void release_all_locked() {
    for (auto& [size, p] : free_blocks) std::free(p);
    free_blocks.clear();
    cached = 0;
  }
};

Pool& pool() {
  static Pool* p = new Pool();  // outlives arrays freed at interpreter exit
  return *p;
}

/// The size a cached block is kept under: large blocks in whole huge pages; medium ones in
/// eighths of their power of two (at most 1/8 wasted), so that nearby sizes share blocks.
std::size_t rounded(std::size_t nbytes) {
  if (nbytes >= kLarge) return (nbytes + kHugePage - 1) / kHugePage * kHugePage;
  std::size_t step = kCached / 8;
  while (step * 8 < nbytes) step *= 2;
  return (nbytes + step - 1) / step * step;
}

/// The profiler's record of a pool block handed out or given back ("alloc" / "free", how it was
/// served, its size, and the bytes the pool held after it: live blocks and cache).
void record(const char* what, const char* how, std::int64_t t0_ns, std::size_t size, std::size_t held) {
  profiler::record_span(profiler::EventKind::alloc, what, t0_ns, how, static_cast<double>(size), -1, 0,
                        static_cast<std::int64_t>(held));
}

void* fresh_block(std::size_t size) {
  if (size < kLarge) return std::aligned_alloc(64, size);
  void* p = std::aligned_alloc(kHugePage, size);
  if (p && std::getenv("CUPRIC_HUGEPAGES")) madvise(p, size, MADV_HUGEPAGE);
  return p;
}
}  // namespace

void* host_allocate(std::size_t nbytes) {
  if (nbytes < kCached) {
    void* p = std::aligned_alloc(64, std::max<std::size_t>(64, (nbytes + 63) / 64 * 64));
    if (!p) throw std::bad_alloc();
    return p;
  }
  const std::size_t size = rounded(nbytes);
  const std::int64_t t0 = profiler::recording() ? profiler::now_ns() : 0;
  Pool& pl = pool();
  std::size_t held = 0;
  {
    std::lock_guard<std::mutex> lock(pl.mutex);
    auto [first, last] = pl.free_blocks.equal_range(size);
    if (first != last) {
      auto it = std::prev(last);  // the most recently freed: its pages and cache lines are warm
      void* p = it->second;
      pl.free_blocks.erase(it);
      pl.cached -= size;
      pl.in_use += size;
      ++pl.hits;
      held = pl.in_use + pl.cached;
      if (t0) [[unlikely]]
        record("alloc", "cache hit", t0, size, held);
      return p;
    }
    ++pl.misses;
  }
  void* p = fresh_block(size);
  if (!p) {  // give the cache back and try once more
    host_free_cached();
    p = fresh_block(size);
    if (!p) throw std::bad_alloc();
  }
  {
    std::lock_guard<std::mutex> lock(pl.mutex);
    pl.in_use += size;
    held = pl.in_use + pl.cached;
  }
  if (t0) [[unlikely]]
    record("alloc", "from the OS", t0, size, held);
  return p;
}

void* host_allocate_zeroed(std::size_t nbytes) {
  if (nbytes < kLarge) return nullptr;
  // rounded like every large block, so that the cache can hand it out again for any request
  // of the same rounded size
  const std::int64_t t0 = profiler::recording() ? profiler::now_ns() : 0;
  void* p = std::calloc(1, rounded(nbytes));
  if (!p) throw std::bad_alloc();
  Pool& pl = pool();
  std::lock_guard<std::mutex> lock(pl.mutex);
  pl.zeroed.insert(p);
  pl.in_use += rounded(nbytes);
  if (t0) [[unlikely]]
    record("alloc", "zeroed by the OS", t0, rounded(nbytes), pl.in_use + pl.cached);
  return p;
}

void host_deallocate(void* ptr, std::size_t nbytes) {
  if (!ptr) return;
  if (nbytes < kCached) {
    std::free(ptr);
    return;
  }
  const std::size_t size = rounded(nbytes);
  const std::int64_t t0 = profiler::recording() ? profiler::now_ns() : 0;
  Pool& pl = pool();
  std::lock_guard<std::mutex> lock(pl.mutex);
  pl.in_use -= std::min(pl.in_use, size);
  if (pl.zeroed.erase(ptr) || size > pl.limit) {
    std::free(ptr);
    if (t0) [[unlikely]]
      record("free", "to the OS", t0, size, pl.in_use + pl.cached);
    return;
  }
  while (pl.cached + size > pl.limit && !pl.free_blocks.empty()) {  // evict the largest first
    auto last = std::prev(pl.free_blocks.end());
    pl.cached -= last->first;
    std::free(last->second);
    pl.free_blocks.erase(last);
  }
  pl.free_blocks.emplace(size, ptr);
  pl.cached += size;
  if (t0) [[unlikely]]
    record("free", "into the cache", t0, size, pl.in_use + pl.cached);
}

HostPoolStats host_pool_stats() {
  Pool& pl = pool();
  std::lock_guard<std::mutex> lock(pl.mutex);
  return {pl.cached, pl.free_blocks.size(), pl.hits, pl.misses, pl.limit};
}

void host_free_cached() {
  Pool& pl = pool();
  std::lock_guard<std::mutex> lock(pl.mutex);
  pl.release_all_locked();
}

}  // namespace cupric::cpu
