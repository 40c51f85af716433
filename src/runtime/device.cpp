// device.cpp — per-device state (primary context, properties) and the thread's current device.
#include "cupric/runtime/device.hpp"

#include <memory>
#include <mutex>
#include <vector>

#include "cupric/cuda/errors.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/errors.hpp"

namespace cupric::runtime {
using namespace cupric::cuda;

namespace {

struct DeviceState {
  std::once_flag context_once, properties_once;
  CUdevice handle = 0;
  CUcontext context = nullptr;
  DeviceProperties properties;
};

struct Devices {
  int count = 0;
  std::unique_ptr<DeviceState[]> states;
};

const Devices& devices() {
  static const Devices all = [] {
    const DriverApi& d = driver();
    Devices out;
    check(d.DeviceGetCount(&out.count), "cuDeviceGetCount");
    out.states = std::make_unique<DeviceState[]>(static_cast<std::size_t>(out.count));
    for (int i = 0; i < out.count; ++i) check(d.DeviceGet(&out.states[i].handle, i), "cuDeviceGet");
    return out;
  }();
  return all;
}

DeviceState& state(int index) {
  const Devices& all = devices();
  if (index < 0 || index >= all.count)
    throw ValueError(cat("CUDA device ", index, " does not exist: this machine has ", all.count,
                         all.count == 1 ? " device" : " devices"));
  return all.states[index];
}

thread_local int current_device = 0;

int attr(const DriverApi& d, CUdevice_attribute a, CUdevice dev) {
  int v = 0;
  check(d.DeviceGetAttribute(&v, a, dev), "cuDeviceGetAttribute");
  return v;
}

DeviceProperties query_properties(CUdevice dev) {
  const DriverApi& d = driver();
  DeviceProperties p;
  char name[256] = {};
  check(d.DeviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName");
  p.name = name;
  char bus[64] = {};
  if (d.DeviceGetPCIBusId(bus, sizeof bus - 1, dev) == CUDA_SUCCESS) p.pci_bus_id = bus;
  check(d.DeviceTotalMem(&p.total_memory, dev), "cuDeviceTotalMem");
  p.major = attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  p.minor = attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  p.arch = cat("sm_", p.major, p.minor);
  p.multiprocessor_count = attr(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  p.l2_cache_size = attr(d, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
  p.max_persisting_l2_cache_size = attr(d, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, dev);
  p.max_shared_memory_per_block = attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, dev);
  p.max_shared_memory_per_block_optin = attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
  p.max_shared_memory_per_multiprocessor = attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, dev);
  p.total_constant_memory = attr(d, CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, dev);
  p.clock_rate_khz = attr(d, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev);
  p.memory_clock_rate_khz = attr(d, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, dev);
  p.memory_bus_width = attr(d, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, dev);
  p.warp_size = attr(d, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev);
  p.max_threads_per_block = attr(d, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev);
  p.max_threads_per_multiprocessor = attr(d, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, dev);
  p.max_blocks_per_multiprocessor = attr(d, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, dev);
  p.max_registers_per_block = attr(d, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, dev);
  p.max_registers_per_multiprocessor = attr(d, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, dev);
  p.max_block_dim = {attr(d, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, dev),
                     attr(d, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, dev),
                     attr(d, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, dev)};
  p.max_grid_dim = {attr(d, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, dev), attr(d, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, dev),
                    attr(d, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, dev)};
  p.async_engine_count = attr(d, CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, dev);
  p.integrated = attr(d, CU_DEVICE_ATTRIBUTE_INTEGRATED, dev) != 0;
  p.managed_memory = attr(d, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, dev) != 0;
  p.concurrent_managed_access = attr(d, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev) != 0;
  p.cooperative_launch = attr(d, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, dev) != 0;
  p.cluster_launch = attr(d, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, dev) != 0;
  p.memory_pools_supported = attr(d, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev) != 0;
  p.ecc_enabled = attr(d, CU_DEVICE_ATTRIBUTE_ECC_ENABLED, dev) != 0;
  p.stream_priorities_supported = attr(d, CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED, dev) != 0;
  return p;
}

}  // namespace

Device::Device(int index) : index_(index) { state(index); }

int Device::count() { return devices().count; }

Device Device::current() { return Device(current_device); }

int Device::current_index() { return current_device; }

void Device::set_current(int index) {
  state(index);
  current_device = index;
}

CUdevice Device::handle() const { return state(index_).handle; }

CUcontext Device::context() const {
  DeviceState& s = state(index_);
  std::call_once(s.context_once, [&] {
    // Primary contexts are never released: kernels and pools of this device live until exit.
    check(driver().DevicePrimaryCtxRetain(&s.context, s.handle), "cuDevicePrimaryCtxRetain");
  });
  return s.context;
}

void Device::activate() const {
  CUcontext ctx = context();
  const DriverApi& d = driver();
  CUcontext now = nullptr;
  // Asking costs a thread-local read in the driver; another library may have switched it.
  if (d.CtxGetCurrent(&now) != CUDA_SUCCESS || now != ctx) check(d.CtxSetCurrent(ctx), "cuCtxSetCurrent");
}

void activate_device(int device) { Device(device).activate(); }

const DeviceProperties& Device::properties() const {
  DeviceState& s = state(index_);
  std::call_once(s.properties_once, [&] { s.properties = query_properties(s.handle); });
  return s.properties;
}

int Device::attribute(CUdevice_attribute a) const { return attr(driver(), a, handle()); }

void Device::synchronize() const {
  activate();
  check(driver().CtxSynchronize(), "cuCtxSynchronize");
}

std::pair<std::size_t, std::size_t> Device::memory_info() const {
  activate();
  std::size_t free = 0, total = 0;
  check(driver().MemGetInfo(&free, &total), "cuMemGetInfo");
  return {free, total};
}

std::pair<int, int> Device::stream_priority_range() const {
  activate();
  int least = 0, greatest = 0;
  check(driver().CtxGetStreamPriorityRange(&least, &greatest), "cuCtxGetStreamPriorityRange");
  return {least, greatest};
}

}  // namespace cupric::runtime
