// reduce_layout.cpp — builds the loop nest of a reduction (see reduce_layout.hpp).
#include "reduce_layout.hpp"

#include <algorithm>
#include <cstdlib>

#include "cupric/errors.hpp"

namespace cupric::cpu {

bool ReduceLayout::single_axis_is_inner() const { return kept.empty() || std::llabs(reduced[0].in) < kept.back().in; }

std::int64_t ReduceLayout::kept_count() const {
  std::int64_t n = 1;
  for (const LoopDim& d : kept) n *= d.size;
  return n;
}

std::int64_t ReduceLayout::reduced_count() const {
  std::int64_t n = 1;
  for (const LoopDim& d : reduced) n *= d.size;
  return n;
}

namespace {
/// Orders dims outer -> inner by input stride (then output stride) and merges neighbours that
/// both walk contiguously.
std::vector<LoopDim> order_and_merge(std::vector<LoopDim> dims, bool merge) {
  std::stable_sort(dims.begin(), dims.end(), [](const LoopDim& a, const LoopDim& b) {
    if (std::llabs(a.in) != std::llabs(b.in)) return std::llabs(a.in) > std::llabs(b.in);
    return std::llabs(a.out) > std::llabs(b.out);
  });
  if (!merge) return dims;
  std::vector<LoopDim> merged;
  for (const LoopDim& d : dims) {
    if (!merged.empty() && merged.back().in == d.in * d.size && merged.back().out == d.out * d.size) {
      merged.back().size *= d.size;
      merged.back().in = d.in;
      merged.back().out = d.out;
    } else {
      merged.push_back(d);
    }
  }
  return merged;
}
}  // namespace

ReduceLayout reduce_layout(const Array& in, const Array& out, const std::vector<int>& axes, bool may_reorder_reduced) {
  if (in.ndim() > Odometer::kMaxDims)
    throw ValueError(cat("reductions support at most ", Odometer::kMaxDims, " dimensions, got ", in.ndim()));
  ReduceLayout layout;
  layout.in = static_cast<char*>(in.data());
  layout.out = static_cast<char*>(out.data());
  const std::int64_t isz = in.itemsize(), osz = out.itemsize();
  std::vector<LoopDim> kept, reduced;
  for (int d = 0; d < in.ndim(); ++d) {
    const bool is_reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    const std::int64_t n = in.shape()[d];
    if (n == 0) {
      layout.empty = true;
      if (is_reduced) layout.reduced_empty = true;
    }
    if (n == 1) continue;
    // a reduction's output has length 1 (stride unused) along reduced dims; a scan's has length n
    const bool out_walks = out.shape()[d] == n;
    LoopDim dim{n, in.strides()[d] * isz, out_walks ? out.strides()[d] * osz : 0};
    if (!is_reduced || may_reorder_reduced) {
      // walk reversed dimensions forwards: the order of a kept or freely ordered dim is unobservable
      if (dim.in < 0 || (dim.in == 0 && dim.out < 0)) {
        layout.in += (n - 1) * dim.in;
        layout.out += (n - 1) * dim.out;
        dim.in = -dim.in;
        dim.out = -dim.out;
      }
    }
    (is_reduced ? reduced : kept).push_back(dim);
  }
  layout.kept = order_and_merge(std::move(kept), true);
  layout.reduced = may_reorder_reduced ? order_and_merge(std::move(reduced), true) : std::move(reduced);
  return layout;
}

Odometer::Odometer(const LoopDim* dims, int ndims, std::int64_t start) : dims_(dims), ndims_(ndims) {
  for (int k = ndims; k-- > 0;) {
    index_[k] = start % dims[k].size;
    start /= dims[k].size;
    in_ += index_[k] * dims[k].in;
    out_ += index_[k] * dims[k].out;
  }
}

void Odometer::next() {
  for (int k = ndims_; k-- > 0;) {
    if (++index_[k] < dims_[k].size) {
      in_ += dims_[k].in;
      out_ += dims_[k].out;
      return;
    }
    index_[k] = 0;
    in_ -= (dims_[k].size - 1) * dims_[k].in;
    out_ -= (dims_[k].size - 1) * dims_[k].out;
  }
}

}  // namespace cupric::cpu
