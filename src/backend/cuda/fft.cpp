// fft.cpp — cuFFT plans for cuda:N arrays (cupric/cuda/fft.hpp): views described to cuFFT as its
// advanced data layout (embeds, stride, distance) where they can be, plans made with
// cufftMakePlanMany64 and kept in a per-device LRU cache, executed on the current stream with a
// workspace taken from the stream-ordered pool for the call.
#include "cupric/cuda/fft.hpp"

#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "cuda_backend.hpp"
#include "cupric/cuda/errors.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/device.hpp"
#include "library_call.hpp"

namespace cupric::cuda_backend {
namespace {

const char* fft_status_name(int status) {
  static const char* names[] = {"CUFFT_SUCCESS",
                                "CUFFT_INVALID_PLAN",
                                "CUFFT_ALLOC_FAILED",
                                "CUFFT_INVALID_TYPE",
                                "CUFFT_INVALID_VALUE",
                                "CUFFT_INTERNAL_ERROR",
                                "CUFFT_EXEC_FAILED",
                                "CUFFT_SETUP_FAILED",
                                "CUFFT_INVALID_SIZE",
                                "CUFFT_UNALIGNED_DATA",
                                "CUFFT_INCOMPLETE_PARAMETER_LIST",
                                "CUFFT_INVALID_DEVICE",
                                "CUFFT_PARSE_ERROR",
                                "CUFFT_NO_WORKSPACE",
                                "CUFFT_NOT_IMPLEMENTED",
                                "CUFFT_LICENSE_ERROR",
                                "CUFFT_NOT_SUPPORTED"};
  return status >= 0 && status < static_cast<int>(std::size(names)) ? names[status] : "CUFFT_UNKNOWN_ERROR";
}

constexpr int kFftAllocFailed = 2;

void check_fft(int status, const char* what) {
  if (status == cuda::CUFFT_SUCCESS) return;
  if (status == kFftAllocFailed)
    throw cuda::OutOfMemoryError(cat(what, " failed: CUFFT_ALLOC_FAILED (GPU memory exhausted)"), what, 0, 0);
  throw cuda::CudaError(cat(what, " failed: ", fft_status_name(status), " (", status, ")"), status,
                        fft_status_name(status), what, false);
}

/// How cuFFT reads one operand: the advanced layout, element x of batch b at
/// b * dist + ((x0 * embed[1] + x1) * embed[2] + x2) * stride (in elements).
struct FftLayout {
  long long embed[3] = {1, 1, 1};
  long long stride = 1, dist = 1;
};

/// The layout of `a`'s last `rank` axes and its batch, or false when cuFFT cannot read the view as
/// it is (negative strides, batch axes that do not merge, rows that overlap, or a start that is not
/// aligned to the complex element: cuFFT answered CUFFT_INVALID_VALUE for the real view x[1:, 3:]
/// of a float32 matrix, 4-byte aligned, on an H200).
bool describe(const Array& a, int rank, FftLayout& out) {
  const bool real = a.dtype() == DType::float32 || a.dtype() == DType::float64;
  const auto complex_bytes = static_cast<std::uintptr_t>(a.itemsize() * (real ? 2 : 1));
  if (reinterpret_cast<std::uintptr_t>(a.data()) % complex_bytes != 0) return false;
  const int nd = a.ndim(), first = nd - rank;
  const auto& shape = a.shape();
  const auto& st = a.strides();
  out.stride = shape[nd - 1] > 1 ? st[nd - 1] : 1;
  if (out.stride < 1) return false;
  out.embed[0] = shape[first];
  long long inner = out.stride;  // the stride axis j must have
  for (int j = nd - 1; j > first; --j) {
    const long long step = shape[j - 1] > 1 ? st[j - 1] : inner * shape[j];
    if (step <= 0 || step % inner != 0) return false;
    const long long embed = step / inner;
    if (embed < shape[j]) return false;
    out.embed[j - first] = embed;
    inner = step;
  }
  long long extent = 1;  // the batch: its axes of extent > 1 must merge into one progression
  out.dist = inner * shape[first];
  bool seen = false;
  for (int j = first - 1; j >= 0; --j) {
    if (shape[j] == 1) continue;
    if (!seen) {
      if (st[j] < 1) return false;
      out.dist = st[j];
      seen = true;
    } else if (st[j] != out.dist * extent) {
      return false;
    }
    extent *= shape[j];
  }
  return true;
}

/// A plan and what it needs while it lives: cuFFT may read the caller-info arrays until destroyed.
struct FftPlan {
  int device = 0;
  cuda::cufftHandle handle = 0;
  std::size_t workspace = 0;
  std::string key, description;
  std::vector<void*> caller_info;
  std::mutex mutex;  // stream, work area and launch of one handle from two threads
  ~FftPlan() {
    if (!handle) return;
    runtime::activate_device(device);
    cuda::cufft().Destroy(handle);
  }
};

struct FftPlanCache {
  std::mutex mutex;
  std::list<std::shared_ptr<FftPlan>> lru;  // front: most recently used
  std::unordered_map<std::string, std::list<std::shared_ptr<FftPlan>>::iterator> index;
  std::int64_t max_size = 16, max_memsize = -1;  // CuPy's defaults
  std::size_t memsize = 0;
  std::uint64_t hits = 0, misses = 0;

