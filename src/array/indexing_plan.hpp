// indexing_plan.hpp — internal: an index tuple split into its basic part (a view) and its
// advanced part (index arrays over some dimensions of that view). Shared by indexing.cpp
// (basic indices, setitem) and advanced_indexing.cpp (gather/scatter through index arrays).
#pragma once

#include <vector>

#include "cupric/indexing.hpp"

namespace cupric::detail {

/// One index array of the advanced part, addressing one dimension of the basic view.
struct AdvancedIndex {
  int dim = 0;           ///< dimension of IndexPlan::view it indexes
  int axis = 0;          ///< the axis of the original array (for messages)
  Array positions;       ///< integer positions (any integer dtype, any device)
  bool checked = false;  ///< positions are already host int64 in [0, size) (from a mask), owned here
};

struct IndexPlan {
  Array view;  ///< the array after integers, slices, ellipsis and newaxis; indexed dims kept whole
  std::vector<AdvancedIndex> advanced;  ///< empty for a basic index
  /// An ellipsis stands between two index arrays (NumPy then puts the index dims first, even when
  /// the ellipsis covers no dimension).
  bool ellipsis_between = false;
};

/// nonzero() with the results left on the host (C-contiguous int64).
std::vector<Array> nonzero_host(const Array& a);

/// Splits an index; throws NumPy's IndexErrors for malformed or out-of-range basic parts.
IndexPlan plan_index(const Array& a, const Index& index);

/// The advanced part, resolved: where each result row comes from.
struct GatherPlan {
  Array rest;          ///< the view without the indexed dims
  Array offsets;       ///< int64 [n] element offsets into `rest`, on its device
  Shape result_shape;  ///< the shape of a[index]
  int rows_at = 0;     ///< where the broadcast index dims sit in result_shape
  int rows_ndim = 0;   ///< how many there are
};

/// Checks bounds and broadcasting of the index arrays (reading them on the host) and computes
/// the element offsets.
GatherPlan gather_plan(const IndexPlan& plan);

/// A C-contiguous array of shape result_shape seen as [n] + rest.shape (what gather writes).
Array rows_view(const Array& result, const GatherPlan& plan);

/// a[index] for an index with arrays (a copy).
Array advanced_getitem(const IndexPlan& plan);
/// a[index] = value for an index with arrays; value is already on a's device.
void advanced_setitem(const IndexPlan& plan, const Array& value);

/// `value` ready to be written into an array of `shape` and dtype `t` on `device`: weak
/// scalars materialised (OverflowError), leading size-1 dims dropped, broadcasting checked
/// (ValueError worded as NumPy's for basic or for advanced indices).
Array value_for(const Shape& shape, DType t, Device device, const Array& value, bool advanced = false);

}  // namespace cupric::detail
