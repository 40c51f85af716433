// reduction_internal.hpp — helpers shared by the reduction, statistics and scan files of the
// array layer: the shapes of a reduction, out= checks, masked inputs for where=, conversions.
#pragma once

#include <string_view>

#include "cupric/backend.hpp"
#include "cupric/reduction.hpp"

namespace cupric::detail {

/// What a reduction of `a` over some axes produces.
struct ReducePlan {
  std::vector<int> axes;   ///< normalised, sorted
  Shape keep_shape;        ///< a's shape with the reduced axes set to 1
  Shape result_shape;      ///< keep_shape, or without the reduced axes unless keepdims
  std::int64_t count = 1;  ///< input elements per output element
};

/// `ufunc_like`: NumPy's ufunc reductions accept axis 0 / -1 on a 0-d array (reducing nothing).
ReducePlan plan_reduction(const Array& a, const Axes& axis, bool keepdims, bool ufunc_like = false);

/// A view of a C-contiguous array with another shape of the same size.
Array reshaped(const Array& contiguous, const Shape& shape);
/// A 1-d view of a (a contiguous copy first when a is not C-contiguous).
Array ravel(const Array& a);
/// a converted to dtype t (a itself when it already has it).
Array astype(const Array& a, DType t);
/// Writes src (broadcast to dst's shape) into dst, converting the dtype (unsafe casting).
void copy_into(const Array& src, const Array& dst);

/// Throws unless `out` can receive a result of shape `shape` on `device` (named after `op`).
void check_out(const Array& out, const Shape& shape, Device device, std::string_view op);
/// The final step: the keep-shaped result `r` reshaped to the plan's result, converted to
/// `dtype`, or written into `out` (which is then returned).
Array deliver(const Array& r, const ReducePlan& plan, bool keepdims, DType dtype, const Array& out);

/// Checks a where= mask against the input (bool dtype, broadcastable to a's shape).
void check_where(const Array& where, const Array& a);
/// A copy of a in dtype t where `where` is true and `fill` elsewhere.
Array masked_input(const Array& a, const Array& where, DType t, const Scalar& fill);
/// Number of true elements of `where` (broadcast to `shape`) per output, in dtype t, keep-shaped.
Array count_true(const Array& where, const Shape& shape, const ReducePlan& plan, DType t);
/// where & ~isnan(a): the elements the nan* reductions keep.
Array not_nan_mask(const Array& a, const Array& where);

/// Runs the backend reduction of `a` (or of its where-masked copy, holding `identity` where
/// the mask is false) into a new keep-shaped array of dtype acc.
Array reduce_raw(ReduceOp op, const Array& a, const ReducePlan& plan, DType acc, const Array& where,
                 const Scalar& identity);

inline Array weak_float(double v) { return scalar_array(Scalar::from_float(v)); }

}  // namespace cupric::detail
