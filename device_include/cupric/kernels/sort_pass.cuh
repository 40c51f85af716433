// cupric/kernels/sort_pass.cuh — the onesweep digit pass and the unique pass the CUDA backend runs by
// default (sort.cuh's first ones stay selectable: CUPRIC_SORT_KERNEL=old): a tile of Threads x
// Items keys held in registers, warp-private digit counts in shared memory, counts and ranks from
// one pass of ballots and one atomic per digit group, the tile's counts published early, shuffle scans.
#pragma once

#include "cupric/kernels/sort.cuh"

namespace cupric::kernels {

/// The shared memory of a sweep block. `stage` holds the tile in output order: its keys, then its
/// u32 payloads. warp_digit[w][d]: warp w's count of digit d (while ranking), then the place in the
/// tile where its keys of d start.
template <class U, int Threads, int Items, bool PeerWords>
struct SweepShared {
  static constexpr int kWarps = Threads / 32;
  static constexpr int kTile = Threads * Items;
  static constexpr int kSlot = sizeof(U) > 4 ? static_cast<int>(sizeof(U)) : 4;
  union {  // while ranking, the stage is free: the warps' peer words (kPeersAtomicOr) live there
    alignas(16) unsigned char stage[kTile * kSlot];
    u32 peer_words[PeerWords ? kWarps * kSortRadix : 1];
  };
  u32 warp_digit[kWarps][kSortRadix];
  u32 tile_count[kSortRadix];       ///< the tile's keys of each digit
  u32 tile_start[kSortRadix];       ///< where each digit's keys start in the tile
  u32 bins[kSortRadix];             ///< from a place in the tile to one in the row (mod 2^32)
  unsigned char slot_digit[kTile];  ///< the digit of each staged key, for its payload
  u32 warp_sums[kWarps];
  u32 taken;
};

/// Exclusive scan of one value per thread (Threads of them) by warp shuffles; `total` gets the sum.
/// warp_sums must not be read by an earlier scan still in flight (a barrier between two scans).
template <int Threads>
__device__ __forceinline__ u32 sweep_block_scan(u32 v, u32* warp_sums, u32& total) {
  const u32 lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  u32 x = v;
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const u32 y = __shfl_up_sync(0xffffffffu, x, off);
    if (lane >= static_cast<u32>(off)) x += y;
  }
  if (lane == 31u) warp_sums[warp] = x;
  __syncthreads();
  u32 before = 0, sum = 0;
#pragma unroll
  for (int w = 0; w < Threads / 32; ++w) {
    const u32 s = warp_sums[w];
    before += static_cast<u32>(w) < warp ? s : 0u;
    sum += s;
  }
  total = sum;
  return before + x - v;
}

/// Item i of a thread is the tile's key at place0 + 32 i (each warp holds a run of 32 * Items
/// keys, lane-interleaved, so loads coalesce and ranks in item-then-lane order keep the sort stable).
template <class T, class U, int Items, bool Full>
__device__ __forceinline__ void sweep_load(const void* in, i64 base, u32 count, u32 place0, int mode, U (&key)[Items]) {
  const bool descending = (mode & kSortDescending) != 0;
  if (mode & kSortFirst) {
    const T* v = static_cast<const T*>(in) + base;
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const u32 p = place0 + 32u * i;
      key[i] = Full || p < count ? cu::directed_key(v[p], descending) : U(0);
    }
  } else {
    const U* k = static_cast<const U*>(in) + base;
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const u32 p = place0 + 32u * i;
      key[i] = Full || p < count ? k[p] : U(0);
    }
  }
}

