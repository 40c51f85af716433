// memory_pool.cpp — the stream-ordered caching pool (see MemoryPool in memory.hpp for the
// design), the pinned host pool, and the out-of-memory path (free the cache, retry, explain).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "cupric/cuda/errors.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/errors.hpp"
#include "cupric/profiler.hpp"
#include "cupric/runtime/device.hpp"
#include "cupric/runtime/memory.hpp"

namespace cupric::runtime {
using namespace cupric::cuda;

namespace {
std::mutex pools_mutex;
std::unordered_map<int, MemoryPool*>* pools = nullptr;  // never destroyed: buffers die at exit

std::string bytes_text(std::uint64_t n) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[64];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", v, units[u]);
  return buf;
}
}  // namespace

void release_stream_blocks(StreamState* stream) {
  std::lock_guard lock(pools_mutex);
  if (!pools) return;
  auto it = pools->find(stream->device);
  if (it != pools->end()) it->second->release_stream(stream);
}

MemoryPool& MemoryPool::for_device(int device) {
  (void)Device(device);  // validates before taking the lock
  std::lock_guard lock(pools_mutex);
  if (!pools) pools = new std::unordered_map<int, MemoryPool*>();
  auto& p = (*pools)[device];
  if (!p) p = new MemoryPool(device);
  return *p;
}

std::size_t MemoryPool::round_size(std::size_t n) {
  constexpr std::size_t kMin = 512;
  if (n <= kMin) return kMin;
  // Four classes per power of two: waste stays below 25% and few sizes keep reuse high.
  int top = 63 - __builtin_clzll(static_cast<unsigned long long>(n - 1));  // highest bit of n-1
  std::size_t step = std::size_t{1} << (top - 2);
  return (n + step - 1) / step * step;
}

/// CUPRIC_POOL=direct: every block its own driver allocation of the exact size, freed at once
/// (cuMemAlloc / cuMemFree), so that compute-sanitizer sees each array's bounds
/// (`python -m cupric.sanitize` sets it).
static bool direct_mode() {
  const char* v = std::getenv("CUPRIC_POOL");
  return v != nullptr && std::strcmp(v, "direct") == 0;
}

MemoryPool::MemoryPool(int device) : device_(device), direct_(direct_mode()) {
  Device dev(device);
  dev.activate();
  const DriverApi& d = driver();
  async_ = !direct_ && d.MemAllocAsync && d.MemFreeAsync && d.DeviceGetDefaultMemPool &&
           dev.properties().memory_pools_supported;
  if (async_ && d.DeviceGetDefaultMemPool(&driver_pool_, dev.handle()) == CUDA_SUCCESS) {
    // Keep freed memory reserved in the driver's pool instead of returning it at every sync.
    std::uint64_t threshold = std::numeric_limits<std::uint64_t>::max();
    d.MemPoolSetAttribute(driver_pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold);
  } else {
    async_ = false;
  }
}

CUdeviceptr MemoryPool::driver_allocate(std::size_t size, CUstream stream) {
  const DriverApi& d = driver();
  CUdeviceptr p = 0;
  CUresult rc = async_ ? d.MemAllocAsync(&p, size, stream) : d.MemAlloc(&p, size);
  if (rc == CUDA_ERROR_OUT_OF_MEMORY) return 0;
  check(rc, async_ ? "cuMemAllocAsync" : "cuMemAlloc");
  return p;
}

void MemoryPool::driver_free(CUdeviceptr ptr, CUstream stream) {
  const DriverApi& d = driver();
  if (async_) d.MemFreeAsync(ptr, stream);
  else d.MemFree(ptr);
}

/// The profiler's record of a block handed out or given back ("alloc" / "free", how, its size,
/// and the bytes the pool holds after it: live blocks and cupric's cache).
void MemoryPool::record(const char* what, const char* how, std::int64_t t0_ns, std::size_t size,
                        const StreamState& stream) const {
  std::uint64_t held = 0;
  {
    std::lock_guard lock(mutex_);
    held = stats_.bytes_in_use + stats_.bytes_cached;
  }
  profiler::record_span(profiler::EventKind::alloc, what, t0_ns, how, static_cast<double>(size), device_, stream.serial,
                        static_cast<std::int64_t>(held));
}

