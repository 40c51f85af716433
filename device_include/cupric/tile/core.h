// cupric/tile/core.h — tiles and how they are spread over a block: the layouts (which thread
// holds which element: blocked, and mma.sync's accumulator fragments), Tile, Dims (compile-time
// shapes), Block (the running block) and ArrayRef (an array argument). On the CPU a block is one
// thread and a tile is a plain array.
#pragma once

namespace cu::tile {

inline constexpr int kThreads = CUPRIC_TILE_THREADS;  ///< threads per block (1 on the CPU)
/// Threads of a producer warpgroup launched after the kThreads that run the tile code (tma.h), 0 if none.
#ifdef CUPRIC_TILE_PRODUCERS
inline constexpr int kProducers = CUPRIC_TILE_PRODUCERS;
#else
inline constexpr int kProducers = 0;
#endif
inline constexpr int kVec = CUPRIC_TILE_VEC;         ///< consecutive elements per thread and access
inline constexpr int kSmemBytes = CUPRIC_TILE_SMEM;  ///< shared scratch the kernel was given

/// Bytes of shared scratch a part of an op takes (parts start at 16-byte boundaries). The
/// emitters size the kernel's scratch with the same formulas; each op static_asserts them.
CUPRIC_TC int smem_align(long long bytes) { return static_cast<int>((bytes + 15) / 16 * 16); }

/// A compile-time shape.
template <int... D>
struct Dims {
  static constexpr int rank = sizeof...(D);
  static constexpr int size = (1 * ... * D);
  static CUPRIC_TC int dim(int i) {
    constexpr int d[rank + 1] = {D..., 1};
    return d[i];
  }
  /// Elements between consecutive indices along axis i (C order).
  static CUPRIC_TC int inner(int i) {
    int n = 1;
    for (int j = i + 1; j < rank; ++j) n *= dim(j);
    return n;
  }
};

/// True, and on the GPU tells the compiler what the launch guarantees (0 <= tid < kThreads), so
/// that the bounds tests of tiles that fill every slot disappear from the code that stages them in
/// shared memory (smaller kernels, faster compiles; docs/tile.md, "Compile times (NVRTC)").
CUPRIC_TC bool in_block(int tid) {
#if defined(CUPRIC_TILE_DEVICE) && defined(__CUDA_ARCH__)  // (nvcc's host pass has no __builtin_assume)
  if (!__builtin_is_constant_evaluated()) __builtin_assume(tid >= 0 && tid < kThreads);
#endif
  (void)tid;
  return true;
}

/// A layout says which thread holds which element of a tile: kSlots values per thread, elem(tid, s)
/// the element (C order) that thread tid holds in slot s (>= the tile's size: none), owns(tid, s)
/// whether that thread performs side effects (stores, atomics, prints) for it, and kRun: slots
/// j * kRun ... j * kRun + kRun - 1 hold consecutive elements, the first a multiple of kRun.
///
/// The blocked layout: element e of an N-element tile lives on thread ((e / kVec) % kThreads) at
/// slot (e / (kVec * kThreads)) * kVec + e % kVec: runs of kVec elements dealt round-robin, so that
/// a warp's accesses are contiguous and each thread's are vectors. Size-1 tiles are replicated.
template <int N>
struct Layout {
  static constexpr int kSlots = N == 1 ? 1 : ((N + kThreads * kVec - 1) / (kThreads * kVec)) * kVec;
  static constexpr int kRun = N == 1 ? 1 : kVec;
  static CUPRIC_TC int elem(int tid, int s) { return N == 1 ? 0 : ((s / kVec) * kThreads + tid) * kVec + s % kVec; }
  static CUPRIC_TC bool valid(int tid, int s) { return in_block(tid) && elem(tid, s) < N; }
  /// The one thread that performs side effects (stores, atomics, prints) for slot s.
  static CUPRIC_TC bool owns(int tid, int s) { return N == 1 ? tid == 0 : in_block(tid) && elem(tid, s) < N; }
};

/// The mma.sync accumulator layout of an (M, N) tile (GPU): the tile, padded to multiples of
/// (16, 8), is cut into m16n8 fragments (FM x FN of them); the warps form a WM x WN grid and warp
/// (wm, wn) holds the TM x TN block of fragments starting at (wm * TM, wn * TN). In a fragment,
/// lane l holds rows l / 4 and l / 4 + 8, columns 2 (l % 4) and 2 (l % 4) + 1 — the registers
/// c0..c3 of mma.sync.m16n8k*. Slot s: fragment (s / (4 TN), (s / 4) % TN) of the warp's block,
/// register s % 4. Fragments and elements outside the tile are held by no one.
template <int M, int N, int WM, int WN>
struct MmaLayout {
  static_assert(WM * WN * 32 == kThreads, "cupric.tile: the mma layout's warps must be the block's");
  static constexpr int kM = M, kN = N, kWM = WM, kWN = WN;
  static constexpr int FM = (M + 15) / 16, FN = (N + 7) / 8;
  static constexpr int TM = (FM + WM - 1) / WM, TN = (FN + WN - 1) / WN;
  static constexpr int kSlots = TM * TN * 4;
  static constexpr int kRun = N % 2 == 0 ? 2 : 1;
  /// every slot of every thread is inside the tile (no padding fragments): no bounds checks
  static constexpr bool kExact = WM * TM * 16 == M && WN * TN * 8 == N;
  static CUPRIC_TC int row(int tid, int s) {
    return ((tid / 32) / WN * TM + s / (4 * TN)) * 16 + (tid % 32) / 4 + 8 * ((s / 2) % 2);
  }
  static CUPRIC_TC int col(int tid, int s) { return ((tid / 32) % WN * TN + (s / 4) % TN) * 8 + 2 * (tid % 4) + s % 2; }
  static CUPRIC_TC int elem(int tid, int s) {
    const int r = row(tid, s), c = col(tid, s);
    return kExact || (r < M && c < N) ? r * N + c : M * N;
  }
  static CUPRIC_TC bool valid(int tid, int s) { return elem(tid, s) < M * N; }
  static CUPRIC_TC bool owns(int tid, int s) { return valid(tid, s); }
};

template <class L>
inline constexpr bool is_mma_layout_v = false;
template <int M, int N, int WM, int WN>
inline constexpr bool is_mma_layout_v<MmaLayout<M, N, WM, WN>> = true;

/// One value per row of an (M, N) accumulator in MmaLayout<M, N, WM, WN>, for a tile of M elements
/// ((M,) or (M, 1)): each thread holds the rows its fragments cover, slot 2 tm + h the row of
/// fragment row tm, half h (lane / 4, + 8) — where the accumulator's slot s has its row at slot
/// 2 (s / (4 TN)) + (s / 2) % 2. The 4 lanes of a quad (and WN warps) hold copies; one owns each row.
template <int M, int N, int WM, int WN>
struct MmaRows {
  using Acc = MmaLayout<M, N, WM, WN>;
  static constexpr int kM = M, kWM = WM, kWN = WN, TM = Acc::TM;
  static constexpr int kSlots = TM * 2;
  static constexpr int kRun = 1;
  static CUPRIC_TC int row(int tid, int s) {
    return ((tid / 32) / WN * TM + s / 2) * 16 + (tid % 32) / 4 + 8 * (s % 2);
  }
  static CUPRIC_TC int elem(int tid, int s) { return row(tid, s) < M ? row(tid, s) : M; }
  static CUPRIC_TC bool valid(int tid, int s) { return elem(tid, s) < M; }
  static CUPRIC_TC bool owns(int tid, int s) { return valid(tid, s) && tid % 4 == 0 && (tid / 32) % WN == 0; }
};

/// One value per column of an (M, N) accumulator in MmaLayout<M, N, WM, WN>, for a tile of N
/// elements ((N,) or (1, N)): slot 2 tn + h the column of fragment column tn, half h (2 (lane % 4)
/// + h) — where the accumulator's slot s has its column at slot 2 ((s / 4) % TN) + s % 2.
template <int M, int N, int WM, int WN>
struct MmaCols {
  using Acc = MmaLayout<M, N, WM, WN>;
  static constexpr int kN = N, kWM = WM, kWN = WN, TN = Acc::TN;
  static constexpr int kSlots = TN * 2;
  static constexpr int kRun = 1;
  static CUPRIC_TC int col(int tid, int s) { return ((tid / 32) % WN * TN + s / 2) * 8 + 2 * (tid % 4) + s % 2; }
  static CUPRIC_TC int elem(int tid, int s) { return col(tid, s) < N ? col(tid, s) : N; }
  static CUPRIC_TC bool valid(int tid, int s) { return elem(tid, s) < N; }
  static CUPRIC_TC bool owns(int tid, int s) { return valid(tid, s) && (tid % 32) / 4 == 0 && (tid / 32) / WN == 0; }
};

template <class L>
inline constexpr bool is_mma_cols_v = false;
template <int M, int N, int WM, int WN>
inline constexpr bool is_mma_cols_v<MmaCols<M, N, WM, WN>> = true;

/// Whether LC (MmaCols) holds, in each thread, the columns of the accumulator layout LA's fragments.
template <class LC, class LA>
CUPRIC_TC bool cols_of_v() {
  if constexpr (is_mma_cols_v<LC> && is_mma_layout_v<LA>)
    return LC::kN == LA::kN && LC::kWM == LA::kWM && LC::kWN == LA::kWN;
  else return false;
}

template <class L>
inline constexpr bool is_mma_rows_v = false;
template <int M, int N, int WM, int WN>
inline constexpr bool is_mma_rows_v<MmaRows<M, N, WM, WN>> = true;

/// Whether LR (MmaRows) holds, in each thread, the rows of the accumulator layout LA's fragments:
/// the same rows and warp grid (the columns may differ).
template <class LR, class LA>
CUPRIC_TC bool rows_of_v() {
  if constexpr (is_mma_rows_v<LR> && is_mma_layout_v<LA>)
    return LR::kM == LA::kM && LR::kWM == LA::kWM && LR::kWN == LA::kWN;
  else return false;
}

/// Whether tiles of shape Sh in layout L can be addressed by (row, col) = (L::row, L::col): the
/// shape is the (M, N) the mma layout was made for (not a reshape of it).
template <class L, class Sh>
CUPRIC_TC bool rows_cols_v() {
  if constexpr (is_mma_layout_v<L>) return Sh::rank == 2 && Sh::dim(0) == L::kM && Sh::dim(1) == L::kN;
  else return false;
}

/// A tile: the values of its elements that this thread holds, in layout L.
template <class T, int N, class L = Layout<N>>
struct CUPRIC_TILE_ALIGN Tile {
  using layout = L;
  T v[L::kSlots];
};

/// The block being run: its index, the grid, this thread, the shared scratch, failures.
struct Block {
  i64 bid[3];
  i64 nblocks[3];
  int tid;
  unsigned char* smem;
  cupric_tile_status* status;
};

/// An array argument (strides in elements).
template <class T, int ND>
struct ArrayRef {
  T* data;
  i64 shape[ND];
  i64 stride[ND];
};

#ifndef CUPRIC_TILE_DEVICE
template <class T, int ND>
inline ArrayRef<T, ND> array_ref(const void* arg) {
  const cupric_tile_array* a = static_cast<const cupric_tile_array*>(arg);
  ArrayRef<T, ND> r;
  r.data = static_cast<T*>(a->data);
  for (int d = 0; d < ND; ++d) {
    r.shape[d] = a->shape[d];
    r.stride[d] = a->strides[d];
  }
  return r;
}
#endif

/// Where a window of n elements along one dimension starts: index * scale (a tile index times
/// the tile's extent, or an element offset with scale 1), in 64-bit arithmetic that cannot wrap.
/// Starts outside [-n, extent] move to that range's nearer end, where the window holds exactly the
/// same elements of the array (none), so a window near +-2^63 reads padding and writes nothing,
/// as in the interpreter, instead of wrapping onto element 0. Every later index (start + i, i < n)
/// then fits too. scale >= 1, n >= 1, extent >= 0; exact for extents up to 2^63 - 1 - n (a larger
/// one is a broadcast view, and its last n elements may then be taken as inside).
CUPRIC_TD constexpr i64 window_start(i64 index, i64 scale, i64 n, i64 extent) {
  constexpr i64 kMax = 0x7fffffffffffffffLL;
  const i64 hi = extent < kMax - n ? extent : kMax - n;
  if (index > hi / scale) return hi;  // index * scale > hi (hi >= 0: division rounds down)
  if (index < -n / scale) return -n;  // index * scale < -n (division rounds toward zero)
  return index * scale;
}

/// Offset of the element at `start + local index of e` and whether it is inside the array.
template <class Sh, class T, int ND>
CUPRIC_TD bool element_offset(const ArrayRef<T, ND>& a, const i64 (&start)[ND], int e, i64& off) {
  bool ok = true;
  off = 0;
  CUPRIC_TILE_UNROLL
  for (int d = ND - 1; d >= 0; --d) {
    const int i = (e / Sh::inner(d)) % Sh::dim(d);
    const i64 g = start[d] + i;
    ok = ok && g >= 0 && g < a.shape[d];
    off += g * a.stride[d];
  }
  return ok;
}

}  // namespace cu::tile
