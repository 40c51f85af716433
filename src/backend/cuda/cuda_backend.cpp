// cuda_backend.cpp — CudaBackend: memory from the device's stream-ordered pool on the current
// stream, transfers, the per-device kernel cache (render -> NVRTC through the compile cache ->
// loaded kernel) with its lock-free fast path for maps, launch helpers, geometry packing, and
// registration with the array layer. The op families are in their own files (cuda_backend.hpp).
#include "cuda_backend.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <vector>

#include "cupric/cuda/errors.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/device.hpp"
#include "cupric/runtime/device_timer.hpp"
#include "cupric/runtime/memory.hpp"
#include "cupric/runtime/stream.hpp"
#include "cupric/runtime/compile_cache.hpp"

namespace cupric::cuda_backend {
using runtime::Stream;

// ---- geometry ------------------------------------------------------------------------------

void Geometry::simplify() {
  const std::size_t nop = strides.size();
  SmallVector<int, kInlineDims> dims;
  for (int d = 0; d < ndim(); ++d)
    if (shape[d] != 1) dims.push_back(d);
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) {
    shape = {0};
    for (auto& s : strides) s = {0};
    return;
  }
  // outer-to-inner by the first operand's stride (stable: ties keep C order)
  std::stable_sort(dims.begin(), dims.end(),
                   [&](int a, int b) { return std::llabs(strides[0][a]) > std::llabs(strides[0][b]); });
  Shape out_shape;
  OperandVector<Strides> out(nop);
  for (int d : dims) {
    bool merge = !out_shape.empty();
    for (std::size_t op = 0; merge && op < nop; ++op) merge = out[op].back() == strides[op][d] * shape[d];
    if (merge) {
      out_shape.back() *= shape[d];
      for (std::size_t op = 0; op < nop; ++op) out[op].back() = strides[op][d];
    } else {
      out_shape.push_back(shape[d]);
      for (std::size_t op = 0; op < nop; ++op) out[op].push_back(strides[op][d]);
    }
  }
  shape = std::move(out_shape);
  strides = std::move(out);
}

std::vector<std::int64_t> Geometry::pack(const char* what) const {
  std::vector<std::int64_t> g(packed_size());
  pack_into(g.data(), what);
  return g;
}

std::size_t Geometry::pack_into(std::int64_t* g, const char* what) const {
  if (ndim() > kMaxDims)
    throw NotImplementedError(
        cat(what, ": ", ndim(), " dimensions that cannot be merged (at most ", kMaxDims, " on CUDA)"));
  const std::size_t nop = strides.size();
  const std::size_t n = packed_size();
  std::fill(g, g + n, 0);
  g[0] = ndim();
  for (int d = 0; d < ndim(); ++d) {
    g[1 + d] = shape[d];
    for (std::size_t op = 0; op < nop; ++op) g[1 + kMaxDims + op * kMaxDims + d] = strides[op][d];
  }
  return n;
}

// ---- the kernel table ------------------------------------------------------------------------

void MapKey::too_long() { throw std::logic_error("cupric: a CUDA map key longer than 16 bytes"); }

namespace {
/// Each thread's recently used map kernels: a hit takes no lock. Backends are never destroyed,
/// and `serial` tells them apart.
struct CachedKernel {
  std::uint64_t serial = 0;  // 0: empty
  MapKey key;
  const runtime::Kernel* kernel = nullptr;
};
constexpr std::size_t kThreadCacheSlots = 64;
thread_local CachedKernel thread_kernels[kThreadCacheSlots];
}  // namespace

const runtime::Kernel* CudaBackend::cached(const MapKey& key) {
  CachedKernel& slot = thread_kernels[MapKeyHash{}(key) % kThreadCacheSlots];
  if (slot.serial == serial_ && slot.key == key) return slot.kernel;
  const runtime::Kernel* k = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (auto it = fast_.find(key); it != fast_.end()) k = it->second;
  }
  if (k) slot = {serial_, key, k};
  return k;
}

const runtime::Kernel* CudaBackend::remember(const MapKey& key, const runtime::Kernel* k) {
  std::lock_guard lock(mutex_);
  return fast_.emplace(key, k).first->second;
}

// ---- compiling -----------------------------------------------------------------------------

