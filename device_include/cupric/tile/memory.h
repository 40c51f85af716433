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

/// Writes v[0 .. R) to p (aligned to the whole run) in one access. Elements narrower than 32 bits
/// are packed into 32-bit words first: stored as a struct of 16-bit members, NVVM may write them one
/// by one — the bf16 matmul's relu epilogue (one `cvt.rn.relu.bf16.f32` per element) went out as
/// 2-byte stores, twice the instructions and a third slower at 4096³ (docs/tile.md).
template <class T, int R>
CUPRIC_TD void store_vector(T* p, const T* v) {
  constexpr int kBytes = static_cast<int>(sizeof(T)) * R;
  if constexpr (sizeof(T) < 4 && kBytes % 4 == 0) {
    constexpr int kPer = 4 / static_cast<int>(sizeof(T)), kWords = kBytes / 4;
    VecOf<u32, kWords> w;
    CUPRIC_TILE_UNROLL
    for (int i = 0; i < kWords; ++i) {
      u32 word = 0;
      CUPRIC_TILE_UNROLL
      for (int j = 0; j < kPer; ++j) {
        u32 bits;
        if constexpr (sizeof(T) == 1) bits = __builtin_bit_cast(u8, v[i * kPer + j]);
        else bits = __builtin_bit_cast(u16, v[i * kPer + j]);
        word |= bits << (8 * static_cast<int>(sizeof(T)) * j);
      }
      w.v[i] = word;
    }
    *reinterpret_cast<VecOf<u32, kWords>*>(p) = w;
  } else {
    VecOf<T, R> vec;
    CUPRIC_TILE_UNROLL
    for (int i = 0; i < R; ++i) vec.v[i] = v[i];
    *reinterpret_cast<VecOf<T, R>*>(p) = vec;
  }
}

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
      store_vector<T, R>(p, vals);
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
    store_vector<T, kVec>(a.data + inside_offset<Sh>(a, start, e), r.v);
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

#ifdef CUPRIC_TILE_DEVICE
/// store's path for a window that is not vectorisable: element runs, each checked against the
/// array's edges (also store_staged's, where its fast paths cannot apply).
template <class Sh, class T, int ND, class L>
CUPRIC_TD void store_edges(const Block& b, const Tile<T, Sh::size, L>& in, const ArrayRef<T, ND>& a,
                           const i64 (&start)[ND]) {
  T vals[L::kSlots];
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < L::kSlots; ++s) vals[s] = in.v[s];
  edge_runs<Sh, L::kRun, true>(b, vals, a, start, T{}, L{});
}
#endif

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
        store_vector<T, R>(a.data + inside_offset<Sh>(a, start, e), in.v + j * R);
      }
    } else {
      store_edges<Sh>(b, in, a, start);
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

/// Shared scratch store_staged takes for an accumulator tile of M rows: two buffers of M rows of
/// 128 bytes (+ 1024 to align them for TMA's swizzle; the emitter reserves it: staged_store_bytes).
template <int M>
inline constexpr int kStagedStoreBytes = 2 * M * 128 + 1024;

#ifdef CUPRIC_TILE_DEVICE
/// The columns [chunk · 128 bytes, + 128 bytes) of every row of an accumulator tile into buf, a row
/// of 128 bytes each, the 16-byte unit u of row r at u ^ (r % 8) — TMA's 128-byte swizzle, under
/// which a warp's writes (8 rows × 16 bytes) fall in 8 different bank groups.
template <class L, class T, int N>
CUPRIC_TD void stage_chunk(const Block& b, unsigned char* buf, const Tile<T, N, L>& in, int chunk) {
  constexpr int kCols = 128 / sizeof(T), kUnit = 16 / sizeof(T);
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < L::kSlots; s += 2) {
    const int fragment = (s / 4) % L::TN * 8;  // the slot's fragment column: in this chunk or not
    if (fragment / kCols != chunk) continue;
    const int r = L::row(b.tid, s), c = fragment % kCols + 2 * (b.tid % 4);
    unsigned char* const at = buf + r * 128 + ((c / kUnit) ^ (r % 8)) * 16 + (c % kUnit) * sizeof(T);
    store_vector<T, 2>(reinterpret_cast<T*>(at), in.v + s);
  }
}

