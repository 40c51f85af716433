// host_compiler.hpp — the CPU target's compiler and loader: generated C++ is compiled by the
// system compiler (CXX, else c++; run with an argument vector, never through a shell) into a
// shared object kept in the compile cache, loaded from a verified copy, and its blocks are spread
// over the CPU thread pool.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cupric/tile/abi.h"

namespace cupric::tile {

/// The system C++ compiler as found once per process.
struct HostCompiler {
  bool available = false;
  std::string command;             ///< $CXX as given, else "c++"
  std::vector<std::string> argv;   ///< `command` split at whitespace (no shell: quotes and $(...) are plain text)
  std::string version;             ///< first line of `--version`
  std::vector<std::string> flags;  ///< what every kernel is compiled with
  std::string problem;             ///< why it is not available
  bool gcc = false;                ///< GCC (precompiled headers are used)
  bool libmvec = false;            ///< glibc's vector math library can be linked
};
/// Found once per process; what the probe found is kept in the compile cache for later processes.
const HostCompiler& host_compiler();

/// Hash of the header library under include_dir from each file's name, size and modification time
/// (editing a header changes it without reading every file per process), once per process: ~0.05 ms
/// against ~0.7 ms for the same listing, hashed and looked up, in Python.
std::string headers_hash(const std::string& include_dir);

/// Hash of everything besides the source that a compiled kernel depends on: the compiler, its
/// flags (which name the instruction set: the CPU kernels' variant), and the header library.
std::string host_environment(const std::string& include_dir);

/// Result of compile_host: the kernel's compile cache key and what producing it cost.
struct HostBinary {
  std::string key;         ///< hash of source, compiler, flags and header library
  bool cache_hit = false;  ///< found compiled (no compiler run)
  double compile_seconds = 0;
};

/// Compiles `source` (which includes headers from `include_dir`, the device_include folder) unless
/// the compile cache has it, and loads it: HostKernel::load(key) then finds it. Throws
/// std::runtime_error with the compiler's command and output on failure.
HostBinary compile_host(const std::string& source, const std::string& include_dir);

/// This process's private folder (mode 0700, removed at exit) for the compiler's inputs and outputs.
const std::string& host_work_directory();

/// A loaded kernel: its entry and how to run a grid of blocks with it.
class HostKernel {
 public:
  /// The kernel compiled under `key`, loaded once per process from a verified copy of its compile
  /// cache entry; null when the cache does not have it (or it does not load: then it is deleted).
  static std::shared_ptr<HostKernel> load(const std::string& key);
  /// Loads the shared object `bytes` (just compiled) as the kernel of `key`.
  static std::shared_ptr<HostKernel> load(const std::string& key, const std::string& bytes);
  ~HostKernel();
  HostKernel(const HostKernel&) = delete;
  HostKernel& operator=(const HostKernel&) = delete;

  /// Runs every block of `grid` over the thread pool. args[i] points at a cupric_tile_array or
  /// a scalar's 8-byte slot. A block that fails a ct.assert_ records it in `status`.
  void launch(const std::int64_t grid[3], const std::vector<void*>& args, cupric_tile_status* status) const;

 private:
  HostKernel() = default;
  void* handle_ = nullptr;
  cupric_tile_entry_fn entry_ = nullptr;
};

}  // namespace cupric::tile
