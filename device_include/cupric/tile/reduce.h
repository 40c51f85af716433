// cupric/tile/reduce.h — reductions (the rows of the reduction table), index reductions (argmax,
// argmin) and scans (cumsum, cumprod) along one axis of a tile. A tile is viewed as (Outer, K, Inner)
// with K the reduced axis. CPU: loops with independent partial results (so that they
// vectorise); GPU: the tile is staged in shared memory and groups of lanes reduce each output.
#pragma once

namespace cu::tile {

// A reduction's operator Op (identity<A>() and combine(a, b)) is a row of the reduction table
// (src/ops/reduction_table.def), which the emitter renders into the kernel's source: the
// identity from cupric/reduction.h and the combine from the row's ufunc expression.

/// A candidate of argmax / argmin: a value and its index along the axis.
template <class A>
struct ArgAcc {
  A v;
  int i;
};

/// argmax (Max) or argmin: the first NaN wins, then the extreme value, then the lowest index.
template <bool Max>
struct ArgBest {
  template <class A>
  static CUPRIC_TD ArgAcc<A> identity() {
    return {Max ? lowest<A>() : highest<A>(), 0x7fffffff};
  }
  template <class A>
  static CUPRIC_TD ArgAcc<A> combine(ArgAcc<A> x, ArgAcc<A> y) {
    const bool xn = ::cu::isnan(x.v), yn = ::cu::isnan(y.v);
    if (xn || yn) return (xn && yn) ? (x.i <= y.i ? x : y) : (xn ? x : y);
    if (Max ? x.v > y.v : x.v < y.v) return x;
    if (Max ? y.v > x.v : y.v < x.v) return y;
    return x.i <= y.i ? x : y;
  }
};

#ifndef CUPRIC_TILE_DEVICE
// ---- CPU ------------------------------------------------------------------------------------

template <class Op, class Sh, int Axis, class A, class TO, class TI, int NO>
inline void reduce(const Block&, Tile<TO, NO>& out, const Tile<TI, Sh::size>& x) {
  constexpr int K = Sh::dim(Axis), Inner = Sh::inner(Axis), Outer = Sh::size / (K * Inner);
  static_assert(NO == Outer * Inner, "cupric.tile: reduce output size");
  if constexpr (Inner == 1) {
    constexpr int L = sizeof(A) >= 8 ? 8 : 16;  // independent partial results: one vector's lanes
    for (int o = 0; o < Outer; ++o) {
      const TI* row = x.v + o * K;
      A lanes[L];
      for (int j = 0; j < L; ++j) lanes[j] = Op::template identity<A>();
      int k = 0;
      for (; k + L <= K; k += L)
        for (int j = 0; j < L; ++j) lanes[j] = Op::combine(lanes[j], convert<A>(row[k + j]));
      for (; k < K; ++k) lanes[k % L] = Op::combine(lanes[k % L], convert<A>(row[k]));
      for (int w = L / 2; w > 0; w /= 2)
        for (int j = 0; j < w; ++j) lanes[j] = Op::combine(lanes[j], lanes[j + w]);
      out.v[o] = convert<TO>(lanes[0]);
    }
  } else {
    for (int o = 0; o < Outer; ++o) {
      A acc[Inner];
      const TI* base = x.v + o * K * Inner;
      for (int i = 0; i < Inner; ++i) acc[i] = convert<A>(base[i]);
      for (int k = 1; k < K; ++k)
        for (int i = 0; i < Inner; ++i) acc[i] = Op::combine(acc[i], convert<A>(base[k * Inner + i]));
      for (int i = 0; i < Inner; ++i) out.v[o * Inner + i] = convert<TO>(acc[i]);
    }
  }
}

template <bool Max, class Sh, int Axis, class A, class TI, int NO>
inline void argreduce(const Block&, Tile<int, NO>& out, const Tile<TI, Sh::size>& x) {
  constexpr int K = Sh::dim(Axis), Inner = Sh::inner(Axis), Outer = Sh::size / (K * Inner);
  static_assert(NO == Outer * Inner, "cupric.tile: argreduce output size");
  for (int o = 0; o < Outer; ++o)
    for (int i = 0; i < Inner; ++i) {
      const TI* base = x.v + o * K * Inner + i;
      ArgAcc<A> best{convert<A>(base[0]), 0};
      for (int k = 1; k < K; ++k) best = ArgBest<Max>::combine(best, ArgAcc<A>{convert<A>(base[k * Inner]), k});
      out.v[o * Inner + i] = best.i;
    }
}

template <class Op, class Sh, int Axis, class A, class TO, class TI>
inline void scan(const Block&, Tile<TO, Sh::size>& out, const Tile<TI, Sh::size>& x) {
  constexpr int K = Sh::dim(Axis), Inner = Sh::inner(Axis), Outer = Sh::size / (K * Inner);
  for (int o = 0; o < Outer; ++o) {
    A acc[Inner];
    for (int i = 0; i < Inner; ++i) acc[i] = Op::template identity<A>();
    for (int k = 0; k < K; ++k)
      for (int i = 0; i < Inner; ++i) {
        const int e = (o * K + k) * Inner + i;
        acc[i] = Op::combine(acc[i], convert<A>(x.v[e]));
        out.v[e] = convert<TO>(acc[i]);
      }
  }
}

#else
// ---- GPU ------------------------------------------------------------------------------------

template <class A>
CUPRIC_TD A shfl_xor(A v, int mask) {
  if constexpr (sizeof(A) < 4) return static_cast<A>(__shfl_xor_sync(0xffffffffu, static_cast<int>(v), mask));
  else return __shfl_xor_sync(0xffffffffu, v, mask);
}
template <class A>
CUPRIC_TD ArgAcc<A> shfl_xor(ArgAcc<A> v, int mask) {
  return {shfl_xor(v.v, mask), __shfl_xor_sync(0xffffffffu, v.i, mask)};
}

CUPRIC_TC int pow2_floor(int x) {
  int p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

/// so[o] = combine over k of load(o, k), for o < NO. P lanes (a power of two) share each output:
/// they shuffle within a warp, and through sp (kThreads entries) across warps.
template <class V>
struct acc_value_of {
  using type = V;
};
template <class A>
struct acc_value_of<ArgAcc<A> > {
  using type = A;
};

template <class Comb, class V, int NO, int K, class Load>
CUPRIC_TD void group_reduce(const Block& b, V* so, V* sp, Load load) {
  constexpr int P = pow2_floor(kThreads / NO > 1 ? kThreads / NO : 1);
  constexpr int G = kThreads / P, W = P < 32 ? P : 32;
  const int g = b.tid / P, l = b.tid % P;
  for (int base = 0; base < NO; base += G) {
    const int o = base + g;
    const bool active = o < NO;
    V acc = Comb::template identity<typename acc_value_of<V>::type>();
    if (active)
      for (int k = l; k < K; k += P) acc = Comb::combine(acc, load(o, k));
    CUPRIC_TILE_UNROLL
    for (int m = W / 2; m > 0; m /= 2) acc = Comb::combine(acc, shfl_xor(acc, m));
    if constexpr (P <= 32) {
      if (active && l == 0) so[o] = acc;
    } else {
      if (l % 32 == 0) sp[b.tid / 32] = acc;
      CUPRIC_TILE_SYNC();
      if (active && l == 0) {
        V t = sp[g * (P / 32)];
        for (int w = 1; w < P / 32; ++w) t = Comb::combine(t, sp[g * (P / 32) + w]);
        so[o] = t;
      }
    }
  }
  CUPRIC_TILE_SYNC();
}

/// Reduction of an (M, N) tile in the mma layout L along Axis (1: one value per row, 0: per
/// column) without staging it: each thread combines its slots of a row (column), the lanes that
/// share it combine by shuffles (the 4 of a quad for rows, the 8 quads for columns), and the
/// warps that share it through WN (WM) partial results in shared memory.
template <class Op, int Axis, class A, class TO, class TI, int NO, class LO, class L>
CUPRIC_TD void mma_reduce(const Block& b, Tile<TO, NO, LO>& out, const Tile<TI, L::kM * L::kN, L>& x) {
  constexpr int M = L::kM, N = L::kN, TM = L::TM, TN = L::TN;
  constexpr int P = Axis == 1 ? TM : TN;          // rows (columns) per thread: 2 per fragment
  constexpr int W = Axis == 1 ? L::kWN : L::kWM;  // warps sharing a row (column)
  constexpr int E = Axis == 1 ? M : N;            // outputs
  static_assert(NO == E, "cupric.tile: reduce output size");
  static_assert(smem_align(sizeof(A) * W * E) <= kSmemBytes, "cupric.tile: scratch too small (reduce)");
  A part[P][2];
  CUPRIC_TILE_UNROLL
  for (int p = 0; p < P; ++p) part[p][0] = part[p][1] = Op::template identity<A>();
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < L::kSlots; ++s) {
    const int tm = s / (4 * TN), tn = (s / 4) % TN;
    const int p = Axis == 1 ? tm : tn, h = Axis == 1 ? (s / 2) % 2 : s % 2;
    if (L::kExact || (L::row(b.tid, s) < M && L::col(b.tid, s) < N))
      part[p][h] = Op::combine(part[p][h], convert<A>(x.v[s]));
  }
  CUPRIC_TILE_UNROLL
  for (int p = 0; p < P; ++p) CUPRIC_TILE_UNROLL
  for (int h = 0; h < 2; ++h) {
    if constexpr (Axis == 1) {
      part[p][h] = Op::combine(part[p][h], shfl_xor(part[p][h], 1));
      part[p][h] = Op::combine(part[p][h], shfl_xor(part[p][h], 2));
    } else {
      part[p][h] = Op::combine(part[p][h], shfl_xor(part[p][h], 4));
      part[p][h] = Op::combine(part[p][h], shfl_xor(part[p][h], 8));
      part[p][h] = Op::combine(part[p][h], shfl_xor(part[p][h], 16));
    }
  }
  if constexpr (Axis == 1 && L::kWN == 1 && rows_of_v<LO, L>()) {
    // one warp per row: the quad holds the result, in the rows layout (no shared memory)
    CUPRIC_TILE_UNROLL
    for (int s = 0; s < LO::kSlots; ++s) out.v[s] = convert<TO>(part[s / 2][s % 2]);
    return;
  }
  A* sp = reinterpret_cast<A*>(b.smem);  // [W][E]
  const int warp = b.tid / 32, lane = b.tid % 32;
  const int w = Axis == 1 ? warp % L::kWN : warp / L::kWN;
  if (Axis == 1 ? lane % 4 == 0 : lane < 4) {
    CUPRIC_TILE_UNROLL
    for (int p = 0; p < P; ++p) CUPRIC_TILE_UNROLL
    for (int h = 0; h < 2; ++h) {
      const int slot = Axis == 1 ? (p * TN) * 4 + 2 * h : p * 4 + h;  // a slot of this row (column)
      const int i = Axis == 1 ? L::row(b.tid, slot) : L::col(b.tid, slot);
      if (i < E) sp[w * E + i] = part[p][h];
    }
  }
  CUPRIC_TILE_SYNC();
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < LO::kSlots; ++s) {
    const int e = LO::elem(b.tid, s) < E ? LO::elem(b.tid, s) : 0;
    A v = sp[e];
    CUPRIC_TILE_UNROLL
    for (int k = 1; k < W; ++k) v = Op::combine(v, sp[k * E + e]);
    out.v[s] = convert<TO>(v);
  }
  CUPRIC_TILE_SYNC();
}

