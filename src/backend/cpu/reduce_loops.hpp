// reduce_loops.hpp — the reduction loops of reduce_ops.hpp as functions, one per operator,
// accumulator type and instruction-set variant: reduce_loops.cpp compiles them once per variant
// into a table, and the engine (reduce_engine.hpp) calls the variant in use through
// typed_reduce_loops<Op, T>().
#pragma once

#include "cpu_dispatch.hpp"
#include "cpu_variant.hpp"
#include "reduce_ops.hpp"

namespace cupric::cpu {
/// The loops of `op` accumulating in `t`, from the variant in use (reduce.cpp).
const ReduceLoops& reduce_loops(ReduceOp op, DType t);
}  // namespace cupric::cpu

CUPRIC_CPU_VARIANT_BEGIN
namespace reduce_ops {

/// ReduceOp's value of each operator (its row of the reduction table).
template <class Op>
struct OpId;
template <ReduceOp Op>
struct OpId<Reduction<Op>> {
  static constexpr ReduceOp value = Op;
};
template <class Op>
inline constexpr ReduceOp op_id = OpId<Op>::value;

/// The loops of ReduceLoops with their types (see cpu_dispatch.hpp).
template <class Op, class T>
struct TypedReduceLoops {
  using P = partial_t<Op, T>;
  P (*contiguous)(const T*, std::int64_t);
  void (*row)(T*, const T*, std::int64_t);
  void (*rows4_first)(T*, const T*, const T*, const T*, const T*, std::int64_t);
  void (*rows4)(T*, const T*, const T*, const T*, const T*, std::int64_t);
};

template <class Op, class T>
partial_t<Op, T> contiguous_loop(const T* p, std::int64_t n) {
  return reduce_contiguous<Op>(p, n);
}
template <class Op, class T>
void row_loop(T* acc, const T* row, std::int64_t n) {
  accumulate_row<Op>(acc, row, n);
}
template <class Op, class T>
void rows4_first_loop(T* acc, const T* r0, const T* r1, const T* r2, const T* r3, std::int64_t n) {
  combine_rows4<Op>(acc, r0, r1, r2, r3, n);
}
template <class Op, class T>
void rows4_loop(T* acc, const T* r0, const T* r1, const T* r2, const T* r3, std::int64_t n) {
  accumulate_rows4<Op>(acc, r0, r1, r2, r3, n);
}

/// This unit's variant of the loops of (Op, T), types erased for the table.
template <class Op, class T>
ReduceLoops erased_reduce_loops() {
  return {reinterpret_cast<ReduceLoops::Erased>(&contiguous_loop<Op, T>),
          reinterpret_cast<ReduceLoops::Erased>(&row_loop<Op, T>),
          reinterpret_cast<ReduceLoops::Erased>(&rows4_first_loop<Op, T>),
          reinterpret_cast<ReduceLoops::Erased>(&rows4_loop<Op, T>)};
}

/// The loops of (Op, T) of the variant in use.
template <class Op, class T>
TypedReduceLoops<Op, T> typed_reduce_loops() {
  using L = TypedReduceLoops<Op, T>;
  const ReduceLoops& e = reduce_loops(op_id<Op>, dtype_of<T>());
  return {reinterpret_cast<decltype(L::contiguous)>(e.contiguous), reinterpret_cast<decltype(L::row)>(e.row),
          reinterpret_cast<decltype(L::rows4_first)>(e.rows4_first), reinterpret_cast<decltype(L::rows4)>(e.rows4)};
}

}  // namespace reduce_ops
CUPRIC_CPU_VARIANT_END