/// Each thread turns its run of digits' warp counts into starts in the tile, publishes the tile's
/// counts for the look-back of later tiles (before ranking, so their waits overlap this tile's
/// work), and the block scan gives every digit's start in the tile.
template <class D, int Threads, class Shared>
__device__ __forceinline__ void sweep_tile_offsets(Shared& sh, D* tile_desc, bool first_tile) {
  constexpr int kPer = (kSortRadix + Threads - 1) / Threads;
  const int d0 = static_cast<int>(threadIdx.x) * kPer;
  const D flag = first_tile ? LookBack<D>::kInclusive : LookBack<D>::kAggregate;
  u32 local = 0;
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int d = d0 + k;
    if (d >= kSortRadix) break;
    u32 run = 0;
#pragma unroll
    for (int w = 0; w < Shared::kWarps; ++w) {
      const u32 c = sh.warp_digit[w][d];
      sh.warp_digit[w][d] = run;
      run += c;
    }
    sh.tile_count[d] = run;
    LookBack<D>::publish(tile_desc + d, flag | D(run));
    local += run;
  }
  u32 total;
  u32 at = sweep_block_scan<Threads>(local, sh.warp_sums, total);
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int d = d0 + k;
    if (d >= kSortRadix) break;
    sh.tile_start[d] = at;
#pragma unroll
    for (int w = 0; w < Shared::kWarps; ++w) sh.warp_digit[w][d] += at;
    at += sh.tile_count[d];
  }
}

/// How a key's warp peers (the lanes whose digit equals its own) are found: an atomic OR of the
/// lane's bit into a per-warp word per digit in shared memory, read back (the default: fewest
/// instructions; the pass is instruction-bound), one ballot a digit bit (eight, each lane keeping
/// the lanes that agree with it: 18 % slower on the H200), or one match.any (30 % slower there).
/// CUPRIC_SORT_PEERS picks one (src/backend/cuda/sort.cpp defines CUPRIC_SORT_PEERS_KIND).
/// CUPRIC_SORT_FULL_TILES=0 (sort.cpp defines CUPRIC_SORT_NO_FULL_TILES) runs every tile through the
/// checked body, for timing the full-tile path on the H200.
#ifdef CUPRIC_SORT_NO_FULL_TILES
inline constexpr bool kSweepFullTiles = false;
#else
inline constexpr bool kSweepFullTiles = true;
#endif

enum SweepPeers : int { kPeersBallots = 0, kPeersMatchAny = 1, kPeersAtomicOr = 2 };
#ifdef CUPRIC_SORT_PEERS_KIND
inline constexpr int kSweepPeers = CUPRIC_SORT_PEERS_KIND;
#else
inline constexpr int kSweepPeers = kPeersAtomicOr;
#endif

/// This lane's peers for digit d. Lanes outside `valid` are in no lane's group and form a group of
/// their own. `masks` (kPeersAtomicOr): the warp's 256 words, zero on entry and on return.
template <int Peers>
__device__ __forceinline__ u32 sweep_peers(u32 d, bool valid, u32* masks) {
  const u32 lane = threadIdx.x & 31u;
  if constexpr (Peers == kPeersMatchAny) {
    return __match_any_sync(0xffffffffu, valid ? d : 256u + lane);
  } else if constexpr (Peers == kPeersAtomicOr) {
    if (valid) atomicOr(masks + d, 1u << lane);
    __syncwarp();
    const u32 peers = valid ? masks[d] : 1u << lane;
    __syncwarp();
    if (valid) masks[d] = 0u;  // every peer clears its word (the same value): zero for the next item
    __syncwarp();
    return peers;
  } else {
    u32 peers = __ballot_sync(0xffffffffu, valid);
#pragma unroll
    for (int b = 0; b < 8; ++b) {
      const u32 ones = __ballot_sync(0xffffffffu, (d >> b) & 1u);
      peers &= ((d >> b) & 1u) ? ones : ~ones;
    }
    return valid ? peers : 1u << lane;
  }
}

