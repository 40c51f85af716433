// reduce.cpp — CpuBackend::reduce: builds the loop nest, writes empty reductions, picks the
// accumulator type from the output dtype (float16/bfloat16 accumulate in float32) and runs the
// row of the reduction table, compiled in the reduce_part*.cpp translation units.
#include <array>
#include <utility>
#include <vector>

#include "cpu_backend.hpp"
#include "cpu_dispatch.hpp"
#include "cupric/errors.hpp"
#include "reduce_engine.hpp"
#include "reduce_layout.hpp"

namespace cupric::cpu {

// instantiated in reduce_part<K>.cpp
extern template bool reduce_part<0>(ReduceOp, const ReduceLayout&, const Array&, const Array&, DType);
extern template bool reduce_part<1>(ReduceOp, const ReduceLayout&, const Array&, const Array&, DType);
extern template bool reduce_part<2>(ReduceOp, const ReduceLayout&, const Array&, const Array&, DType);
extern template bool reduce_part<3>(ReduceOp, const ReduceLayout&, const Array&, const Array&, DType);
static_assert(kReduceParts == 4, "one extern template and one reduce_part<K>.cpp per part");

const ReduceLoops& reduce_loops(ReduceOp op, DType t) {
  static const auto table = [] {
    std::array<std::array<ReduceLoops, kNumDTypes>, kNumReduceOps> rows{};
    cpu_variant().fill_reduce_loops(reinterpret_cast<ReduceLoopRow*>(rows.data()));
    return rows;
  }();
  return table[static_cast<int>(op)][static_cast<int>(t)];
}

void CpuBackend::reduce(ReduceOp op, const Array& in, const Array& out, const std::vector<int>& axes) {
  if (out.size() == 0) return;
  const ReductionRow& row = reduction_row(op);
  if (row.acc == AccRule::boolean && out.dtype() != DType::bool_)
    throw NotImplementedError(cat("reduce: ", row.name, " writes bool, got an output of ", name(out.dtype())));
  const ReduceLayout layout = reduce_layout(in, out, axes, true);
  if (layout.reduced_empty) {
    alignas(16) unsigned char value[16];
    empty_value(row).store(out.dtype(), value);
    fill(out, value);
    return;
  }
  if (layout.reduced.empty()) {  // nothing to combine: a converting copy
    cast(elementwise_plan({&in, &out}, in.shape()));
    return;
  }
  const DType compute = compute_dtype(out.dtype());
  if (!(reduce_part<0>(op, layout, in, out, compute) || reduce_part<1>(op, layout, in, out, compute) ||
        reduce_part<2>(op, layout, in, out, compute) || reduce_part<3>(op, layout, in, out, compute)))
    throw NotImplementedError(cat("reduce: no CPU kernel for reduction ", static_cast<int>(op)));
}

}  // namespace cupric::cpu
