// kernel.cpp — Kernel (attributes, occupancy, parameter sizes from the driver) and launch, the
// hot path: no allocation, one context check, one driver call.
#include "cupric/runtime/kernel.hpp"

#include <mutex>
#include <unordered_set>

#include "cupric/cuda/errors.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/device.hpp"
#include "cupric/runtime/device_timer.hpp"

namespace cupric::runtime {
using namespace cupric::cuda;

namespace {

const char* intern(const std::string& name) {
  static std::mutex mutex;
  static auto* names = new std::unordered_set<std::string>();  // never freed: read after faults
  std::lock_guard lock(mutex);
  return names->insert(name).first->c_str();
}

std::string last_kernels_context(CUresult) { return recent_launches_report(); }

std::string dims(const std::array<unsigned, 3>& d) { return cat("(", d[0], ", ", d[1], ", ", d[2], ")"); }

}  // namespace

struct Kernel::State {
  CUfunction function = nullptr;
  int device = 0;
  std::string name;
  const char* interned = nullptr;
  std::vector<std::uint32_t> param_sizes;
  bool sizes_known = false;
  std::shared_ptr<const void> owner;
};

Kernel::Kernel(CUfunction function, int device, std::string name, std::shared_ptr<const void> owner)
    : state_(std::make_shared<State>()) {
  static const bool hook_installed = [] {
    set_error_context_hook(&last_kernels_context);
    return true;
  }();
  (void)hook_installed;
  State& s = *state_;
  s.function = function;
  s.device = device;
  s.name = std::move(name);
  s.interned = intern(s.name);
  s.owner = std::move(owner);
  const DriverApi& d = driver();
  if (d.FuncGetParamInfo) {
    Device(device).activate();
    for (std::size_t i = 0;; ++i) {
      std::size_t offset = 0, size = 0;
      CUresult rc = d.FuncGetParamInfo(function, i, &offset, &size);
      if (rc != CUDA_SUCCESS) {
        s.sizes_known = i > 0 || rc == CUDA_ERROR_INVALID_VALUE;
        break;
      }
      s.param_sizes.push_back(static_cast<std::uint32_t>(size));
    }
  }
}

CUfunction Kernel::function() const { return state_->function; }
int Kernel::device() const { return state_->device; }
const std::string& Kernel::name() const { return state_->name; }
const char* Kernel::interned_name() const { return state_->interned; }
const std::vector<std::uint32_t>& Kernel::param_sizes() const { return state_->param_sizes; }
bool Kernel::param_sizes_known() const { return state_->sizes_known; }

int Kernel::attribute(CUfunction_attribute a) const {
  int v = 0;
  Device(device()).activate();
  check(driver().FuncGetAttribute(&v, a, function()), "cuFuncGetAttribute");
  return v;
}

void Kernel::set_attribute(CUfunction_attribute a, int value) const {
  Device(device()).activate();
  check(driver().FuncSetAttribute(function(), a, value), "cuFuncSetAttribute");
}

void Kernel::set_max_dynamic_shared_memory(int bytes) const {
  Device dev(device());
  int limit = dev.properties().max_shared_memory_per_block_optin - static_shared_memory();
  if (bytes < 0 || bytes > limit)
    throw ValueError(cat("kernel '", name(), "': ", bytes,
                         " bytes of dynamic shared memory exceed the device's limit of ", limit, " (",
                         dev.properties().max_shared_memory_per_block_optin, " opt-in per block minus ",
                         static_shared_memory(), " static)"));
  set_attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
}

int Kernel::occupancy(int block_size, std::size_t dynamic_shared_memory) const {
  if (block_size <= 0) throw ValueError(cat("occupancy: block size must be positive, got ", block_size));
  int blocks = 0;
  Device(device()).activate();
  check(driver().OccupancyMaxActiveBlocksPerMultiprocessor(&blocks, function(), block_size, dynamic_shared_memory),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  return blocks;
}

namespace {

[[noreturn]] void launch_failed(CUresult rc, const char* op, const LaunchConfig& c, const Kernel& k) {
  std::string hint;
  if ((rc == CUDA_ERROR_INVALID_VALUE || rc == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) && c.shared_memory > 48 * 1024)
    hint = cat("; more than 48 KiB of dynamic shared memory needs kernel.set_max_dynamic_shared_memory(",
               c.shared_memory, ") first");
  throw_driver_error(rc, op,
                     cat(" (kernel '", k.name(), "', grid ", dims(c.grid), ", block ", dims(c.block), ", ",
                         c.shared_memory, " bytes of dynamic shared memory", hint, ")"));
}

CUresult launch_extended(CUstream stream, const LaunchConfig& c, const Kernel& k, void** params, const char** op) {
  const DriverApi& d = driver();
  if (!d.LaunchKernelEx) {
    if (c.cluster[0] != 0) throw NotImplementedError("cluster launches need a CUDA 12.0 or newer driver");
    *op = "cuLaunchCooperativeKernel";
    return d.LaunchCooperativeKernel(k.function(), c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2],
                                     c.shared_memory, stream, params);
  }
  CUlaunchAttribute attrs[2] = {};
  unsigned n = 0;
  if (c.cooperative) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attrs[n++].value.cooperative = 1;
  }
  if (c.cluster[0] != 0) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[n].value.clusterDim.x = c.cluster[0];
    attrs[n].value.clusterDim.y = c.cluster[1];
    attrs[n++].value.clusterDim.z = c.cluster[2];
  }
  CUlaunchConfig config{c.grid[0],  c.grid[1],       c.grid[2], c.block[0], c.block[1],
                        c.block[2], c.shared_memory, stream,    attrs,      n};
  *op = "cuLaunchKernelEx";
  return d.LaunchKernelEx(&config, k.function(), params, nullptr);
}

}  // namespace

void launch(CUstream stream, StreamState* state, const LaunchConfig& c, const Kernel& k, ArgPacker& args) {
  args.finish();
  if (state && state->device != k.device())
    throw ValueError(cat("kernel '", k.name(), "' was loaded on device ", k.device(), " but the stream is on device ",
                         state->device));
  Device(k.device()).activate();
  DeviceTimer timer;  // device times for the profiler: nothing unless it records
  if (profiler::recording()) [[unlikely]]
    timer.begin(stream, k.device(), state && state->capturing);
  const DriverApi& d = driver();
  const char* op = "cuLaunchKernel";
  CUresult rc = c.uses_extended_launch()
                    ? launch_extended(stream, c, k, args.params(), &op)
                    : d.LaunchKernel(k.function(), c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2],
                                     c.shared_memory, stream, args.params(), nullptr);
  if (rc != CUDA_SUCCESS) [[unlikely]]
    launch_failed(rc, op, c, k);
  if (timer.active()) [[unlikely]]
    timer.end(profiler::EventKind::kernel, k.name(), cat("grid ", dims(c.grid), " block ", dims(c.block)), 0,
              state ? state->serial : 0);
  if (!state) return;
  const LaunchSiteHook site = launch_site_hook();
  state->launches.record(k.interned_name(), site ? site() : nullptr);  // for fault reports
  if (!state->used.load(std::memory_order_relaxed)) state->used.store(true, std::memory_order_relaxed);
}

void launch(const Stream& stream, const LaunchConfig& config, const Kernel& kernel, ArgPacker& args) {
  launch(stream.handle(), stream.state().get(), config, kernel, args);
}

}  // namespace cupric::runtime