/// Counts and ranks in one go: per item the lanes of its digit find each other (sweep_peers), and
/// their highest lane advances the warp's count of the digit by their number. rank[i] gets item
/// i's place among the warp's keys of its digit (the warp's counts become starts later, and
/// sweep_place adds them); item i + 1's atomic waits on item i's shuffle, so ranks follow item
/// order and the sort stays stable.
template <class U, int Items, int Peers, bool Full>
__device__ __forceinline__ void sweep_count_rank(const U (&key)[Items], u32 count, u32 place0, int shift,
                                                 u32* warp_count, u32* masks, u32 (&rank)[Items]) {
  const u32 lane = threadIdx.x & 31u, below = (1u << lane) - 1u;
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    const bool valid = Full || place0 + 32u * i < count;
    const u32 d = digit_of(key[i], shift);
    const u32 peers = sweep_peers<Peers>(d, valid, masks);
    const int leader = 31 - __clz(peers);
    u32 at = 0;
    if (valid && lane == static_cast<u32>(leader)) at = atomicAdd(warp_count + d, static_cast<u32>(__popc(peers)));
    at = __shfl_sync(0xffffffffu, at, leader);
    rank[i] = at + static_cast<u32>(__popc(peers & below));
  }
}

/// After sweep_tile_offsets turned the warp's counts into starts in the tile: rank[i] becomes
/// item i's place in the tile.
template <class U, int Items, bool Full>
__device__ __forceinline__ void sweep_place(const U (&key)[Items], u32 count, u32 place0, int shift,
                                            const u32* warp_start, u32 (&rank)[Items]) {
#pragma unroll
  for (int i = 0; i < Items; ++i)
    if (Full || place0 + 32u * i < count) rank[i] += warp_start[digit_of(key[i], shift)];
}

/// The look-back of each digit: its keys in the row's earlier tiles give bins[d], the shift from
/// a place in the tile to one in the row; this tile's inclusive count is published, and the next
/// pass's status words of the tile are zeroed.
template <class D, int Threads, class Shared>
__device__ __forceinline__ void sweep_resolve(Shared& sh, D* desc, D* desc_next, i64 tile, i64 t,
                                              const u32* row_starts) {
  for (int d = static_cast<int>(threadIdx.x); d < kSortRadix; d += Threads) {
    D before = 0;
    if (t != 0) {
      before = look_back(desc, tile, t, static_cast<unsigned>(d));
      LookBack<D>::publish(desc + tile * kSortRadix + d, LookBack<D>::kInclusive | (before + D(sh.tile_count[d])));
    }
    sh.bins[d] = row_starts[d] + static_cast<u32>(before) - sh.tile_start[d];
    desc_next[tile * kSortRadix + d] = 0;
  }
}

/// Writes the staged keys (values in the last pass) at their places in the row: consecutive slots
/// of a digit go to consecutive places, so each digit's run is one coalesced write. With a
/// payload, slot_digit keeps each slot's digit (in shared memory: registers are short).
template <class T, class U, bool WithIdx, int Threads, int Items, bool Full, class Shared>
__device__ __forceinline__ void sweep_write_keys(Shared& sh, void* out, i64 row_first, u32 count, int shift, int mode) {
  const U* stage = reinterpret_cast<const U*>(sh.stage);
  const bool last = (mode & kSortLast) != 0, descending = (mode & kSortDescending) != 0;
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    const u32 k = threadIdx.x + static_cast<u32>(i * Threads);
    if (!Full && k >= count) continue;
    const U key = stage[k];
    const u32 d = digit_of(key, shift);
    if constexpr (WithIdx) sh.slot_digit[k] = static_cast<unsigned char>(d);
    const i64 pos = row_first + static_cast<i64>(sh.bins[d] + k);
    if (!last) static_cast<U*>(out)[pos] = key;
    else if (out) static_cast<T*>(out)[pos] = cu::directed_value<T>(key, descending);
  }
}

