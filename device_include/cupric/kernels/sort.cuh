// cupric/kernels/sort.cuh — sorting and searching on the CUDA backend: an LSD radix sort of the
// unsigned keys of cupric/sort_keys.h (8-bit digits), batched over C-contiguous rows, with an
// optional uint32 index payload (argsort). Per digit: a histogram per tile of keys, an exclusive
// scan of the counts in (row, digit, tile) order (chunk sums, a scan of them per row, the chunks'
// offsets), then a stable scatter that ranks keys inside a tile with warp matches. Every kernel
// walks its work with blockDim-agnostic loops, so the host test runs them as one thread.
#pragma once

#include "cupric/kernels/common.cuh"
#include "cupric/sort_keys.h"

namespace cupric::kernels {

typedef unsigned int u32;
inline constexpr int kSortItems = 8;       ///< keys per thread in a tile
inline constexpr int kSortRadix = 256;     ///< buckets of an 8-bit digit
inline constexpr int kSortChunk = 4096;    ///< counts per block of the offset scan
inline constexpr int kSortMaxThreads = 256;  ///< threads of a scatter block (its shared tile)
inline constexpr int kSortMaxWarps = kSortMaxThreads / 32;

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

// ---- keys in, values out -------------------------------------------------------------------------

/// keys[i] (and idx[i] = position in its row, when idx) of the contiguous rows of length n.
template <class T>
__device__ __forceinline__ void sort_make_keys(const T* in, typename cu::SortKey<T>::Key* keys, u32* idx, i64 total,
                                               i64 n, int descending) {
  CUPRIC_GRID_LOOP(i, 0, total) {
    keys[i] = cu::directed_key(in[i], descending != 0);
    if (idx) idx[i] = static_cast<u32>(i % n);
  }
}

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

/// values[i] from the sorted keys, indices[i] from the payload (either may be null).
template <class T>
__device__ __forceinline__ void sort_finish(const typename cu::SortKey<T>::Key* keys, const u32* idx, T* values,
                                            i64* indices, i64 total, int descending) {
  CUPRIC_GRID_LOOP(i, 0, total) {
    if (values) values[i] = cu::directed_value<T>(keys[i], descending != 0);
    if (indices) indices[i] = static_cast<i64>(idx[i]);
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

// ---- one digit pass ------------------------------------------------------------------------------

/// counts[(row * 256 + digit) * tiles + tile]: how many keys of each tile have each digit.
template <class U>
__device__ __forceinline__ void sort_histogram(const U* keys, u32* counts, i64 n, i64 tiles, i64 ntiles, int shift) {
  __shared__ u32 hist[kSortRadix];
  const i64 tile_size = static_cast<i64>(blockDim.x) * kSortItems;
  for (i64 tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    for (unsigned d = threadIdx.x; d < kSortRadix; d += blockDim.x) hist[d] = 0;
    __syncthreads();
    const i64 row = tile / tiles, t = tile - row * tiles;
    const U* k = keys + row * n;
    const i64 hi = (t + 1) * tile_size < n ? (t + 1) * tile_size : n;
    for (i64 j = t * tile_size + threadIdx.x; j < hi; j += blockDim.x) atomicAdd(&hist[(k[j] >> shift) & 0xff], 1u);
    __syncthreads();
    for (unsigned d = threadIdx.x; d < kSortRadix; d += blockDim.x) counts[(row * kSortRadix + d) * tiles + t] = hist[d];
    __syncthreads();
  }
}

/// The first element of this thread's run of a chunk (runs of consecutive counts per thread).
__device__ __forceinline__ void chunk_run(i64 lo, i64 hi, i64& a, i64& b) {
  const i64 per = (kSortChunk + blockDim.x - 1) / blockDim.x;
  a = lo + static_cast<i64>(threadIdx.x) * per;
  b = a + per < hi ? a + per : hi;
  if (a > hi) a = hi;
}

/// sums[chunk]: the total of each chunk of kSortChunk counts (chunks never cross rows; each row
/// has `length` = 256 * tiles counts and `chunks` chunks).
__device__ __forceinline__ void sort_chunk_sums(const u32* counts, u32* sums, i64 length, i64 chunks, i64 nchunks) {
  __shared__ u32 sh[1024];
  for (i64 c = blockIdx.x; c < nchunks; c += gridDim.x) {
    const i64 row = c / chunks, k = c - row * chunks;
    const u32* p = counts + row * length;
    const i64 lo = k * kSortChunk, hi = lo + kSortChunk < length ? lo + kSortChunk : length;
    i64 a, b;
    chunk_run(lo, hi, a, b);
    u32 local = 0;
    for (i64 j = a; j < b; ++j) local += p[j];
    u32 total;
    block_exclusive_scan(local, sh, total);
    if (threadIdx.x == 0) sums[c] = total;
  }
}

/// Each row's chunk sums become their exclusive prefix (a block per row).
__device__ __forceinline__ void sort_scan_sums(u32* sums, i64 chunks, i64 rows) {
  __shared__ u32 sh[1024];
  for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {
    u32* s = sums + row * chunks;
    u32 carry = 0;
    for (i64 base = 0; base < chunks; base += blockDim.x) {
      const i64 j = base + threadIdx.x;
      const u32 v = j < chunks ? s[j] : 0u;
      u32 total;
      const u32 before = block_exclusive_scan(v, sh, total);
      if (j < chunks) s[j] = carry + before;
      carry += total;
    }
  }
}

/// The counts become their exclusive prefix within the row: where each (digit, tile) starts.
__device__ __forceinline__ void sort_chunk_offsets(u32* counts, const u32* sums, i64 length, i64 chunks,
                                                   i64 nchunks) {
  __shared__ u32 sh[1024];
  for (i64 c = blockIdx.x; c < nchunks; c += gridDim.x) {
    const i64 row = c / chunks, k = c - row * chunks;
    u32* p = counts + row * length;
    const i64 lo = k * kSortChunk, hi = lo + kSortChunk < length ? lo + kSortChunk : length;
    i64 a, b;
    chunk_run(lo, hi, a, b);
    u32 local = 0;
    for (i64 j = a; j < b; ++j) local += p[j];
    u32 total;
    u32 run = sums[c] + block_exclusive_scan(local, sh, total);
    for (i64 j = a; j < b; ++j) {
      const u32 v = p[j];
      p[j] = run;
      run += v;
    }
  }
}

/// Moves each tile's keys (and payload) to their places for the digit at `shift`. A key's place
/// in the tile's digit order is its digit's start in the tile, plus the keys of that digit in
/// earlier warps, plus those before it in its warp (warp w holds the tile's w-th run of
/// lanes * kSortItems keys, taken lane-interleaved in rounds, so ranks follow the keys' order).
/// The tile is staged in shared memory in that order and written out by consecutive threads, so
/// each digit's run of keys is a coalesced write at its (digit, tile) offset.
template <class U, bool WithIdx>
__device__ __forceinline__ void sort_scatter(const U* keys_in, U* keys_out, const u32* idx_in, u32* idx_out,
                                             const u32* offsets, i64 n, i64 tiles, i64 ntiles, int shift) {
  __shared__ u32 wcount[kSortMaxWarps][kSortRadix];  // per warp and digit: count, then start
  __shared__ u32 start[kSortRadix];                  // the digit's first place in the tile
  __shared__ i64 shift_out[kSortRadix];              // from a place in the tile to one in the row
  __shared__ u32 sh[kSortMaxThreads];
  __shared__ U stage_keys[kSortMaxThreads * kSortItems];
  __shared__ u32 stage_idx[WithIdx ? kSortMaxThreads * kSortItems : 1];
  const unsigned lanes = blockDim.x < 32 ? blockDim.x : 32;
  const unsigned nwarps = blockDim.x / lanes, warp = threadIdx.x / lanes, lane = threadIdx.x % lanes;
  const u32 below = (1u << lane) - 1u;
  const i64 tile_size = static_cast<i64>(blockDim.x) * kSortItems;
  const unsigned per = (kSortRadix + blockDim.x - 1) / blockDim.x;  // digits per thread in scans
  for (i64 tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    for (unsigned w = 0; w < nwarps; ++w)
      for (unsigned d = threadIdx.x; d < kSortRadix; d += blockDim.x) wcount[w][d] = 0;
    __syncthreads();
    const i64 row = tile / tiles, t = tile - row * tiles;
    const i64 first = row * n, tile_first = t * tile_size;
    const i64 lo = tile_first + static_cast<i64>(warp) * lanes * kSortItems;
    U key[kSortItems];
    u32 val[kSortItems], rank[kSortItems];
#pragma unroll
    for (int i = 0; i < kSortItems; ++i) {
      const i64 j = lo + static_cast<i64>(i) * lanes + lane;
      const bool valid = j < n;
      key[i] = valid ? keys_in[first + j] : U(0);
      val[i] = WithIdx && valid ? idx_in[first + j] : 0u;
      const u32 d = valid ? static_cast<u32>((key[i] >> shift) & 0xff) : 0x100u;  // a group of its own
      const u32 peers = __match_any_sync(0xffffffffu >> (32 - lanes), d);
      const u32 before = valid ? wcount[warp][d] : 0u;
      __syncwarp();
      if (valid && (peers & below) == 0) wcount[warp][d] = before + static_cast<u32>(__popc(peers));
      __syncwarp();
      rank[i] = before + static_cast<u32>(__popc(peers & below));
    }
    __syncthreads();
    // each thread scans its run of `per` digits: warps' counts to starts, then the digit totals
    u32 local = 0;
    for (unsigned d = threadIdx.x * per; d < (threadIdx.x + 1) * per && d < kSortRadix; ++d) {
      u32 run = 0;
      for (unsigned w = 0; w < nwarps; ++w) {
        const u32 c = wcount[w][d];
        wcount[w][d] = run;
        run += c;
      }
      start[d] = run;  // the digit's total for now
      local += run;
    }
    u32 total;
    u32 at = block_exclusive_scan(local, sh, total);
    for (unsigned d = threadIdx.x * per; d < (threadIdx.x + 1) * per && d < kSortRadix; ++d) {
      const u32 count = start[d];
      start[d] = at;
      shift_out[d] = first + static_cast<i64>(offsets[(row * kSortRadix + d) * tiles + t]) - static_cast<i64>(at);
      at += count;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kSortItems; ++i) {
      const i64 j = lo + static_cast<i64>(i) * lanes + lane;
      if (j >= n) continue;
      const u32 d = static_cast<u32>((key[i] >> shift) & 0xff);
      const u32 place = start[d] + wcount[warp][d] + rank[i];
      stage_keys[place] = key[i];
      if constexpr (WithIdx) stage_idx[place] = val[i];
    }
    __syncthreads();
    for (i64 k = threadIdx.x; k < static_cast<i64>(total); k += blockDim.x) {
      const U k_key = stage_keys[k];
      const i64 pos = shift_out[(k_key >> shift) & 0xff] + k;
      keys_out[pos] = k_key;
      if constexpr (WithIdx) idx_out[pos] = stage_idx[k];
    }
    __syncthreads();
  }
}

// ---- searching -----------------------------------------------------------------------------------

/// out[i] = where needles[i] goes in the sorted hay (before equal elements, or after with right).
template <class T>
__device__ __forceinline__ void search_sorted(const T* hay, i64 n, const T* needles, i64* out, i64 m, int right) {
  CUPRIC_GRID_LOOP(i, 0, m) {
    const auto k = order_key(needles[i]);
    i64 lo = 0, hi = n;
    while (lo < hi) {
      const i64 mid = lo + (hi - lo) / 2;
      const auto km = order_key(hay[mid]);
      if (right ? !(k < km) : (km < k))
        lo = mid + 1;
      else
        hi = mid;
    }
    out[i] = lo;
  }
}

}  // namespace cupric::kernels
