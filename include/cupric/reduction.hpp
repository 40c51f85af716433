// cupric/reduction.hpp — reductions (sum, mean, var, argmax, ...), their nan* forms and scans
// (cumsum, cumulative_sum, ...), with NumPy's semantics: axes, keepdims, accumulation dtypes,
// out=, where= and initial=.
#pragma once

#include <optional>
#include <vector>

#include "cupric/array.hpp"

namespace cupric {

/// The axes a reduction runs over: nullopt means all of them. Negative axes count from the end.
using Axes = std::optional<std::vector<int>>;

/// Options shared by the reductions, as NumPy's keywords.
struct ReduceOptions {
  Axes axis;                      ///< nullopt: reduce everything (to a 0-d array unless keepdims)
  bool keepdims = false;          ///< keep reduced axes as length-1 dimensions
  std::optional<DType> dtype;     ///< accumulate and return in this dtype (sum, prod, mean, var, std)
  Array out;                      ///< write the result here (its shape must be the result's)
  Array where;                    ///< bool mask broadcasting to the input: only true elements count
  std::optional<Scalar> initial;  ///< starting value (sum, prod, min, max and their nan forms)
};

/// axis in [-ndim, ndim) -> [0, ndim); throws AxisError "axis 2 is out of bounds for array of dimension 2".
int normalize_axis(int axis, int ndim);
/// Normalised, sorted axes (all of them for nullopt); throws AxisError, or ValueError
/// "duplicate value in 'axis'".
std::vector<int> normalize_axes(const Axes& axes, int ndim);

/// The dtype NumPy's sum/prod/cumsum accumulate `t` in when no dtype is given: bool and signed
/// integers narrower than int64 -> int64, narrower unsigned -> uint64, others unchanged.
DType sum_dtype(DType t);

enum class ReduceOp : std::uint8_t;  // backend.hpp

/// The reduction of a row of the reduction table (include/cupric/reduction_table.def): its ufunc
/// combines, its identity fills where= and empty reductions (rows without one need `initial`
/// there), its accumulation rule picks the dtype. sum(a) is reduce(ReduceOp::sum, a), and so on.
Array reduce(ReduceOp op, const Array& a, const ReduceOptions& options = {});

Array sum(const Array& a, const ReduceOptions& options = {});
Array prod(const Array& a, const ReduceOptions& options = {});
/// min/max propagate NaN; an empty reduction without `initial` raises ValueError.
Array min(const Array& a, const ReduceOptions& options = {});
Array max(const Array& a, const ReduceOptions& options = {});
Array any(const Array& a, const ReduceOptions& options = {});
Array all(const Array& a, const ReduceOptions& options = {});
/// Integers and bool average in float64, float16 in float32 (returned as float16).
Array mean(const Array& a, const ReduceOptions& options = {});
/// Variance with divisor N - ddof; complex inputs give their real dtype.
Array var(const Array& a, const ReduceOptions& options = {}, double ddof = 0);
/// Standard deviation (NumPy's std): sqrt(var).
Array stddev(const Array& a, const ReduceOptions& options = {}, double ddof = 0);
/// Number of non-zero elements (int64).
Array count_nonzero(const Array& a, const Axes& axis = std::nullopt, bool keepdims = false);

/// nan* forms: NaN elements are skipped (nansum/nanprod treat them as 0/1; nanmin/nanmax give NaN
/// only for an all-NaN slice). For integer and bool inputs they are the plain reductions.
Array nansum(const Array& a, const ReduceOptions& options = {});
Array nanprod(const Array& a, const ReduceOptions& options = {});
Array nanmin(const Array& a, const ReduceOptions& options = {});
Array nanmax(const Array& a, const ReduceOptions& options = {});
Array nanmean(const Array& a, const ReduceOptions& options = {});
Array nanvar(const Array& a, const ReduceOptions& options = {}, double ddof = 0);
Array nanstddev(const Array& a, const ReduceOptions& options = {}, double ddof = 0);

/// Index of the first minimum/maximum (int64) along `axis`, or of the flattened array for
/// nullopt. NaN counts as the extreme. An empty axis raises ValueError. `out` must be integer.
Array argmin(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false, const Array& out = {});
Array argmax(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false, const Array& out = {});

/// argmin/argmax skipping NaN; a slice of only NaN raises ValueError "All-NaN slice encountered".
Array nanargmin(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false, const Array& out = {});
Array nanargmax(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false, const Array& out = {});

/// Options of the scans.
struct ScanOptions {
  std::optional<int> axis;       ///< nullopt: the flattened array (cumulative_*: only for ndim <= 1)
  std::optional<DType> dtype;    ///< accumulate and return in this dtype (default as sum_dtype)
  Array out;                     ///< write the result here (same shape as the result)
  bool include_initial = false;  ///< cumulative_*: prepend the identity (0 or 1) along the axis
};

/// Running sums/products; NumPy's cumsum/cumprod (axis None flattens).
Array cumsum(const Array& a, const ScanOptions& options = {});
Array cumprod(const Array& a, const ScanOptions& options = {});
/// Running sums/products treating NaN as 0 / 1 (NumPy's nancumsum/nancumprod).
Array nancumsum(const Array& a, const ScanOptions& options = {});
Array nancumprod(const Array& a, const ScanOptions& options = {});
/// Array API 2024.12 cumulative_sum/cumulative_prod: axis required when ndim > 1, include_initial.
Array cumulative_sum(const Array& a, const ScanOptions& options = {});
Array cumulative_prod(const Array& a, const ScanOptions& options = {});

}  // namespace cupric
