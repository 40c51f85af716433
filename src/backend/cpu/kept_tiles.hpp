// kept_tiles.hpp — the task split that arg-reductions and scans share when their one reduced
// axis is not walked innermost: the kept elements, cut into tiles along the innermost kept
// dimension, are spread over the thread pool, and each tile walks the axis row by row.
#pragma once

#include <algorithm>
#include <cstdint>

#include "cpu_backend.hpp"
#include "cupric/thread_pool.hpp"
#include "reduce_layout.hpp"

namespace cupric::cpu {

/// Calls fn(state, in, out, width) for every tile of up to `tile` kept elements along the
/// innermost kept dimension: `in` / `out` point at the tile's first element (the axis's row 0),
/// `state` is made once per task by make_state() (scratch buffers).
template <class MakeState, class Fn>
void for_each_kept_tile(const ReduceLayout& L, std::int64_t tile, MakeState&& make_state, Fn&& fn) {
  const LoopDim& axis = L.reduced[0];
  const LoopDim& v = L.kept.back();
  const int n_outer_dims = static_cast<int>(L.kept.size()) - 1;
  const std::int64_t n_outer = L.kept_count() / v.size;
  const std::int64_t ntiles = (v.size + tile - 1) / tile;
  const std::int64_t task_elems = axis.size * std::min(v.size, tile);
  parallel_for(n_outer * ntiles, std::max<std::int64_t>(1, kGrain / task_elems), [&](std::int64_t b, std::int64_t e) {
    auto state = make_state();
    for (std::int64_t t = b; t < e; ++t) {
      const std::int64_t ti = t % ntiles;
      const Odometer pos(L.kept.data(), n_outer_dims, t / ntiles);
      const std::int64_t width = std::min(tile, v.size - ti * tile);
      fn(state, L.in + pos.in() + ti * tile * v.in, L.out + pos.out() + ti * tile * v.out, width);
    }
  });
}

}  // namespace cupric::cpu
