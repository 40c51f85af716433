// reduce_engine.hpp — the reduction engine of the CPU backend, for one operator and one
// accumulator type. Two shapes of work after the loop nest is built (reduce_layout.hpp):
//   runs: the reduced elements of one output are long contiguous runs (row sums, full
//         reductions): each run is folded with the lane kernels (pairwise for float sums);
//   rows: vectors along one dimension are folded row by row into a tile of accumulators,
//         vectorised along the vector, in a pairwise tree of row blocks. Used when the
//         innermost dimension is kept (column sums; the tile is then the output), and for
//         short reduced runs under other reduced dimensions (the tile is then folded once more).
// Work is cut into tasks of fixed size (not per thread), so results do not depend on the
// number of threads; partial results of one output are combined in a balanced tree.
#pragma once

#include <algorithm>
#include <iterator>
#include <utility>

#include "cpu_backend.hpp"
#include "cupric/errors.hpp"
#include "cupric/thread_pool.hpp"
#include "reduce_layout.hpp"
#include "reduce_loops.hpp"
#include "reduce_ops.hpp"

namespace cupric::cpu {

namespace reduce_engine {
using namespace reduce_ops;

inline constexpr std::int64_t kChunk = std::int64_t{1} << 16;  ///< elements of one output per task
inline constexpr std::int64_t kBuffer = 1024;                  ///< elements converted / outputs stored at a time
inline constexpr std::int64_t kTileBytes = 65536;              ///< accumulator bytes of a rows task
inline constexpr std::int64_t kRowBlock = 32;                  ///< rows folded directly before pairing
inline constexpr std::int64_t kShortRun = 512;                 ///< runs this short are folded as rows

/// Combines partial results pushed in order. Pairwise operators keep a binary counter of
/// subtrees (n equal leaves give a balanced tree); the others fold a running value.
template <class Op, class T>
class Cascade {
 public:
  void push(T v) {
    if constexpr (Op::pairwise) {
      int k = 0;
      for (std::uint64_t c = count_; c & 1; c >>= 1, ++k) v = Op::combine(slots_[k], v);
      slots_[k] = v;
    } else {
      acc_ = Op::combine(acc_, v);
    }
    ++count_;
  }
  T result() const {
    if constexpr (Op::pairwise) {
      T r = Op::template identity<T>();
      for (int k = 0; k < 64; ++k)
        if ((count_ >> k) & 1) r = Op::combine(slots_[k], r);
      return r;
    } else {
      return acc_;
    }
  }

 private:
  T slots_[64];
  T acc_ = Op::template identity<T>();
  std::uint64_t count_ = 0;
};

/// Rows work: each output (or output tile) folds the rows (along `rows`) of vectors along `v`.
struct RowPlan {
  const LoopDim* outer;  ///< dims walking the outputs
  int n_outer;
  LoopDim v;            ///< the vector dimension
  const LoopDim* rows;  ///< dims walking the rows
  int n_rows;
  bool horizontal;  ///< v is reduced too: each output's vector is folded to one value
};

template <class Op, class T>
class Engine {
 public:
  static constexpr std::int64_t tsz = sizeof(T);
  using P = partial_t<Op, T>;  ///< type of partial results of whole runs

  Engine(const ReduceLayout& layout, DType in_dtype, DType out_dtype)
      : L_(layout),
        load_(cast_kernel(in_dtype, dtype_of<T>())),
        store_(cast_kernel(dtype_of<T>(), out_dtype)),
        store_partial_(cast_kernel(dtype_of<P>(), out_dtype)),
        loops_(typed_reduce_loops<Op, T>()),
        in_is_t_(in_dtype == dtype_of<T>()) {}

  void run() const {
    const auto& kept = L_.kept;
    const auto& red = L_.reduced;
    const int nk = static_cast<int>(kept.size()), nr = static_cast<int>(red.size());
    if (!kept.empty() && red.back().in >= kept.back().in) {  // innermost dimension kept
      fold_rows_of({kept.data(), nk - 1, kept.back(), red.data(), nr, false});
    } else if (nr >= 2 && red.back().size <= kShortRun) {  // short runs under other reduced dims
      fold_rows_of({kept.data(), nk, red.back(), red.data(), nr - 1, true});
    } else {
      fold_runs();
    }
  }