  bool over() const {
    return (max_size >= 0 && static_cast<std::int64_t>(lru.size()) > max_size) ||
           (max_memsize >= 0 && static_cast<std::int64_t>(memsize) > max_memsize);
  }
  /// Moves least recently used plans into `dropped` while a bound is exceeded (the caller holds
  /// the lock and lets `dropped` go after releasing it: destroying a plan waits for the GPU).
  void evict(std::list<std::shared_ptr<FftPlan>>& dropped) {
    while (!lru.empty() && over()) {
      memsize -= lru.back()->workspace;
      index.erase(lru.back()->key);
      dropped.splice(dropped.begin(), lru, std::prev(lru.end()));
    }
  }
};

/// The caches live as long as the process (never destroyed: plans must not outlive CUDA at exit).
FftPlanCache& cache_of(int device) {
  static std::mutex mutex;
  static auto* caches = new std::map<int, FftPlanCache>();
  std::lock_guard lock(mutex);
  return (*caches)[device];
}

struct PlanRequest {
  int type = 0;
  int rank = 1;
  long long n[3] = {1, 1, 1}, batch = 1;
  FftLayout in, out;
  const std::vector<FftCallback>* callbacks = nullptr;

  std::string key() const {
    std::string k;
    const long long words[] = {type,
                               rank,
                               n[0],
                               n[1],
                               n[2],
                               batch,
                               in.embed[0],
                               in.embed[1],
                               in.embed[2],
                               in.stride,
                               in.dist,
                               out.embed[0],
                               out.embed[1],
                               out.embed[2],
                               out.stride,
                               out.dist,
                               static_cast<long long>(callbacks->size())};
    k.append(reinterpret_cast<const char*>(words), sizeof words);
    for (const auto& cb : *callbacks) {
      const long long head[] = {cb.type, static_cast<long long>(cb.caller_info),
                                static_cast<long long>(cb.symbol.size()), static_cast<long long>(cb.ltoir.size())};
      k.append(reinterpret_cast<const char*>(head), sizeof head);
      k += cb.symbol;
      k += cb.ltoir;
    }
    return k;
  }
  std::string describe() const {
    static const std::map<int, const char*> names = {
        {cuda::CUFFT_C2C, "C2C complex64"}, {cuda::CUFFT_Z2Z, "Z2Z complex128"}, {cuda::CUFFT_R2C, "R2C float32"},
        {cuda::CUFFT_D2Z, "D2Z float64"},   {cuda::CUFFT_C2R, "C2R complex64"},  {cuda::CUFFT_Z2D, "Z2D complex128"}};
    std::ostringstream s;
    s << names.at(type) << " n=(";
    for (int i = 0; i < rank; ++i) s << n[i] << (rank == 1 ? "," : i + 1 < rank ? ", " : "");
    s << ") batch=" << batch << " in(stride=" << in.stride << ", dist=" << in.dist << ") out(stride=" << out.stride
      << ", dist=" << out.dist << ")";
    if (!callbacks->empty()) s << " callbacks=" << callbacks->size();
    return s.str();
  }
};

/// A new plan. JIT LTO callbacks are attached here, between cufftCreate and cufftMakePlanMany64,
/// the one moment cuFFT takes them: this is the seam for the callbacks that cupric.fft._callbacks
/// compiles (the caller passes them to fft_execute, and they are part of the plan's cache key).
std::shared_ptr<FftPlan> make_plan(int device, const PlanRequest& r, std::string key) {
  const auto& api = cuda::cufft();
  auto plan = std::make_shared<FftPlan>();
  plan->device = device;
  plan->key = std::move(key);
  plan->description = r.describe();
  runtime::activate_device(device);
  check_fft(api.Create(&plan->handle), "cufftCreate");
  check_fft(api.SetAutoAllocation(plan->handle, 0), "cufftSetAutoAllocation");
  plan->caller_info.reserve(r.callbacks->size());
  for (const auto& cb : *r.callbacks) {
    if (!api.set_jit_callback)
      throw NotImplementedError(cat("this cuFFT (", api.major, ".", api.minor,
                                    ") has no JIT LTO callbacks (cufftXtSetJITCallback): ",
                                    "FFT callbacks need cuFFT 11.4 (CUDA 12.8) or newer: pip install -U nvidia-cufft"));
    plan->caller_info.push_back(reinterpret_cast<void*>(cb.caller_info));
    check_fft(api.set_jit_callback(plan->handle, cb.symbol.c_str(), cb.ltoir.data(), cb.ltoir.size(), cb.type,
                                   cb.caller_info ? &plan->caller_info.back() : nullptr),
              "cufftXtSetJITCallback");
  }
  long long n[3], inembed[3], onembed[3];
  for (int i = 0; i < 3; ++i) n[i] = r.n[i], inembed[i] = r.in.embed[i], onembed[i] = r.out.embed[i];
  check_fft(api.MakePlanMany64(plan->handle, r.rank, n, inembed, r.in.stride, r.in.dist, onembed, r.out.stride,
                               r.out.dist, r.type, r.batch, &plan->workspace),
            "cufftMakePlanMany64");
  return plan;
}

/// The cached plan for `r`, made (and cached, evicting as the bounds say) on a miss.
std::shared_ptr<FftPlan> plan_for(int device, const PlanRequest& r) {
  FftPlanCache& cache = cache_of(device);
  std::string key = r.key();
  {
    std::lock_guard lock(cache.mutex);
    auto it = cache.index.find(key);
    if (it != cache.index.end()) {
      ++cache.hits;
      cache.lru.splice(cache.lru.begin(), cache.lru, it->second);
      return cache.lru.front();
    }
    ++cache.misses;
  }
  std::shared_ptr<FftPlan> plan;
  try {
    plan = make_plan(device, r, key);
  } catch (const cuda::OutOfMemoryError&) {  // cached plans hold GPU memory: free them, try once more
    clear_fft_plan_cache(device);
    plan = make_plan(device, r, key);
  }
  std::list<std::shared_ptr<FftPlan>> dropped;
  std::lock_guard lock(cache.mutex);
  if (cache.index.count(key)) return plan;  // another thread made the same plan meanwhile
  cache.lru.push_front(plan);
  cache.index[key] = cache.lru.begin();
  cache.memsize += plan->workspace;
  cache.evict(dropped);
  return plan;
}

int plan_type(FftKind kind, DType real_or_complex) {
  const bool dbl = real_or_complex == DType::float64 || real_or_complex == DType::complex128;
  switch (kind) {
    case FftKind::c2c: return dbl ? cuda::CUFFT_Z2Z : cuda::CUFFT_C2C;
    case FftKind::r2c: return dbl ? cuda::CUFFT_D2Z : cuda::CUFFT_R2C;
    case FftKind::c2r: return dbl ? cuda::CUFFT_Z2D : cuda::CUFFT_C2R;
  }
  return 0;
}

/// The dtype pairs and shapes cuFFT can take; everything NumPy-shaped was decided above.
void check_operands(const Array& in, const Array& out, int rank, FftKind kind) {
  if (in.device().is_cpu() || in.device() != out.device())
    throw ValueError(
        cat("fft_execute: both operands must be on one GPU, got ", in.device().str(), " and ", out.device().str()));
  if (rank < 1 || rank > 3 || in.ndim() < rank || in.ndim() != out.ndim())
    throw ValueError(cat("fft_execute: rank ", rank, " for operands of ", in.ndim(), " and ", out.ndim(),
                         " dimensions (cuFFT transforms 1 to 3 trailing axes)"));
  const DType ti = in.dtype(), to = out.dtype();
  const bool single = kind == FftKind::r2c ? ti == DType::float32 : ti == DType::complex64;
  const bool ok =
      kind == FftKind::c2c ? (ti == DType::complex64 || ti == DType::complex128) && to == ti
      : kind == FftKind::r2c
          ? (ti == DType::float32 || ti == DType::float64) && to == (single ? DType::complex64 : DType::complex128)
          : (ti == DType::complex64 || ti == DType::complex128) && to == (single ? DType::float32 : DType::float64);
  if (!ok) throw TypeError(cat("fft_execute: no cuFFT transform from ", name(ti), " to ", name(to)));
  if (!out.is_c_contiguous()) throw ValueError("fft_execute: out must be C-contiguous");
  for (int d = 0; d < in.ndim(); ++d) {
    const std::int64_t a = in.shape()[d], b = out.shape()[d];
    const bool last = d == in.ndim() - 1;
    const bool fits = !last || kind == FftKind::c2c ? a == b : kind == FftKind::r2c ? b == a / 2 + 1 : a == b / 2 + 1;
    if (!fits)
      throw ValueError(cat("fft_execute: shapes ", shape_str(in.shape()), " and ", shape_str(out.shape()),
                           " do not match a ",
                           kind == FftKind::c2c   ? "C2C"
                           : kind == FftKind::r2c ? "R2C"
                                                  : "C2R",
                           " transform"));
  }
}

/// The cufftExec routine run_plan calls for a transform type (the profiler's record names it).
const char* exec_name(int type) {
  switch (type) {
    case cuda::CUFFT_C2C: return "cufftExecC2C";
    case cuda::CUFFT_Z2Z: return "cufftExecZ2Z";
    case cuda::CUFFT_R2C: return "cufftExecR2C";
    case cuda::CUFFT_D2Z: return "cufftExecD2Z";
    case cuda::CUFFT_C2R: return "cufftExecC2R";
    default: return "cufftExecZ2D";
  }
}

cuda::cufftResult run_plan(const cuda::CufftApi& api, cuda::cufftHandle h, int type, void* in, void* out,
                           bool forward) {
  const int dir = forward ? cuda::CUFFT_FORWARD : cuda::CUFFT_INVERSE;
  switch (type) {
    case cuda::CUFFT_C2C: return api.ExecC2C(h, in, out, dir);
    case cuda::CUFFT_Z2Z: return api.ExecZ2Z(h, in, out, dir);
    case cuda::CUFFT_R2C: return api.ExecR2C(h, in, out);
    case cuda::CUFFT_D2Z: return api.ExecD2Z(h, in, out);
    case cuda::CUFFT_C2R: return api.ExecC2R(h, in, out);
    default: return api.ExecZ2D(h, in, out);
  }
}

}  // namespace

void fft_execute(const Array& in, const Array& out, int rank, FftKind kind, bool forward,
                 const std::vector<FftCallback>& callbacks, bool input_is_scratch) {
  check_operands(in, out, rank, kind);
  if (out.size() == 0) return;
  auto& backend = static_cast<CudaBackend&>(backend_for(out.device()));
  const int device = backend.index();
  PlanRequest r;
  r.type = plan_type(kind, in.dtype());
  r.rank = rank;
  r.callbacks = &callbacks;
  const Array& logical = kind == FftKind::c2r ? out : in;  // the real side holds the transform's lengths
  for (int i = 0; i < rank; ++i) r.n[i] = logical.shape()[logical.ndim() - rank + i];
  for (int d = 0; d < in.ndim() - rank; ++d) r.batch *= in.shape()[d];
  Array src = in;
  if ((kind == FftKind::c2r && !input_is_scratch) || !describe(in, rank, r.in)) {
    src = Array::empty(in.shape(), in.dtype(), in.device());  // cuFFT's C2R overwrites its input
    backend.cast(elementwise_plan({&in, &src}, in.shape()));
    describe(src, rank, r.in);
  }
  describe(out, rank, r.out);
  std::shared_ptr<FftPlan> plan = plan_for(device, r);
  const auto& api = cuda::cufft();
  runtime::activate_device(device);
  const cuda::CUstream stream = runtime::Stream::current(device).handle();
  Array workspace;
  if (plan->workspace)
    workspace = Array::empty({static_cast<std::int64_t>(plan->workspace)}, DType::uint8, out.device());
  std::lock_guard lock(plan->mutex);
  check_fft(api.SetStream(plan->handle, stream), "cufftSetStream");
  if (workspace.defined()) {
    check_fft(api.SetWorkArea(plan->handle, workspace.data()), "cufftSetWorkArea");
    backend.note_write(workspace);  // freed after this stream's transform, not before
  }
  LibraryCall call("cuFFT", exec_name(r.type), device, runtime::Stream::current(device));
  call.describe([&] { return cat(forward ? "forward " : "inverse ", shape_str(logical.shape()), " rank ", rank); });
  check_fft(run_plan(api, plan->handle, r.type, src.data(), out.data(), forward), "cufftExec");
  backend.note_write(out);
  if (kind == FftKind::c2r) backend.note_write(src);
}

FftPlanCacheInfo fft_plan_cache_info(int device) {
  FftPlanCache& cache = cache_of(device);
  std::lock_guard lock(cache.mutex);
  FftPlanCacheInfo info;
  info.device = device;
  info.max_size = cache.max_size;
  info.max_memsize = cache.max_memsize;
  info.size = cache.lru.size();
  info.memsize = cache.memsize;
  info.hits = cache.hits;
  info.misses = cache.misses;
  for (const auto& p : cache.lru) info.entries.push_back({p->description, p->workspace});
  return info;
}

void set_fft_plan_cache_limits(int device, std::int64_t max_size, std::int64_t max_memsize) {
  FftPlanCache& cache = cache_of(device);
  std::list<std::shared_ptr<FftPlan>> dropped;  // destroyed after the lock is released
  std::lock_guard lock(cache.mutex);
  cache.max_size = max_size < 0 ? -1 : max_size;
  cache.max_memsize = max_memsize < 0 ? -1 : max_memsize;
  cache.evict(dropped);
}

void clear_fft_plan_cache(int device) {
  FftPlanCache& cache = cache_of(device);
  std::list<std::shared_ptr<FftPlan>> dropped;
  {
    std::lock_guard lock(cache.mutex);
    dropped.swap(cache.lru);
    cache.index.clear();
    cache.memsize = 0;
  }
}

}  // namespace cupric::cuda_backend
