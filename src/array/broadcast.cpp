// broadcast.cpp — NumPy broadcasting of shapes and broadcast views.
#include "cupric/array.hpp"
#include "cupric/errors.hpp"

namespace cupric {

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const std::size_t n = std::max(a.size(), b.size());
  check_ndim(n);
  Shape out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const std::int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else throw ValueError(cat("cannot broadcast shapes ", shape_str(a), " and ", shape_str(b)));
  }
  return out;
}

Shape broadcast_shapes(const std::vector<Shape>& shapes) {
  Shape out;
  for (const Shape& s : shapes) out = broadcast_shapes(out, s);
  return out;
}

Array broadcast_to(const Array& a, const Shape& shape) {
  const int nd = static_cast<int>(shape.size());
  const int shift = nd - a.ndim();
  auto fail = [&] {
    return ValueError(cat("cannot broadcast an array of shape ", shape_str(a.shape()), " to shape ", shape_str(shape)));
  };
  if (shift < 0) throw fail();
  Strides strides(nd, 0);
  for (int d = 0; d < nd; ++d) {
    if (shape[d] < 0) throw ValueError(cat("negative dimensions are not allowed: ", shape_str(shape)));
    if (d < shift) continue;
    const std::int64_t ad = a.shape()[d - shift];
    if (ad == shape[d]) strides[d] = a.strides()[d - shift];
    else if (ad != 1) throw fail();
  }
  Array v = a.view(shape, strides, a.offset());
  if (shape != a.shape()) v.set_writeable(false);
  return v;
}

}  // namespace cupric
