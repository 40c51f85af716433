// cupric/tile/memory.h — tile loads and stores (windows of an array: out-of-bounds elements
// read the padding and are not written) and atomics. The GPU path moves kVec elements per
// access when the array's last dimension is contiguous; the CPU path copies row by row.
#pragma once

namespace cu::tile {

/// R values moved in one access.
template <class T, int R = kVec>
struct alignas(sizeof(T) * R) VecOf {
  T v[R];
};

#ifndef CUPRIC_TILE_DEVICE
/// CPU: offset of row r (all dimensions but the last) of window `Sh` at `start`, and whether
/// the row is inside the array.
template <class Sh, class T, int ND>
inline bool host_row_offset(const ArrayRef<T, ND>& a, const i64 (&start)[ND], int r, i64& off) {
  bool ok = true;
  off = 0;
  const int e = r * Sh::dim(ND - 1);
  for (int d = ND - 2; d >= 0; --d) {
    const i64 g = start[d] + (e / Sh::inner(d)) % Sh::dim(d);
    ok = ok && g >= 0 && g < a.shape[d];
    off += g * a.stride[d];
  }
  return ok;
}

inline i64 clamp_i64(i64 x, i64 lo, i64 hi) { return x < lo ? lo : (x > hi ? hi : x); }

template <class Sh, class T, int ND>
inline void host_load(Tile<T, Sh::size>& out, const ArrayRef<T, ND>& a, const i64 (&start)[ND], T pad) {
  constexpr int C = Sh::dim(ND - 1), R = Sh::size / C;
  const i64 g0 = start[ND - 1], st = a.stride[ND - 1];
  const int lo = static_cast<int>(clamp_i64(-g0, 0, C));
  const int hi = static_cast<int>(clamp_i64(a.shape[ND - 1] - g0, lo, C));
  for (int r = 0; r < R; ++r) {
    T* __restrict dst = out.v + r * C;
    i64 off;
    if (!host_row_offset<Sh>(a, start, r, off)) {
      for (int c = 0; c < C; ++c) dst[c] = pad;
      continue;
    }
    const T* __restrict src = a.data + off + g0 * st;
    for (int c = 0; c < lo; ++c) dst[c] = pad;
    if (st == 1) {
      for (int c = lo; c < hi; ++c) dst[c] = src[c];
    } else {
      for (int c = lo; c < hi; ++c) dst[c] = src[c * st];
    }
    for (int c = hi; c < C; ++c) dst[c] = pad;
  }
}

template <class Sh, class T, int ND>
inline void host_store(const Tile<T, Sh::size>& in, const ArrayRef<T, ND>& a, const i64 (&start)[ND]) {
  constexpr int C = Sh::dim(ND - 1), R = Sh::size / C;
  const i64 g0 = start[ND - 1], st = a.stride[ND - 1];
  const int lo = static_cast<int>(clamp_i64(-g0, 0, C));
  const int hi = static_cast<int>(clamp_i64(a.shape[ND - 1] - g0, lo, C));
  for (int r = 0; r < R; ++r) {
    const T* __restrict src = in.v + r * C;
    i64 off;
    if (!host_row_offset<Sh>(a, start, r, off)) continue;
    T* __restrict dst = a.data + off + g0 * st;
    if (st == 1) {
      for (int c = lo; c < hi; ++c) dst[c] = src[c];
    } else {
      for (int c = lo; c < hi; ++c) dst[c * st] = src[c];
    }
  }
}
#endif

#ifdef CUPRIC_TILE_DEVICE
/// For the run of a tile's elements that starts at e (within one row of the last dimension):
/// off = the offset of its row (every dimension but the last), c = its first index along the
/// last dimension; false when e is past the tile or the row is outside the array.
template <class Sh, class T, int ND>
CUPRIC_TD bool run_offset(const ArrayRef<T, ND>& a, const i64 (&start)[ND], int e, i64& off, i64& c) {
  bool ok = e < Sh::size;
  off = 0;
  CUPRIC_TILE_UNROLL
  for (int d = ND - 2; d >= 0; --d) {
    const i64 g = start[d] + (e / Sh::inner(d)) % Sh::dim(d);
    ok = ok && g >= 0 && g < a.shape[d];
    off += g * a.stride[d];
  }
  c = start[ND - 1] + e % Sh::dim(ND - 1);
  return ok;
}
#endif

#ifdef CUPRIC_TILE_DEVICE
/// Whether the whole window lies inside the array, its last dimension contiguous and every run of
/// R elements aligned for one R-element access (the window's corner aligned, every other stride a
/// multiple of R): then loads and stores take the fast path, one unchecked vector access per run.
/// The check is made once per window, so that the unrolled accesses carry no edge code: edge code
/// per run was most of NVRTC's time on products' epilogues (docs/tile.md, "Compile times").
template <class Sh, int R, class T, int ND>
CUPRIC_TD bool window_vectorisable(const ArrayRef<T, ND>& a, const i64 (&start)[ND]) {
  bool ok = a.stride[ND - 1] == 1;
  i64 off = 0;
  CUPRIC_TILE_UNROLL
  for (int d = 0; d < ND; ++d) {
    ok = ok && start[d] >= 0 && start[d] + Sh::dim(d) <= a.shape[d] && (d == ND - 1 || a.stride[d] % R == 0);
    off += start[d] * a.stride[d];
  }
  return ok && reinterpret_cast<unsigned long long>(a.data + off) % sizeof(VecOf<T, R>) == 0;
}

/// Offset of tile element e in a window that lies inside the array (window_vectorisable).
template <class Sh, class T, int ND>
CUPRIC_TD i64 inside_offset(const ArrayRef<T, ND>& a, const i64 (&start)[ND], int e) {
  i64 off = start[ND - 1] + e % Sh::dim(ND - 1);
  CUPRIC_TILE_UNROLL
  for (int d = ND - 2; d >= 0; --d) off += (start[d] + (e / Sh::inner(d)) % Sh::dim(d)) * a.stride[d];
  return off;
}

/// One run of R elements of a window that is not window_vectorisable, at tile element e, between
/// the array and vals[0 .. R): one vector access where the run is inside the array, contiguous and
/// aligned, else element by element (outside the array: the padding is read, nothing is written).
template <class Sh, int R, bool Store, class T, int ND>
CUPRIC_TD void edge_run(const ArrayRef<T, ND>& a, const i64 (&start)[ND], int e, T* vals, T pad) {
  const i64 st = a.stride[ND - 1], n = a.shape[ND - 1];
  i64 off, c;
  const bool ok = run_offset<Sh>(a, start, e, off, c);
  T* p = a.data + off + c * st;
  if (ok && st == 1 && c >= 0 && c + R <= n && reinterpret_cast<unsigned long long>(p) % sizeof(VecOf<T, R>) == 0) {
    if constexpr (Store) {
      VecOf<T, R> vec;
      CUPRIC_TILE_UNROLL
      for (int i = 0; i < R; ++i) vec.v[i] = vals[i];
      *reinterpret_cast<VecOf<T, R>*>(p) = vec;
    } else {
      const VecOf<T, R> vec = *reinterpret_cast<const VecOf<T, R>*>(p);
      CUPRIC_TILE_UNROLL
      for (int i = 0; i < R; ++i) vals[i] = vec.v[i];
    }
    return;
  }
  CUPRIC_TILE_UNROLL
  for (int i = 0; i < R; ++i) {
    const bool in = ok && c + i >= 0 && c + i < n;
    if constexpr (Store) {
      if (in) a.data[off + (c + i) * st] = vals[i];
    } else {
      vals[i] = in ? a.data[off + (c + i) * st] : pad;
    }
  }
}

/// The run of kVec elements of a window that starts at tile element e (the padding past the
/// tile's end and outside the array): a streamed load's part in one step of its fused loop. fast:
/// the window is window_vectorisable (one unchecked vector access), else edge_run's checks.
template <class Sh, class T, int ND>
CUPRIC_TD VecOf<T, kVec> load_run(bool fast, const ArrayRef<T, ND>& a, const i64 (&start)[ND], int e, T pad) {
  if (fast && e < Sh::size) return *reinterpret_cast<const VecOf<T, kVec>*>(a.data + inside_offset<Sh>(a, start, e));
  VecOf<T, kVec> r;
  edge_run<Sh, kVec, false>(a, start, e, r.v, pad);
  return r;
}

/// Writes the run of kVec elements of a window that starts at tile element e (nothing past the
/// tile's end or outside the array; `fast` as load_run's).
template <class Sh, class T, int ND>
CUPRIC_TD void store_run(bool fast, const ArrayRef<T, ND>& a, const i64 (&start)[ND], int e, VecOf<T, kVec> r) {
  if (e >= Sh::size) return;
  if (fast) {
    *reinterpret_cast<VecOf<T, kVec>*>(a.data + inside_offset<Sh>(a, start, e)) = r;
    return;
  }
  edge_run<Sh, kVec, true>(a, start, e, r.v, T{});
}

/// The edge path of a load or store of runs (a window that is not window_vectorisable): the runs
/// in a loop that is not unrolled, over a copy of the tile in local memory, each run edge_run's.
template <class Sh, int R, bool Store, class T, int ND, int Slots, class L>
CUPRIC_TD void edge_runs(const Block& b, T (&vals)[Slots], const ArrayRef<T, ND>& a, const i64 (&start)[ND], T pad, L) {
  CUPRIC_TILE_NO_UNROLL
  for (int j = 0; j < Slots / R; ++j) edge_run<Sh, R, Store>(a, start, L::elem(b.tid, j * R), vals + j * R, pad);
}
#endif

/// out = the window of shape Sh whose corner is at element `start` (padding outside).
template <class Sh, class T, int ND, class L>
CUPRIC_TD void load(const Block& b, Tile<T, Sh::size, L>& out, const ArrayRef<T, ND>& a, const i64 (&start)[ND],
                    T pad) {
#ifndef CUPRIC_TILE_DEVICE
  (void)b;
  host_load<Sh>(out, a, start, pad);
#else
  constexpr int R = L::kRun;
  if constexpr (R > 1 && Sh::size > 1 && Sh::dim(ND - 1) % R == 0) {
    if (window_vectorisable<Sh, R>(a, start)) {
      CUPRIC_TILE_UNROLL
      for (int j = 0; j < L::kSlots / R; ++j) {
        const int e = L::elem(b.tid, j * R);
        if (e >= Sh::size) {  // slots past the tile's end hold the padding, as on the edge path
          CUPRIC_TILE_UNROLL
          for (int i = 0; i < R; ++i) out.v[j * R + i] = pad;
          continue;
        }
        const VecOf<T, R> vec = *reinterpret_cast<const VecOf<T, R>*>(a.data + inside_offset<Sh>(a, start, e));
        CUPRIC_TILE_UNROLL
        for (int i = 0; i < R; ++i) out.v[j * R + i] = vec.v[i];
      }
    } else {
      T vals[L::kSlots];
      edge_runs<Sh, R, false>(b, vals, a, start, pad, L{});
      CUPRIC_TILE_UNROLL
      for (int s = 0; s < L::kSlots; ++s) out.v[s] = vals[s];
    }
  } else {
    CUPRIC_TILE_UNROLL
    for (int s = 0; s < L::kSlots; ++s) {
      const int e = L::elem(b.tid, s);
      i64 o = 0;
      const bool in = e < Sh::size && element_offset<Sh>(a, start, e, o);
      out.v[s] = in ? a.data[o] : pad;
    }
  }
#endif
}

/// Writes the window of shape Sh whose corner is at element `start`; parts outside the array
/// are dropped.
template <class Sh, class T, int ND, class L>
CUPRIC_TD void store(const Block& b, const Tile<T, Sh::size, L>& in, const ArrayRef<T, ND>& a, const i64 (&start)[ND]) {
#ifndef CUPRIC_TILE_DEVICE
  (void)b;
  host_store<Sh>(in, a, start);
#else
  constexpr int R = L::kRun;
  if constexpr (R > 1 && Sh::size > 1 && Sh::dim(ND - 1) % R == 0) {
    if (window_vectorisable<Sh, R>(a, start)) {
      CUPRIC_TILE_UNROLL
      for (int j = 0; j < L::kSlots / R; ++j) {
        const int e = L::elem(b.tid, j * R);
        if (e >= Sh::size) continue;
        VecOf<T, R> vec;
        CUPRIC_TILE_UNROLL
        for (int i = 0; i < R; ++i) vec.v[i] = in.v[j * R + i];
        *reinterpret_cast<VecOf<T, R>*>(a.data + inside_offset<Sh>(a, start, e)) = vec;
      }
    } else {
      T vals[L::kSlots];
      CUPRIC_TILE_UNROLL
      for (int s = 0; s < L::kSlots; ++s) vals[s] = in.v[s];
      edge_runs<Sh, R, true>(b, vals, a, start, T{}, L{});
    }
  } else {
    CUPRIC_TILE_UNROLL
    for (int s = 0; s < L::kSlots; ++s) {
      const int e = L::elem(b.tid, s);
      i64 o = 0;
      if (L::owns(b.tid, s) && element_offset<Sh>(a, start, e, o)) a.data[o] = in.v[s];
    }
  }
#endif
}

/// Offset of array element idx[...] and whether it is inside the array (gather / scatter).
template <class T, int ND>
CUPRIC_TD bool index_offset(const ArrayRef<T, ND>& a, const i64 (&idx)[ND], i64& off) {
  bool ok = true;
  off = 0;
  CUPRIC_TILE_UNROLL
  for (int d = 0; d < ND; ++d) {
    ok = ok && idx[d] >= 0 && idx[d] < a.shape[d];
    off += idx[d] * a.stride[d];
  }
  return ok;
}

// ---- atomics: add | max | min, with NumPy's NaN-propagating max/min for floats --------------

struct AtomicAdd {
  template <class T>
  CUPRIC_TD T operator()(T a, T b) const {
    return convert<T>(convert<compute_t<T>>(a) + convert<compute_t<T>>(b));
  }
};
struct AtomicMax {
  template <class T>
  CUPRIC_TD T operator()(T a, T b) const {
    return convert<T>(::cu::maximum(convert<compute_t<T>>(a), convert<compute_t<T>>(b)));
  }
};
struct AtomicMin {
  template <class T>
  CUPRIC_TD T operator()(T a, T b) const {
    return convert<T>(::cu::minimum(convert<compute_t<T>>(a), convert<compute_t<T>>(b)));
  }
};

template <int Bytes>
struct bits_of;
template <>
struct bits_of<2> {
  using type = u16;
};
template <>
struct bits_of<4> {
  using type = u32;
};
template <>
struct bits_of<8> {
  using type = u64;
};

/// *p = op(*p, v), atomically (a compare-and-swap loop on the bits).
template <class Op, class T>
CUPRIC_TD void atomic_update(T* p, T v, Op op) {
  using U = typename bits_of<sizeof(T)>::type;
  U* q = reinterpret_cast<U*>(p);
#ifdef CUPRIC_TILE_DEVICE
  if constexpr (same_v<Op, AtomicAdd> &&
                (same_v<T, float> || same_v<T, double> || same_v<T, int> || same_v<T, unsigned> || same_v<T, u64>)) {
    atomicAdd(p, v);
  } else if constexpr (same_v<Op, AtomicAdd> && same_v<T, i64>) {
    atomicAdd(reinterpret_cast<u64*>(p), static_cast<u64>(v));
  } else if constexpr (!same_v<Op, AtomicAdd> &&
                       (same_v<T, int> || same_v<T, unsigned> || same_v<T, i64> || same_v<T, u64>)) {
    if constexpr (same_v<Op, AtomicMax>) atomicMax(p, v);
    else atomicMin(p, v);
  } else {
    U old = *reinterpret_cast<volatile U*>(q);
    for (;;) {
      const U n = bit_cast<U>(op(bit_cast<T>(old), v));
      const U seen = atomicCAS(q, old, n);
      if (seen == old) break;
      old = seen;
    }
  }
#else
  if constexpr (same_v<Op, AtomicAdd> && !is_half_v<T> && !same_v<T, float> && !same_v<T, double>) {
    __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
  } else {
    U old = __atomic_load_n(q, __ATOMIC_RELAXED);
    for (;;) {
      const T nxt = op(bit_cast<T>(old), v);
      if (__atomic_compare_exchange_n(q, &old, bit_cast<U>(nxt), true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) break;
    }
  }
#endif
}

}  // namespace cu::tile
