// radix_sort.hpp — the CPU's LSD radix sort of unsigned keys with an optional index payload:
// 11-bit digits (8-bit for narrow keys), every digit's histogram counted in one read, passes whose digit is the same
// for every key skipped; one row on the calling thread, or one long row split over the pool.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cupric/thread_pool.hpp"

namespace cupric::cpu::radix {

/// Bits per digit: 11 for 32- and 64-bit keys (3 and 6 passes; 2,048 buckets of counts stay in
/// L1/L2), 8 for narrower ones.
template <class U>
inline constexpr int kDigitBits = sizeof(U) >= 4 ? 11 : 8;
template <class U>
inline constexpr int kBuckets = 1 << kDigitBits<U>;
template <class U>
inline constexpr int kDigits = (8 * static_cast<int>(sizeof(U)) + kDigitBits<U> - 1) / kDigitBits<U>;
/// Rows this short are sorted by insertion (a radix pass's histogram costs more).
inline constexpr std::int64_t kInsertionLimit = 32;

template <class U>
inline unsigned digit(U key, int d) {
  return static_cast<unsigned>((key >> (kDigitBits<U> * d)) & (kBuckets<U> - 1));
}

/// Histograms of every digit of keys[0, n) added into hist[digit][bucket].
template <class U>
void count_digits(const U* keys, std::int64_t n, std::int64_t (*hist)[kBuckets<U>]) {
  for (std::int64_t i = 0; i < n; ++i) {
    const U k = keys[i];
    for (int d = 0; d < kDigits<U>; ++d) ++hist[d][digit(k, d)];
  }
}

/// Stable insertion sort of short rows (idx may be null).
template <class U, class I>
void insertion_sort(U* keys, I* idx, std::int64_t n) {
  for (std::int64_t i = 1; i < n; ++i) {
    const U k = keys[i];
    const I v = idx ? idx[i] : I{};
    std::int64_t j = i;
    for (; j > 0 && keys[j - 1] > k; --j) {
      keys[j] = keys[j - 1];
      if (idx) idx[j] = idx[j - 1];
    }
    keys[j] = k;
    if (idx) idx[j] = v;
  }
}

/// A pass is needed unless one bucket holds every key.
template <class U>
bool pass_needed(const std::int64_t* hist, std::int64_t n) {
  for (int b = 0; b < kBuckets<U>; ++b)
    if (hist[b] == n) return false;
  return true;
}

/// Moves src[begin, end) to dst by digit d, each key to offsets[digit]++ (a stable pass).
template <class U, class I>
void scatter(const U* src, U* dst, const I* isrc, I* idst, std::int64_t begin, std::int64_t end, int d,
             std::int64_t* offsets) {
  if (isrc) {
    for (std::int64_t i = begin; i < end; ++i) {
      const std::int64_t pos = offsets[digit(src[i], d)]++;
      dst[pos] = src[i];
      idst[pos] = isrc[i];
    }
  } else {
    for (std::int64_t i = begin; i < end; ++i) dst[offsets[digit(src[i], d)]++] = src[i];
  }
}

/// Sorts keys[0, n) (and idx alongside when not null) on the calling thread, using ktmp/itmp
/// (n elements each) as the other buffer. Returns true when the result ended in ktmp/itmp.
template <class U, class I>
bool sort_row(U* keys, U* ktmp, I* idx, I* itmp, std::int64_t n) {
  if (n <= kInsertionLimit) {
    insertion_sort(keys, idx, n);
    return false;
  }
  std::vector<std::int64_t> counts(static_cast<std::size_t>(kDigits<U>) * kBuckets<U>, 0);
  auto* hist = reinterpret_cast<std::int64_t(*)[kBuckets<U>]>(counts.data());
  count_digits(keys, n, hist);
  bool swapped = false;
  std::vector<std::int64_t> offsets(kBuckets<U>);
  for (int d = 0; d < kDigits<U>; ++d) {
    if (!pass_needed<U>(hist[d], n)) continue;
    std::int64_t run = 0;
    for (int b = 0; b < kBuckets<U>; ++b) offsets[b] = run, run += hist[d][b];
    scatter(keys, ktmp, idx, itmp, 0, n, d, offsets.data());
    std::swap(keys, ktmp);
    std::swap(idx, itmp);
    swapped = !swapped;
  }
  return swapped;
}

/// sort_row for one long row, split into one chunk per thread: each pass counts the digit per
/// chunk, gives each (bucket, chunk) its place in bucket-major order, and scatters the chunks
/// in parallel, which keeps the pass stable.
template <class U, class I>
bool sort_row_parallel(U* keys, U* ktmp, I* idx, I* itmp, std::int64_t n, int chunks) {
  constexpr int kB = kBuckets<U>;
  using Hist = std::int64_t[kB];
  auto bound = [&](std::int64_t t) { return n * t / chunks; };
  std::vector<std::int64_t> all(static_cast<std::size_t>(chunks) * kDigits<U> * kB, 0);
  parallel_for(chunks, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t t = b; t < e; ++t)
      count_digits(keys + bound(t), bound(t + 1) - bound(t), reinterpret_cast<Hist*>(all.data() + t * kDigits<U> * kB));
  });
  std::vector<std::int64_t> counts(static_cast<std::size_t>(chunks) * kB), total(kB);
  bool swapped = false;
  for (int d = 0; d < kDigits<U>; ++d) {
    std::fill(total.begin(), total.end(), 0);
    for (int t = 0; t < chunks; ++t)
      for (int b = 0; b < kB; ++b) total[b] += all[(static_cast<std::size_t>(t) * kDigits<U> + d) * kB + b];
    if (!pass_needed<U>(total.data(), n)) continue;
    parallel_for(chunks, 1, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t t = b; t < e; ++t) {
        std::int64_t* c = counts.data() + t * kB;
        std::fill(c, c + kB, 0);
        for (std::int64_t i = bound(t); i < bound(t + 1); ++i) ++c[digit(keys[i], d)];
      }
    });
    std::int64_t run = 0;  // counts become each chunk's starting offset per bucket
    for (int bucket = 0; bucket < kB; ++bucket)
      for (int t = 0; t < chunks; ++t) {
        const std::int64_t c = counts[static_cast<std::size_t>(t) * kB + bucket];
        counts[static_cast<std::size_t>(t) * kB + bucket] = run;
        run += c;
      }
    parallel_for(chunks, 1, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t t = b; t < e; ++t) scatter(keys, ktmp, idx, itmp, bound(t), bound(t + 1), d, &counts[t * kB]);
    });
    std::swap(keys, ktmp);
    std::swap(idx, itmp);
    swapped = !swapped;
  }
  return swapped;
}

}  // namespace cupric::cpu::radix
