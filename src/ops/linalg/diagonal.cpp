// diagonal.cpp — NumPy's diagonal as a strided view (read-only, as NumPy's), for trace, det and
// the Python linalg functions.
#include <algorithm>

#include "cupric/errors.hpp"
#include "cupric/linalg.hpp"
#include "cupric/manipulation.hpp"

namespace cupric {

Array diagonal(const Array& a, std::int64_t offset, std::int64_t axis1, std::int64_t axis2) {
  if (a.ndim() < 2)
    throw ValueError(cat("diag requires an array of at least two dimensions, got shape ", shape_str(a.shape())));
  const int x = normalize_axis(axis1, a.ndim(), "axis1"), y = normalize_axis(axis2, a.ndim(), "axis2");
  if (x == y) throw ValueError("axis1 and axis2 cannot be the same");
  Shape shape;
  Strides strides;
  for (int d = 0; d < a.ndim(); ++d)
    if (d != x && d != y) {
      shape.push_back(a.shape()[d]);
      strides.push_back(a.strides()[d]);
    }
  std::int64_t start = a.offset(), n = 0;
  const std::int64_t rows = a.shape()[x], cols = a.shape()[y];
  if (offset >= 0 && offset < cols) {
    n = std::min(rows, cols - offset);
    start += offset * a.strides()[y];
  } else if (offset < 0 && -offset < rows) {
    n = std::min(rows + offset, cols);
    start += -offset * a.strides()[x];
  }
  shape.push_back(n);
  strides.push_back(a.strides()[x] + a.strides()[y]);
  Array v = a.view(shape, strides, n > 0 ? start : a.offset());
  v.set_writeable(false);
  return v;
}

}  // namespace cupric
