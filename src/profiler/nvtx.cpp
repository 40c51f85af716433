// nvtx.cpp — NVTX push/pop ranges through libnvToolsExt, dlopened when the Python side turns the
// markers on (no NVTX header or library is needed to build cupric).
#include <dlfcn.h>

#include <atomic>
#include <mutex>

#include "cupric/profiler.hpp"

namespace cupric::profiler {

namespace {
using PushFn = int (*)(const char*);
using PopFn = int (*)();
std::atomic<PushFn> g_push{nullptr};
std::atomic<PopFn> g_pop{nullptr};
std::mutex g_load_mutex;
}  // namespace

bool nvtx_load(const std::string& path) {
  std::lock_guard lock(g_load_mutex);
  if (g_push.load() && g_pop.load()) return true;
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) return false;
  auto push = reinterpret_cast<PushFn>(dlsym(lib, "nvtxRangePushA"));
  auto pop = reinterpret_cast<PopFn>(dlsym(lib, "nvtxRangePop"));
  if (!push || !pop) {
    dlclose(lib);
    return false;
  }
  g_pop.store(pop);
  g_push.store(push);
  return true;  // the library stays loaded for the process's life: ranges may be open
}

void nvtx_push(const char* name) {
  if (PushFn push = g_push.load(std::memory_order_relaxed)) push(name);
}

void nvtx_pop() {
  if (PopFn pop = g_pop.load(std::memory_order_relaxed)) pop();
}

}  // namespace cupric::profiler
