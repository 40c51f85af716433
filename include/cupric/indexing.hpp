// cupric/indexing.hpp — NumPy indexing: basic indices (integers, slices, ellipsis, newaxis)
// give views; index arrays (integer or boolean) give copies through the backend's gather.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "cupric/array.hpp"

namespace cupric {

/// A Python slice; absent bounds are None.
struct Slice {
  std::optional<std::int64_t> start, stop, step;

  struct Bounds {
    std::int64_t start, stop, step, length;
  };
  /// Python's slice.indices(size) plus the element count: out-of-range bounds are clipped.
  /// Throws ValueError "slice step cannot be zero".
  Bounds resolve(std::int64_t size) const;
};

/// One item of an index tuple.
struct IndexItem {
  enum class Kind : std::uint8_t { integer, slice, ellipsis, newaxis, array };
  Kind kind = Kind::ellipsis;
  std::int64_t integer = 0;
  Slice slice;
  Array array;  ///< an integer or bool index array (bool: a mask over array.ndim() dimensions)

  static IndexItem from_int(std::int64_t i);
  static IndexItem from_slice(Slice s);
  static IndexItem ellipsis();
  static IndexItem newaxis();
  static IndexItem from_array(Array a);
};
using Index = SmallVector<IndexItem, 4>;  ///< a usual index tuple needs no allocation

/// True when the index holds no arrays, so that a[index] is a view.
bool is_basic_index(const Index& index);

/// a[index]: a view for basic indices (a 0-d view for a full integer index), a copy when the
/// index holds arrays (NumPy's rules, including the mixed basic/advanced cases). Errors are
/// NumPy's IndexErrors: "index 5 is out of bounds for axis 0 with size 3", ...
Array getitem(const Array& a, const Index& index);

/// a[index] = value. `value` broadcasts to the shape of a[index] and is converted with unsafe
/// casting, except weak Python integers, which raise OverflowError when they do not fit.
/// Read-only targets raise ValueError. Nothing is written when any check fails.
void setitem(const Array& a, const Index& index, const Array& value);

/// Positions of the true (nonzero) elements, one int64 array per dimension (NumPy's nonzero).
std::vector<Array> nonzero(const Array& a);

/// Copies `src` into `dst` (same device), broadcasting src and converting its dtype unsafely.
/// Copies src first when the two overlap in memory. Throws ValueError for shapes that do not
/// broadcast or devices that differ; checks dst is writeable.
void copy_into(const Array& dst, const Array& src);

/// `a` when it is C-contiguous, else a C-contiguous copy.
Array ascontiguous(const Array& a);

}  // namespace cupric
