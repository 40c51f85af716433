// cupric/tile/shape.h — ops that move elements between positions of a tile: broadcast (to a
// larger shape), permute (transpose) and convert_layout (same elements, other threads). On the
// GPU they go through shared memory, because an element's new position can belong to another
// thread; reshape needs no code (a layout maps threads to elements in C order, for any shape).
#pragma once

namespace cu::tile {

/// Index into a Src-shaped tile of the Dst-shaped element e, Src broadcast to Dst (NumPy rules).
template <class Src, class Dst>
CUPRIC_TC int broadcast_source(int e) {
  int src = 0;
  for (int d = 0; d < Dst::rank; ++d) {
    const int sd = d - (Dst::rank - Src::rank);
    if (sd >= 0 && Src::dim(sd) != 1) src += ((e / Dst::inner(d)) % Dst::dim(d)) * Src::inner(sd);
  }
  return src;
}

/// Index into the source of the Dst-shaped element e of a permutation (Dst dim i = Src dim P[i]).
template <class Src, class Dst, class P>
CUPRIC_TC int permute_source(int e) {
  int src = 0;
  for (int d = 0; d < Dst::rank; ++d) src += ((e / Dst::inner(d)) % Dst::dim(d)) * Src::inner(P::dim(d));
  return src;
}

#ifdef CUPRIC_TILE_DEVICE
/// GPU: puts a tile in shared memory in element order, as U (scratch from the block's buffer).
template <class U, class T, int N, class L>
CUPRIC_TD U* stage(const Block& b, const Tile<T, N, L>& x, U* buf) {
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < L::kSlots; ++s)
    if (L::owns(b.tid, s)) buf[L::elem(b.tid, s)] = convert<U>(x.v[s]);
  CUPRIC_TILE_SYNC();
  return buf;
}
#endif

template <class Src, class Dst, class T, class LO, class LI>
CUPRIC_TD void broadcast(const Block& b, Tile<T, Dst::size, LO>& out, const Tile<T, Src::size, LI>& in) {
#ifndef CUPRIC_TILE_DEVICE
  (void)b;
  constexpr int C = Dst::dim(Dst::rank - 1), R = Dst::size / C;
  constexpr bool copy_row = Src::rank >= 1 && Src::dim(Src::rank - 1) == C && C != 1;
  for (int r = 0; r < R; ++r) {
    const T* src = in.v + broadcast_source<Src, Dst>(r * C);
    T* __restrict dst = out.v + r * C;
    if constexpr (copy_row) {
      for (int c = 0; c < C; ++c) dst[c] = src[c];
    } else {
      const T v = src[0];
      for (int c = 0; c < C; ++c) dst[c] = v;
    }
  }
#else
  if constexpr (rows_of_v<LI, LO>()) {
    if constexpr (Src::rank == 2 && Src::dim(1) == 1 && Src::dim(0) == LI::kM && Dst::rank == 2 &&
                  Dst::dim(0) == LO::kM) {
      // a column of one value per row: the values are already in the threads of their rows
      CUPRIC_TILE_UNROLL
      for (int s = 0; s < LO::kSlots; ++s) out.v[s] = in.v[2 * (s / (4 * LO::TN)) + (s / 2) % 2];
      return;
    }
  }
  if constexpr (cols_of_v<LI, LO>()) {
    if constexpr (Src::size == LI::kN && Src::dim(Src::rank - 1) == LI::kN && Dst::rank == 2 && Dst::dim(1) == LO::kN) {
      // a row of one value per column: the values are already in the threads of their columns
      CUPRIC_TILE_UNROLL
      for (int s = 0; s < LO::kSlots; ++s) out.v[s] = in.v[2 * ((s / 4) % LO::TN) + s % 2];
      return;
    }
  }
  static_assert(smem_align(sizeof(T) * Src::size) <= kSmemBytes, "cupric.tile: scratch too small (broadcast)");
  const T* buf = stage(b, in, reinterpret_cast<T*>(b.smem));
  if constexpr (rows_cols_v<LO, Dst>()) {
    // by (row, col): a row or column vector's few distinct values are loaded once per thread
    CUPRIC_TILE_UNROLL
    for (int s = 0; s < LO::kSlots; ++s) {
      // rows and columns past the tile (padding fragments) read the last one: the address of a
      // row vector's value depends on the column only
      const int r = min(LO::row(b.tid, s), Dst::dim(0) - 1), c = min(LO::col(b.tid, s), Dst::dim(1) - 1);
      int src = 0;
      if constexpr (Src::rank >= 1) src += Src::dim(Src::rank - 1) != 1 ? c : 0;
      if constexpr (Src::rank == 2) src += Src::dim(0) != 1 ? r * Src::dim(1) : 0;
      out.v[s] = buf[src];
    }
  } else {
    CUPRIC_TILE_UNROLL
    for (int s = 0; s < LO::kSlots; ++s) {
      const int e = LO::elem(b.tid, s);
      out.v[s] = buf[e < Dst::size ? broadcast_source<Src, Dst>(e) : 0];
    }
  }
  CUPRIC_TILE_SYNC();
#endif
}

template <class Src, class Dst, class P, class T, class LO, class LI>
CUPRIC_TD void permute(const Block& b, Tile<T, Dst::size, LO>& out, const Tile<T, Src::size, LI>& in) {
#ifndef CUPRIC_TILE_DEVICE
  (void)b;
  constexpr int C = Dst::dim(Dst::rank - 1), R = Dst::size / C;
  constexpr int step = Src::inner(P::dim(Dst::rank - 1));
  for (int r = 0; r < R; ++r) {
    const T* src = in.v + permute_source<Src, Dst, P>(r * C);
    T* __restrict dst = out.v + r * C;
    for (int c = 0; c < C; ++c) dst[c] = src[c * step];
  }
#else
  static_assert(smem_align(sizeof(T) * Src::size) <= kSmemBytes, "cupric.tile: scratch too small (permute)");
  const T* buf = stage(b, in, reinterpret_cast<T*>(b.smem));
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < LO::kSlots; ++s) {
    const int e = LO::elem(b.tid, s);
    out.v[s] = buf[e < Dst::size ? permute_source<Src, Dst, P>(e) : 0];
  }
  CUPRIC_TILE_SYNC();
#endif
}

/// The same elements in another layout (GPU: through shared memory; the CPU has one layout).
template <class T, int N, class LO, class LI>
CUPRIC_TD void convert_layout(const Block& b, Tile<T, N, LO>& out, const Tile<T, N, LI>& in) {
#ifndef CUPRIC_TILE_DEVICE
  (void)b;
  for (int i = 0; i < N; ++i) out.v[i] = in.v[i];
#else
  static_assert(smem_align(sizeof(T) * N) <= kSmemBytes, "cupric.tile: scratch too small (convert_layout)");
  const T* buf = stage(b, in, reinterpret_cast<T*>(b.smem));
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < LO::kSlots; ++s) {
    const int e = LO::elem(b.tid, s);
    out.v[s] = buf[e < N ? e : 0];
  }
  CUPRIC_TILE_SYNC();
#endif
}

}  // namespace cu::tile