/// The payload of the tile (row positions in the first pass, else idx_in) staged in output order
/// and written beside its keys: u32, or int64 indices in the last pass.
template <int Threads, int Items, bool Full, class Shared>
__device__ __forceinline__ void sweep_move_payload(Shared& sh, const u32* idx_in, void* idx_out, i64 row_first,
                                                   i64 tile_first, u32 count, u32 place0, int mode,
                                                   const u32 (&rank)[Items]) {
  u32* stage = reinterpret_cast<u32*>(sh.stage);
  __syncthreads();  // the keys are out of the stage
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    const u32 p = place0 + 32u * i;
    if (Full || p < count)
      stage[rank[i]] = (mode & kSortFirst) ? static_cast<u32>(tile_first - row_first) + p : idx_in[tile_first + p];
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    const u32 k = threadIdx.x + static_cast<u32>(i * Threads);
    if (!Full && k >= count) continue;
    const i64 pos = row_first + static_cast<i64>(sh.bins[sh.slot_digit[k]] + k);
    if (mode & kSortLast) static_cast<i64*>(idx_out)[pos] = static_cast<i64>(stage[k]);
    else static_cast<u32*>(idx_out)[pos] = stage[k];
  }
}

/// Where a tile of the sweep sits: its number, its place in its row, the row's and the tile's
/// first key, its key count, and the calling thread's first item and warp.
struct SweepTile {
  i64 tile, t, row_first, tile_first;
  u32 count, place0, warp;
};

/// One tile of the sweep pass (sort_sweep's body); Full: the tile holds Threads * Items keys, so no
/// key needs a bound check. `starts`: the row's digit starts of this pass.
template <class T, class U, class D, bool WithIdx, int Threads, int Items, int Peers, bool Full, class Shared>
__device__ __forceinline__ void sweep_tile(Shared& sh, const SweepTile& tl, const void* in, void* out,
                                           const u32* idx_in, void* idx_out, const u32* starts, D* desc, D* desc_next,
                                           int shift, int mode) {
  U key[Items];
  sweep_load<T, U, Items, Full>(in, tl.tile_first, tl.count, tl.place0, mode, key);
  u32 rank[Items];
  sweep_count_rank<U, Items, Peers, Full>(key, tl.count, tl.place0, shift, sh.warp_digit[tl.warp],
                                          sh.peer_words + tl.warp * kSortRadix, rank);
  __syncthreads();
  sweep_tile_offsets<D, Threads>(sh, desc + tl.tile * kSortRadix, tl.t == 0);
  __syncthreads();
  sweep_place<U, Items, Full>(key, tl.count, tl.place0, shift, sh.warp_digit[tl.warp], rank);
  sweep_resolve<D, Threads>(sh, desc, desc_next, tl.tile, tl.t, starts);
  U* stage = reinterpret_cast<U*>(sh.stage);
#pragma unroll
  for (int i = 0; i < Items; ++i)
    if (Full || tl.place0 + 32u * i < tl.count) stage[rank[i]] = key[i];
  __syncthreads();
  sweep_write_keys<T, U, WithIdx, Threads, Items, Full>(sh, out, tl.row_first, tl.count, shift, mode);
  if constexpr (WithIdx)
    sweep_move_payload<Threads, Items, Full>(sh, idx_in, idx_out, tl.row_first, tl.tile_first, tl.count, tl.place0,
                                             mode, rank);
}

