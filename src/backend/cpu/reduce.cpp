// reduce.cpp — CpuBackend::reduce. Two shapes of work after the loop nest is built:
//   inner: the reduced elements of one output are contiguous (row sums, full reductions):
//          each output folds runs with the lane kernels (pairwise for float sums);
//   outer: the innermost dimension is kept (column sums): rows are accumulated into a tile of
//          accumulators, vectorised over the kept dimension, in a pairwise tree of row blocks.
// Work is split into tasks of fixed size (not per thread), so results do not depend on the
// number of threads; partial results of one output are combined in a balanced tree.
#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu_backend.hpp"
#include "cupric/errors.hpp"
#include "reduce_layout.hpp"
#include "reduce_ops.hpp"
#include "thread_pool.hpp"

namespace cupric::cpu {

namespace {
using namespace reduce_ops;

constexpr std::int64_t kChunk = std::int64_t{1} << 16;  ///< elements of one output per task
constexpr std::int64_t kBuffer = 1024;                  ///< elements converted at a time
constexpr std::int64_t kTileBytes = 65536;              ///< kept bytes per outer-mode task (whole rows when they fit: sequential reads)
constexpr std::int64_t kRowBlock = 32;                  ///< rows folded directly before pairing

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

template <class Op, class T>
class Engine {
 public:
  static constexpr std::int64_t tsz = sizeof(T);
  using P = partial_t<Op, T>;  ///< partial results of inner-mode reductions

  Engine(const ReduceLayout& layout, DType in_dtype, DType out_dtype)
      : L_(layout),
        load_(cast_kernel(in_dtype, dtype_of<T>())),
        store_(cast_kernel(dtype_of<T>(), out_dtype)),
        store_partial_(cast_kernel(dtype_of<P>(), out_dtype)),
        in_is_t_(in_dtype == dtype_of<T>()) {}

  void run() const {
    if (L_.kept.empty() || L_.reduced.back().in < L_.kept.back().in) inner();
    else outer();
  }

 private:
  // ---- inner mode ------------------------------------------------------------------------------

