// cupric/tile/core.h — tiles and how they are spread over a block: the layout (which thread
// holds which element), Tile, Dims (compile-time shapes), Block (the running block) and
// ArrayRef (an array argument). On the CPU a block is one thread and a tile is a plain array.
#pragma once

namespace cu::tile {

inline constexpr int kThreads = CUPRIC_TILE_THREADS;  ///< threads per block (1 on the CPU)
inline constexpr int kVec = CUPRIC_TILE_VEC;          ///< consecutive elements per thread and access
inline constexpr int kSmemBytes = CUPRIC_TILE_SMEM;   ///< shared scratch the kernel was given

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
#ifdef CUPRIC_TILE_DEVICE
  if (!__builtin_is_constant_evaluated()) __builtin_assume(tid >= 0 && tid < kThreads);
#endif
  (void)tid;
  return true;
}

/// Element e of an N-element tile lives on thread ((e / kVec) % kThreads) at slot
/// (e / (kVec * kThreads)) * kVec + e % kVec: runs of kVec elements dealt round-robin, so that a
/// warp's accesses are contiguous and each thread's are vectors. Size-1 tiles are replicated.
template <int N>
struct Layout {
  static constexpr int kSlots = N == 1 ? 1 : ((N + kThreads * kVec - 1) / (kThreads * kVec)) * kVec;
  static CUPRIC_TC int elem(int tid, int s) { return N == 1 ? 0 : ((s / kVec) * kThreads + tid) * kVec + s % kVec; }
  static CUPRIC_TC bool valid(int tid, int s) { return in_block(tid) && elem(tid, s) < N; }
  /// The one thread that performs side effects (stores, atomics, prints) for slot s.
  static CUPRIC_TC bool owns(int tid, int s) { return N == 1 ? tid == 0 : in_block(tid) && elem(tid, s) < N; }
};

template <class T, int N>
struct CUPRIC_TILE_ALIGN Tile {
  T v[Layout<N>::kSlots];
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

/// Offset of the element at `start + local index of e` along every dimension but the last (and
/// whether those are inside the array), plus the element's index along the last dimension: the
/// start of a run of consecutive elements of one row.
template <class Sh, class T, int ND>
CUPRIC_TD bool row_offset(const ArrayRef<T, ND>& a, const i64 (&start)[ND], int e, i64& off, i64& last) {
  bool ok = true;
  off = 0;
  CUPRIC_TILE_UNROLL
  for (int d = ND - 2; d >= 0; --d) {
    const i64 g = start[d] + (e / Sh::inner(d)) % Sh::dim(d);
    ok = ok && g >= 0 && g < a.shape[d];
    off += g * a.stride[d];
  }
  last = start[ND - 1] + e % Sh::dim(ND - 1);
  return ok;
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