/// One digit pass (the digit at `shift`) over every tile of every row, with the arguments and
/// modes of sort_onesweep (sort.cuh); launched with Threads threads a block, tiles of
/// Threads * Items keys (the launcher sizes its tiles by the same numbers).
template <class T, class U, class D, bool WithIdx, int Threads, int Items, int Peers = kSweepPeers>
__device__ __forceinline__ void sort_sweep(const void* in, void* out, const u32* idx_in, void* idx_out,
                                           const u32* starts, D* desc, D* desc_next, u32* counter, i64 n, i64 tiles,
                                           i64 ntiles, int shift, int mode) {
  typedef SweepShared<U, Threads, Items, Peers == kPeersAtomicOr> Shared;
  static_assert(Threads % 32 == 0, "sort_sweep runs whole warps");
  __shared__ Shared sh;
  const u32 lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const u32 place0 = warp * 32u * Items + lane;
  for (;;) {
    if (threadIdx.x == 0) sh.taken = atomicAdd(counter, 1u);
    u32* masks = sh.peer_words;
    for (int j = static_cast<int>(threadIdx.x); j < Shared::kWarps * kSortRadix; j += Threads) {
      sh.warp_digit[j / kSortRadix][j % kSortRadix] = 0;
      if constexpr (Peers == kPeersAtomicOr) masks[j] = 0;
    }
    __syncthreads();
    const i64 tile = sh.taken;
    if (tile >= ntiles) break;
    const i64 row = tile / tiles, t = tile - row * tiles, row_first = row * n;
    const i64 tile_first = row_first + t * Shared::kTile, left = n - t * Shared::kTile;
    const u32 count = static_cast<u32>(left < Shared::kTile ? left : Shared::kTile);
    // a full tile (all but a row's last) runs without the per-key bound checks: fewer instructions
    // in a pass that is instruction-bound
    const SweepTile tl{tile, t, row_first, tile_first, count, place0, warp};
    const u32* row_starts = starts + row * static_cast<i64>(sizeof(U)) * kSortRadix;
    if (kSweepFullTiles && count == static_cast<u32>(Shared::kTile))
      sweep_tile<T, U, D, WithIdx, Threads, Items, Peers, true>(sh, tl, in, out, idx_in, idx_out, row_starts, desc,
                                                                desc_next, shift, mode);
    else
      sweep_tile<T, U, D, WithIdx, Threads, Items, Peers, false>(sh, tl, in, out, idx_in, idx_out, row_starts, desc,
                                                                 desc_next, shift, mode);
    __syncthreads();
  }
}

// ---- unique -------------------------------------------------------------------------------------

/// A tile's element k in shared memory, one padding word each 32: a thread reading its run of
/// consecutive elements meets no bank conflict.
__device__ __forceinline__ int unique_slot(int k) { return k + (k >> 5); }

/// unique_runs (sort.cuh) with the same arguments and results, over tiles of Threads x
/// kUniqueItems sorted elements: each tile and its two neighbours come into shared memory by
/// coalesced loads, each thread flags where runs start and end in its consecutive elements, and a
/// shuffle scan numbers the runs.
template <class T, int Threads>
__device__ __forceinline__ void unique_tiles(const T* s, const i64* perm, T* values, i64* index, i64* ends,
                                             i64* inverse, unsigned long long* status, u32* counter, i64* runs, i64 n,
                                             int equal_nan) {
  typedef unsigned long long D;
  constexpr int kTile = Threads * kUniqueItems;
  __shared__ T around[kTile + 2 + (kTile + 2) / 32 + 1];  // slot k + 1: element k of the tile; 0, count + 1: neighbours
  __shared__ u32 warp_sums[Threads / 32];
  __shared__ u32 taken;
  __shared__ D tile_before;
  const i64 ntiles = (n + kTile - 1) / kTile;
  const bool nan_equal = equal_nan != 0;
  const int first = static_cast<int>(threadIdx.x) * kUniqueItems;
  for (;;) {
    if (threadIdx.x == 0) taken = atomicAdd(counter, 1u);
    __syncthreads();
    const i64 tile = taken;
    if (tile >= ntiles) break;
    const i64 lo = tile * kTile;
    const int count = static_cast<int>(n - lo < kTile ? n - lo : kTile);
    for (int k = static_cast<int>(threadIdx.x); k < count + 2; k += Threads) {
      const i64 j = lo - 1 + k;
      if (j >= 0 && j < n) around[unique_slot(k)] = s[j];
    }
    __syncthreads();
    u32 starts = 0, stops = 0;  // bit m: element first + m begins / ends a run
    for (int m = 0; m < kUniqueItems && first + m < count; ++m) {
      const int k = first + m;
      const i64 j = lo + k;
      const T v = around[unique_slot(k + 1)];
      if (j == 0 || cu::starts_run(around[unique_slot(k)], v, nan_equal)) starts |= 1u << m;
      if (j == n - 1 || cu::starts_run(v, around[unique_slot(k + 2)], nan_equal)) stops |= 1u << m;
    }
    u32 total;
    const u32 before_thread = sweep_block_scan<Threads>(static_cast<u32>(__popc(starts)), warp_sums, total);
    if (threadIdx.x == 0) tile_before = runs_before_tile(status, tile, ntiles, total, runs);
    __syncthreads();
    i64 id = static_cast<i64>(tile_before) + before_thread;  // runs begun up to element j
    if (ends && lo == 0 && threadIdx.x == 0) ends[0] = 0;
    for (int m = 0; m < kUniqueItems && first + m < count; ++m) {
      const i64 j = lo + first + m;
      const bool start = (starts >> m) & 1u;
      id += start;
      if (start && values) values[id - 1] = around[unique_slot(first + m + 1)];
      if (start && index) index[id - 1] = perm[j];
      if (ends && ((stops >> m) & 1u)) ends[id] = j + 1;
      if (inverse) inverse[perm[j]] = id - 1;
    }
    __syncthreads();
  }
}

