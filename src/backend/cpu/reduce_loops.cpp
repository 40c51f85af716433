// reduce_loops.cpp — the reduction loops of every operator and accumulator dtype, compiled once
// per instruction-set variant (cpu_variant.hpp) into the table that reduce.cpp hands out.
#include <iterator>
#include <utility>

#include "reduce_loops.hpp"

CUPRIC_CPU_VARIANT_BEGIN
namespace {
using namespace reduce_ops;

static_assert(kNumReduceOps == std::size(kReductionRows), "one row of loops per row of the reduction table");

template <class Op>
constexpr bool has_loops(DType t) {
  const bool logical = Op::row.acc == AccRule::boolean;
  return !is_narrow_float(t) && (!logical || t == DType::bool_);
}

template <class Op, std::size_t... D>
CUPRIC_CPU_TABLE_FILL void fill_row(ReduceLoops* row, std::index_sequence<D...>) {
  (([&] {
     constexpr DType t = static_cast<DType>(D);
     if constexpr (has_loops<Op>(t)) row[D] = erased_reduce_loops<Op, ctype<t>>();
   }()),
   ...);
}

template <std::size_t... Row>
CUPRIC_CPU_TABLE_FILL void fill_rows(ReduceLoopRow* table, std::index_sequence<Row...>) {
  (fill_row<Reduction<static_cast<ReduceOp>(Row)>>(table[Row], std::make_index_sequence<kNumDTypes>{}), ...);
}

}  // namespace

CUPRIC_CPU_VARIANT_ENTRY_POINTS

CUPRIC_CPU_TABLE_FILL void fill_reduce_loops(ReduceLoopRow* table) {
  fill_rows(table, std::make_index_sequence<kNumReduceOps>{});
}
CUPRIC_CPU_VARIANT_END
