// cupric/kernels/sort.cuh — sorting and searching on the CUDA backend: a onesweep LSD radix sort
// (Adinets & Merrill 2022) of the unsigned keys of cupric/sort_keys.h, 8-bit digits, batched over
// C-contiguous rows, with an optional uint32 index payload (argsort). One kernel counts every
// digit of every pass at once; then one kernel per digit ranks each tile's keys in shared memory
// and finds the tile's place among its row's tiles by decoupled look-back. The first pass makes
// the keys from the values and the last one writes values and int64 indices, so a sort reads and
// writes the data once per digit. Every kernel walks its work with blockDim-agnostic loops, so
// the host test runs them as one thread.
#pragma once

#include "cupric/kernels/common.cuh"
#include "cupric/sort_keys.h"

namespace cupric::kernels {

typedef unsigned int u32;
inline constexpr int kSortRadix = 256;       ///< buckets of an 8-bit digit
inline constexpr int kSortMaxThreads = 256;  ///< threads of a pass block (its shared tile)
inline constexpr int kSortMaxWarps = kSortMaxThreads / 32;
/// Keys per thread of a tile: a tile and its payload are staged in the 48 KiB of static shared
/// memory (src/backend/cuda/sort.cpp sizes its tiles by the same rule).
template <class U>
inline constexpr int kSortItems = sizeof(U) == 8 ? 8 : 16;
/// What a pass kernel does besides moving keys (its `mode` argument).
inline constexpr int kSortFirst = 1;       ///< read values (T) and make their keys; payload = position
inline constexpr int kSortLast = 2;        ///< write values (T) and int64 indices, not keys and u32
inline constexpr int kSortDescending = 4;  ///< keys are complemented (both ends)

/// The ordered key of an element for searching (unsigned, or a complex one's three).
template <class T>
__device__ __forceinline__ auto order_key(T v) {
  if constexpr (cu::is_complex_v<T>) {
    return cu::ComplexSortKey<typename T::value_type>::of(v.real(), v.imag());
  } else {
    return cu::SortKey<T>::key(v);
  }
}

/// Exclusive scan of one value per thread of the block; `total` gets the sum. sh: blockDim.x u32.
__device__ __forceinline__ u32 block_exclusive_scan(u32 v, u32* sh, u32& total) {
  const unsigned t = threadIdx.x;
  sh[t] = v;
  __syncthreads();
  for (unsigned off = 1; off < blockDim.x; off <<= 1) {
    const u32 u = t >= off ? sh[t - off] : 0u;
    __syncthreads();
    sh[t] += u;
    __syncthreads();
  }
  total = sh[blockDim.x - 1];
  const u32 inclusive = sh[t];
  __syncthreads();
  return inclusive - v;
}

// ---- complex keys and the final gather (complex sorts run three key sorts) -----------------------

/// One of ComplexSortKey's keys (part 0 secondary, 1 primary, 2 class) of the element each row's
/// permutation `perm` puts at i (perm null: the identity, and idx gets it).
template <class C>
__device__ __forceinline__ void sort_complex_keys(const C* in, typename cu::SortKey<typename C::value_type>::Key* keys,
                                                  const u32* perm, u32* idx, i64 total, i64 n, int part,
                                                  int descending) {
  typedef typename C::value_type R;
  typedef typename cu::SortKey<R>::Key U;
  CUPRIC_GRID_LOOP(i, 0, total) {
    const i64 row = i / n;
    const i64 from = perm ? static_cast<i64>(perm[i]) : i - row * n;
    const C v = in[row * n + from];
    const cu::ComplexSortKey<R> k = cu::ComplexSortKey<R>::of(v.real(), v.imag());
    const U key = part == 0 ? k.secondary : part == 1 ? k.primary : k.cls;
    keys[i] = descending ? U(~key) : key;
    if (!perm) idx[i] = static_cast<u32>(from);
  }
}

/// values[i] = the row's element perm[i] (complex sorts end so), indices[i] = perm[i].
template <class T>
__device__ __forceinline__ void sort_gather(const T* in, const u32* perm, T* values, i64* indices, i64 total, i64 n) {
  CUPRIC_GRID_LOOP(i, 0, total) {
    const i64 from = static_cast<i64>(perm[i]);
    if (values) values[i] = in[(i / n) * n + from];
    if (indices) indices[i] = from;
  }
}

// ---- onesweep -------------------------------------------------------------------------------------

template <class U>
__device__ __forceinline__ u32 digit_of(U key, int shift) {
  return static_cast<u32>(key >> shift) & 0xffu;
}

/// Key j of a row: made from the values (T) in the first pass, else read (U).
template <class T, class U>
__device__ __forceinline__ U load_key(const void* in, i64 j, int mode) {
  if (mode & kSortFirst) return cu::directed_key(static_cast<const T*>(in)[j], (mode & kSortDescending) != 0);
  return static_cast<const U*>(in)[j];
}

/// Shared counters per digit (lanes of a warp spread their atomics over them) and keys a thread
/// loads before counting them (loads in flight), for keys of `bytes`: 8-byte keys take half of
/// each, so a block stays under 32 registers and 16 KiB and 8 blocks fit an SM (one wave).
template <int bytes>
inline constexpr int kHistCopies = bytes > 4 ? 2 : 4;
template <int bytes>
inline constexpr int kHistItems = bytes > 4 ? 4 : 8;

/// hist[(row * passes + p) * 256 + d] += how many keys of the row have digit d at bits 8p
/// (hist starts zeroed; mode: kSortFirst when `in` holds values). Each block walks its own run
/// of consecutive tiles of `tile_size` keys and adds its shared counts to hist when its row
/// changes (rarely: runs are consecutive). Lane l counts into copy l % kCopies of each digit's
/// counters, so lanes of a common digit (a float's top byte) collide kCopies times less; each
/// thread loads kItems keys before counting, so the reads keep HBM busy.
template <class T, class U>
__device__ __forceinline__ void sort_histograms(const void* in, u32* hist, i64 n, i64 tiles, i64 ntiles, i64 tile_size,
                                                int mode) {
  constexpr int kPasses = sizeof(U), kWords = kPasses * kSortRadix;
  constexpr int kCopies = kHistCopies<kPasses>, kItems = kHistItems<kPasses>;
  __shared__ u32 local[kWords * kCopies];
  const u32 copy = threadIdx.x % kCopies;
  const i64 per_block = (ntiles + gridDim.x - 1) / gridDim.x, first = blockIdx.x * per_block;
  const i64 end = first + per_block < ntiles ? first + per_block : ntiles;
  // the block's run of tiles, a row's part at a time: its keys are one contiguous range, walked in
  // steps of blockDim.x * kItems (ragged once a range, not once a tile)
  for (i64 tile = first; tile < end;) {
    const i64 r = tile / tiles, row_end = (r + 1) * tiles < end ? (r + 1) * tiles : end;
    for (unsigned j = threadIdx.x; j < kWords * kCopies; j += blockDim.x) local[j] = 0;
    __syncthreads();
    const i64 lo = (tile - r * tiles) * tile_size, stop = (row_end - r * tiles) * tile_size;
    const i64 hi = stop < n ? stop : n;
    for (i64 j0 = lo + threadIdx.x; j0 < hi; j0 += static_cast<i64>(blockDim.x) * kItems) {
      U key[kItems];
#pragma unroll
      for (int q = 0; q < kItems; ++q) {
        const i64 j = j0 + static_cast<i64>(q) * blockDim.x;
        key[q] = j < hi ? load_key<T, U>(in, r * n + j, mode) : U(0);
      }
#pragma unroll
      for (int q = 0; q < kItems; ++q) {
        if (j0 + static_cast<i64>(q) * blockDim.x >= hi) break;
#pragma unroll
        for (int p = 0; p < kPasses; ++p)
          atomicAdd(&local[(p * kSortRadix + digit_of(key[q], 8 * p)) * kCopies + copy], 1u);
      }
    }
    __syncthreads();
    for (unsigned j = threadIdx.x; j < kWords; j += blockDim.x) {
      u32 c = 0;
#pragma unroll
      for (int k = 0; k < kCopies; ++k) c += local[j * kCopies + k];
      if (c) atomicAdd(hist + r * kWords + j, c);
    }
    __syncthreads();
    tile = row_end;
  }
}

/// Each group of 256 digit counts (a row's pass) becomes its exclusive prefix: where each
/// digit's keys start in the row.
__device__ __forceinline__ void sort_digit_starts(u32* hist, i64 groups) {
  __shared__ u32 sh[kSortMaxThreads];
  const unsigned per = (kSortRadix + blockDim.x - 1) / blockDim.x;
  for (i64 g = blockIdx.x; g < groups; g += gridDim.x) {
    u32* h = hist + g * kSortRadix;
    u32 local = 0;
    for (unsigned d = threadIdx.x * per; d < (threadIdx.x + 1) * per && d < kSortRadix; ++d) local += h[d];
    u32 total;
    u32 at = block_exclusive_scan(local, sh, total);
    for (unsigned d = threadIdx.x * per; d < (threadIdx.x + 1) * per && d < kSortRadix; ++d) {
      const u32 c = h[d];
      h[d] = at;
      at += c;
    }
  }
}

/// A tile's status word per digit for the look-back: the flag in the top two bits (0: not yet
/// published, aggregate: this tile's count, inclusive: the count of this and every earlier tile
/// of the row) over the value. D is u32 (rows below 2^30 keys) or unsigned long long.
template <class D>
struct LookBack {
  static constexpr D kAggregate = D(1) << (8 * sizeof(D) - 2);
  static constexpr D kInclusive = D(2) << (8 * sizeof(D) - 2);
  static constexpr D kValue = kAggregate - 1;
  static __device__ __forceinline__ void publish(D* p, D v) { *static_cast<volatile D*>(p) = v; }
  static __device__ __forceinline__ D read(const D* p) { return *static_cast<const volatile D*>(p); }
};

/// The keys of this tile before digit d in earlier tiles of the row: digit d's words of the
/// tiles before `tile` (its row's tile t), added from the nearest back until an inclusive one.
/// Tiles are numbered in the order blocks took them, so every earlier tile is held by a running
/// block and the wait ends.
template <class D, int Stride = kSortRadix>
__device__ __forceinline__ D look_back(const D* desc, i64 tile, i64 t, unsigned d) {
  D prefix = 0;
  for (i64 p = tile - 1; p >= tile - t;) {
    const D v = LookBack<D>::read(desc + p * Stride + d);
    if ((v & ~LookBack<D>::kValue) == 0) continue;  // not published yet: wait
    prefix += v & LookBack<D>::kValue;
    if (v & LookBack<D>::kInclusive) break;
    --p;
  }
  return prefix;
}

/// Ranks the tile's keys by the digit at `shift`: wcount[warp][d] counts each warp's keys of
/// digit d and rank[i] is key i's place among its warp's keys of its digit (warp w holds the
/// tile's w-th run of lanes * Items keys, taken lane-interleaved in rounds, so ranks follow the
/// keys' order and the sort stays stable).
template <class U, int Items>
__device__ __forceinline__ void rank_in_warps(const U (&key)[Items], const bool (&valid)[Items], u32 (&rank)[Items],
                                              u32 (*wcount)[kSortRadix], unsigned lanes, int shift) {
  const unsigned warp = threadIdx.x / lanes, lane = threadIdx.x % lanes;
  const u32 below = (1u << lane) - 1u;
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    const u32 d = valid[i] ? digit_of(key[i], shift) : 0x100u;  // a group of its own
    const u32 peers = __match_any_sync(0xffffffffu >> (32 - lanes), d);
    const u32 before = valid[i] ? wcount[warp][d] : 0u;
    __syncwarp();
    if (valid[i] && (peers & below) == 0) wcount[warp][d] = before + static_cast<u32>(__popc(peers));
    __syncwarp();
    rank[i] = before + static_cast<u32>(__popc(peers & below));
  }
}

