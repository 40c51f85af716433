// cuda_backend.hpp — the Backend of cuda:N devices: stream-ordered pool memory, transfers, and
// kernels rendered from the op tables (render.hpp), compiled by NVRTC through the shared compile
// cache and kept per device by key, so that a cached launch costs a hash lookup and a packing.
// One file per op family implements its methods with its renderer: elementwise.cpp (ufunc maps,
// fills), cast.cpp, reduce.cpp, arg_reduce.cpp, scan.cpp, gather.cpp, random.cpp, arange.cpp,
// linalg.cpp (cuBLAS products), solver.cpp (cuSOLVER factorisations).
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cupric/backend.hpp"
#include "cupric/cuda/kernel_catalogue.hpp"  // device_include_dir, kernel_options, kernel_arch
#include "cupric/runtime/kernel.hpp"
#include "cupric/runtime/program.hpp"
#include "cupric/runtime/stream.hpp"
#include "render.hpp"

namespace cupric::cuda_backend {

/// Shape and per-operand byte strides of a strided kernel, simplified (size-1 dimensions dropped,
/// innermost = smallest stride of operand 0, contiguous neighbours merged).
struct Geometry {
  Shape shape;
  OperandVector<Strides> strides;  ///< [operand][dimension], bytes
  std::int64_t size() const { return shape_size(shape); }
  int ndim() const { return static_cast<int>(shape.size()); }
  void simplify();
  /// The bytes of the kernel's `Geo<N>` (i64 nd; i64 shape[16]; i64 st[N][16]).
  std::vector<std::int64_t> pack(const char* what) const;
  /// The same into `out` (room for packed_size() values), without allocating; returns the count.
  std::size_t pack_into(std::int64_t* out, const char* what) const;
  std::size_t packed_size() const { return 1 + kMaxDims + strides.size() * kMaxDims; }
};

/// The short binary key of a map kernel: family, op, dtypes, operand modes and path in at most 16
/// bytes, so that a cached launch hashes and compares two words and builds no string.
struct MapKey {
  std::uint64_t words[2] = {0, 0};
  int length = 0;
  /// Appends one byte (at most 16: the callers' layouts are fixed and fit; logic_error past that).
  MapKey& add(unsigned byte) {
    if (length >= 16) [[unlikely]]
      too_long();
    words[length / 8] |= static_cast<std::uint64_t>(byte & 0xffu) << (8 * (length % 8));
    ++length;
    return *this;
  }
  [[noreturn]] static void too_long();
  bool operator==(const MapKey& o) const {
    return words[0] == o.words[0] && words[1] == o.words[1] && length == o.length;
  }
};
struct MapKeyHash {
  std::size_t operator()(const MapKey& k) const noexcept {
    const std::uint64_t h = (k.words[0] ^ (k.words[1] * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull;
    return static_cast<std::size_t>(h ^ (h >> 31) ^ static_cast<std::uint64_t>(k.length));
  }
};

/// A non-owning reference to a callable that makes a map's spec (called on a kernel-cache miss).
class MapSpecFn {
 public:
  template <class F>
  MapSpecFn(const F& f)  // NOLINT: converts from any callable, as std::function does
      : object_(&f), call_([](const void* o) { return (*static_cast<const F*>(o))(); }) {}
  MapSpec operator()() const { return call_(object_); }

 private:
  const void* object_;
  MapSpec (*call_)(const void*);
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int index);
  Device device() const override { return Device::cuda(index_); }

  void* allocate(std::size_t nbytes) override;
  void deallocate(void* ptr, std::size_t nbytes, std::uint64_t last_writer) override;
  std::uint64_t current_queue() override;
  void copy_from_host(void* dst, const void* src, std::size_t nbytes) override;
  void copy_to_host(void* dst, const void* src, std::size_t nbytes) override;
  void synchronize() override;

  void elementwise(const Ufunc& uf, const UfuncLoop& loop, const ElementwisePlan& plan, bool has_where) override;
  void cast(const ElementwisePlan& plan) override;
  void fill(const Array& dst, const void* value) override;
  void reduce(ReduceOp op, const Array& in, const Array& out, const std::vector<int>& axes) override;
  void arg_reduce(ArgReduceOp op, const Array& in, const Array& out, int axis) override;
  void scan(ScanOp op, const Array& in, const Array& out, int axis) override;
  void arange(const Array& out, double start, double step) override;
  void arange_integer(const Array& out, std::uint64_t start, std::uint64_t step) override;
  void random(const RandomRequest& request, const Array& out) override;
  void sort(const Array& in, const Array& values, const Array& indices, bool descending) override;       // sort.cpp
  void search_sorted(const Array& sorted, const Array& needles, const Array& out, bool right) override;  // sort.cpp
  void select_ranks(const Array& in, const std::vector<std::int64_t>& ranks, const Array& out) override;
  std::int64_t unique_runs(const Array& sorted, const Array& perm, const Array& values, const Array& index,
                           const Array& ends, const Array& inverse, bool equal_nan) override;  // sort.cpp
  void gather(const Array& src, const Array& offsets, const Array& out) override;
  void scatter(const Array& dst, const Array& offsets, const Array& values) override;
  void matmul(const Array& a, const Array& b, const Array& out) override;           // linalg.cpp (cuBLAS)
  void lapack(const LapackCall& call) override;                                     // solver.cpp (cuSOLVER)
  std::shared_ptr<MatmulPlan> plan_matmul(const PlannedMatmul& operands) override;  // matmul_lt.cpp

  /// Kernel `name` of the module `key`; `render` makes its source on the first request.
  const runtime::Kernel& kernel(const std::string& key, const std::string& name,
                                const std::function<std::string()>& render);
  /// Launches a grid-stride kernel over `work` items (blocks of 256, a few waves at most).
  void launch_grid(const runtime::Kernel& k, std::int64_t work, runtime::ArgPacker& args);
  /// One pass of a map: `work` threads' worth (rounded up to whole blocks of `threads`), as many
  /// blocks as that takes (clamped to CUDA's 2^31 - 1: the map kernels stride over their grid).
  void launch_pass(const runtime::Kernel& k, std::int64_t work, int threads, runtime::ArgPacker& args);
  void launch(const runtime::Kernel& k, const runtime::LaunchConfig& config, runtime::ArgPacker& args);
  /// Notes that work queued now on the current stream writes `storage` (its last writer).
  void note_write(Storage* storage);
  void note_write(const Array& a) { note_write(a.storage().get()); }
  int sm_count() const { return sm_count_; }
  int index() const { return index_; }
  /// The kernel cached under `key` (first byte: the family, 'U' ufunc, 'C' cast, 'T' transpose,
  /// 'F' fill, 'R' reduction), or nullptr (then the caller compiles it and calls remember).
  const runtime::Kernel* cached(const MapKey& key);
  const runtime::Kernel* remember(const MapKey& key, const runtime::Kernel* k);
  /// Launches the map for `plan` (operands: inputs, output, [mask]); `key` names the map apart
  /// from the operand modes and path, `make_spec` makes its spec on a miss (elementwise.cpp).
  void run_map(MapKey key, const char* what, const ElementwisePlan& plan, int nin, const DType* in_compute,
               MapSpecFn make_spec);

 private:
  int index_;
  std::uint64_t serial_;  ///< unique per backend object (keys the thread-local kernel cache)
  int sm_count_ = 1;
  std::string arch_;
  std::mutex mutex_;
  std::unordered_map<std::string, runtime::ObjectCode> modules_;
  std::unordered_map<std::string, runtime::Kernel> kernels_;
  std::unordered_set<void*> graph_owned_;
  std::atomic<std::size_t> graph_owned_count_{0};                        ///< graph_owned_.size(), read without the lock
  std::unordered_map<MapKey, const runtime::Kernel*, MapKeyHash> fast_;  ///< map kernels by short key (run_map)
};

/// Registers the CUDA backend factory (no CUDA is touched until a cuda device is used).
void register_cuda_backend();
std::unique_ptr<Backend> make_cuda_backend(int index);

}  // namespace cupric::cuda_backend