// ---- radix select (median, quantiles) -----------------------------------------------------------

inline constexpr int kSelectMax = 8;  ///< ranks selected together: one read of the data a digit

/// One digit of the radix select, most significant first: hist[t * 256 + d] (zeroed) counts the
/// keys of `in` whose digits above `shift` are prefix[t] (the digits chosen so far for target t)
/// and whose digit at `shift` is d.
template <class T>
__device__ __forceinline__ void select_histograms(const T* in, i64 n, const typename cu::SortKey<T>::Key* prefix,
                                                  u32* hist, int targets, int shift) {
  typedef typename cu::SortKey<T>::Key U;
  __shared__ u32 local[kSelectMax * kSortRadix];
  __shared__ U want[kSelectMax];
  for (int j = static_cast<int>(threadIdx.x); j < targets * kSortRadix; j += blockDim.x) local[j] = 0;
  for (int t = static_cast<int>(threadIdx.x); t < targets; t += blockDim.x) want[t] = prefix[t];
  __syncthreads();
  const int above = shift + 8;
  CUPRIC_GRID_LOOP(i, 0, n) {
    const U key = cu::SortKey<T>::key(in[i]);
    const U high = above >= 8 * static_cast<int>(sizeof(U)) ? U(0) : U(key >> above);
    const u32 d = digit_of(key, shift);
    for (int t = 0; t < targets; ++t)
      if (high == want[t]) atomicAdd(&local[t * kSortRadix + d], 1u);
  }
  __syncthreads();
  for (int j = static_cast<int>(threadIdx.x); j < targets * kSortRadix; j += blockDim.x)
    if (local[j]) atomicAdd(hist + j, local[j]);
}

/// After the counts of the digit at `shift`: target t's digit is the one its rank (rank[t], among
/// the keys under its prefix) falls in; prefix[t] gains it and rank[t] becomes the rank among the
/// keys under the longer prefix. After the last digit prefix[t] is the key and out[t] its value
/// (+0.0 for a zero, the canonical NaN: keys do not tell them apart).
template <class T>
__device__ __forceinline__ void select_step(const u32* hist, typename cu::SortKey<T>::Key* prefix, i64* rank, T* out,
                                            int targets, int shift) {
  typedef typename cu::SortKey<T>::Key U;
  for (int t = static_cast<int>(threadIdx.x); t < targets; t += blockDim.x) {
    i64 left = rank[t];
    u32 d = 0;
    for (; d < kSortRadix - 1; ++d) {
      const i64 c = hist[t * kSortRadix + d];
      if (left < c) break;
      left -= c;
    }
    rank[t] = left;
    prefix[t] = U(U(prefix[t] << 8) | U(d));
    if (shift == 0) out[t] = cu::SortKey<T>::value(prefix[t]);
  }
}

}  // namespace cupric::kernels