  /// One run of n elements at byte stride `stride`, converted through buf when needed.
  P reduce_run(const char* p, std::int64_t n, std::int64_t stride, T* buf) const {
    if (in_is_t_ && stride == tsz) return reduce_contiguous<Op>(reinterpret_cast<const T*>(p), n);
    Cascade<Op, P> parts;
    for (std::int64_t off = 0; off < n; off += kBuffer) {
      const std::int64_t m = std::min(kBuffer, n - off);
      load_(p + off * stride, stride, reinterpret_cast<char*>(buf), tsz, m);
      const P part = reduce_contiguous<Op>(buf, m);
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

  void write(char* dst, const P& v) const { store_partial_(reinterpret_cast<const char*>(&v), sizeof(P), dst, 0, 1); }

  void inner() const {
    const std::int64_t n_out = L_.kept_count(), R = L_.reduced_count();
    const std::int64_t per_out = (R + kChunk - 1) / kChunk;  // tasks per output
    if (per_out == 1) {
      parallel_for(n_out, std::max<std::int64_t>(1, kGrain / R), [&](std::int64_t b, std::int64_t e) {
        alignas(64) T buf[kBuffer];
        Odometer o(L_.kept, b);
        for (std::int64_t i = b; i < e; ++i, o.next()) write(L_.out + o.out(), reduce_range(L_.in + o.in(), 0, R, buf));
      });
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
    for (std::int64_t i = 0; i < n_out; ++i, o.next())
      write(L_.out + o.out(), tree_lanes<Op>(partial + i * per_out, static_cast<int>(per_out), 1));
  }

  // ---- outer mode ------------------------------------------------------------------------------

  /// acc[0:tw] = reduction of rows [rb, re) of the tile at base, folded in order (four at a time
  /// when they can be read in place).
  void fold_rows_leaf(const char* base, std::int64_t rb, std::int64_t re, std::int64_t tw, T* acc, T* rowbuf) const {
    const LoopDim& v = L_.kept.back();
    Odometer rows(L_.reduced, rb);
    std::int64_t r = rb;
    if (in_is_t_ && v.in == tsz && re - rb >= 4) {  // read in place, four rows at a time
      for (; r + 4 <= re; r += 4) {
        const T* p[4];
        for (auto& q : p) {
          q = reinterpret_cast<const T*>(base + rows.in());
          rows.next();
        }
        if (r == rb) combine_rows4<Op>(acc, p[0], p[1], p[2], p[3], tw);
        else accumulate_rows4<Op>(acc, p[0], p[1], p[2], p[3], tw);
      }
    } else {
      load_(base + rows.in(), v.in, reinterpret_cast<char*>(acc), tsz, tw);
      rows.next();
      ++r;
    }
    for (; r < re; ++r, rows.next()) {
      load_(base + rows.in(), v.in, reinterpret_cast<char*>(rowbuf), tsz, tw);
      accumulate_row<Op>(acc, rowbuf, tw);
    }
  }

  /// acc[0:tw] = reduction of rows [rb, re) of the tile at base; pairwise operators split the
  /// rows in halves (multiples of kRowBlock) and use `levels` for the right halves.
  void fold_rows(const char* base, std::int64_t rb, std::int64_t re, std::int64_t tw, T* acc, T* rowbuf, T* levels,
                 std::int64_t stride) const {
    if (!Op::pairwise || re - rb <= kRowBlock) {
      fold_rows_leaf(base, rb, re, tw, acc, rowbuf);
      return;
    }
    const std::int64_t mid = rb + std::max(kRowBlock, (re - rb) / 2 / kRowBlock * kRowBlock);
    fold_rows(base, rb, mid, tw, acc, rowbuf, levels, stride);
    fold_rows(base, mid, re, tw, levels, rowbuf, levels + stride, stride);
    accumulate_row<Op>(acc, levels, tw);
  }

  void outer() const {
    const LoopDim& v = L_.kept.back();
    const LoopDim* outer_dims = L_.kept.data();
    const int n_outer_dims = static_cast<int>(L_.kept.size()) - 1;
    std::int64_t n_outer = 1;
    for (int k = 0; k < n_outer_dims; ++k) n_outer *= outer_dims[k].size;
    const std::int64_t W = v.size, R = L_.reduced_count();
    const std::int64_t kTile = kTileBytes / tsz;
    const std::int64_t tile = std::min(W, kTile), ntiles = (W + kTile - 1) / kTile;
    const std::int64_t rows_per_task = std::max<std::int64_t>(4 * kRowBlock, kChunk / tile);
    const std::int64_t per_out = (R + rows_per_task - 1) / rows_per_task;
    const std::int64_t ntasks = n_outer * ntiles * per_out;
    int depth = 2;
    while ((std::int64_t{1} << depth) * kRowBlock < std::min(R, rows_per_task)) ++depth;
    const Scratch<T> partials(0, per_out > 1 ? ntasks * tile : 0);
    T* const partial = partials.get();

    const std::int64_t task_elems = std::min(R, rows_per_task) * tile;
    parallel_for(ntasks, std::max<std::int64_t>(1, kGrain / task_elems), [&](std::int64_t b, std::int64_t e) {
      const Scratch<T> buffers(1, (depth + 6) * tile);  // acc, row buffer, levels
      T* const scratch = buffers.get();
      for (std::int64_t t = b; t < e; ++t) {
        const std::int64_t c = t % per_out, ti = (t / per_out) % ntiles, o = t / per_out / ntiles;
        const Odometer pos(outer_dims, n_outer_dims, o);
        const std::int64_t tw = std::min(kTile, W - ti * kTile);
        T* acc = per_out > 1 ? partial + t * tile : scratch;
        fold_rows(L_.in + pos.in() + ti * kTile * v.in, c * rows_per_task, std::min(R, (c + 1) * rows_per_task), tw, acc,
                  scratch + tile, scratch + 2 * tile, tile);
        if (per_out == 1)
          store_(reinterpret_cast<const char*>(acc), tsz, L_.out + pos.out() + ti * kTile * v.out, v.out, tw);
      }
    });
    if (per_out == 1) return;
    // combine the partial tiles of each output tile in a balanced tree, then store
    parallel_for(n_outer * ntiles, 1, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t g = b; g < e; ++g) {
        const std::int64_t ti = g % ntiles, o = g / ntiles;
        const std::int64_t tw = std::min(kTile, W - ti * kTile);
        T* parts = partial + g * per_out * tile;
        for (std::int64_t width = 1; width < per_out; width *= 2)
          for (std::int64_t c = 0; c + width < per_out; c += 2 * width)
            accumulate_row<Op>(parts + c * tile, parts + (c + width) * tile, tw);
        const Odometer pos(outer_dims, n_outer_dims, o);
        store_(reinterpret_cast<const char*>(parts), tsz, L_.out + pos.out() + ti * kTile * v.out, v.out, tw);
      }
    });
  }

  const ReduceLayout& L_;
  CastFn load_, store_, store_partial_;
  bool in_is_t_;
};

template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

/// Runs operator Op with accumulator type T (the compute type of the output dtype).
template <class Op>
void reduce_with(const ReduceLayout& layout, const Array& in, const Array& out, DType compute) {
  visit_dtype(compute, [&]<class T>() {
    constexpr bool logical = std::is_same_v<Op, Any> || std::is_same_v<Op, All>;
    if constexpr (is_half_v<T> || (logical && !std::is_same_v<T, bool>)) {
      throw NotImplementedError(cat("reduce: no CPU kernel accumulating in ", name(compute)));
    } else if (layout.reduced_empty) {
      const T v = Op::template empty<T>();
      alignas(16) unsigned char value[16];
      cast_kernel(dtype_of<T>(), out.dtype())(reinterpret_cast<const char*>(&v), 0, reinterpret_cast<char*>(value), 0, 1);
      backend_for(out.device()).fill(out, value);
    } else if constexpr ((std::is_same_v<Op, FMin> || std::is_same_v<Op, FMax>) && !std::is_floating_point_v<T> &&
                         !is_complex_v<T>) {
      // fmin/fmax are min/max where there is no NaN
      using Plain = std::conditional_t<std::is_same_v<Op, FMin>, Min, Max>;
      Engine<Plain, T>(layout, in.dtype(), out.dtype()).run();
    } else {
      Engine<Op, T>(layout, in.dtype(), out.dtype()).run();
    }
  });
}
}  // namespace

void CpuBackend::reduce(ReduceOp op, const Array& in, const Array& out, const std::vector<int>& axes) {
  if (out.size() == 0) return;
  const bool logical = op == ReduceOp::any || op == ReduceOp::all;
  if (logical && out.dtype() != DType::bool_)
    throw NotImplementedError(cat("reduce: any/all write bool, got an output of ", name(out.dtype())));
  const ReduceLayout layout = reduce_layout(in, out, axes, true);
  if (!layout.reduced_empty && layout.reduced.empty()) {  // nothing to combine: a converting copy
    cast(elementwise_plan({&in, &out}, in.shape()));
    return;
  }
  DType compute = out.dtype();
  if (compute == DType::float16 || compute == DType::bfloat16) compute = DType::float32;
  switch (op) {
    case ReduceOp::sum: return reduce_with<Sum>(layout, in, out, compute);
    case ReduceOp::prod: return reduce_with<Prod>(layout, in, out, compute);
    case ReduceOp::min: return reduce_with<Min>(layout, in, out, compute);
    case ReduceOp::max: return reduce_with<Max>(layout, in, out, compute);
    case ReduceOp::fmin: return reduce_with<FMin>(layout, in, out, compute);
    case ReduceOp::fmax: return reduce_with<FMax>(layout, in, out, compute);
    case ReduceOp::any: return reduce_with<Any>(layout, in, out, compute);
    case ReduceOp::all: return reduce_with<All>(layout, in, out, compute);
  }
}

}  // namespace cupric::cpu