 private:
  // ---- runs ------------------------------------------------------------------------------------

  /// One run of n elements at byte stride `stride`, converted through buf when needed.
  P reduce_run(const char* p, std::int64_t n, std::int64_t stride, T* buf) const {
    if (in_is_t_ && stride == tsz) return loops_.contiguous(reinterpret_cast<const T*>(p), n);
    Cascade<Op, P> parts;
    for (std::int64_t off = 0; off < n; off += kBuffer) {
      const std::int64_t m = std::min(kBuffer, n - off);
      load_(p + off * stride, stride, reinterpret_cast<char*>(buf), tsz, m);
      const P part = loops_.contiguous(buf, m);
      if (m == n) return part;
      parts.push(part);
    }
    return parts.result();
  }

  /// Flat reduced indices [rb, re) of the output whose input starts at base.
  P reduce_range(const char* base, std::int64_t rb, std::int64_t re, T* buf) const {
    if (L_.reduced.size() == 1) {
      const LoopDim& d = L_.reduced[0];
      return reduce_run(base + rb * d.in, re - rb, d.in, buf);
    }
    Cascade<Op, P> parts;
    for_each_reduced_run(L_.reduced, rb, re, [&](std::int64_t off, std::int64_t n, std::int64_t s) {
      parts.push(reduce_run(base + off, n, s, buf));
    });
    return parts.result();
  }

  /// Outputs [b, e), whole reductions each, stored in batches along the innermost kept dim.
  void runs_of_outputs(std::int64_t b, std::int64_t e, std::int64_t R) const {
    alignas(64) T buf[kBuffer];
    alignas(64) P results[kBuffer];
    if (L_.kept.empty()) {
      results[0] = reduce_range(L_.in, 0, R, buf);
      store_partial_(reinterpret_cast<const char*>(results), sizeof(P), L_.out, 0, 1);
      return;
    }
    const LoopDim& inner = L_.kept.back();
    Odometer o(L_.kept, b);
    for (std::int64_t i = b; i < e;) {
      const std::int64_t m = std::min({kBuffer, e - i, inner.size - i % inner.size});
      char* dst = L_.out + o.out();
      for (std::int64_t j = 0; j < m; ++j, o.next()) results[j] = reduce_range(L_.in + o.in(), 0, R, buf);
      store_partial_(reinterpret_cast<const char*>(results), sizeof(P), dst, inner.out, m);
      i += m;
    }
  }

  void fold_runs() const {
    const std::int64_t n_out = L_.kept_count(), R = L_.reduced_count();
    const std::int64_t per_out = (R + kChunk - 1) / kChunk;  // tasks per output
    if (per_out == 1) {
      parallel_for(n_out, std::max<std::int64_t>(1, kGrain / R),
                   [&](std::int64_t b, std::int64_t e) { runs_of_outputs(b, e, R); });
      return;
    }
    const Scratch<P> partials(0, n_out * per_out);
    P* const partial = partials.get();
    parallel_for(n_out * per_out, 1, [&](std::int64_t b, std::int64_t e) {
      alignas(64) T buf[kBuffer];
      for (std::int64_t t = b; t < e; ++t) {
        const std::int64_t c = t % per_out;
        Odometer o(L_.kept, t / per_out);
        partial[t] = reduce_range(L_.in + o.in(), c * kChunk, std::min(R, (c + 1) * kChunk), buf);
      }
    });
    Odometer o(L_.kept, 0);
    for (std::int64_t i = 0; i < n_out; ++i, o.next()) {
      const P v = tree_lanes<Op>(partial + i * per_out, static_cast<int>(per_out), 1);
      store_partial_(reinterpret_cast<const char*>(&v), sizeof(P), L_.out + o.out(), 0, 1);
    }
  }

