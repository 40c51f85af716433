// indexing.cpp — basic indexing (integers, slices, ellipsis, newaxis -> views), __setitem__,
// and the copies both need (copy_into, ascontiguous). Index arrays: advanced_indexing.cpp.
#include "cupric/indexing.hpp"

#include <algorithm>

#include "cupric/backend.hpp"
#include "cupric/errors.hpp"
#include "indexing_plan.hpp"

namespace cupric {

Slice::Bounds Slice::resolve(std::int64_t size) const {
  const std::int64_t st = step.value_or(1);
  if (st == 0) throw ValueError("slice step cannot be zero");
  // Python's PySlice_AdjustIndices: clip out-of-range bounds instead of failing
  auto clip = [&](std::optional<std::int64_t> v, std::int64_t dflt) {
    if (!v) return dflt;
    std::int64_t x = *v;
    if (x < 0) {
      x += size;
      if (x < 0) x = st < 0 ? -1 : 0;
    } else if (x >= size) {
      x = st < 0 ? size - 1 : size;
    }
    return x;
  };
  Bounds b;
  b.step = st;
  b.start = clip(start, st < 0 ? size - 1 : 0);
  b.stop = clip(stop, st < 0 ? -1 : size);
  if (st < 0) b.length = b.stop < b.start ? (b.start - b.stop - 1) / (-st) + 1 : 0;
  else b.length = b.start < b.stop ? (b.stop - b.start - 1) / st + 1 : 0;
  return b;
}

IndexItem IndexItem::from_int(std::int64_t i) {
  IndexItem it;
  it.kind = Kind::integer;
  it.integer = i;
  return it;
}
IndexItem IndexItem::from_slice(Slice s) {
  IndexItem it;
  it.kind = Kind::slice;
  it.slice = s;
  return it;
}
IndexItem IndexItem::ellipsis() { return IndexItem{}; }
IndexItem IndexItem::newaxis() {
  IndexItem it;
  it.kind = Kind::newaxis;
  return it;
}
IndexItem IndexItem::from_array(Array a) {
  IndexItem it;
  it.kind = Kind::array;
  it.array = std::move(a);
  return it;
}

bool is_basic_index(const Index& index) {
  return std::none_of(index.begin(), index.end(),
                      [](const IndexItem& it) { return it.kind == IndexItem::Kind::array; });
}

Array ascontiguous(const Array& a) {
  if (a.is_c_contiguous()) return a;
  Array out = Array::empty(a.shape(), a.dtype(), a.device());
  if (out.size()) backend_for(a.device()).cast(elementwise_plan({&a, &out}, a.shape()));
  return out;
}

void copy_into(const Array& dst, const Array& src_in) {
  dst.check_writeable();
  if (!(dst.device() == src_in.device()))
    throw ValueError(cat("cannot copy an array on ", src_in.device().str(), " into an array on ", dst.device().str(),
                         "; move it first with x.to_device(\"", dst.device().str(), "\")"));
  if (broadcast_shapes(dst.shape(), src_in.shape()) != dst.shape() || src_in.ndim() > dst.ndim())
    throw ValueError(cat("could not broadcast input array from shape ", shape_str(src_in.shape()), " into shape ",
                         shape_str(dst.shape())));
  if (dst.size() == 0) return;
  Array src = src_in;
  if (src.storage() == dst.storage()) {
    const bool same_view = src.offset() == dst.offset() && src.strides() == dst.strides() &&
                           src.shape() == dst.shape() && src.dtype() == dst.dtype();
    if (same_view) return;
    src = Array::empty(src_in.shape(), src_in.dtype(), src_in.device());  // overlap: read before writing
    if (src.size()) backend_for(src.device()).cast(elementwise_plan({&src_in, &src}, src.shape()));
  }
  backend_for(dst.device()).cast(elementwise_plan({&src, &dst}, dst.shape()));
}

namespace detail {

namespace {
[[noreturn]] void out_of_bounds(std::int64_t i, int axis, std::int64_t size) {
  throw IndexError(cat("index ", i, " is out of bounds for axis ", axis, " with size ", size));
}

/// A 0-d integer array used as an index is an integer (NumPy: a[np.array(1)] is a[1]).
std::int64_t integer_of_0d(const Array& a) {
  Array h = Array::empty({}, a.dtype());
  backend_for(a.device()).copy_to_host(h.data(), a.data(), static_cast<std::size_t>(a.itemsize()));
  return visit_dtype(h.dtype(), [&]<class T>() -> std::int64_t {
    if constexpr (std::is_integral_v<T>) {
      const T v = *static_cast<const T*>(h.data());
      if constexpr (std::is_same_v<T, std::uint64_t>)
        if (v > static_cast<std::uint64_t>(INT64_MAX)) throw IndexError(cat("index ", v, " is out of bounds"));
      return static_cast<std::int64_t>(v);
    }
    return 0;
  });
}

/// Index items with 0-d integer arrays turned into integers, and bool/int dtype checks.
Index normalized(const Index& index) {
  Index out = index;
  for (IndexItem& it : out) {
    if (it.kind != IndexItem::Kind::array) continue;
    const DType t = it.array.dtype();
    if (!is_integer(t) && !is_bool(t)) throw IndexError("arrays used as indices must be of integer (or boolean) type");
    if (is_integer(t) && it.array.ndim() == 0) it = IndexItem::from_int(integer_of_0d(it.array));
  }
  return out;
}

/// How many dimensions of the array the items consume (an ellipsis none); checks ellipses.
int consumed_dims(const Index& index, int ndim) {
  int consumed = 0, ellipses = 0;
  for (const IndexItem& it : index) {
    switch (it.kind) {
      case IndexItem::Kind::integer:
      case IndexItem::Kind::slice: ++consumed; break;
      case IndexItem::Kind::ellipsis: ++ellipses; break;
      case IndexItem::Kind::newaxis: break;
      case IndexItem::Kind::array: consumed += is_bool(it.array.dtype()) ? it.array.ndim() : 1; break;
    }
  }
  if (ellipses > 1) throw IndexError("an index can only have a single ellipsis ('...')");
  if (consumed > ndim)
    throw IndexError(
        cat("too many indices for array: array is ", ndim, "-dimensional, but ", consumed, " were indexed"));
  return consumed;
}

/// The view being built while the items are walked.
struct ViewBuilder {
  const Array& a;
  Shape shape;
  Strides strides;
  std::int64_t offset;
  int axis = 0;  // next dimension of `a`

