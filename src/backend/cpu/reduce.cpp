// reduce.cpp — CpuBackend::reduce: builds the loop nest, picks the accumulator type from the
// output dtype (float16/bfloat16 accumulate in float32) and runs the engine of
// reduce_engine.hpp for the operator.
#include <array>
#include <cstring>
#include <vector>

#include "cpu_backend.hpp"
#include "cpu_dispatch.hpp"
#include "cupric/errors.hpp"
#include "reduce_engine.hpp"
#include "reduce_layout.hpp"
#include "reduce_ops.hpp"

namespace cupric::cpu {

namespace {
using namespace reduce_ops;
using reduce_engine::Engine;

template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

/// Runs operator Op with accumulator type T (the compute type of the output dtype).
template <class Op>
void reduce_with(const ReduceLayout& layout, const Array& in, const Array& out, DType compute) {
  visit_dtype(compute, [&]<class T>() {
    constexpr bool logical = std::is_same_v<Op, Any> || std::is_same_v<Op, All>;
    if constexpr (is_half_v<T> || (logical && !std::is_same_v<T, bool>)) {
      throw NotImplementedError(cat("reduce: no CPU kernel accumulating in ", name(compute)));
    } else if (layout.reduced_empty) {
      const T v = Op::template empty<T>();
      alignas(16) unsigned char value[16];
      cast_kernel(dtype_of<T>(), out.dtype())(reinterpret_cast<const char*>(&v), 0, reinterpret_cast<char*>(value), 0,
                                              1);
      backend_for(out.device()).fill(out, value);
    } else if constexpr ((std::is_same_v<Op, FMin> || std::is_same_v<Op, FMax>)&&!std::is_floating_point_v<T> &&
                         !is_complex_v<T>) {
      // fmin/fmax are min/max where there is no NaN
      using Plain = std::conditional_t<std::is_same_v<Op, FMin>, Min, Max>;
      Engine<Plain, T>(layout, in.dtype(), out.dtype()).run();
    } else {
      Engine<Op, T>(layout, in.dtype(), out.dtype()).run();
    }
  });
}
}  // namespace

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
  const bool logical = op == ReduceOp::any || op == ReduceOp::all;
  if (logical && out.dtype() != DType::bool_)
    throw NotImplementedError(cat("reduce: any/all write bool, got an output of ", name(out.dtype())));
  const ReduceLayout layout = reduce_layout(in, out, axes, true);
  if (!layout.reduced_empty && layout.reduced.empty()) {  // nothing to combine: a converting copy
    cast(elementwise_plan({&in, &out}, in.shape()));
    return;
  }
  DType compute = out.dtype();
  if (compute == DType::float16 || compute == DType::bfloat16) compute = DType::float32;
  switch (op) {
    case ReduceOp::sum:
      return reduce_with<Sum>(layout, in, out, compute);
    case ReduceOp::prod:
      return reduce_with<Prod>(layout, in, out, compute);
    case ReduceOp::min:
      return reduce_with<Min>(layout, in, out, compute);
    case ReduceOp::max:
      return reduce_with<Max>(layout, in, out, compute);
    case ReduceOp::fmin:
      return reduce_with<FMin>(layout, in, out, compute);
    case ReduceOp::fmax:
      return reduce_with<FMax>(layout, in, out, compute);
    case ReduceOp::any:
      return reduce_with<Any>(layout, in, out, compute);
    case ReduceOp::all:
      return reduce_with<All>(layout, in, out, compute);
  }
}

}  // namespace cupric::cpu