/// A blocked tile reduced to one value (a row's sum or max in row-per-block kernels): each thread
/// combines its slots in registers, the lanes by shuffles, the warps through kThreads / 32 partial
/// results in shared memory — the tile is never staged (two barriers, not a round trip of the
/// whole tile through shared memory).
/// The end of a reduction to one value whose thread parts are in `acc` (reduce_all's, or a loop the
/// emitter fused with the elementwise ops that make the reduced tile): lanes, then warps.
template <class Op, class A, class TO, class LO>
CUPRIC_TD void reduce_finish(const Block& b, Tile<TO, 1, LO>& out, A acc) {
  static_assert(smem_align(sizeof(A) * (kThreads / 32)) <= kSmemBytes, "cupric.tile: scratch too small (reduce)");
  CUPRIC_TILE_UNROLL
  for (int m = 16; m > 0; m /= 2) acc = Op::combine(acc, shfl_xor(acc, m));
  A* sp = reinterpret_cast<A*>(b.smem);
  if (b.tid % 32 == 0) sp[b.tid / 32] = acc;
  CUPRIC_TILE_SYNC();
  A t = sp[0];
  CUPRIC_TILE_UNROLL
  for (int w = 1; w < kThreads / 32; ++w) t = Op::combine(t, sp[w]);
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < LO::kSlots; ++s) out.v[s] = convert<TO>(t);
  CUPRIC_TILE_SYNC();
}

