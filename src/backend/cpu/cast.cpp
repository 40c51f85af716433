// cast.cpp — dtype conversions on the host (astype, copies, and the buffering that feeds ufunc
// loops inputs of another type): the loop of each pair of dtypes, and the copy engine.
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <utility>

#include "cpu_backend.hpp"
#include "cpu_dispatch.hpp"
#include "cupric/convert.h"
#include "cupric/thread_pool.hpp"

namespace cupric::cpu {

/// The conversion loops of the instruction-set variant in use (cast_loops.cpp, cpu_dispatch.hpp).
CastFn cast_kernel(DType from, DType to) {
  static const auto table = [] {
    std::array<std::array<CastFn, kNumDTypes>, kNumDTypes> t{};
    cpu_variant().fill_cast_loops(reinterpret_cast<CastLoopRow*>(t.data()));
    return t;
  }();
  return table[static_cast<int>(from)][static_cast<int>(to)];
}

namespace {
/// A 2-d copy where the source walks one dimension densely and the destination the other
/// (a transpose), ordered so that the source walks dimension 0 and the destination dimension 1
/// (the plan orders dimensions by one operand's memory: either way comes in); else nothing.
std::optional<ElementwisePlan> as_transpose(const ElementwisePlan& plan) {
  if (plan.ndim() != 2) return std::nullopt;
  const std::int64_t in = itemsize(plan.dtypes[0]), out = itemsize(plan.dtypes[1]);
  const auto& ss = plan.byte_strides[0];
  const auto& ds = plan.byte_strides[1];
  if (ss[0] == in && ds[1] == out && ss[1] != ss[0]) return plan;
  if (ss[1] == in && ds[0] == out && ss[0] != ss[1]) {
    ElementwisePlan t = plan;
    std::swap(t.shape[0], t.shape[1]);
    for (int op = 0; op < 2; ++op) std::swap(t.byte_strides[op][0], t.byte_strides[op][1]);
    return t;
  }
  return std::nullopt;
}

/// The in-register transposing copy of the variant in use for elements of `size` bytes, or null.
TransposeFn transpose_kernel(std::int64_t size) {
  static const auto table = [] {
    std::array<TransposeFn, 4> t{};
    cpu_variant().fill_transpose_loops(t.data());
    return t;
  }();
  const int log2 = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : size == 8 ? 3 : -1;
  return log2 < 0 ? nullptr : table[static_cast<std::size_t>(log2)];
}

void tiled_transpose(const ElementwisePlan& plan, CastFn fn) {
  constexpr std::int64_t kTile = 64;
  const std::int64_t rows = plan.shape[0], cols = plan.shape[1];
  const auto& ss = plan.byte_strides[0];
  const auto& ds = plan.byte_strides[1];
  const TransposeFn same_type = plan.dtypes[0] == plan.dtypes[1] ? transpose_kernel(itemsize(plan.dtypes[0])) : nullptr;
  const std::int64_t row_tiles = (rows + kTile - 1) / kTile, col_tiles = (cols + kTile - 1) / kTile;
  parallel_for(row_tiles * col_tiles, 16, [&](std::int64_t t0, std::int64_t t1) {
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::int64_t i0 = (t / col_tiles) * kTile, j0 = (t % col_tiles) * kTile;
      const std::int64_t i1 = std::min(rows, i0 + kTile), j1 = std::min(cols, j0 + kTile);
      const char* src = plan.data[0] + i0 * ss[0] + j0 * ss[1];
      char* dst = plan.data[1] + i0 * ds[0] + j0 * ds[1];
      if (same_type) {
        same_type(src, ss[1], dst, ds[0], i1 - i0, j1 - j0);
        continue;
      }
      // walk the source densely (down dimension 0) for each destination column j
      for (std::int64_t j = j0; j < j1; ++j) fn(src + (j - j0) * ss[1], ss[0], dst + (j - j0) * ds[1], ds[0], i1 - i0);
    }
  });
}
}  // namespace

void CpuBackend::cast(const ElementwisePlan& plan) {
  const int nd = plan.ndim();
  if (plan.size() >= 4096)
    if (const auto t = as_transpose(plan)) return tiled_transpose(*t, cast_kernel(plan.dtypes[0], plan.dtypes[1]));
  const std::int64_t s0 = plan.byte_strides[0][nd - 1], s1 = plan.byte_strides[1][nd - 1];
  const DType from = plan.dtypes[0], to = plan.dtypes[1];
  const std::int64_t isz = itemsize(from);
  const bool memcpy_ok = from == to && s0 == isz && s1 == isz;
  const CastFn fn = cast_kernel(from, to);
  parallel_for(plan.size(), kGrain * 4, [&](std::int64_t b, std::int64_t e) {
    for_each_run(plan, b, e, [&](char** p, std::int64_t n) {
      if (memcpy_ok) std::memmove(p[1], p[0], static_cast<std::size_t>(n * isz));
      else fn(p[0], s0, p[1], s1, n);
    });
  });
}

}  // namespace cupric::cpu