const std::string& device_include_dir() {
  static const std::string dir = [] {
    namespace fs = std::filesystem;
    auto ok = [](const fs::path& p) { return fs::exists(p / "cupric" / "convert.h"); };
    if (const char* env = std::getenv("CUPRIC_DEVICE_INCLUDE"); env && *env) return std::string(env);
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&device_include_dir), &info) && info.dli_fname) {
      fs::path lib = fs::path(info.dli_fname).parent_path();
      if (ok(lib / "device_include")) return (lib / "device_include").string();
    }
    // a build from the source tree: this file is src/backend/cuda/cuda_backend.cpp
    fs::path source = fs::path(__FILE__).parent_path().parent_path().parent_path().parent_path() / "device_include";
    if (ok(source)) return source.string();
    throw std::runtime_error(cat("cannot find cupric's device headers (cupric/convert.h) next to the library or at ",
                                 source.string(), "; set CUPRIC_DEVICE_INCLUDE"));
  }();
  return dir;
}

runtime::ProgramOptions kernel_options(const std::string& arch, const std::string& source) {
  runtime::ProgramOptions o;
  o.arch = arch;
  o.std = "c++20";
  o.include_paths = {device_include_dir()};
  // Elementwise maps (no tiled transpose) compile with NVRTC's fast-compile mode at its mildest
  // level (NVRTC 12.8+): the first call of a new elementwise kernel took 127 -> 39 ms on the H200.
  // Not the other kernels: under it the tiled transpose lost a quarter of its bandwidth there
  // (3.40 -> 2.51 TB/s) and reductions a few percent.
  const bool map = source.find("_t2(") == std::string::npos &&
                   (source.find("_vec(") != std::string::npos || source.find("_one(") != std::string::npos ||
                    source.find("_nd(") != std::string::npos);
  const auto& api = cuda::nvrtc();
  if (map && (api.major > 12 || (api.major == 12 && api.minor >= 8))) o.extra = {"-Ofc=min"};
  return o;
}

namespace {
/// A digest of the device headers array kernels can include (device_include/cupric, without the
/// tile library): NVRTC's cache key covers the source text, not what it includes, and the
/// kernel bodies live in these headers.
const std::string& device_headers_digest() {
  static const std::string digest = [] {
    namespace fs = std::filesystem;
    const fs::path root = fs::path(device_include_dir()) / "cupric";
    std::vector<std::string> files;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it); it.increment(ec)) {
      const fs::path rel = it->path().lexically_relative(root);
      if (it->is_directory(ec) && rel == "tile") it.disable_recursion_pending();
      if (it->is_regular_file(ec)) files.push_back(rel.generic_string());
    }
    std::sort(files.begin(), files.end());
    std::string all;
    for (const std::string& name : files) {
      std::ifstream in(root / name, std::ios::binary);
      all += cat(name, '\0', std::string(std::istreambuf_iterator<char>(in), {}), '\0');
    }
    return runtime::CompileCache::make_key({all});
  }();
  return digest;
}
}  // namespace

runtime::Program kernel_program(const std::string& source, const std::string& arch,
                                const std::vector<std::string>& extra) {
  runtime::ProgramOptions options = kernel_options(arch, source);
  options.extra.insert(options.extra.end(), extra.begin(), extra.end());
  return runtime::Program(cat("// cupric device headers ", device_headers_digest(), "\n", source),
                          "cupric_array_kernels.cu", std::move(options));
}

std::string kernel_arch(int device) {
  const auto& p = runtime::Device(device).properties();
  return cat("sm_", p.major, p.minor, p.major == 9 && p.minor == 0 ? "a" : "");
}

// ---- the backend ---------------------------------------------------------------------------

namespace {
std::atomic<std::uint64_t> next_serial{1};
}

CudaBackend::CudaBackend(int index) : index_(index), serial_(next_serial.fetch_add(1)) {
  runtime::Device dev(index);  // checks the index against the device count
  sm_count_ = std::max(1, dev.properties().multiprocessor_count);
  arch_ = kernel_arch(index);
}

void* CudaBackend::allocate(std::size_t nbytes) {
  std::size_t block = 0;
  bool graph = false;
  runtime::StreamState& s = runtime::current_stream_state(index_);
  auto p = runtime::MemoryPool::for_device(index_).allocate(std::max<std::size_t>(nbytes, 1), s, &block, &graph);
  if (graph) {
    std::lock_guard lock(mutex_);
    if (graph_owned_.insert(reinterpret_cast<void*>(p)).second) graph_owned_count_.fetch_add(1);
  }
  return reinterpret_cast<void*>(p);
}

