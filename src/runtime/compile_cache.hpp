// compile_cache.hpp — the cache every JIT in cupric shares: compiled artifacts in memory and on
// disk under $CUPRIC_CACHE_DIR (default ~/.cache/cupric), keyed by a SHA-256 of what determines
// the output (source, options, compiler version, arch). Safe with several writer processes.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace cupric::runtime {

struct CompileCacheStats {
  std::uint64_t memory_hits = 0, disk_hits = 0, misses = 0, stores = 0;
  std::uint64_t disk_evictions = 0, disk_errors = 0;
  std::uint64_t memory_entries = 0, memory_bytes = 0;
};

class CompileCache {
 public:
  using Value = std::shared_ptr<const std::string>;

  /// `directory` empty: memory only. `max_disk_bytes`: the disk is trimmed (least recently used
  /// first) to 80% of it when a store passes it. `max_memory_bytes` bounds the memory tier.
  CompileCache(std::string directory, std::uint64_t max_disk_bytes, std::uint64_t max_memory_bytes);

  /// The process-wide cache, configured from CUPRIC_CACHE_DIR (empty disables the disk),
  /// CUPRIC_DISABLE_DISK_CACHE=1 and CUPRIC_CACHE_MAX_BYTES on first use.
  static CompileCache& global();
  /// Reads the environment again (tests and long-lived processes that change it).
  void configure_from_environment();

  /// A cache key: SHA-256 (hex) of the length-prefixed parts.
  static std::string make_key(std::initializer_list<std::string_view> parts);

  /// The stored value, from memory, else from disk (then kept in memory); null on a miss.
  Value get(const std::string& key);
  /// Stores in memory and (atomically: temporary file + rename) on disk. Never throws for disk
  /// problems: they are counted in stats().disk_errors.
  void put(const std::string& key, std::string_view value);

  CompileCacheStats stats() const;
  /// Drops the memory tier and/or every file of the disk tier.
  void clear(bool memory = true, bool disk = true);
  /// Bytes of the disk tier, by walking the directory.
  std::uint64_t disk_usage() const;
  /// Trims the disk to at most `target` bytes, least recently used first; returns files removed.
  std::uint64_t trim_disk(std::uint64_t target);

  std::string directory() const;  ///< "" when the disk tier is off
  void set_directory(std::string directory);
  std::uint64_t max_disk_bytes() const;
  void set_max_disk_bytes(std::uint64_t bytes);

 private:
  std::string path_for(const std::string& key) const;
  Value read_disk(const std::string& key);
  void write_disk(const std::string& key, std::string_view value);
  void remember(const std::string& key, Value value);

  mutable std::mutex mutex_;
  std::string directory_;
  std::uint64_t max_disk_bytes_, max_memory_bytes_;
  std::uint64_t disk_bytes_estimate_ = 0;
  bool disk_scanned_ = false;
  std::list<std::string> lru_;  // front = most recent
  struct Entry {
    Value value;
    std::list<std::string>::iterator position;
  };
  std::unordered_map<std::string, Entry> memory_;
  CompileCacheStats stats_;
};

}  // namespace cupric::runtime
