// manipulation.cpp — shape and axis changes as views over the same storage: reshape (NumPy's
// attempt-no-copy rule, else a copy), transposes, squeeze/expand_dims, ravel/flatten, and
// broadcast views. Joining arrays is in joining.cpp.
#include "cupric/manipulation.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "cupric/backend.hpp"
#include "cupric/errors.hpp"
#include "cupric/indexing.hpp"

namespace cupric {

int normalize_axis(std::int64_t axis, int ndim, const char* argument) {
  if (axis < -ndim || axis >= ndim)
    throw AxisError(cat(argument ? argument : "", argument ? ": " : "", "axis ", axis,
                        " is out of bounds for array of dimension ", ndim));
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

std::vector<int> normalize_axes(const std::vector<std::int64_t>& axes, int ndim, const char* repeated,
                                const char* argument) {
  std::vector<int> out;
  std::vector<bool> seen(ndim, false);
  for (std::int64_t ax : axes) {
    const int a = normalize_axis(ax, ndim, argument);
    if (seen[a]) throw ValueError(repeated);
    seen[a] = true;
    out.push_back(a);
  }
  return out;
}

// ---- reshape ---------------------------------------------------------------------------------

std::optional<Strides> reshape_strides(const Array& a, const Shape& shape) {
  const int new_nd = static_cast<int>(shape.size());
  if (shape_size(shape) != a.size())
    throw ValueError(cat("cannot reshape array of size ", a.size(), " into shape ", shape_str(shape)));
  if (a.size() == 0 || new_nd == 0) return c_strides(shape);
  // the old dims without length-1 ones (they constrain nothing)
  Shape old_dims;
  Strides old_strides;
  for (int d = 0; d < a.ndim(); ++d) {
    if (a.shape()[d] == 1) continue;
    old_dims.push_back(a.shape()[d]);
    old_strides.push_back(a.strides()[d]);
  }
  const int old_nd = static_cast<int>(old_dims.size());
  Strides strides(new_nd, 0);
  // match groups of old dims to groups of new dims with equal products; each old group must be
  // contiguous in C order, and the new group takes strides from its innermost old stride
  int oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < new_nd && oi < old_nd) {
    std::int64_t np = shape[ni], op = old_dims[oi];
    while (np != op) {
      if (np < op) np *= shape[nj++];
      else op *= old_dims[oj++];
    }
    for (int ok = oi; ok < oj - 1; ++ok)
      if (old_strides[ok] != old_dims[ok + 1] * old_strides[ok + 1]) return std::nullopt;
    strides[nj - 1] = old_strides[oj - 1];
    for (int nk = nj - 1; nk > ni; --nk) strides[nk - 1] = strides[nk] * shape[nk];
    ni = nj++;
    oi = oj++;
  }
  const std::int64_t last = ni >= 1 ? strides[ni - 1] : 1;  // trailing length-1 dims
  for (int nk = ni; nk < new_nd; ++nk) strides[nk] = last;
  return strides;
}

Shape reshape_shape(std::int64_t size, const Shape& requested) {
  check_ndim(requested.size());
  Shape shape = requested;
  int unknown = -1;
  std::int64_t known = 1;
  auto fail = [&] {
    return ValueError(cat("cannot reshape array of size ", size, " into shape ", shape_str(requested)));
  };
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    if (shape[d] < 0) {
      if (unknown >= 0) throw ValueError("can only specify one unknown dimension");
      unknown = d;
    } else if (__builtin_mul_overflow(known, shape[d], &known)) {  // no array has that many elements
      throw fail();
    }
  }
  if (unknown >= 0) {
    if (known == 0 || size % known != 0) throw fail();
    shape[unknown] = size / known;
  } else if (known != size) {
    throw fail();
  }
  return shape;
}

namespace {
Array copy_c(const Array& a) {
  Array out = Array::empty(a.shape(), a.dtype(), a.device());
  if (out.size()) backend_for(a.device()).cast(elementwise_plan({&a, &out}, a.shape()));
  return out;
}

Array reshape_c(const Array& a, const Shape& shape, std::optional<bool> copy) {
  if (copy.value_or(false)) {
    Array c = copy_c(a);
    return c.view(shape, c_strides(shape), 0);
  }
  if (auto strides = reshape_strides(a, shape)) return a.view(shape, *strides, a.offset());
  if (copy.has_value()) throw ValueError("Unable to avoid creating a copy while reshaping.");
  Array c = copy_c(a);
  return c.view(shape, c_strides(shape), 0);
}

Shape reversed(const Shape& s) { return Shape(s.rbegin(), s.rend()); }

char resolve_order(const Array& a, char order) {
  if (order == 'A') return a.is_f_contiguous() && !a.is_c_contiguous() ? 'F' : 'C';
  if (order != 'C' && order != 'F') throw ValueError(cat("order must be one of 'C', 'F', 'A', got '", order, "'"));
  return order;
}
}  // namespace

Array reshape(const Array& a, const Shape& shape_in, char order, std::optional<bool> copy) {
  const Shape shape = reshape_shape(a.size(), shape_in);
  if (resolve_order(a, order) == 'F') return transpose(reshape_c(transpose(a), reversed(shape), copy));
  return reshape_c(a, shape, copy);
}

// ---- axes ------------------------------------------------------------------------------------

