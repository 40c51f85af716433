// host_compiler.hpp — the CPU target's compiler and loader: generated C++ is compiled by the
// system compiler (CXX, else c++) into a shared object cached on disk, loaded with dlopen, and
// its blocks are spread over the CPU thread pool.
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
  std::string command;  ///< e.g. "c++" or $CXX
  std::string version;  ///< first line of `--version`
  std::string flags;    ///< what every kernel is compiled with
  std::string problem;  ///< why it is not available
  bool gcc = false;     ///< GCC (precompiled headers are used)
};
/// Found once per process; the probe is saved under `cache_dir` for later processes.
const HostCompiler& host_compiler(const std::string& cache_dir = "");

/// Hash of everything besides the source that a compiled kernel depends on: the compiler, its
/// flags, the CPU and the header library.
std::string host_environment(const std::string& include_dir, const std::string& cache_dir);

/// Result of compile_host: where the shared object is and what producing it cost.
struct HostBinary {
  std::string path;
  std::string key;          ///< hash of source, compiler, flags and header library
  bool cache_hit = false;   ///< found on disk (no compiler run)
  double compile_seconds = 0;
};

/// Compiles `source` into `<cache_dir>/tile/<key>.so` unless it is already there. The source
/// includes headers from `include_dir` (device_include). Throws RuntimeError-like
/// std::runtime_error with the compiler's output on failure.
HostBinary compile_host(const std::string& source, const std::string& include_dir, const std::string& cache_dir);

/// A loaded kernel: its entry and how to run a grid of blocks with it.
class HostKernel {
 public:
  /// Loads (once per process and path) the shared object at `path`.
  static std::shared_ptr<HostKernel> load(const std::string& path);
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
