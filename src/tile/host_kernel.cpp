// host_kernel.cpp — loads compiled CPU kernels and runs their blocks on the CPU thread pool. A
// kernel is loaded from bytes the compile cache verified, copied into a sealed memory file, so
// nothing can change the code between the check and dlopen.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "cupric/errors.hpp"
#include "cupric/runtime/cache_files.hpp"
#include "cupric/runtime/compile_cache.hpp"
#include "cupric/thread_pool.hpp"
#include "cupric/tile_compiler/host_compiler.hpp"

namespace cupric::tile {

using runtime::ArtifactKind;
using runtime::CompileCache;

namespace {

/// dlopen of a shared object given as bytes: a sealed memfd on Linux (executable even where /tmp is
/// mounted noexec), else a file in this process's private folder. Either is opened through a name
/// of its own in that folder, removed once loaded: glibc takes a name it loaded before for that
/// library, and /proc/self/fd/N names are reused. Null with `error` on failure.
void* open_library(const std::string& bytes, const std::string& key, std::string& error) {
  const std::string name = cat(host_work_directory(), "/", key, ".so");
  void* handle = nullptr;
  ::unlink(name.c_str());
#if defined(__linux__) && defined(MFD_ALLOW_SEALING)
  int fd = ::memfd_create(cat("cupric-tile-", key.substr(0, 16)).c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd >= 0) {
    if (runtime::write_all(fd, bytes) && ::symlink(cat("/proc/self/fd/", fd).c_str(), name.c_str()) == 0) {
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
      handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle) error = ::dlerror();
      ::unlink(name.c_str());
    }
    ::close(fd);  // the mapping keeps the code
    if (handle) return handle;
  }
#endif
  if (int e = runtime::write_new_file(name, bytes)) {
    error = cat("cannot write ", name, ": ", std::strerror(e));
    return nullptr;
  }
  handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) error = ::dlerror();
  ::unlink(name.c_str());
  return handle;
}

std::mutex g_loaded_mutex;
// key -> kernel; never unloaded (launch plans and other threads may hold raw entry points)
auto* g_loaded = new std::unordered_map<std::string, std::shared_ptr<HostKernel>>();

}  // namespace

std::shared_ptr<HostKernel> HostKernel::load(const std::string& key) {
  {
    std::lock_guard<std::mutex> lock(g_loaded_mutex);
    auto it = g_loaded->find(key);
    if (it != g_loaded->end()) return it->second;
  }
  CompileCache& cache = CompileCache::global();
  auto bytes = cache.get(ArtifactKind::shared_object, key);
  if (!bytes) return nullptr;
  try {
    return load(key, *bytes);
  } catch (const std::runtime_error& e) {  // verified, yet not loadable here: compile it again
    cache.remove(ArtifactKind::shared_object, key);
    CompileCache::warn(cat(e.what(), "; the compile cache entry was deleted and the kernel will be compiled again"));
    return nullptr;
  }
}

std::shared_ptr<HostKernel> HostKernel::load(const std::string& key, const std::string& bytes) {
  std::lock_guard<std::mutex> lock(g_loaded_mutex);
  auto it = g_loaded->find(key);
  if (it != g_loaded->end()) return it->second;
  std::string error;
  void* handle = open_library(bytes, key, error);
  if (!handle) throw std::runtime_error(cat("cupric.tile: cannot load the compiled kernel ", key, ": ", error));
  void* sym = ::dlsym(handle, "cupric_tile_entry");
  if (!sym) {
    ::dlclose(handle);
    throw std::runtime_error(cat("cupric.tile: the compiled kernel ", key, " has no cupric_tile_entry"));
  }
  std::shared_ptr<HostKernel> k(new HostKernel());
  k->handle_ = handle;
  k->entry_ = reinterpret_cast<cupric_tile_entry_fn>(sym);
  return (*g_loaded)[key] = k;
}

HostKernel::~HostKernel() {
  if (handle_) ::dlclose(handle_);
}

void HostKernel::launch(const std::int64_t grid[3], const std::vector<void*>& args, cupric_tile_status* status) const {
  const long long g[3] = {grid[0], grid[1], grid[2]};
  const std::int64_t total = grid[0] * grid[1] * grid[2];
  if (total <= 0) return;
  cpu::parallel_for(total, 1,
                    [&](std::int64_t begin, std::int64_t end) { entry_(args.data(), g, begin, end, status); });
}

}  // namespace cupric::tile
