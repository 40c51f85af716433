// cpu_dispatch.hpp — run-time choice among the instruction-set variants of the CPU kernels.
// The hot loops (ufunc loops, casts, reduction loops) are compiled once per variant (baseline,
// and on x86-64 also avx2 = x86-64-v3 and avx512 = x86-64-v4; see cpu_variant.hpp); at first use
// the best one this CPU runs is chosen, capped by CUPRIC_CPU_TARGETS, and its functions fill the
// kernel tables. Everything else in the library is compiled for the baseline only.
#pragma once

#include <string>
#include <vector>

#include "cpu_backend.hpp"
#include "cupric/cpu_dispatch.hpp"  // CpuTarget, CpuDispatchReport

namespace cupric::cpu {

/// The loops of one reduction operator for one accumulator type T, their types erased so that
/// one table holds every (operator, dtype); reduce_engine.hpp casts them back:
/// contiguous: P (*)(const T* p, int64 n), the reduction of n elements as a partial result;
/// row: void (*)(T* acc, const T* row, int64 n), acc[j] = combine(acc[j], row[j]);
/// rows4_first / rows4: void (*)(T* acc, const T* r0, r1, r2, r3, int64 n), four rows combined
/// pairwise into acc (first: acc is not read).
struct ReduceLoops {
  using Erased = void (*)();
  Erased contiguous = nullptr, row = nullptr, rows4_first = nullptr, rows4 = nullptr;
};
/// Copies a rows x cols block whose source is dense along rows and destination dense along
/// columns: element (r, c) from src + r * size + c * src_stride to dst + r * dst_stride + c * size.
using TransposeFn = void (*)(const char* src, std::int64_t src_stride, char* dst, std::int64_t dst_stride,
                             std::int64_t rows, std::int64_t cols);
inline constexpr int kNumReduceOps = 8;  ///< ReduceOp's values
using UfuncLoopRow = LoopFn[kNumDTypes];
using CastLoopRow = CastFn[kNumDTypes];
using ReduceLoopRow = ReduceLoops[kNumDTypes];

// What each variant's translation units define in namespace cupric::cpu::<variant> (declared
// there by each unit, and for every variant by cpu_dispatch.cpp).
#define CUPRIC_CPU_VARIANT_ENTRY_POINTS             \
  void fill_ufunc_loops_part0(UfuncLoopRow* table); \
  void fill_ufunc_loops_part1(UfuncLoopRow* table); \
  void fill_ufunc_loops_part2(UfuncLoopRow* table); \
  void fill_ufunc_loops_part3(UfuncLoopRow* table); \
  void fill_cast_loops(CastLoopRow* table);         \
  void fill_reduce_loops(ReduceLoopRow* table);     \
  void fill_transpose_loops(TransposeFn* by_log2_size);

/// One compiled variant and the functions that fill the kernel tables with its loops.
struct CpuVariant {
  const char* name;   ///< baseline, avx2, avx512 (the values of CUPRIC_CPU_TARGETS)
  const char* march;  ///< the -march value of its instruction set ("" when the compiler's default)
  bool (*supported)();
  void (*fill_ufunc_loops[4])(UfuncLoopRow*);
  void (*fill_cast_loops)(CastLoopRow*);
  void (*fill_reduce_loops)(ReduceLoopRow*);
  void (*fill_transpose_loops)(TransposeFn*);  ///< element sizes 1, 2, 4, 8 bytes
};

/// Every variant compiled into this build, best first (the last is baseline).
const std::vector<CpuVariant>& compiled_cpu_variants();

/// The variant in use: the best compiled one that this CPU supports and CUPRIC_CPU_TARGETS
/// allows, chosen once per process. Throws ValueError when CUPRIC_CPU_TARGETS names no variant.
const CpuVariant& cpu_variant();

}  // namespace cupric::cpu
