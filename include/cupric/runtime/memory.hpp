// cupric/runtime/memory.hpp — device memory: a stream-ordered caching pool per device, a pinned
// host pool, managed allocations, and Buffer (owning; returns its block to the pool when freed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cupric/cuda/driver_api.hpp"
#include "cupric/runtime/stream.hpp"

namespace cupric::runtime {

enum class MemoryKind { device, pinned, managed };

struct PoolStats {
  std::uint64_t bytes_in_use = 0, peak_bytes_in_use = 0, bytes_cached = 0;
  std::uint64_t allocations = 0, cache_hits = 0, driver_allocations = 0, oom_retries = 0;
  std::uint64_t driver_reserved_bytes = 0, driver_used_bytes = 0;  ///< from the driver's pool
};

/// Stream-ordered caching allocator for one device.
///
/// Two levels. (1) Our cache: a freed block waits in a free list of the stream it was freed on
/// and is handed out again only for that stream; stream order makes that safe with no
/// synchronisation and it costs tens of nanoseconds. (2) Behind it, the driver's stream-ordered
/// pool (cuMemAllocAsync / cuMemFreeAsync, release threshold raised so memory stays reserved).
/// Cross-stream reuse goes through the driver, which tracks the freeing stream's work and
/// inserts the dependency itself (CU_MEMPOOL_ATTR_REUSE_* defaults); that keeps reuse across
/// streams correct without events of our own. Devices without memory pools fall back to
/// cuMemAlloc/cuMemFree (which synchronise). Blocks of kLargeBlock bytes and more go straight back
/// to the driver's pool when freed: it sub-allocates them for requests of any size, where our
/// exact-size cache could reuse them only for the same size. During stream capture, allocations bypass our
/// cache so that the graph owns them (graph memory nodes).
class MemoryPool {
 public:
  static constexpr std::size_t kLargeBlock = std::size_t{16} << 20;
  static MemoryPool& for_device(int device);
  /// Block size a request of `nbytes` uses: 512-byte minimum, then 4 sizes per power of two.
  static std::size_t round_size(std::size_t nbytes);

  /// A block of at least `nbytes`, ordered on `stream`. On out-of-memory frees every cached
  /// block, retries once, then throws OutOfMemoryError with the requested and free sizes.
  cuda::CUdeviceptr allocate(std::size_t nbytes, StreamState& stream, std::size_t* block_size, bool* graph_owned);
  cuda::CUdeviceptr allocate(std::size_t nbytes, const Stream& stream, std::size_t* block_size, bool* graph_owned) {
    return allocate(nbytes, *stream.state(), block_size, graph_owned);
  }
  /// Returns a block, ordered after the work already queued on `stream`.
  void deallocate(cuda::CUdeviceptr ptr, std::size_t block_size, StreamState& stream, bool graph_owned);
  void deallocate(cuda::CUdeviceptr ptr, std::size_t block_size, const Stream& stream, bool graph_owned) {
    deallocate(ptr, block_size, *stream.state(), graph_owned);
  }
  /// Gives every cached block back to the driver and trims the driver's pool (synchronises).
  void free_all_blocks();
  PoolStats stats() const;
  int device() const { return device_; }

  /// Frees the blocks cached for a stream that is being destroyed.
  void release_stream(StreamState* stream);

 private:
  explicit MemoryPool(int device);
  cuda::CUdeviceptr allocate_block(std::size_t nbytes, StreamState& stream, std::size_t* block_size, bool* graph_owned);
  void record(const char* what, const char* how, std::int64_t t0_ns, std::size_t size, const StreamState& stream) const;
  cuda::CUdeviceptr driver_allocate(std::size_t size, cuda::CUstream stream);
  void driver_free(cuda::CUdeviceptr ptr, cuda::CUstream stream);
  void flush_cache_locked();

  int device_;
  bool direct_ = false;  ///< CUPRIC_POOL=direct: exact-size driver allocations, no cache (for sanitizers)
  bool async_ = false;
  cuda::CUmemoryPool driver_pool_ = nullptr;
  mutable std::mutex mutex_;
  // Keyed by the stream's state; ~StreamState releases its entry (release_stream) before the
  // stream handle is destroyed, so a key never outlives its stream.
  struct Cached {
    std::unordered_map<std::size_t, std::vector<cuda::CUdeviceptr>> by_size;
  };
  std::unordered_map<StreamState*, Cached> cache_;
  PoolStats stats_;
};

/// Page-locked host memory, cached by size. A freed block is reused only once the work queued
/// on its stream before the free has finished (an event per block).
class PinnedPool {
 public:
  static PinnedPool& global();
  void* allocate(std::size_t nbytes, std::size_t* block_size);
  void deallocate(void* ptr, std::size_t block_size, const Stream& stream);
  void free_all_blocks();
  PoolStats stats() const;

 private:
  struct Block {
    void* ptr;
    cuda::CUevent ready;
  };
  mutable std::mutex mutex_;
  std::unordered_map<std::size_t, std::vector<Block>> free_;
  PoolStats stats_;
};

/// Owning memory: device (pooled), pinned host (pooled) or managed. Freed on `stream` order.
class Buffer {
 public:
  static std::shared_ptr<Buffer> allocate(std::size_t nbytes, const Stream& stream,
                                          MemoryKind kind = MemoryKind::device);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  cuda::CUdeviceptr ptr() const { return ptr_; }
  std::size_t size() const { return size_; }
  int device() const { return stream_.device(); }
  MemoryKind kind() const { return kind_; }
  const Stream& stream() const { return stream_; }
  bool closed() const { return closed_; }

  /// Copies between this buffer (at byte `offset`) and host or device memory, ordered on `stream`.
  /// Host-to-device from pageable memory returns once the data is staged; device-to-host into
  /// pageable memory returns when it has landed.
  void copy_from_host(const void* src, std::size_t nbytes, const Stream& stream, std::size_t offset = 0);
  void copy_to_host(void* dst, std::size_t nbytes, const Stream& stream, std::size_t offset = 0) const;
  void copy_from_device(cuda::CUdeviceptr src, std::size_t nbytes, const Stream& stream, std::size_t offset = 0);
  /// Fills with a 1-, 2- or 4-byte pattern (the size must be a multiple of the width).
  void fill(std::uint32_t pattern, int width, const Stream& stream);
  /// Frees now, ordered on `stream` (the allocation stream by default); later use is an error.
  void close(const Stream* stream = nullptr);

 private:
  Buffer(cuda::CUdeviceptr ptr, std::size_t size, std::size_t block, Stream stream, MemoryKind kind, bool graph);
  void check_open(const char* what, std::size_t offset, std::size_t nbytes) const;
  cuda::CUdeviceptr ptr_;
  std::size_t size_, block_;
  Stream stream_;
  MemoryKind kind_;
  bool graph_owned_;
  bool closed_ = false;
};

}  // namespace cupric::runtime
