// host_allocator.hpp — the CPU backend's memory: small blocks from malloc, blocks of 64 KiB and
// more from a size-keyed cache of freed blocks (first-touch page faults cost more than the
// arithmetic of most ops; malloc hands medium blocks back to the OS when a chain of temporaries
// frees them, and they fault again on the next use), large ones backed by transparent huge pages
// where the OS offers them.
#pragma once

#include <cstddef>

namespace cupric::cpu {

void* host_allocate(std::size_t nbytes);
void host_deallocate(void* ptr, std::size_t nbytes);
/// A large block of zeros straight from the OS (pages are zeroed lazily on first touch, as
/// NumPy's calloc-backed zeros); nullptr below the large-block size (the caller fills).
void* host_allocate_zeroed(std::size_t nbytes);

struct HostPoolStats {
  std::size_t cached_bytes;  ///< freed blocks kept for reuse
  std::size_t cached_blocks;
  std::size_t hits, misses;
  std::size_t limit_bytes;  ///< most bytes the cache keeps (CUPRIC_HOST_CACHE_MB overrides)
};
HostPoolStats host_pool_stats();
/// Returns every cached block to the OS.
void host_free_cached();

}  // namespace cupric::cpu