template <class Op, class A, class TO, class TI, int N, class LO, class LI>
CUPRIC_TD void reduce_all(const Block& b, Tile<TO, 1, LO>& out, const Tile<TI, N, LI>& x) {
  A acc = Op::template identity<A>();
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < LI::kSlots; ++s)
    if (LI::owns(b.tid, s)) acc = Op::combine(acc, convert<A>(x.v[s]));  // each element once
  reduce_finish<Op>(b, out, acc);
}

template <class Op, class Sh, int Axis, class A, class TO, class TI, int NO, class LO, class LI>
CUPRIC_TD void reduce(const Block& b, Tile<TO, NO, LO>& out, const Tile<TI, Sh::size, LI>& x) {
  if constexpr (rows_cols_v<LI, Sh>()) {
    mma_reduce<Op, Axis, A>(b, out, x);
  } else if constexpr (NO == 1 && !is_mma_layout_v<LI> && kThreads % 32 == 0) {
    reduce_all<Op, A>(b, out, x);
  } else {
    constexpr int N = Sh::size, K = Sh::dim(Axis), Inner = Sh::inner(Axis);
    constexpr int a0 = smem_align(sizeof(A) * N), a1 = smem_align(sizeof(A) * NO);
    static_assert(a0 + a1 + smem_align(sizeof(A) * kThreads) <= kSmemBytes, "cupric.tile: scratch too small (reduce)");
    A* sx = reinterpret_cast<A*>(b.smem);
    A* so = reinterpret_cast<A*>(b.smem + a0);
    A* sp = reinterpret_cast<A*>(b.smem + a0 + a1);
    stage(b, x, sx);
    group_reduce<Op, A, NO, K>(b, so, sp, [&](int o, int k) { return sx[((o / Inner) * K + k) * Inner + o % Inner]; });
    CUPRIC_TILE_UNROLL
    for (int s = 0; s < LO::kSlots; ++s) {
      const int e = LO::elem(b.tid, s);
      out.v[s] = convert<TO>(so[e < NO ? e : 0]);
    }
    CUPRIC_TILE_SYNC();
  }
}