/// The chunk loop of store_staged's two forms: each 128-byte column chunk of the accumulator goes
/// to one of two buffers at base (stage_chunk), then `ready()` (what must happen before the barrier:
/// with TMA, the writes made visible to it and the store of two chunks ago done reading), one
/// barrier, and `leave(chunk, buf)` takes it out; after the last, `ready()` and a barrier free the
/// scratch again.
template <class L, class T, int N, class Ready, class Leave>
CUPRIC_TD void staged_chunks(const Block& b, unsigned char* base, const Tile<T, N, L>& in, Ready ready, Leave leave) {
  constexpr int kChunks = L::kN * static_cast<int>(sizeof(T)) / 128;
  CUPRIC_TILE_UNROLL
  for (int chunk = 0; chunk < kChunks; ++chunk) {
    unsigned char* const buf = base + (chunk % 2) * (L::kM * 128);
    stage_chunk<L>(b, buf, in, chunk);
    ready();
    CUPRIC_TILE_SYNC();
    leave(chunk, buf);
  }
  ready();
  CUPRIC_TILE_SYNC();  // the scratch is free again
}
#endif

/// Writes an accumulator-layout tile (MmaLayout, one warp column, no padding fragments) of 1- or
/// 2-byte elements — a product's epilogue — through shared memory: straight from the fragments
/// each warp would write 8 rows × 16 bytes per instruction (two threads' pairs per 32-byte sector).
/// Instead each 128-byte column chunk of every row goes to shared memory (staged_chunks), is read
/// back as 16-byte units, four whole rows a warp, and stored as such (with a TMA map, tma.h's
/// overload stores the chunk by TMA). Windows that are not window_vectorisable take store's path.
#ifdef CUPRIC_TILE_DEVICE
/// store_staged's body, the chunks staged at `base`: with `tma` (the caller's map made) each chunk
/// leaves by `tma_leave` after `tma_ready`; else the window, if vectorisable, as 16-byte rows (else
/// store's path). One chunk loop for both ways out: its unrolled writes are in the code once.
template <class Sh, class T, int ND, class L, class Ready, class Leave>
CUPRIC_TD void store_staged_chunks(const Block& b, unsigned char* base, const Tile<T, Sh::size, L>& in,
                                   const ArrayRef<T, ND>& a, const i64 (&start)[ND], bool tma, Ready tma_ready,
                                   Leave tma_leave) {
  static_assert(is_mma_layout_v<L> && L::kExact && L::kWN == 1 && sizeof(T) <= 2 && Sh::size == L::kM * L::kN &&
                    Sh::dim(Sh::rank - 1) == L::kN && L::kN * sizeof(T) % 128 == 0,
                "cupric.tile: store_staged takes an exact one-warp-column accumulator of 1- or 2-byte elements");
  constexpr int M = L::kM, N = L::kN, kCols = 128 / sizeof(T), kUnit = 16 / sizeof(T);
  static_assert(kStagedStoreBytes<M> <= kSmemBytes, "cupric.tile: scratch too small (store_staged)");
  if (!tma && !window_vectorisable<Sh, kUnit>(a, start)) {  // store's edge path (its fast one cannot apply)
    store_edges<Sh>(b, in, a, start);
    return;
  }
  staged_chunks(b, base, in, tma_ready, [&](int chunk, unsigned char* buf) {
    if (tma) return tma_leave(chunk, buf);
    CUPRIC_TILE_UNROLL
    for (int k = 0; k < (M * 8 + kThreads - 1) / kThreads; ++k) {
      const int i = b.tid + k * kThreads;
      if (M * 8 % kThreads != 0 && i >= M * 8) break;
      const int r = i / 8, u = i % 8;
      const VecOf<T, kUnit> v = *reinterpret_cast<const VecOf<T, kUnit>*>(buf + r * 128 + ((u ^ (r % 8)) * 16));
      *reinterpret_cast<VecOf<T, kUnit>*>(a.data + inside_offset<Sh>(a, start, r * N + chunk * kCols + u * kUnit)) = v;
    }
  });
}
#endif

/// Writes an accumulator-layout tile (MmaLayout, one warp column, no padding fragments) of 1- or
/// 2-byte elements — a product's epilogue — through shared memory: straight from the fragments
/// each warp would write 8 rows × 16 bytes per instruction (two threads' pairs per 32-byte sector).
/// Instead each 128-byte column chunk of every row goes to shared memory (staged_chunks), is read
/// back as 16-byte units, four whole rows a warp, and stored as such (with a TMA map, tma.h's
/// overload stores the chunk by TMA). Windows that are not window_vectorisable take store's path.
template <class Sh, class T, int ND, class L>
CUPRIC_TD void store_staged(const Block& b, const Tile<T, Sh::size, L>& in, const ArrayRef<T, ND>& a,
                            const i64 (&start)[ND]) {
#ifndef CUPRIC_TILE_DEVICE
  store<Sh>(b, in, a, start);
#else
  store_staged_chunks<Sh>(b, b.smem, in, a, start, false, [] {}, [](int, unsigned char*) {});
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
