// reduce_loops.cpp — the reduction loops of every operator and accumulator dtype, compiled once
// per instruction-set variant (cpu_variant.hpp) into the table that reduce.cpp hands out.
#include <utility>

#include "reduce_loops.hpp"

CUPRIC_CPU_VARIANT_BEGIN
namespace {
using namespace reduce_ops;

template <class Op>
constexpr bool has_loops(DType t) {
  const bool logical = std::is_same_v<Op, Any> || std::is_same_v<Op, All>;
  return t != DType::float16 && t != DType::bfloat16 && (!logical || t == DType::bool_);
}

template <class Op, std::size_t... D>
void fill_row(ReduceLoops* row, std::index_sequence<D...>) {
  (([&] {
     constexpr DType t = static_cast<DType>(D);
     if constexpr (has_loops<Op>(t)) row[D] = erased_reduce_loops<Op, ctype<t>>();
   }()),
   ...);
}

template <class... Ops>
void fill_rows(ReduceLoopRow* table) {
  (fill_row<Ops>(table[static_cast<int>(op_id<Ops>)], std::make_index_sequence<kNumDTypes>{}), ...);
}

}  // namespace

CUPRIC_CPU_VARIANT_ENTRY_POINTS

void fill_reduce_loops(ReduceLoopRow* table) { fill_rows<Sum, Prod, Min, Max, FMin, FMax, Any, All>(table); }
CUPRIC_CPU_VARIANT_END