/// One digit pass (the digit at `shift`) over every tile of every row: ranks the tile's keys,
/// publishes its digit counts, looks back for the earlier tiles' counts, and writes its keys (and
/// payload) at their places through a shared-memory copy of the tile in digit order, so each
/// digit's run is one coalesced write. starts: sort_digit_starts' offsets of this pass's digits
/// in row 0 (rows are sizeof(U) * 256 words apart);
/// desc: this pass's status words (zeroed), desc_next: the next pass's (zeroed here); counter:
/// this pass's tile counter (zeroed). `in`/`out` hold values (T) or keys (U) as `mode` says;
/// idx_out holds int64 indices in the last pass, else u32.
template <class T, class U, class D, bool WithIdx>
__device__ __forceinline__ void sort_onesweep(const void* in, void* out, const u32* idx_in, void* idx_out,
                                              const u32* starts, D* desc, D* desc_next, u32* counter, i64 n, i64 tiles,
                                              i64 ntiles, int shift, int mode) {
  constexpr int kItems = kSortItems<U>, kPasses = sizeof(U);
  __shared__ u32 wcount[kSortMaxWarps][kSortRadix];  // per warp and digit: count, then start
  __shared__ u32 tile_count[kSortRadix];
  __shared__ u32 tile_start[kSortRadix];  // the digit's first place in the tile
  __shared__ i64 shift_out[kSortRadix];   // from a place in the tile to one in the output
  __shared__ u32 sh[kSortMaxThreads];
  __shared__ U stage_keys[kSortMaxThreads * kItems];
  __shared__ u32 stage_idx[WithIdx ? kSortMaxThreads * kItems : 1];
  __shared__ u32 taken;
  const unsigned lanes = blockDim.x < 32 ? blockDim.x : 32;
  const unsigned nwarps = blockDim.x / lanes, warp = threadIdx.x / lanes, lane = threadIdx.x % lanes;
  const i64 tile_size = static_cast<i64>(blockDim.x) * kItems;
  const unsigned per = (kSortRadix + blockDim.x - 1) / blockDim.x;  // digits per thread in scans
  const bool descending = (mode & kSortDescending) != 0;
  for (;;) {
    if (threadIdx.x == 0) taken = atomicAdd(counter, 1u);
    for (unsigned w = 0; w < nwarps; ++w)
      for (unsigned d = threadIdx.x; d < kSortRadix; d += blockDim.x) wcount[w][d] = 0;
    __syncthreads();
    const i64 tile = taken;
    if (tile >= ntiles) break;
    const i64 row = tile / tiles, t = tile - row * tiles, first = row * n;
    const i64 lo = t * tile_size + static_cast<i64>(warp) * lanes * kItems;
    U key[kItems];
    bool valid[kItems];
    u32 rank[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const i64 j = lo + static_cast<i64>(i) * lanes + lane;
      valid[i] = j < n;
      key[i] = valid[i] ? load_key<T, U>(in, first + j, mode) : U(0);
    }
    rank_in_warps<U, kItems>(key, valid, rank, wcount, lanes, shift);
    __syncthreads();
    // each thread scans its run of `per` digits: warps' counts to starts, then the tile's counts
    u32 local = 0;
    for (unsigned d = threadIdx.x * per; d < (threadIdx.x + 1) * per && d < kSortRadix; ++d) {
      u32 run = 0;
      for (unsigned w = 0; w < nwarps; ++w) {
        const u32 c = wcount[w][d];
        wcount[w][d] = run;
        run += c;
      }
      tile_count[d] = run;
      local += run;
    }
    u32 total;
    u32 at = block_exclusive_scan(local, sh, total);                 // its barriers publish tile_count
    for (unsigned d = threadIdx.x; d < kSortRadix; d += blockDim.x)  // publish before waiting
      LookBack<D>::publish(desc + tile * kSortRadix + d,
                           (t == 0 ? LookBack<D>::kInclusive : LookBack<D>::kAggregate) | D(tile_count[d]));
    for (unsigned d = threadIdx.x * per; d < (threadIdx.x + 1) * per && d < kSortRadix; ++d) {
      tile_start[d] = at;
      at += tile_count[d];
    }
    __syncthreads();
    for (unsigned d = threadIdx.x; d < kSortRadix; d += blockDim.x) {
      const D before = t == 0 ? D(0) : look_back(desc, tile, t, d);
      if (t != 0)
        LookBack<D>::publish(desc + tile * kSortRadix + d, LookBack<D>::kInclusive | (before + tile_count[d]));
      shift_out[d] = first + static_cast<i64>(starts[row * kPasses * kSortRadix + d]) + static_cast<i64>(before) -
                     static_cast<i64>(tile_start[d]);
      desc_next[tile * kSortRadix + d] = 0;
    }
#pragma unroll
    for (int i = 0; i < kItems; ++i) {  // the payload is read only now: fewer registers, more blocks
      if (!valid[i]) continue;
      const u32 d = digit_of(key[i], shift);
      const u32 place = tile_start[d] + wcount[warp][d] + rank[i];
      stage_keys[place] = key[i];
      if constexpr (WithIdx) {
        const i64 j = lo + static_cast<i64>(i) * lanes + lane;
        stage_idx[place] = (mode & kSortFirst) ? static_cast<u32>(j) : idx_in[first + j];
      }
    }
    __syncthreads();
    for (i64 k = threadIdx.x; k < static_cast<i64>(total); k += blockDim.x) {
      const U k_key = stage_keys[k];
      const i64 pos = shift_out[digit_of(k_key, shift)] + k;
      if (!(mode & kSortLast)) {
        static_cast<U*>(out)[pos] = k_key;
        if constexpr (WithIdx) static_cast<u32*>(idx_out)[pos] = stage_idx[k];
      } else {
        if (out) static_cast<T*>(out)[pos] = cu::directed_value<T>(k_key, descending);
        if constexpr (WithIdx) static_cast<i64*>(idx_out)[pos] = static_cast<i64>(stage_idx[k]);
      }
    }
    __syncthreads();
  }
}