CUdeviceptr MemoryPool::allocate(std::size_t nbytes, StreamState& stream, std::size_t* block_size, bool* graph_owned) {
  const std::int64_t t0 = profiler::recording() ? profiler::now_ns() : 0;
  CUdeviceptr p = allocate_block(nbytes, stream, block_size, graph_owned);
  if (t0) [[unlikely]]
    record("alloc", *graph_owned ? "graph" : direct_ ? "direct" : "pool", t0, *block_size, stream);
  return p;
}

CUdeviceptr MemoryPool::allocate_block(std::size_t nbytes, StreamState& stream, std::size_t* block_size,
                                       bool* graph_owned) {
  std::size_t size = direct_ ? std::max<std::size_t>(nbytes, 1) : round_size(nbytes);
  *block_size = size;
  *graph_owned = stream.capturing;
  StreamState* key = &stream;
  if (!stream.used.load(std::memory_order_relaxed)) stream.used.store(true, std::memory_order_relaxed);
  if (!*graph_owned && !direct_ && !(async_ && size >= kLargeBlock)) {
    std::lock_guard lock(mutex_);
    ++stats_.allocations;
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      auto bucket = it->second.by_size.find(size);
      if (bucket != it->second.by_size.end() && !bucket->second.empty()) {
        CUdeviceptr p = bucket->second.back();
        bucket->second.pop_back();
        ++stats_.cache_hits;
        stats_.bytes_cached -= size;
        stats_.bytes_in_use += size;
        stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
        return p;
      }
    }
  }
  Device(device_).activate();
  CUdeviceptr p = driver_allocate(size, stream.handle);
  if (!p && !*graph_owned) {  // out of memory: give the cache back, wait for frees, trim, retry once
    // (not while capturing: synchronising would invalidate the capture)
    {
      std::lock_guard lock(mutex_);
      ++stats_.oom_retries;
    }
    free_all_blocks();
    p = driver_allocate(size, stream.handle);
  }
  if (!p) {
    std::size_t free = 0, total = 0;
    driver().MemGetInfo(&free, &total);
    PoolStats s = stats();
    throw OutOfMemoryError(
        cat("out of memory on CUDA device ", device_, ": could not allocate ", bytes_text(nbytes), " (", nbytes,
            " bytes); free ", bytes_text(free), " of ", bytes_text(total), ", cupric holds ",
            bytes_text(s.bytes_in_use), " in live buffers and ", bytes_text(s.bytes_cached),
            " cached (cached blocks were already released and the allocation retried)"),
        "MemoryPool.allocate", nbytes, free);
  }
  std::lock_guard lock(mutex_);
  if (!*graph_owned && (direct_ || (async_ && size >= kLargeBlock))) ++stats_.allocations;  // (else counted above)
  ++stats_.driver_allocations;
  stats_.bytes_in_use += size;
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  return p;
}

void MemoryPool::deallocate(CUdeviceptr ptr, std::size_t block_size, StreamState& stream, bool graph_owned) {
  const std::int64_t t0 = profiler::recording() ? profiler::now_ns() : 0;
  if (graph_owned || stream.capturing || direct_ || (async_ && block_size >= kLargeBlock)) {
    {
      std::lock_guard lock(mutex_);
      stats_.bytes_in_use -= block_size;
    }
    Device(device_).activate();
    driver_free(ptr, stream.handle);
    if (t0) [[unlikely]]
      record("free", "to the driver", t0, block_size, stream);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    stats_.bytes_in_use -= block_size;
    stats_.bytes_cached += block_size;
    cache_[&stream].by_size[block_size].push_back(ptr);
  }
  if (t0) [[unlikely]]
    record("free", "into the cache", t0, block_size, stream);
}

void MemoryPool::flush_cache_locked() {
  for (auto& [state, entry] : cache_)
    for (auto& [size, blocks] : entry.by_size) {
      for (CUdeviceptr p : blocks) driver_free(p, state->handle);
      stats_.bytes_cached -= size * blocks.size();
    }
  cache_.clear();
}