std::uint64_t CudaBackend::current_queue() { return runtime::current_stream_state(index_).serial; }

void CudaBackend::note_write(Storage* storage) {
  if (storage) storage->set_last_writer(runtime::current_stream_state(index_).serial);
}

void CudaBackend::deallocate(void* ptr, std::size_t nbytes, std::uint64_t last_writer) {
  if (!cuda::loaded_driver()) return;
  try {
    runtime::StreamState& s = runtime::current_stream_state(index_);
    // The block is reused in the order of the stream it is freed on: that stream first waits for
    // the writer's work when another stream (perhaps dropped since) wrote it last.
    if (last_writer != s.serial && !s.capturing) runtime::wait_for_writer(s.handle, index_, last_writer);
    bool graph = false;
    if (graph_owned_count_.load(std::memory_order_acquire) > 0) {  // no lock while no graph owns a block
      std::lock_guard lock(mutex_);
      graph = graph_owned_.erase(ptr) > 0;
      if (graph) graph_owned_count_.fetch_sub(1);
    }
    const std::size_t block = runtime::MemoryPool::round_size(std::max<std::size_t>(nbytes, 1));
    runtime::MemoryPool::for_device(index_).deallocate(reinterpret_cast<cuda::CUdeviceptr>(ptr), block, s, graph);
  } catch (...) {  // a destructor cannot report; a sticky error surfaces at the next call
  }
}

namespace {
constexpr std::size_t kStageMin = std::size_t{1} << 20;  // below: the driver stages pageable copies itself
constexpr std::size_t kChunk = std::size_t{16} << 20;    // pinned staging blocks

/// A pinned staging block, returned to the pool (ordered on `stream`) when it goes out of scope.
struct Staging {
  Staging(std::size_t n, const Stream& s) : stream(s) { ptr = runtime::PinnedPool::global().allocate(n, &block); }
  ~Staging() {
    try {
      runtime::PinnedPool::global().deallocate(ptr, block, stream);
    } catch (...) {  // a sticky error is being reported already; the block is lost, not reused early
    }
  }
  Staging(const Staging&) = delete;
  void* ptr = nullptr;
  std::size_t block = 0;
  Stream stream;
};
}  // namespace

void CudaBackend::copy_from_host(void* dst, const void* src, std::size_t nbytes) {
  if (nbytes == 0) return;
  const Stream s = Stream::current(index_);
  runtime::activate_device(index_);
  const auto* from = static_cast<const char*>(src);
  const auto to = reinterpret_cast<cuda::CUdeviceptr>(dst);
  runtime::DeviceTimer timer;  // the profiler's transfer record: nothing unless it records
  timer.begin(s.handle(), index_, s.is_capturing());
  // large copies go through pinned blocks: the host returns without waiting for queued work
  // (a pageable copy would), and each block is reused once its DMA has run
  const bool staged = nbytes >= kStageMin && !s.is_capturing();
  for (std::size_t off = 0; off < nbytes; off += staged ? kChunk : nbytes) {
    const std::size_t len = staged ? std::min(kChunk, nbytes - off) : nbytes;
    cuda::CUresult rc;
    if (staged) {
      Staging block(len, s);
      std::memcpy(block.ptr, from + off, len);
      rc = cuda::driver().MemcpyHtoDAsync(to + off, block.ptr, len, s.handle());
    } else {
      rc = cuda::driver().MemcpyHtoDAsync(to + off, from + off, len, s.handle());
    }
    if (rc != cuda::CUDA_SUCCESS) s.synchronize();  // a sticky error: report the kernel that caused it
    cuda::check(rc, "cuMemcpyHtoDAsync");
  }
  timer.end(profiler::EventKind::transfer, "copy HtoD", "HtoD", static_cast<double>(nbytes), s.serial());
}