// ---- unique ------------------------------------------------------------------------------------

inline constexpr int kUniqueItems = 16;  ///< consecutive elements per thread

/// Thread 0 of a unique tile with `total` runs begun in it: publishes them to the look-back over
/// `status`, returns the runs begun before the tile, and at the last tile writes the count to *runs.
__device__ __forceinline__ unsigned long long runs_before_tile(unsigned long long* status, i64 tile, i64 ntiles,
                                                               u32 total, i64* runs) {
  typedef unsigned long long D;
  LookBack<D>::publish(status + tile, (tile == 0 ? LookBack<D>::kInclusive : LookBack<D>::kAggregate) | D(total));
  const D before = tile == 0 ? D(0) : look_back<D, 1>(status, tile, tile, 0);
  if (tile != 0) LookBack<D>::publish(status + tile, LookBack<D>::kInclusive | (before + total));
  if (tile == ntiles - 1) *runs = static_cast<i64>(before + total);
  return before;
}

/// unique's runs of equal elements of the sorted `s` (n elements, perm: the int64 permutation
/// that sorted them) in one pass: at run r's first element values[r] and index[r] = perm there,
/// ends[r + 1] = one past its last (ends[0] = 0), inverse[perm[i]] = r everywhere (any output may
/// be null), and *runs = the number of runs. A tile's runs before it come from the look-back over
/// `status` (one zeroed word per tile), tiles taken from `counter` (zeroed).
template <class T>
__device__ __forceinline__ void unique_runs(const T* s, const i64* perm, T* values, i64* index, i64* ends, i64* inverse,
                                            unsigned long long* status, u32* counter, i64* runs, i64 n, int equal_nan) {
  typedef unsigned long long D;
  __shared__ u32 sh[kSortMaxThreads];
  __shared__ u32 taken;
  __shared__ D tile_before;
  const i64 tile_size = static_cast<i64>(blockDim.x) * kUniqueItems, ntiles = (n + tile_size - 1) / tile_size;
  const bool nan_equal = equal_nan != 0;
  for (;;) {
    if (threadIdx.x == 0) taken = atomicAdd(counter, 1u);
    __syncthreads();
    const i64 tile = taken;
    if (tile >= ntiles) break;
    const i64 lo = tile * tile_size + static_cast<i64>(threadIdx.x) * kUniqueItems;
    const i64 hi = lo + kUniqueItems < n ? lo + kUniqueItems : n;
    u32 count = 0;
    for (i64 j = lo; j < hi; ++j) count += j == 0 || cu::starts_run(s[j - 1], s[j], nan_equal);
    u32 total;
    const u32 before_thread = block_exclusive_scan(count, sh, total);
    if (threadIdx.x == 0) tile_before = runs_before_tile(status, tile, ntiles, total, runs);
    __syncthreads();
    i64 id = static_cast<i64>(tile_before) + before_thread;  // runs begun up to element j
    for (i64 j = lo; j < hi; ++j) {
      const bool start = j == 0 || cu::starts_run(s[j - 1], s[j], nan_equal);
      id += start;
      if (start && values) values[id - 1] = s[j];
      if (start && index) index[id - 1] = perm[j];
      if (ends && (j == n - 1 || cu::starts_run(s[j], s[j + 1], nan_equal))) ends[id] = j + 1;
      if (ends && j == 0) ends[0] = 0;
      if (inverse) inverse[perm[j]] = id - 1;
    }
    __syncthreads();
  }
}

