// reduction_table.hpp — the rows of reduction_table.def as data for C++: what the array layer,
// the CPU and CUDA backends and the tile compiler read about a reduction or a scan (names, the
// combining ufunc, identity, seeding, accumulation and NaN rules), and the dtype rules they imply.
#pragma once

#include <string>
#include <string_view>

#include "cupric/array.hpp"
#include "cupric/backend.hpp"
#include "cupric/reduction.h"

namespace cupric {

/// Column `seed`: where the GPU's partial results start.
enum class ReductionSeed { identity, data };
/// Column `acc`: the dtype a reduction produces and how precisely it accumulates.
enum class AccRule { sum, product, same, boolean };

struct ReductionRow {
  ReduceOp op;
  const char* name;   ///< "sum"
  const char* ufunc;  ///< the combining ufunc's name in ufunc_table.def ("add")
  cu::Identity identity;
  const char* identity_name;  ///< "zero": for rendered source (cu::Identity::zero)
  ReductionSeed seed;
  AccRule acc;
  cu::NanRule nan;
  const char* nan_name;  ///< "none"
};

struct ScanRow {
  ScanOp op;
  const char* name;  ///< "cumsum"
  ReduceOp reduction;
};

// clang-format off
#define CUPRIC_REDUCTION(NAME, UFUNC, IDENTITY, SEED, ACC, NAN)                                              \
  ReductionRow{ReduceOp::NAME, #NAME, #UFUNC, cu::Identity::IDENTITY, #IDENTITY, ReductionSeed::SEED, AccRule::ACC, \
               cu::NanRule::NAN, #NAN},
inline constexpr ReductionRow kReductionRows[] = {
#include "cupric/reduction_table.def"
};
#define CUPRIC_SCAN(NAME, REDUCTION) ScanRow{ScanOp::NAME, #NAME, ReduceOp::REDUCTION},
inline constexpr ScanRow kScanRows[] = {
#include "cupric/reduction_table.def"
};
// clang-format on

namespace detail {
template <class Row, std::size_t N>
constexpr bool rows_in_enum_order(const Row (&rows)[N]) {
  for (std::size_t i = 0; i < N; ++i)
    if (static_cast<std::size_t>(rows[i].op) != i) return false;
  return true;
}
}  // namespace detail
static_assert(detail::rows_in_enum_order(kReductionRows),
              "ReduceOp (include/cupric/backend.hpp) must list the rows of reduction_table.def in order");
static_assert(detail::rows_in_enum_order(kScanRows),
              "ScanOp (include/cupric/backend.hpp) must list the scans of reduction_table.def in order");

constexpr const ReductionRow& reduction_row(ReduceOp op) { return kReductionRows[static_cast<std::size_t>(op)]; }
constexpr const ScanRow& scan_row(ScanOp op) { return kScanRows[static_cast<std::size_t>(op)]; }
/// The row named `name`, or nullptr.
const ReductionRow* find_reduction(std::string_view name);
const ScanRow* find_scan(std::string_view name);

/// The dtype a reduction of `in` produces by default: NumPy's sum dtype (acc sum/product), in's
/// dtype (same) or bool.
DType reduction_result_dtype(const ReductionRow& row, DType in);
/// The dtype 16-bit floats compute in (float32); others compute in their own.
DType compute_dtype(DType t);
/// The GPU's accumulator for a reduction into `out` (the acc rule's precision on the GPU).
DType gpu_accumulator(const ReductionRow& row, DType out);
/// The value an empty reduction writes (zero, one); ValueError for rows without an identity.
Scalar empty_value(const ReductionRow& row);

/// The C++ expression of the value partial results of type `type` start from
/// ("cu::reduction_start<A, cu::Identity::zero, cu::NanRule::none>()"), for rendered source.
std::string start_expression(const ReductionRow& row, const char* type);
/// The combining ufunc's scalar expression, in `a` and `b` (from the ufunc table).
const std::string& combine_expression(const ReductionRow& row);

}  // namespace cupric