template <bool Max, class Sh, int Axis, class A, class TI, int NO, class LO, class LI>
CUPRIC_TD void argreduce(const Block& b, Tile<int, NO, LO>& out, const Tile<TI, Sh::size, LI>& x) {
  constexpr int N = Sh::size, K = Sh::dim(Axis), Inner = Sh::inner(Axis);
  using V = ArgAcc<A>;
  constexpr int a0 = smem_align(sizeof(V) * N), a1 = smem_align(sizeof(V) * NO);
  static_assert(a0 + a1 + smem_align(sizeof(V) * kThreads) <= kSmemBytes, "cupric.tile: scratch too small (argreduce)");
  A* sx = reinterpret_cast<A*>(b.smem);
  V* so = reinterpret_cast<V*>(b.smem + a0);
  V* sp = reinterpret_cast<V*>(b.smem + a0 + a1);
  stage(b, x, sx);
  group_reduce<ArgBest<Max>, V, NO, K>(
      b, so, sp, [&](int o, int k) { return V{sx[((o / Inner) * K + k) * Inner + o % Inner], k}; });
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < LO::kSlots; ++s) {
    const int e = LO::elem(b.tid, s);
    out.v[s] = so[e < NO ? e : 0].i;
  }
  CUPRIC_TILE_SYNC();
}

template <class Op, class Sh, int Axis, class A, class TO, class TI, class LO, class LI>
CUPRIC_TD void scan(const Block& b, Tile<TO, Sh::size, LO>& out, const Tile<TI, Sh::size, LI>& x) {
  constexpr int N = Sh::size, K = Sh::dim(Axis), Inner = Sh::inner(Axis), Rows = N / K;
  static_assert(smem_align(sizeof(A) * N) <= kSmemBytes, "cupric.tile: scratch too small (scan)");
  A* sx = stage(b, x, reinterpret_cast<A*>(b.smem));
  for (int row = b.tid; row < Rows; row += kThreads) {
    A* p = sx + (row / Inner) * K * Inner + row % Inner;
    A acc = Op::template identity<A>();
    for (int k = 0; k < K; ++k) {
      acc = Op::combine(acc, p[k * Inner]);
      p[k * Inner] = acc;
    }
  }
  CUPRIC_TILE_SYNC();
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < LO::kSlots; ++s) {
    const int e = LO::elem(b.tid, s);
    out.v[s] = convert<TO>(sx[e < N ? e : 0]);
  }
  CUPRIC_TILE_SYNC();
}
#endif

}  // namespace cu::tile
