// compile_cache.hpp — the one cache of everything cupric compiles at run time (NVRTC output, tile
// kernels' cubins and CPU shared objects, GCC's precompiled header, kernel indexes, autotune
// choices): (artifact kind, key) -> bytes, in memory and on disk under one folder with one size
// bound. Disk entries are verified (owner, mode, SHA-256 of the content) before use; see
// docs/security.md for what this defends against.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace cupric::runtime {

/// What an entry holds. Each kind has its own folder on disk and its own line in `info()`.
enum class ArtifactKind : std::uint8_t {
  nvrtc,               ///< cupric.cuda.Program outputs: array kernels and users' programs
  cubin,               ///< tile kernels' cubins, keyed without NVRTC's version
  shared_object,       ///< tile kernels compiled for the CPU (loaded from a verified copy)
  precompiled_header,  ///< GCC's precompiled tile.h, per compiler, flags and header library
  index,               ///< tile kernels' launch facts, so that a new process skips the frontend
  autotune,            ///< @ct.autotune's choices
  compiler,            ///< what probing the host C++ compiler found
  headers,             ///< the device header library's hash, by its file listing
};

struct ArtifactKindInfo {
  ArtifactKind kind;
  const char* name;         ///< its folder and its name in Python
  bool in_memory;           ///< kept in the memory tier (not the 50 MB precompiled header)
  const char* description;  ///< for `python -m cupric.cache info`
};
constexpr std::size_t kArtifactKinds = 8;
/// Every kind, in enum order.
const std::array<ArtifactKindInfo, kArtifactKinds>& artifact_kinds();
const char* artifact_kind_name(ArtifactKind kind);
/// The kind called `name`; ValueError naming every kind otherwise.
ArtifactKind artifact_kind_from_name(std::string_view name);

struct CompileCacheStats {
  std::uint64_t memory_hits = 0, disk_hits = 0, misses = 0, stores = 0;
  std::uint64_t disk_evictions = 0;
  std::uint64_t disk_errors = 0;  ///< entries rejected (corrupt, truncated, foreign) and failed writes
  std::uint64_t memory_entries = 0, memory_bytes = 0;
};

struct CacheUsage {
  std::uint64_t entries = 0, bytes = 0;
};

/// What is in the cache, for `python -m cupric.cache info`.
struct CompileCacheInfo {
  std::string directory;  ///< "" when the disk tier is off
  std::string note;       ///< why the folder is not the one asked for ("" when it is)
  std::uint64_t max_disk_bytes = 0;
  std::array<CacheUsage, kArtifactKinds> kinds{};  ///< by ArtifactKind
  CacheUsage legacy;                               ///< files of older cache layouts (never read; `clear` removes them)
};

class CompileCache {
 public:
  using Value = std::shared_ptr<const std::string>;
  using WarningHandler = std::function<void(const std::string&)>;

  /// `directory` empty: memory only; otherwise checked as the environment's folder is, at first
  /// use. The disk is trimmed (least recently used first) to 80% of `max_disk_bytes` when a store
  /// passes it; `max_memory_bytes` bounds the memory tier.
  CompileCache(std::string directory, std::uint64_t max_disk_bytes, std::uint64_t max_memory_bytes);

  /// The process-wide cache, configured from the environment on first use.
  static CompileCache& global();
  /// Reads CUPRIC_CACHE_DIR (empty: memory only), XDG_CACHE_HOME, HOME, CUPRIC_DISABLE_DISK_CACHE
  /// and CUPRIC_CACHE_MAX_BYTES again. The folder is created (0700) and checked at first use: one
  /// that is not the user's, or that others may write, is replaced by a private temporary folder;
  /// one that cannot be written leaves the cache in memory. Both with a warning.
  void configure_from_environment();

  /// A cache key: SHA-256 (hex) of the length-prefixed parts.
  static std::string make_key(std::initializer_list<std::string_view> parts);
  /// Keys name files: 1 to 128 characters of 0-9, a-z, A-Z, '_' and '-'. ValueError otherwise.
  static void check_key(std::string_view key);

  /// The stored value, from memory, else from disk once verified (then kept in memory); null on a
  /// miss. A disk entry that fails verification is deleted, with a warning, and is a miss.
  Value get(ArtifactKind kind, const std::string& key);
  /// Stores in memory and (atomically: private temporary file + rename) on disk. Never throws for
  /// disk problems: they are counted in stats().disk_errors and warned about once.
  void put(ArtifactKind kind, const std::string& key, std::string_view value);
  /// Drops one entry from both tiers (its reader found the content unusable).
  void remove(ArtifactKind kind, const std::string& key);

  CompileCacheStats stats() const;
  CompileCacheInfo info();
  /// Drops the memory tier and/or every file of the disk tier (older layouts' too).
  void clear(bool memory = true, bool disk = true);
  /// Bytes of the disk tier, by walking the folder.
  std::uint64_t disk_usage();
  /// Trims the disk to at most `target` bytes, least recently used first; returns files removed.
  std::uint64_t trim_disk(std::uint64_t target);

  /// The disk tier's folder after its checks ("" when the disk tier is off).
  std::string directory();
  /// Another folder ("" = memory only), checked as the environment's is.
  void set_directory(std::string directory);
  std::uint64_t max_disk_bytes() const;
  void set_max_disk_bytes(std::uint64_t bytes);

  /// Where warnings go (a rejected entry, an unsafe or unwritable folder): stderr by default; the
  /// Python module turns them into RuntimeWarning. The handler may throw (warnings as errors).
  static void set_warning_handler(WarningHandler handler);
  static void warn(const std::string& message);

 private:
  struct Entry {
    Value value;
    std::list<std::string>::iterator position;
  };
  enum class Read { hit, missing, rejected };

  std::string disk_directory();  // runs the folder's checks once
  std::string path_for(const std::string& dir, ArtifactKind kind, const std::string& key) const;
  Read read_disk(const std::string& path, ArtifactKind kind, const std::string& key, Value& value,
                 std::string& problem);
  void write_disk(ArtifactKind kind, const std::string& key, std::string_view value);
  void after_write(bool ok, int error, const std::string& dir, std::uint64_t bytes);
  void remember(const std::string& id, Value value);

  mutable std::mutex mutex_;
  std::string requested_;  // the folder asked for ("" = memory only)
  bool checked_ = false;   // requested_ went through the checks: directory_ and note_ hold the outcome
  std::string directory_, note_;
  bool warned_write_ = false;
  std::uint64_t max_disk_bytes_, max_memory_bytes_;
  std::uint64_t disk_bytes_estimate_ = 0;
  bool disk_scanned_ = false;
  std::list<std::string> lru_;  // front = most recent
  std::unordered_map<std::string, Entry> memory_;
  CompileCacheStats stats_;
};

}  // namespace cupric::runtime
