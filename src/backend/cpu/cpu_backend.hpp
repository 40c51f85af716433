// cpu_backend.hpp — the host implementation of Backend, and the kernel tables its op-family
// files fill (one file per family: elementwise, cast, fill, reduce, scan).
#pragma once

#include "cupric/backend.hpp"

namespace cupric::cpu {

/// A typed ufunc loop over n elements: args[i] points at operand i, strides are in bytes.
using LoopFn = void (*)(char** args, const std::int64_t* byte_strides, std::int64_t n);
/// Converts n elements from src (stride in bytes) to dst (stride in bytes).
using CastFn = void (*)(const char* src, std::int64_t src_stride, char* dst, std::int64_t dst_stride, std::int64_t n);

/// The kernel of ufunc `ufunc_id` computing in dtype `compute` (nullptr when it has none).
LoopFn ufunc_kernel(int ufunc_id, DType compute);
/// The conversion from one dtype to another (every pair exists).
CastFn cast_kernel(DType from, DType to);

/// Elements per task below which splitting over threads does not pay: waking a worker costs
/// tens of microseconds on a busy or virtualised machine (measured: 2^16-element adds ran 10x
/// slower on two threads with 32K-element tasks).
inline constexpr std::int64_t kGrain = 131072;

class CpuBackend final : public Backend {
 public:
  Device device() const override { return Device::cpu(); }
  void* allocate(std::size_t nbytes) override;
  void deallocate(void* ptr, std::size_t nbytes, std::uint64_t last_writer) override;
  void* allocate_zeroed(std::size_t nbytes) override;
  void copy_from_host(void* dst, const void* src, std::size_t nbytes) override;
  void copy_to_host(void* dst, const void* src, std::size_t nbytes) override;
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
  std::int64_t unique_runs(const Array& sorted, const Array& perm, const Array& values, const Array& index,
                           const Array& ends, const Array& inverse, bool equal_nan) override;  // sort.cpp
  void gather(const Array& src, const Array& offsets, const Array& out) override;              // gather.cpp
  void scatter(const Array& dst, const Array& offsets, const Array& values) override;          // gather.cpp
  void matmul(const Array& a, const Array& b, const Array& out) override;                      // matmul.cpp
  void lapack(const LapackCall& call) override;                                                // lapack.cpp
};

/// Walks the plan's elements [begin, end) (in C order of the plan) as runs along its last
/// dimension: fn(pointers, run_length). Shared by the elementwise and cast engines.
template <class F>
void for_each_run(const ElementwisePlan& plan, std::int64_t begin, std::int64_t end, F&& fn) {
  const int nd = plan.ndim();
  const int nop = plan.noperands();
  const std::int64_t inner = plan.shape[nd - 1];
  std::int64_t index[16] = {0};  // plans have at most as many dims as arrays; 16 after merging
  std::vector<std::int64_t> big_index;
  std::int64_t* idx = index;
  if (nd > 16) {
    big_index.assign(nd, 0);
    idx = big_index.data();
  }
  std::int64_t rest = begin;
  for (int d = nd - 1; d >= 0; --d) {
    idx[d] = rest % plan.shape[d];
    rest /= plan.shape[d];
  }
  char* ptrs[8];
  std::int64_t pos = begin;
  while (pos < end) {
    for (int op = 0; op < nop; ++op) {
      char* p = plan.data[op];
      for (int d = 0; d < nd; ++d) p += idx[d] * plan.byte_strides[op][d];
      ptrs[op] = p;
    }
    const std::int64_t n = std::min(inner - idx[nd - 1], end - pos);
    fn(ptrs, n);
    pos += n;
    idx[nd - 1] += n;
    for (int d = nd - 1; d > 0 && idx[d] == plan.shape[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

}  // namespace cupric::cpu