  void keep() {
    shape.push_back(a.shape()[axis]);
    strides.push_back(a.strides()[axis]);
    ++axis;
  }
};

void add_mask(ViewBuilder& vb, const Array& mask, IndexPlan& plan) {
  if (mask.ndim() == 0) {  // a[True] adds a length-1 dimension, a[False] a length-0 one
    vb.shape.push_back(1);
    vb.strides.push_back(0);
    Array positions = Array::empty({integer_of_0d(mask) ? 1 : 0}, DType::int64);
    if (positions.size()) *static_cast<std::int64_t*>(positions.data()) = 0;
    plan.advanced.push_back({static_cast<int>(vb.shape.size()) - 1, vb.axis, positions, true});
    return;
  }
  for (int k = 0; k < mask.ndim(); ++k) {
    const std::int64_t size = vb.a.shape()[vb.axis + k];
    if (mask.shape()[k] != size && mask.shape()[k] != 0)  // NumPy: an empty mask axis fits any (selects nothing)
      throw IndexError(cat("boolean index did not match indexed array along axis ", vb.axis + k, "; size of axis is ",
                           size, " but size of corresponding boolean axis is ", mask.shape()[k]));
  }
  std::vector<Array> positions = nonzero_host(mask);
  for (int k = 0; k < mask.ndim(); ++k) {
    plan.advanced.push_back({static_cast<int>(vb.shape.size()), vb.axis, positions[k], true});
    vb.keep();
  }
}

void add_item(ViewBuilder& vb, const IndexItem& it, bool has_arrays, int ellipsis_dims, IndexPlan& plan) {
  switch (it.kind) {
    case IndexItem::Kind::integer: {
      const std::int64_t size = vb.a.shape()[vb.axis];
      if (it.integer < -size || it.integer >= size) out_of_bounds(it.integer, vb.axis, size);
      if (has_arrays) {  // NumPy: with index arrays present, integers are 0-d index arrays
        Array pos = scalar_array(Scalar::from_int(it.integer), DType::int64);
        plan.advanced.push_back({static_cast<int>(vb.shape.size()), vb.axis, pos});
        vb.keep();
      } else {
        const std::int64_t i = it.integer < 0 ? it.integer + size : it.integer;
        vb.offset += i * vb.a.strides()[vb.axis];
        ++vb.axis;
      }
      break;
    }
    case IndexItem::Kind::slice: {
      const Slice::Bounds b = it.slice.resolve(vb.a.shape()[vb.axis]);
      const std::int64_t stride = vb.a.strides()[vb.axis];
      if (b.length > 0) vb.offset += b.start * stride;
      vb.shape.push_back(b.length);
      vb.strides.push_back(stride * b.step);
      ++vb.axis;
      break;
    }
    case IndexItem::Kind::ellipsis:
      for (int k = 0; k < ellipsis_dims; ++k) vb.keep();
      break;
    case IndexItem::Kind::newaxis:
      vb.shape.push_back(1);
      vb.strides.push_back(0);
      break;
    case IndexItem::Kind::array:
      if (is_bool(it.array.dtype())) {
        add_mask(vb, it.array, plan);
      } else {
        plan.advanced.push_back({static_cast<int>(vb.shape.size()), vb.axis, it.array});
        vb.keep();
      }
      break;
  }
}
}  // namespace

IndexPlan plan_index(const Array& a, const Index& index_in) {
  const Index index = normalized(index_in);
  const int consumed = consumed_dims(index, a.ndim());
  std::size_t added = 0;  // dimensions the index adds: None and 0-d boolean masks
  for (const IndexItem& it : index)
    added += it.kind == IndexItem::Kind::newaxis ||
             (it.kind == IndexItem::Kind::array && is_bool(it.array.dtype()) && it.array.ndim() == 0);
  if (static_cast<std::size_t>(a.ndim() - consumed) + added > static_cast<std::size_t>(kMaxDims))
    throw IndexError(cat("number of dimensions must be within [0, ", kMaxDims, "], indexing result would have ",
                         static_cast<std::size_t>(a.ndim() - consumed) + added));
  const bool has_arrays = !is_basic_index(index);
  IndexPlan plan;
  ViewBuilder vb{a, {}, {}, a.offset()};
  bool ellipsis_after_array = false;
  for (const IndexItem& it : index) {
    const std::size_t arrays_before = plan.advanced.size();
    add_item(vb, it, has_arrays, a.ndim() - consumed, plan);
    if (ellipsis_after_array && plan.advanced.size() > arrays_before) plan.ellipsis_between = true;
    if (it.kind == IndexItem::Kind::ellipsis && arrays_before > 0) ellipsis_after_array = true;
  }
  while (vb.axis < a.ndim()) vb.keep();  // an implicit trailing ellipsis
  plan.view = a.view(vb.shape, vb.strides, vb.offset);
  return plan;
}

Array value_for(const Shape& shape, DType t, Device device, const Array& value, bool advanced) {
  if (value.weak() != WeakKind::none) {
    const Scalar s = scalar_of_weak(value);
    if (s.kind == WeakKind::complex && !is_complex(t) && !is_bool(t))  // as NumPy: float(1j) fails
      throw TypeError(cat("cannot assign the complex Python scalar ", s.str(), " to a ", name(t),
                          " array; assign its .real or use a complex array"));
    return scalar_array(s, t, device);
  }
  if (!(value.device() == device))
    throw ValueError(cat("cannot assign an array on ", value.device().str(), " to an array on ", device.str(),
                         "; move it first with x.to_device(\"", device.str(), "\")"));
  Array v = value;
  // NumPy drops leading length-1 dimensions of the value: a[0] = [[1, 2, 3]] works
  int drop = 0;
  while (v.ndim() - drop > static_cast<int>(shape.size()) && v.shape()[drop] == 1) ++drop;
  if (drop)
    v = v.view(Shape(v.shape().begin() + drop, v.shape().end()), Strides(v.strides().begin() + drop, v.strides().end()),
               v.offset());
  bool ok = v.ndim() <= static_cast<int>(shape.size());
  for (int k = 1; ok && k <= v.ndim(); ++k) {
    const std::int64_t vd = v.shape()[v.ndim() - k], sd = shape[shape.size() - k];
    ok = vd == sd || vd == 1;
  }
  if (!ok && advanced)
    throw ValueError(cat("shape mismatch: value array of shape ", shape_str(value.shape()),
                         " could not be broadcast to indexing result of shape ", shape_str(shape)));
  if (!ok)
    throw ValueError(
        cat("could not broadcast input array from shape ", shape_str(value.shape()), " into shape ", shape_str(shape)));
  return v;
}

}  // namespace detail

Array getitem(const Array& a, const Index& index) {
  detail::IndexPlan plan = detail::plan_index(a, index);
  if (plan.advanced.empty()) return plan.view;
  return detail::advanced_getitem(plan);
}

void setitem(const Array& a, const Index& index, const Array& value) {
  a.check_writeable();
  detail::IndexPlan plan = detail::plan_index(a, index);
  if (!plan.advanced.empty()) {
    detail::advanced_setitem(plan, value);
    return;
  }
  copy_into(plan.view, detail::value_for(plan.view.shape(), a.dtype(), a.device(), value));
}

}  // namespace cupric
