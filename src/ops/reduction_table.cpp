// reduction_table.cpp — look-ups and dtype rules of the reduction table (reduction_table.hpp).
#include "cupric/reduction_table.hpp"

#include "cupric/errors.hpp"
#include "cupric/reduction.hpp"
#include "cupric/ufunc.hpp"

namespace cupric {

const ReductionRow* find_reduction(std::string_view name) {
  for (const ReductionRow& row : kReductionRows)
    if (name == row.name) return &row;
  return nullptr;
}

const ScanRow* find_scan(std::string_view name) {
  for (const ScanRow& row : kScanRows)
    if (name == row.name) return &row;
  return nullptr;
}

DType reduction_result_dtype(const ReductionRow& row, DType in) {
  switch (row.acc) {
    case AccRule::sum:
    case AccRule::product: return sum_dtype(in);
    case AccRule::same: return in;
    case AccRule::boolean: return DType::bool_;
  }
  return in;
}

DType compute_dtype(DType t) { return is_narrow_float(t) ? DType::float32 : t; }

DType gpu_accumulator(const ReductionRow& row, DType out) {
  switch (row.acc) {
    case AccRule::boolean: return DType::bool_;
    case AccRule::sum:
    case AccRule::product:  // float64 for 16/32-bit floats: better than a pairwise float32 sum
      if (is_narrow_float(out) || out == DType::float32) return DType::float64;
      return out == DType::complex64 ? DType::complex128 : out;
    case AccRule::same: return compute_dtype(out);
  }
  return out;
}

Scalar empty_value(const ReductionRow& row) {
  switch (row.identity) {
    case cu::Identity::zero: return Scalar::from_int(0);
    case cu::Identity::one: return Scalar::from_int(1);
    default: throw ValueError(cat("reduce: an empty ", row.name, " has no value (", row.ufunc, " has no identity)"));
  }
}

std::string start_expression(const ReductionRow& row, const char* type) {
  return cat("cu::reduction_start<", type, ", cu::Identity::", row.identity_name, ", cu::NanRule::", row.nan_name,
             ">()");
}

const std::string& combine_expression(const ReductionRow& row) { return find_ufunc(row.ufunc).expression; }

}  // namespace cupric