void MemoryPool::free_all_blocks() {
  Device dev(device_);
  dev.activate();
  {
    std::lock_guard lock(mutex_);
    flush_cache_locked();
  }
  check(driver().CtxSynchronize(), "cuCtxSynchronize");
  if (async_) check(driver().MemPoolTrimTo(driver_pool_, 0), "cuMemPoolTrimTo");
}

void MemoryPool::release_stream(StreamState* stream) {
  std::lock_guard lock(mutex_);
  auto it = cache_.find(stream);
  if (it == cache_.end()) return;
  for (auto& [size, blocks] : it->second.by_size) {
    for (CUdeviceptr p : blocks) driver_free(p, stream->handle);
    stats_.bytes_cached -= size * blocks.size();
  }
  cache_.erase(it);
}

PoolStats MemoryPool::stats() const {
  PoolStats s;
  {
    std::lock_guard lock(mutex_);
    s = stats_;
  }
  if (async_) {
    const DriverApi& d = driver();
    d.MemPoolGetAttribute(driver_pool_, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &s.driver_reserved_bytes);
    d.MemPoolGetAttribute(driver_pool_, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &s.driver_used_bytes);
  }
  return s;
}

// --- pinned host memory ---------------------------------------------------------------------

PinnedPool& PinnedPool::global() {
  static PinnedPool* pool = new PinnedPool();  // never destroyed
  return *pool;
}

void* PinnedPool::allocate(std::size_t nbytes, std::size_t* block_size) {
  std::size_t size = MemoryPool::round_size(nbytes);
  *block_size = size;
  const DriverApi& d = driver();
  {
    std::lock_guard lock(mutex_);
    ++stats_.allocations;
    auto& bucket = free_[size];
    for (std::size_t i = bucket.size(); i-- > 0;) {                 // most recently freed first: warm in the caches
      if (d.EventQuery(bucket[i].ready) != CUDA_SUCCESS) continue;  // still in use by queued copies
      void* p = bucket[i].ptr;
      d.EventDestroy(bucket[i].ready);
      bucket.erase(bucket.begin() + static_cast<std::ptrdiff_t>(i));
      ++stats_.cache_hits;
      stats_.bytes_cached -= size;
      stats_.bytes_in_use += size;
      stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
      return p;
    }
  }
  Device::current().activate();
  void* p = nullptr;
  CUresult rc = d.MemHostAlloc(&p, size, kMemHostAllocPortable);
  if (rc == CUDA_ERROR_OUT_OF_MEMORY) {
    free_all_blocks();
    rc = d.MemHostAlloc(&p, size, kMemHostAllocPortable);
  }
  if (rc == CUDA_ERROR_OUT_OF_MEMORY)
    throw OutOfMemoryError(cat("out of pinned host memory: could not allocate ", bytes_text(nbytes)),
                           "PinnedPool.allocate", nbytes, 0);
  check(rc, "cuMemHostAlloc");
  std::lock_guard lock(mutex_);
  ++stats_.driver_allocations;
  stats_.bytes_in_use += size;
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  return p;
}

void PinnedPool::deallocate(void* ptr, std::size_t block_size, const Stream& stream) {
  // A raw event: this pool owns it until the block is reused or freed.
  Device(stream.device()).activate();
  CUevent raw = nullptr;
  const DriverApi& d = driver();
  check(d.EventCreate(&raw, kEventDisableTiming), "cuEventCreate");
  check(d.EventRecord(raw, stream.handle()), "cuEventRecord");
  std::lock_guard lock(mutex_);
  stats_.bytes_in_use -= block_size;
  stats_.bytes_cached += block_size;
  free_[block_size].push_back({ptr, raw});
}

void PinnedPool::free_all_blocks() {
  const DriverApi& d = driver();
  std::lock_guard lock(mutex_);
  for (auto& [size, blocks] : free_) {
    for (auto& b : blocks) {
      d.EventSynchronize(b.ready);
      d.EventDestroy(b.ready);
      d.MemFreeHost(b.ptr);
      stats_.bytes_cached -= size;
    }
  }
  free_.clear();
}

PoolStats PinnedPool::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace cupric::runtime
