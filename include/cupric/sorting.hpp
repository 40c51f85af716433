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
/// NumPy's unique over the flattened `a` (a real dtype): the sorted distinct elements and, when
/// asked, the index of each one's first occurrence, the inverse (a's size, int64: which distinct
/// element each one is) and the counts; equal_nan: every NaN is one element. One sort and one
/// pass over it; the number of distinct elements is the one value read back from a device.
struct UniqueResult {
  Array values, index, inverse, counts;  ///< those not asked for are undefined
};
UniqueResult unique_flat(const Array& a, bool want_index, bool want_inverse, bool want_counts, bool equal_nan);

Array searchsorted(const Array& sorted, const Array& v, bool right = false, const Array& sorter = {});

/// The elements of the flattened `a` (a real dtype) that sort() would put at each
/// of `ranks` (integers in [0, a.size), any shape: the result is 1-d), found by the backend's radix
/// select without sorting; a zero comes out as +0.0 and a NaN as the canonical one. Devices whose
/// backend has no select raise NotImplementedError (median and quantile use it on CUDA only).
Array select_ranks(const Array& a, const Array& ranks);

}  // namespace cupric
