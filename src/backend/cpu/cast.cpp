// cast.cpp — dtype conversion loops for every pair of dtypes (astype, copies, and the
// buffering that feeds ufunc loops inputs of another type).
#include <algorithm>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "cpu_backend.hpp"
#include "cupric/convert.h"
#include "cupric/thread_pool.hpp"

namespace cupric::cpu {

namespace {
using cu::convert;

template <class From, class To>
void cast_loop(const char* src, std::int64_t ss, char* dst, std::int64_t ds, std::int64_t n) {
  if (ss == sizeof(From) && ds == sizeof(To)) {
    const From* s = reinterpret_cast<const From*>(src);
    To* d = reinterpret_cast<To*>(dst);
    for (std::int64_t i = 0; i < n; ++i) d[i] = convert<To>(s[i]);
  } else {
    for (std::int64_t i = 0; i < n; ++i, src += ss, dst += ds) {
      From v;
      std::memcpy(&v, src, sizeof(From));
      To r = convert<To>(v);
      std::memcpy(dst, &r, sizeof(To));
    }
  }
}

struct CastTable {
  CastFn fn[kNumDTypes][kNumDTypes];
  CastTable() {
    fill(std::make_index_sequence<kNumDTypes>{});
  }
  template <std::size_t... F>
  void fill(std::index_sequence<F...>) {
    (fill_row<F>(std::make_index_sequence<kNumDTypes>{}), ...);
  }
  template <std::size_t F, std::size_t... T>
  void fill_row(std::index_sequence<T...>) {
    ((fn[F][T] = &cast_loop<ctype<static_cast<DType>(F)>, ctype<static_cast<DType>(T)>>), ...);
  }
};
}  // namespace

CastFn cast_kernel(DType from, DType to) {
  static const CastTable table;
  return table.fn[static_cast<int>(from)][static_cast<int>(to)];
}

namespace {
/// A 2-d copy where the source walks one dimension densely and the destination the other
/// (a transpose): done in square tiles so that both sides stay in cache.
bool is_transpose(const ElementwisePlan& plan) {
  if (plan.ndim() != 2) return false;
  const auto& ss = plan.byte_strides[0];
  const auto& ds = plan.byte_strides[1];
  return ss[0] == itemsize(plan.dtypes[0]) && ds[1] == itemsize(plan.dtypes[1]) && ss[1] != ss[0];
}

void tiled_transpose(const ElementwisePlan& plan, CastFn fn) {
  constexpr std::int64_t kTile = 64;
  const std::int64_t rows = plan.shape[0], cols = plan.shape[1];
  const auto& ss = plan.byte_strides[0];
  const auto& ds = plan.byte_strides[1];
  const std::int64_t row_tiles = (rows + kTile - 1) / kTile, col_tiles = (cols + kTile - 1) / kTile;
  parallel_for(row_tiles * col_tiles, 16, [&](std::int64_t t0, std::int64_t t1) {
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::int64_t i0 = (t / col_tiles) * kTile, j0 = (t % col_tiles) * kTile;
      const std::int64_t i1 = std::min(rows, i0 + kTile), j1 = std::min(cols, j0 + kTile);
      // walk the source densely (down dimension 0) for each destination column j
      for (std::int64_t j = j0; j < j1; ++j)
        fn(plan.data[0] + i0 * ss[0] + j * ss[1], ss[0], plan.data[1] + i0 * ds[0] + j * ds[1], ds[0], i1 - i0);
    }
  });
}
}  // namespace

void CpuBackend::cast(const ElementwisePlan& plan) {
  const int nd = plan.ndim();
  if (is_transpose(plan) && plan.size() >= 4096) return tiled_transpose(plan, cast_kernel(plan.dtypes[0], plan.dtypes[1]));
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