  // ---- rows ------------------------------------------------------------------------------------

  /// acc[0:tw] = rows [rb, re) of the tile at base folded in order (four at a time in place).
  void fold_rows_leaf(const RowPlan& rp, const char* base, std::int64_t rb, std::int64_t re, std::int64_t tw, T* acc,
                      T* rowbuf) const {
    Odometer rows(rp.rows, rp.n_rows, rb);
    std::int64_t r = rb;
    if (in_is_t_ && rp.v.in == tsz && re - rb >= 4) {
      for (; r + 4 <= re; r += 4) {
        const T* p[4];
        for (auto& q : p) {
          q = reinterpret_cast<const T*>(base + rows.in());
          rows.next();
        }
        if (r == rb) loops_.rows4_first(acc, p[0], p[1], p[2], p[3], tw);
        else loops_.rows4(acc, p[0], p[1], p[2], p[3], tw);
      }
    } else {
      load_(base + rows.in(), rp.v.in, reinterpret_cast<char*>(acc), tsz, tw);
      rows.next();
      ++r;
    }
    for (; r < re; ++r, rows.next()) {
      load_(base + rows.in(), rp.v.in, reinterpret_cast<char*>(rowbuf), tsz, tw);
      loops_.row(acc, rowbuf, tw);
    }
  }

  /// acc[0:tw] = rows [rb, re) folded; pairwise operators split the rows in halves (multiples
  /// of kRowBlock) and keep right halves in `levels` (one tile per level).
  void fold_rows(const RowPlan& rp, const char* base, std::int64_t rb, std::int64_t re, std::int64_t tw, T* acc,
                 T* rowbuf, T* levels, std::int64_t stride) const {
    if (!Op::pairwise || re - rb <= kRowBlock) {
      fold_rows_leaf(rp, base, rb, re, tw, acc, rowbuf);
      return;
    }
    const std::int64_t mid = rb + std::max(kRowBlock, (re - rb) / 2 / kRowBlock * kRowBlock);
    fold_rows(rp, base, rb, mid, tw, acc, rowbuf, levels, stride);
    fold_rows(rp, base, mid, re, tw, levels, rowbuf, levels + stride, stride);
    loops_.row(acc, levels, tw);
  }

  /// Writes a folded tile: as tw outputs along v, or (horizontal) folded into one output.
  void store_tile(const RowPlan& rp, const T* acc, std::int64_t tw, char* dst) const {
    if (!rp.horizontal) {
      store_(reinterpret_cast<const char*>(acc), tsz, dst, rp.v.out, tw);
      return;
    }
    const P v = loops_.contiguous(acc, tw);
    store_partial_(reinterpret_cast<const char*>(&v), sizeof(P), dst, 0, 1);
  }

