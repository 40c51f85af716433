// advanced_indexing.cpp — indexing with integer and boolean arrays (NumPy's "advanced"
// indexing): index arrays are checked and turned into element offsets on the host, then the
// device's backend gathers (a[idx]) or scatters (a[idx] = v) along one flattened dimension.
#include <algorithm>

#include "cupric/backend.hpp"
#include "cupric/errors.hpp"
#include "indexing_plan.hpp"

namespace cupric {

namespace {
/// A C-contiguous host copy (the host waits for a device array here).
Array host_copy(const Array& a) {
  Array c = ascontiguous(a);
  if (c.device().is_cpu()) return c;
  Array h = Array::empty(c.shape(), c.dtype());
  backend_for(c.device()).copy_to_host(h.data(), c.data(), static_cast<std::size_t>(c.nbytes()));
  return h;
}

Array to_device(const Array& host, Device device) {
  if (device.is_cpu()) return host;
  Array d = Array::empty(host.shape(), host.dtype(), device);
  backend_for(device).copy_from_host(d.data(), host.data(), static_cast<std::size_t>(host.nbytes()));
  return d;
}

/// Positions as host int64, negative ones wrapped; IndexError for out-of-range ones.
Array checked_positions(const Array& positions, std::int64_t size, int axis) {
  const Array h = host_copy(positions);
  Array out = Array::empty(h.shape(), DType::int64);
  auto* dst = static_cast<std::int64_t*>(out.data());
  const std::int64_t n = h.size();
  visit_dtype(h.dtype(), [&]<class T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const T* src = static_cast<const T*>(h.data());
      for (std::int64_t i = 0; i < n; ++i) {
        const T v = src[i];
        if constexpr (std::is_same_v<T, std::uint64_t>) {
          if (v >= static_cast<std::uint64_t>(size))
            throw IndexError(cat("index ", v, " is out of bounds for axis ", axis, " with size ", size));
          dst[i] = static_cast<std::int64_t>(v);
        } else {
          const auto x = static_cast<std::int64_t>(v);
          if (x < -size || x >= size)
            throw IndexError(cat("index ", x, " is out of bounds for axis ", axis, " with size ", size));
          dst[i] = x < 0 ? x + size : x;
        }
      }
    } else {
      throw IndexError("arrays used as indices must be of integer (or boolean) type");
    }
  });
  return out;
}

Shape broadcast_index_shapes(const std::vector<Array>& positions) {
  std::vector<Shape> shapes;
  for (const Array& p : positions) shapes.push_back(p.shape());
  try {
    return broadcast_shapes(shapes);
  } catch (const ValueError&) {
    std::string list;
    for (const Shape& s : shapes) list += (list.empty() ? "" : " ") + shape_str(s);
    throw IndexError(cat("shape mismatch: indexing arrays could not be broadcast together with shapes ", list));
  }
}

bool dims_adjacent(const std::vector<detail::AdvancedIndex>& advanced) {
  for (std::size_t k = 1; k < advanced.size(); ++k)
    if (advanced[k].dim != advanced[k - 1].dim + 1) return false;
  return true;
}
}  // namespace

namespace detail {

std::vector<Array> nonzero_host(const Array& a) {
  if (a.ndim() == 0)
    throw ValueError("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() instead.");
  Array truth = a;
  if (a.dtype() != DType::bool_) {
    truth = Array::empty(a.shape(), DType::bool_, a.device());
    if (a.size()) backend_for(a.device()).cast(elementwise_plan({&a, &truth}, a.shape()));
  }
  const Array h = host_copy(truth);
  // read as bytes: a bool byte other than 0 and 1 (memory filled by other means: DLPack, views of
  // uint8 data) is true, counted and stepped over once, never added as its value
  const auto* mask = static_cast<const unsigned char*>(h.data());
  const std::int64_t n = h.size();
  const std::int64_t count = std::count_if(mask, mask + n, [](unsigned char b) { return b != 0; });
  const int nd = a.ndim();
  std::vector<Array> out;
  for (int k = 0; k < nd; ++k) out.push_back(Array::empty({count + 1}, DType::int64).view({count}, {1}, 0));
  if (nd == 1) {  // branch-free: write every position, advance only past true ones
    auto* dst = static_cast<std::int64_t*>(out[0].data());
    for (std::int64_t i = 0, j = 0; i < n; ++i) {
      dst[j] = i;
      j += mask[i] != 0;
    }
    return out;
  }
  std::vector<std::int64_t*> dst;
  for (int k = 0; k < nd; ++k) dst.push_back(static_cast<std::int64_t*>(out[k].data()));
  std::vector<std::int64_t> idx(nd, 0);
  for (std::int64_t i = 0, j = 0; i < n; ++i) {
    if (mask[i] != 0) {
      for (int k = 0; k < nd; ++k) dst[k][j] = idx[k];
      ++j;
    }
    for (int k = nd - 1; k >= 0 && ++idx[k] == a.shape()[k]; --k) idx[k] = 0;
  }
  return out;
}

}  // namespace detail

std::vector<Array> nonzero(const Array& a) {
  std::vector<Array> out = detail::nonzero_host(a);
  for (Array& o : out) o = to_device(o, a.device());
  return out;
}