Array permute_dims(const Array& a, const std::vector<std::int64_t>& axes) {
  if (static_cast<int>(axes.size()) != a.ndim()) throw ValueError("axes don't match array");
  const std::vector<int> perm = normalize_axes(axes, a.ndim(), "repeated axis in transpose");
  Shape shape;
  Strides strides;
  for (int p : perm) {
    shape.push_back(a.shape()[p]);
    strides.push_back(a.strides()[p]);
  }
  return a.view(shape, strides, a.offset());
}

Array transpose(const Array& a) {
  return a.view(reversed(a.shape()), Strides(a.strides().rbegin(), a.strides().rend()), a.offset());
}

Array matrix_transpose(const Array& a) {
  if (a.ndim() < 2) throw ValueError("matrix transpose with ndim < 2 is undefined");
  return swapaxes(a, -1, -2);
}

Array swapaxes(const Array& a, std::int64_t axis1, std::int64_t axis2) {
  const int i = normalize_axis(axis1, a.ndim(), "axis1"), j = normalize_axis(axis2, a.ndim(), "axis2");
  Shape shape = a.shape();
  Strides strides = a.strides();
  std::swap(shape[i], shape[j]);
  std::swap(strides[i], strides[j]);
  return a.view(shape, strides, a.offset());
}

Array moveaxis(const Array& a, const std::vector<std::int64_t>& source, const std::vector<std::int64_t>& destination) {
  const std::vector<int> src = normalize_axes(source, a.ndim(), "repeated axis in `source` argument", "source");
  const std::vector<int> dst =
      normalize_axes(destination, a.ndim(), "repeated axis in `destination` argument", "destination");
  if (src.size() != dst.size())
    throw ValueError("`source` and `destination` arguments must have the same number of elements");
  std::vector<std::int64_t> order;
  for (int d = 0; d < a.ndim(); ++d)
    if (std::find(src.begin(), src.end(), d) == src.end()) order.push_back(d);
  std::vector<std::pair<int, int>> moves;
  for (std::size_t k = 0; k < src.size(); ++k) moves.emplace_back(dst[k], src[k]);
  std::sort(moves.begin(), moves.end());
  for (auto [to, from] : moves) order.insert(order.begin() + to, from);
  return permute_dims(a, order);
}

Array squeeze(const Array& a, const std::optional<std::vector<std::int64_t>>& axes) {
  std::vector<bool> drop(a.ndim(), false);
  if (!axes) {
    for (int d = 0; d < a.ndim(); ++d) drop[d] = a.shape()[d] == 1;
  } else {
    for (int d : normalize_axes(*axes, a.ndim())) {
      if (a.shape()[d] != 1) throw ValueError("cannot select an axis to squeeze out which has size not equal to one");
      drop[d] = true;
    }
  }
  Shape shape;
  Strides strides;
  for (int d = 0; d < a.ndim(); ++d) {
    if (drop[d]) continue;
    shape.push_back(a.shape()[d]);
    strides.push_back(a.strides()[d]);
  }
  return a.view(shape, strides, a.offset());
}

Array expand_dims(const Array& a, const std::vector<std::int64_t>& axes) {
  check_ndim(static_cast<std::size_t>(a.ndim()) + axes.size());
  const int nd = a.ndim() + static_cast<int>(axes.size());
  const std::vector<int> at = normalize_axes(axes, nd);
  Shape shape(nd);
  Strides strides(nd);
  int src = a.ndim() - 1;
  std::int64_t inner = 1;  // the stride a new axis takes: what a C-order reshape would give
  for (int d = nd - 1; d >= 0; --d) {
    if (std::find(at.begin(), at.end(), d) != at.end()) {
      shape[d] = 1;
      strides[d] = inner;
    } else {
      shape[d] = a.shape()[src];
      strides[d] = a.strides()[src];
      inner = a.strides()[src] * std::max<std::int64_t>(a.shape()[src], 1);
      --src;
    }
  }
  return a.view(shape, strides, a.offset());
}

Array ravel(const Array& a, char order) {
  const char o = resolve_order(a, order);
  if (o == 'C' ? a.is_c_contiguous() : a.is_f_contiguous()) return reshape(a, {a.size()}, o);
  return flatten(a, o);
}

Array flatten(const Array& a, char order) {
  const Array src = resolve_order(a, order) == 'F' ? transpose(a) : a;
  return reshape_c(src, {a.size()}, true);
}

// ---- broadcasting ----------------------------------------------------------------------------

Array broadcast_view(const Array& a, const Shape& shape) {
  Array v = broadcast_to(a, shape);
  v.set_writeable(false);
  return v;
}

std::vector<Array> broadcast_arrays(const std::vector<Array>& arrays) {
  std::vector<Shape> shapes;
  for (const Array& a : arrays) shapes.push_back(a.shape());
  const Shape shape = broadcast_shapes(shapes);
  std::vector<Array> out;
  for (const Array& a : arrays) out.push_back(a.shape() == shape ? a : broadcast_to(a, shape));
  return out;
}

std::vector<std::int64_t> copy_axis_order(const Array& a, char order) {
  std::vector<std::int64_t> axes(static_cast<std::size_t>(a.ndim()));
  std::iota(axes.begin(), axes.end(), 0);
  if (order == 'A') order = a.is_f_contiguous() && !a.is_c_contiguous() ? 'F' : 'C';
  if (order == 'F') std::reverse(axes.begin(), axes.end());
  if (order == 'K') {
    const auto& st = a.strides();
    std::stable_sort(axes.begin(), axes.end(), [&](std::int64_t x, std::int64_t y) {
      return std::abs(st[static_cast<std::size_t>(x)]) > std::abs(st[static_cast<std::size_t>(y)]);
    });
  }
  return axes;
}

}  // namespace cupric