  void fold_rows_of(const RowPlan& rp) const {
    std::int64_t n_outer = 1, R = 1;
    for (int k = 0; k < rp.n_outer; ++k) n_outer *= rp.outer[k].size;
    for (int k = 0; k < rp.n_rows; ++k) R *= rp.rows[k].size;
    const std::int64_t W = rp.v.size, max_tile = kTileBytes / tsz;  // horizontal: W <= kShortRun <= max_tile
    const std::int64_t tile = std::min(W, max_tile), ntiles = (W + max_tile - 1) / max_tile;
    const std::int64_t rows_per_task = std::max<std::int64_t>(4 * kRowBlock, kChunk / tile);
    const std::int64_t per_out = (R + rows_per_task - 1) / rows_per_task;
    const std::int64_t ntasks = n_outer * ntiles * per_out;
    int depth = 2;
    while ((std::int64_t{1} << depth) * kRowBlock < std::min(R, rows_per_task)) ++depth;
    const Scratch<T> partials(0, per_out > 1 ? ntasks * tile : 0);
    T* const partial = partials.get();
    auto tile_at = [&](std::int64_t g, std::int64_t* tw) {  // output tile g: input/output offsets
      const std::int64_t ti = g % ntiles;
      const Odometer pos(rp.outer, rp.n_outer, g / ntiles);
      *tw = std::min(max_tile, W - ti * max_tile);
      return std::pair{pos.in() + ti * max_tile * rp.v.in, pos.out() + (rp.horizontal ? 0 : ti * max_tile * rp.v.out)};
    };

    parallel_for(ntasks, std::max<std::int64_t>(1, kGrain / (std::min(R, rows_per_task) * tile)),
                 [&](std::int64_t b, std::int64_t e) {
                   const Scratch<T> buffers(1, (depth + 6) * tile);  // acc, row buffer, levels
                   T* const scratch = buffers.get();
                   for (std::int64_t t = b; t < e; ++t) {
                     std::int64_t tw;
                     const auto [in_off, out_off] = tile_at(t / per_out, &tw);
                     const std::int64_t c = t % per_out;
                     T* acc = per_out > 1 ? partial + t * tile : scratch;
                     fold_rows(rp, L_.in + in_off, c * rows_per_task, std::min(R, (c + 1) * rows_per_task), tw, acc,
                               scratch + tile, scratch + 2 * tile, tile);
                     if (per_out == 1) store_tile(rp, acc, tw, L_.out + out_off);
                   }
                 });
    if (per_out == 1) return;
    parallel_for(n_outer * ntiles, 1, [&](std::int64_t b, std::int64_t e) {  // partial tiles: a balanced tree
      for (std::int64_t g = b; g < e; ++g) {
        std::int64_t tw;
        const auto offsets = tile_at(g, &tw);
        T* parts = partial + g * per_out * tile;
        for (std::int64_t width = 1; width < per_out; width *= 2)
          for (std::int64_t c = 0; c + width < per_out; c += 2 * width)
            loops_.row(parts + c * tile, parts + (c + width) * tile, tw);
        store_tile(rp, parts, tw, L_.out + offsets.second);
      }
    });
  }

  const ReduceLayout& L_;
  CastFn load_, store_, store_partial_;
  TypedReduceLoops<Op, T> loops_;  ///< the inner loops, of the instruction-set variant in use
  bool in_is_t_;
};

}  // namespace reduce_engine

// ---- the table's rows -------------------------------------------------------------------------

/// Translation units the rows are compiled in (reduce_part<K>.cpp: the rows whose index modulo
/// kReduceParts is K), so that builds stay parallel: a row costs tens of seconds of compiling.
inline constexpr int kReduceParts = 4;

/// Runs row Op with accumulator type T, the compute type of the output dtype (float16/bfloat16
/// outputs accumulate in float32).
template <ReduceOp Op>
void reduce_row(const ReduceLayout& layout, const Array& in, const Array& out, DType compute) {
  visit_dtype(compute, [&]<class T>() {
    constexpr bool logical = reduction_row(Op).acc == AccRule::boolean;
    if constexpr (is_narrow_float_v<T> || (logical && !std::is_same_v<T, bool>))
      throw NotImplementedError(
          cat("reduce: no CPU kernel for ", reduction_row(Op).name, " accumulating in ", name(compute)));
    else reduce_engine::Engine<reduce_ops::Reduction<Op>, T>(layout, in.dtype(), out.dtype()).run();
  });
}

/// Runs `op` if its row belongs to part K; false otherwise.
template <int K>
bool reduce_part(ReduceOp op, const ReduceLayout& layout, const Array& in, const Array& out, DType compute) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    auto one = [&]<std::size_t Row>() {
      if constexpr (Row % kReduceParts == static_cast<std::size_t>(K)) {
        if (op == static_cast<ReduceOp>(Row)) {
          reduce_row<static_cast<ReduceOp>(Row)>(layout, in, out, compute);
          return true;
        }
      }
      return false;
    };
    return (one.template operator()<I>() || ...);
  }(std::make_index_sequence<std::size(kReductionRows)>());
}

}  // namespace cupric::cpu