namespace detail {

namespace {
/// A single int64 CPU index array of non-negative positions into a stride-1 dimension is its
/// own offsets array: checked (vectorisable min/max) and returned as is. Undefined otherwise.
Array offsets_in_place(const AdvancedIndex& adv, std::int64_t size, std::int64_t stride) {
  const Array& p = adv.positions;
  if (adv.checked || stride != 1 || p.dtype() != DType::int64 || !p.device().is_cpu() || !p.is_c_contiguous())
    return {};
  const auto* v = static_cast<const std::int64_t*>(p.data());
  const std::int64_t n = p.size();
  std::int64_t lo = 0, hi = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, v[i]);
    hi = std::max(hi, v[i]);
  }
  if (hi >= size || lo < -size) checked_positions(p, size, adv.axis);  // throws, naming the first bad index
  return lo < 0 ? Array() : p.view({n}, {1}, p.offset());
}

/// offsets[i] = the sum over index arrays of position * stride of the dimension it indexes.
Array offsets_for(const IndexPlan& plan, Shape& rows_shape) {
  const Array& view = plan.view;
  if (plan.advanced.size() == 1) {
    const AdvancedIndex& adv = plan.advanced.front();
    Array direct = offsets_in_place(adv, view.shape()[adv.dim], view.strides()[adv.dim]);
    if (direct.defined()) {
      rows_shape = adv.positions.shape();
      return direct;
    }
  }
  std::vector<Array> positions;
  for (const AdvancedIndex& adv : plan.advanced) positions.push_back(adv.positions);
  rows_shape = broadcast_index_shapes(positions);
  if (shape_size(rows_shape) == 0) return Array::empty({0}, DType::int64);  // NumPy: unused indices are not checked
  for (std::size_t k = 0; k < positions.size(); ++k) {
    const AdvancedIndex& adv = plan.advanced[k];
    if (!adv.checked) positions[k] = checked_positions(adv.positions, view.shape()[adv.dim], adv.axis);
  }
  const std::int64_t n = shape_size(rows_shape);
  if (positions.size() == 1) {
    // scale in place: the positions are this plan's own (fresh from checked_positions, or from
    // the mask's nonzero_host)
    Array offsets = positions.front().view({n}, {1}, positions.front().offset());
    auto* offs = static_cast<std::int64_t*>(offsets.data());
    const std::int64_t stride = view.strides()[plan.advanced.front().dim];
    for (std::int64_t i = 0; i < n; ++i) offs[i] *= stride;
    return offsets;
  }
  Array offsets = Array::empty({n}, DType::int64);
  auto* offs = static_cast<std::int64_t*>(offsets.data());
  std::fill(offs, offs + n, 0);
  Array expanded = Array::empty(rows_shape, DType::int64);
  const auto* pos = static_cast<const std::int64_t*>(expanded.data());
  for (std::size_t k = 0; k < positions.size(); ++k) {
    if (n) copy_into(expanded, broadcast_to(positions[k], rows_shape));
    const std::int64_t stride = view.strides()[plan.advanced[k].dim];
    for (std::int64_t i = 0; i < n; ++i) offs[i] += pos[i] * stride;
  }
  return offsets;
}
}  // namespace

GatherPlan gather_plan(const IndexPlan& plan) {
  const Array& view = plan.view;
  Shape rows_shape;
  const Array offsets = offsets_for(plan, rows_shape);

  GatherPlan g;
  Shape rest_shape;
  Strides rest_strides;
  for (int d = 0; d < view.ndim(); ++d) {
    const bool indexed =
        std::any_of(plan.advanced.begin(), plan.advanced.end(), [d](const AdvancedIndex& a) { return a.dim == d; });
    if (indexed) continue;
    rest_shape.push_back(view.shape()[d]);
    rest_strides.push_back(view.strides()[d]);
  }
  g.rest = view.view(rest_shape, rest_strides, view.offset());
  g.offsets = to_device(offsets, view.device());
  // NumPy: index arrays next to each other put their dims in place; separated ones put them first
  g.rows_at = dims_adjacent(plan.advanced) && !plan.ellipsis_between ? plan.advanced.front().dim : 0;
  g.rows_ndim = static_cast<int>(rows_shape.size());
  g.result_shape = rest_shape;
  g.result_shape.insert(g.result_shape.begin() + g.rows_at, rows_shape.begin(), rows_shape.end());
  return g;
}

Array rows_view(const Array& result, const GatherPlan& g) {
  const Shape& rs = result.shape();
  const Strides& cs = result.strides();
  const int end = g.rows_at + g.rows_ndim;
  std::int64_t n = 1;
  for (int d = g.rows_at; d < end; ++d) n *= rs[d];
  Shape shape{n};
  Strides strides{g.rows_ndim ? cs[end - 1] : 1};
  for (int d = 0; d < result.ndim(); ++d) {
    if (d >= g.rows_at && d < end) continue;
    shape.push_back(rs[d]);
    strides.push_back(cs[d]);
  }
  return result.view(shape, strides, result.offset());
}

Array advanced_getitem(const IndexPlan& plan) {
  const GatherPlan g = gather_plan(plan);
  Array out = Array::empty(g.result_shape, plan.view.dtype(), plan.view.device());
  if (out.size()) backend_for(out.device()).gather(g.rest, g.offsets, rows_view(out, g));
  return out;
}

void advanced_setitem(const IndexPlan& plan, const Array& value) {
  const GatherPlan g = gather_plan(plan);
  const Array& view = plan.view;
  const Array v = value_for(g.result_shape, view.dtype(), view.device(), value, true);
  if (shape_size(g.result_shape) == 0) return;
  Array rows = Array::empty(g.result_shape, view.dtype(), view.device());
  copy_into(rows, v);  // broadcast + convert first: also a copy when value overlaps the target
  backend_for(view.device()).scatter(g.rest, g.offsets, rows_view(rows, g));
}

}  // namespace detail
}  // namespace cupric
