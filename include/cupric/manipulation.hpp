// cupric/manipulation.hpp — changing shapes and axes (views wherever the strides allow) and
// joining arrays: reshape, transposes, squeeze/expand_dims, ravel, broadcasting, concatenate,
// stack and where.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "cupric/array.hpp"

namespace cupric {

/// `axis` in [-ndim, ndim) as a non-negative axis; AxisError "axis 3 is out of bounds for array
/// of dimension 2" otherwise, after "<argument>: " when `argument` is given (as NumPy's).
int normalize_axis(std::int64_t axis, int ndim, const char* argument = nullptr);
/// Several axes, normalised; ValueError `repeated` (e.g. "repeated axis") when one repeats.
std::vector<int> normalize_axes(const std::vector<std::int64_t>& axes, int ndim, const char* repeated = "repeated axis",
                                const char* argument = nullptr);

/// The strides (elements) that view `a` with `shape` in C order without copying (NumPy's
/// attempt-no-copy reshape), or nullopt when a copy is needed. Sizes must agree.
std::optional<Strides> reshape_strides(const Array& a, const Shape& shape);

/// The concrete shape for a requested one with at most one negative (unknown) dimension.
/// ValueError "cannot reshape array of size 6 into shape (4,)".
Shape reshape_shape(std::int64_t size, const Shape& requested);

/// a with a new shape: a view whenever the strides allow, else a copy (copy=false: ValueError
/// instead; copy=true: always a copy). order 'C' or 'F'.
Array reshape(const Array& a, const Shape& shape, char order = 'C', std::optional<bool> copy = std::nullopt);

/// The axes of `a` in the memory order of a copy with NumPy's `order` ('C', 'F', 'A', 'K'):
/// 'K' orders them by decreasing stride magnitude (ties keep their order), as NumPy's copies do.
/// permute_dims(a, copy_axis_order(a, order)) is C-contiguous exactly when a's memory is in that order.
std::vector<std::int64_t> copy_axis_order(const Array& a, char order);
/// Views with permuted axes. permute_dims checks `axes` is a permutation of the dimensions.
Array permute_dims(const Array& a, const std::vector<std::int64_t>& axes);
Array transpose(const Array& a);         ///< all axes reversed (a.T)
Array matrix_transpose(const Array& a);  ///< the last two axes swapped (a.mT); ndim >= 2
Array swapaxes(const Array& a, std::int64_t axis1, std::int64_t axis2);
Array moveaxis(const Array& a, const std::vector<std::int64_t>& source, const std::vector<std::int64_t>& destination);

/// Drops length-1 axes (all of them when `axes` is empty/nullopt); ValueError for other lengths.
Array squeeze(const Array& a, const std::optional<std::vector<std::int64_t>>& axes = std::nullopt);
/// Inserts length-1 axes at `axes` (positions in the result).
Array expand_dims(const Array& a, const std::vector<std::int64_t>& axes);

/// 1-d: a view when `a` is contiguous in that order, else a copy.
Array ravel(const Array& a, char order = 'C');
/// 1-d copy.
Array flatten(const Array& a, char order = 'C');

/// numpy.broadcast_to: always a read-only view (see also broadcast_to in array.hpp).
Array broadcast_view(const Array& a, const Shape& shape);
/// Views of all arrays with their common broadcast shape (read-only where broadcast).
std::vector<Array> broadcast_arrays(const std::vector<Array>& arrays);

/// Joins along an existing axis (nullopt: flattens all first). The result dtype is NumPy's
/// result_type of the inputs, or `dtype` (inputs must cast to it with `casting`).
Array concatenate(const std::vector<Array>& arrays, std::optional<std::int64_t> axis = 0,
                  std::optional<DType> dtype = std::nullopt, Casting casting = Casting::same_kind);
/// Joins same-shaped arrays along a new axis.
Array stack(const std::vector<Array>& arrays, std::int64_t axis = 0, std::optional<DType> dtype = std::nullopt,
            Casting casting = Casting::same_kind);

/// Elements of x where cond is true, else of y (broadcast together). cond is converted to
/// bool; x and y promote together with NEP 50 (weak Python scalars take the other's type).
Array where(const Array& cond, const Array& x, const Array& y);

}  // namespace cupric