// ---- searching -----------------------------------------------------------------------------------

/// Bytes of the hay's evenly spaced samples a block keeps in shared memory for searching.
inline constexpr int kSearchSampleBytes = 16384;

/// out[i] = where needles[i] goes in the sorted hay (before equal elements, or after with right).
/// Each block first keeps every step-th element of the hay in shared memory (16 KiB of keys): a
/// needle's search through the samples finds the run of `step` elements that holds its place, so
/// only that run's binary search reads global memory (13 of 24 steps in 2^24 elements, not 24).
template <class T>
__device__ __forceinline__ void search_sorted(const T* hay, i64 n, const T* needles, i64* out, i64 m, int right) {
  typedef decltype(order_key(needles[0])) K;
  constexpr int kSamples = kSearchSampleBytes / static_cast<int>(sizeof(K));
  __shared__ K sample[kSamples];
  const i64 step = n / kSamples + 1;  // sample j is hay[j * step]: j * step < n for j < count
  const int count = static_cast<int>((n + step - 1) / step);
  for (int j = static_cast<int>(threadIdx.x); j < count; j += static_cast<int>(blockDim.x))
    sample[j] = order_key(hay[j * step]);
  __syncthreads();
  CUPRIC_GRID_LOOP(i, 0, m) {
    const auto k = order_key(needles[i]);
    int c_lo = 0, c_hi = count;  // c: the samples before the needle's place
    while (c_lo < c_hi) {
      const int mid = (c_lo + c_hi) / 2;
      if (right ? !(k < sample[mid]) : (sample[mid] < k)) c_lo = mid + 1;
      else c_hi = mid;
    }
    // sample c - 1 is before the place and sample c (if any) is not: the place is in ((c - 1) step, c step]
    i64 lo = c_lo == 0 ? 0 : (c_lo - 1) * step + 1, hi = c_lo == count ? n : c_lo * step;
    while (lo < hi) {
      const i64 mid = lo + (hi - lo) / 2;
      const auto km = order_key(hay[mid]);
      if (right ? !(k < km) : (km < k)) lo = mid + 1;
      else hi = mid;
    }
    out[i] = lo;
  }
}

}  // namespace cupric::kernels
