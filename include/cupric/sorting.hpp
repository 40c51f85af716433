// cupric/sorting.hpp — sort, argsort and searchsorted with NumPy's (and the Array API's)
// semantics: axes, NaN last, stability, descending order, sorter=. The backend sorts rows.
#pragma once

#include <optional>

#include "cupric/array.hpp"

namespace cupric {

/// The sorted copy of `a` along `axis` (nullopt: the flattened array). Stable; NaN last;
/// `descending` reverses the order but keeps equal elements in theirs (NaN first).
Array sort(const Array& a, std::optional<int> axis = -1, bool descending = false);
/// The int64 indices that sort `a` along `axis` (as sort).
Array argsort(const Array& a, std::optional<int> axis = -1, bool descending = false);
/// Sorts `a` in place along `axis` (ndarray.sort); `a` must be writeable.
void sort_in_place(const Array& a, int axis = -1, bool descending = false);

/// NumPy's searchsorted: for each element of `v`, where it goes in the 1-d `sorted` (or in
/// sorted[sorter] when `sorter` is given) to keep it sorted; before equal elements, or after
/// them with `right`. int64 indices of v's shape.
Array searchsorted(const Array& sorted, const Array& v, bool right = false, const Array& sorter = {});

}  // namespace cupric
