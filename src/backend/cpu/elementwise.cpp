// elementwise.cpp — runs ufunc loops over iteration plans on the host. Operands already in
// the loop's compute type are passed straight to the kernel; others (mixed dtypes, float16 /
// bfloat16, where= masks) go through small per-thread buffers, converted on the way in and out.
#include <cstring>
#include <memory>
#include <vector>

#include "cpu_backend.hpp"
#include "cpu_dispatch.hpp"
#include "cupric/errors.hpp"
#include "cupric/thread_pool.hpp"
#include "ufunc_kernels.hpp"

namespace cupric::cpu {

namespace {
/// The ufunc loops of the instruction-set variant in use (cpu_dispatch.hpp).
std::vector<std::array<LoopFn, kNumDTypes>>& kernel_table() {
  static std::vector<std::array<LoopFn, kNumDTypes>> table = [] {
    std::vector<std::array<LoopFn, kNumDTypes>> t(all_ufuncs().size());
    for (auto& row : t) row.fill(nullptr);
    auto* raw = reinterpret_cast<UfuncLoopRow*>(t.data());
    for (auto fill : cpu_variant().fill_ufunc_loops) fill(raw);
    return t;
  }();
  return table;
}

constexpr std::int64_t kBufferElems = 1024;
}  // namespace

LoopFn ufunc_kernel(int ufunc_id, DType compute) { return kernel_table()[ufunc_id][static_cast<int>(compute)]; }

void CpuBackend::elementwise(const Ufunc& uf, const UfuncLoop& loop, const ElementwisePlan& plan, bool has_where) {
  const int nin = uf.nin;
  const LoopFn fn = ufunc_kernel(uf.id, loop.compute[0]);
  if (!fn) throw NotImplementedError(cat("no CPU kernel for ufunc '", uf.name, "' in ", name(loop.compute[0])));
  const int nd = plan.ndim();
  std::int64_t inner[8];
  for (int op = 0; op < plan.noperands(); ++op) inner[op] = plan.byte_strides[op][nd - 1];

  bool buffered = has_where;
  for (int i = 0; i <= nin; ++i) buffered |= plan.dtypes[i] != loop.compute[i];

  if (!buffered) {
    auto body = [&](std::int64_t b, std::int64_t e) {
      for_each_run(plan, b, e, [&](char** p, std::int64_t n) { fn(p, inner, n); });
    };
    if (plan.size() <= kGrain) body(0, plan.size());  // what parallel_for would do, without its std::function
    else parallel_for(plan.size(), kGrain, body);
    return;
  }

  const DType out_dtype = plan.dtypes[nin], out_compute = loop.compute[nin];
  const bool out_direct = out_dtype == out_compute && !has_where;
  const CastFn out_cast = cast_kernel(out_compute, out_dtype);
  parallel_for(plan.size(), kGrain, [&](std::int64_t b, std::int64_t e) {
    const std::int64_t block = std::min(kBufferElems, e - b);  // small calls: small buffers
    std::unique_ptr<char[]> storage(new char[static_cast<std::size_t>((nin + 1) * block * 16)]);
    char* buffers[4];
    for (int i = 0; i <= nin; ++i) buffers[i] = storage.get() + i * block * 16;
    for_each_run(plan, b, e, [&](char** p, std::int64_t n) {
      for (std::int64_t off = 0; off < n; off += block) {
        const std::int64_t m = std::min(block, n - off);
        char* args[4];
        std::int64_t strides[4];
        for (int i = 0; i < nin; ++i) {
          char* src = p[i] + off * inner[i];
          if (plan.dtypes[i] == loop.compute[i]) {
            args[i] = src;
            strides[i] = inner[i];
          } else {
            const std::int64_t cs = itemsize(loop.compute[i]);
            const bool scalar = inner[i] == 0;  // broadcast along the run: convert one value
            cast_kernel(plan.dtypes[i], loop.compute[i])(src, inner[i], buffers[i], cs, scalar ? 1 : m);
            args[i] = buffers[i];
            strides[i] = scalar ? 0 : cs;
          }
        }
        char* dst = p[nin] + off * inner[nin];
        const std::int64_t ocs = itemsize(out_compute);
        args[nin] = out_direct ? dst : buffers[nin];
        strides[nin] = out_direct ? inner[nin] : ocs;
        fn(args, strides, m);
        if (out_direct) continue;
        if (!has_where) {
          out_cast(buffers[nin], ocs, dst, inner[nin], m);
          continue;
        }
        const char* mask = p[nin + 1] + off * inner[nin + 1];
        const std::int64_t ms = inner[nin + 1];
        for (std::int64_t j = 0; j < m;) {  // copy each run of true mask values at once
          if (!mask[j * ms]) {
            ++j;
            continue;
          }
          std::int64_t k = j;
          while (k < m && mask[k * ms]) ++k;
          out_cast(buffers[nin] + j * ocs, ocs, dst + j * inner[nin], inner[nin], k - j);
          j = k;
        }
      }
    });
  });
}

}  // namespace cupric::cpu
