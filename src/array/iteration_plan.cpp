// iteration_plan.cpp — turns operands of one broadcast shape into the smallest loop nest:
// size-1 dimensions dropped, dimensions ordered by memory (innermost = smallest strides),
// and neighbours merged wherever every operand is contiguous across them.
#include <algorithm>
#include <cstdlib>

#include "cupric/backend.hpp"
#include "cupric/errors.hpp"

namespace cupric {

std::int64_t ElementwisePlan::size() const { return shape_size(shape); }

bool ElementwisePlan::contiguous() const {
  if (ndim() != 1) return ndim() == 0;
  for (int op = 0; op < noperands(); ++op)
    if (byte_strides[op][0] != itemsize(dtypes[op])) return false;
  return true;
}

namespace {
/// -1 when dimension a should be outside b (a has the larger strides), +1 when inside, 0 unsure.
int compare_dims(const OperandVector<Strides>& strides, int a, int b) {
  for (const auto& s : strides) {
    std::int64_t sa = std::llabs(s[a]), sb = std::llabs(s[b]);
    if (sa == 0 || sb == 0 || sa == sb) continue;
    return sa > sb ? -1 : 1;
  }
  return 0;
}
}  // namespace

ElementwisePlan elementwise_plan(const std::vector<const Array*>& operands, const Shape& shape) {
  return elementwise_plan(std::span<const Array* const>(operands.data(), operands.size()), shape);
}

ElementwisePlan elementwise_plan(std::span<const Array* const> operands, const Shape& shape) {
  const int nd = static_cast<int>(shape.size());
  const int nop = static_cast<int>(operands.size());
  ElementwisePlan plan;
  plan.data.resize(nop);
  plan.dtypes.resize(nop);
  plan.on_host.resize(nop);
  plan.storages.resize(nop);
  for (int op = 0; op < nop; ++op) {
    plan.on_host[op] = operands[op]->device().is_cpu() ? 1 : 0;
    plan.storages[op] = operands[op]->storage().get();
  }

  // fast path: every operand dense in C order with the full shape, or a single element
  const std::int64_t total = shape_size(shape);
  bool dense = total > 0;
  for (int op = 0; dense && op < nop; ++op) {
    const Array& a = *operands[op];
    dense = (a.shape() == shape && a.is_c_contiguous()) || a.size() == 1;
  }
  if (dense) {
    plan.shape = {total};
    plan.byte_strides.resize(nop);
    for (int op = 0; op < nop; ++op) {
      const Array& a = *operands[op];
      plan.data[op] = static_cast<char*>(a.data());
      plan.dtypes[op] = a.dtype();
      plan.byte_strides[op] = {a.size() == 1 && total != 1 ? 0 : a.itemsize()};
    }
    return plan;
  }

  // broadcast byte strides, aligned on the right
  OperandVector<Strides> strides(static_cast<std::size_t>(nop), Strides(static_cast<std::size_t>(nd), 0));
  for (int op = 0; op < nop; ++op) {
    const Array& a = *operands[op];
    plan.data[op] = static_cast<char*>(a.data());
    plan.dtypes[op] = a.dtype();
    const int shift = nd - a.ndim();
    if (shift < 0)
      throw ValueError(cat("operand of shape ", shape_str(a.shape()), " has more dimensions than ", shape_str(shape)));
    for (int d = 0; d < a.ndim(); ++d) {
      if (a.shape()[d] == shape[d + shift]) strides[op][d + shift] = a.strides()[d] * a.itemsize();
      else if (a.shape()[d] != 1)
        throw ValueError(cat("operand of shape ", shape_str(a.shape()), " does not broadcast to ", shape_str(shape)));
    }
  }

  // keep the dimensions that matter, then order them outer-to-inner by memory
  SmallVector<int, kInlineDims> dims;
  for (int d = 0; d < nd; ++d) {
    if (shape[d] == 0) {  // nothing to do at all
      plan.shape = {0};
      plan.byte_strides.assign(nop, {0});
      return plan;
    }
    if (shape[d] != 1) dims.push_back(d);
  }
  for (std::size_t i = 1; i < dims.size(); ++i) {  // stable insertion sort
    for (std::size_t j = i; j > 0 && compare_dims(strides, dims[j - 1], dims[j]) > 0; --j)
      std::swap(dims[j - 1], dims[j]);
  }

  // merge neighbours that every operand walks contiguously
  Shape out_shape;
  OperandVector<Strides> out_strides(static_cast<std::size_t>(nop));
  for (int d : dims) {
    bool merge = !out_shape.empty();
    for (int op = 0; merge && op < nop; ++op) merge = out_strides[op].back() == strides[op][d] * shape[d];
    if (merge) {
      out_shape.back() *= shape[d];
      for (int op = 0; op < nop; ++op) out_strides[op].back() = strides[op][d];
    } else {
      out_shape.push_back(shape[d]);
      for (int op = 0; op < nop; ++op) out_strides[op].push_back(strides[op][d]);
    }
  }
  if (out_shape.empty()) {  // a single element
    out_shape.push_back(1);
    for (int op = 0; op < nop; ++op) out_strides[op].push_back(0);
  }
  plan.shape = std::move(out_shape);
  plan.byte_strides = std::move(out_strides);
  return plan;
}

}  // namespace cupric
