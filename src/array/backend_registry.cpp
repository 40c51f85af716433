// backend_registry.cpp — which Backend serves which device.
#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include "cupric/backend.hpp"
#include "cupric/errors.hpp"

namespace cupric {

namespace detail {
Backend& builtin_cpu_backend();                 // src/backend/cpu (linked into the same library)
BackendFactory builtin_cuda_backend_factory();  // src/backend/cuda (constructing it loads CUDA)
}  // namespace detail

namespace {
/// Backends already made, by CUDA device index, read without the registry's lock (every op on a
/// GPU asks for its backend at least twice).
constexpr int kFastDevices = 64;
std::atomic<Backend*> made[kFastDevices];

struct Registry {
  std::mutex mutex;
  std::map<Device::Type, BackendFactory> factories;
  std::map<int, std::unique_ptr<Backend>> cuda;
};
Registry& registry() {
  static Registry* r = new Registry();  // outlives arrays freed during interpreter shutdown
  return *r;
}
}  // namespace

void register_backend(Device::Type type, BackendFactory factory) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().factories[type] = factory;
}

void Backend::select_ranks(const Array&, const std::vector<std::int64_t>&, const Array&) {
  throw NotImplementedError(cat("selection by rank (radix select) is not implemented on ", device().str()));
}

void Backend::gather(const Array&, const Array&, const Array&) {
  throw NotImplementedError(cat("indexing with arrays (gather) is not implemented on ", device().str()));
}

void Backend::scatter(const Array&, const Array&, const Array&) {
  throw NotImplementedError(cat("assignment through index arrays (scatter) is not implemented on ", device().str()));
}

void Backend::matmul(const Array&, const Array&, const Array&) {
  throw NotImplementedError(cat("matrix products are not implemented on ", device().str()));
}

void Backend::lapack(const LapackCall&) {
  throw NotImplementedError(cat("linear algebra (factorisations, solvers) is not implemented on ", device().str()));
}

Backend& backend_for(Device device) {
  if (device.is_cpu()) return detail::builtin_cpu_backend();
  const bool fast = device.index >= 0 && device.index < kFastDevices;
  if (fast)
    if (Backend* b = made[device.index].load(std::memory_order_acquire)) return *b;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.cuda.find(device.index);
  if (it != r.cuda.end()) return *it->second;
  auto f = r.factories.find(device.type);
  if (f == r.factories.end() && device.type == Device::Type::cuda) {
    // lazily: importing cupric never loads CUDA
    f = r.factories.emplace(device.type, detail::builtin_cuda_backend_factory()).first;
  }
  if (f == r.factories.end())
    throw ValueError(cat("device ", device.str(), " is not available: this build of cupric has no CUDA backend"));
  auto [pos, _] = r.cuda.emplace(device.index, f->second(device.index));
  if (fast) made[device.index].store(pos->second.get(), std::memory_order_release);
  return *pos->second;
}

}  // namespace cupric