void CudaBackend::copy_to_host(void* dst, const void* src, std::size_t nbytes) {
  if (nbytes == 0) return;
  const Stream s = Stream::current(index_);
  runtime::activate_device(index_);
  auto* to = static_cast<char*>(dst);
  const auto from = reinterpret_cast<cuda::CUdeviceptr>(src);
  runtime::DeviceTimer timer;  // the profiler's transfer record: nothing unless it records
  timer.begin(s.handle(), index_, s.is_capturing());
  auto done = [&] {
    timer.end(profiler::EventKind::transfer, "copy DtoH", "DtoH", static_cast<double>(nbytes), s.serial());
  };
  auto fail = [&](cuda::CUresult rc) {
    if (rc == cuda::CUDA_SUCCESS) return;
    s.synchronize();  // a sticky error: report the kernel that caused it
    cuda::check(rc, "cuMemcpyDtoHAsync");
  };
  if (nbytes < kStageMin || s.is_capturing()) {
    fail(cuda::driver().MemcpyDtoHAsync(to, from, nbytes, s.handle()));
    done();
    s.synchronize();  // the host reads it next
    return;
  }
  // two pinned blocks in turn: chunk k+1 is in flight while chunk k is copied out on the host
  Staging blocks[2] = {Staging(kChunk, s), Staging(kChunk, s)};
  runtime::Event landed[2] = {runtime::Event::create(index_, false), runtime::Event::create(index_, false)};
  const std::size_t nchunks = (nbytes + kChunk - 1) / kChunk;
  auto length = [&](std::size_t k) { return std::min(kChunk, nbytes - k * kChunk); };
  auto issue = [&](std::size_t k) {
    fail(cuda::driver().MemcpyDtoHAsync(blocks[k % 2].ptr, from + k * kChunk, length(k), s.handle()));
    landed[k % 2].record(s);
  };
  issue(0);
  for (std::size_t k = 0; k < nchunks; ++k) {
    if (k + 1 < nchunks) issue(k + 1);
    landed[k % 2].synchronize();
    std::memcpy(to + k * kChunk, blocks[k % 2].ptr, length(k));
  }
  done();
}

void CudaBackend::synchronize() { Stream::current(index_).synchronize(); }

const runtime::Kernel& CudaBackend::kernel(const std::string& key, const std::string& name,
                                           const std::function<std::string()>& render) {
  std::string full = cat(key, "#", name);
  std::lock_guard lock(mutex_);
  if (auto it = kernels_.find(full); it != kernels_.end()) return it->second;
  auto mod = modules_.find(key);
  if (mod == modules_.end()) {
    // one program name for every array kernel, so `python -m cupric.cache warm` fills the same keys
    mod = modules_.emplace(key, kernel_program(render(), arch_).compile(runtime::CodeKind::cubin)).first;
  }
  return kernels_.emplace(std::move(full), mod->second.get_kernel(name, index_)).first->second;
}

void CudaBackend::launch(const runtime::Kernel& k, const runtime::LaunchConfig& config, runtime::ArgPacker& args) {
  runtime::StreamState& s = runtime::current_stream_state(index_);
  runtime::launch(s.handle, &s, config, k, args);
}

void CudaBackend::launch_grid(const runtime::Kernel& k, std::int64_t work, runtime::ArgPacker& args) {
  runtime::LaunchConfig c;
  const std::int64_t blocks = std::clamp<std::int64_t>((work + 255) / 256, 1, std::int64_t{sm_count_} * 8);
  c.grid = {static_cast<unsigned>(blocks), 1, 1};
  c.block = {256, 1, 1};
  launch(k, c, args);
}

void CudaBackend::launch_pass(const runtime::Kernel& k, std::int64_t work, int threads, runtime::ArgPacker& args) {
  runtime::LaunchConfig c;
  const std::int64_t blocks = std::clamp<std::int64_t>((work + threads - 1) / threads, 1, std::int64_t{0x7fffffff});
  c.grid = {static_cast<unsigned>(blocks), 1, 1};
  c.block = {static_cast<unsigned>(threads), 1, 1};
  launch(k, c, args);
}

// ---- registration --------------------------------------------------------------------------

std::unique_ptr<Backend> make_cuda_backend(int index) { return std::make_unique<CudaBackend>(index); }

void register_cuda_backend() { register_backend(Device::Type::cuda, &make_cuda_backend); }

}  // namespace cupric::cuda_backend

namespace cupric::detail {
/// Asked for by backend_for() when a cuda device is first used (src/array/backend_registry.cpp).
BackendFactory builtin_cuda_backend_factory() { return &cuda_backend::make_cuda_backend; }
}  // namespace cupric::detail
