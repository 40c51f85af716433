// test_sort_pass_threads.cpp — the CUDA sort's sweep pass (device_include/cupric/kernels/sort_pass.cuh)
// run on the host with one std::thread per CUDA thread of a block: shared memory, barriers and the
// warp intrinsics it uses (match, ballots, shuffles, atomics) are emulated, so its warp ranking, shuffle
// scans and look-back run as on a GPU and the sorts are checked against the CPU backend's.
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

// ---- one block of CUDA threads on the host ------------------------------------------------------
#define __device__
#define __forceinline__ inline __attribute__((always_inline))
#define __shared__ static  // blocks run one at a time: a static is the block's shared memory
namespace {
struct HostDim3 {
  unsigned x = 0, y = 0, z = 0;
};
thread_local HostDim3 threadIdx;
HostDim3 blockIdx, blockDim{1, 1, 1}, gridDim{1, 1, 1};

/// The running block: a barrier of all its threads, and per warp a barrier and one slot per lane
/// through which the warp intrinsics exchange values.
struct HostBlock {
  struct Warp {
    std::barrier<> sync{32};
    unsigned long long slot[32] = {};
  };
  explicit HostBlock(int threads) : all(threads), warps(new Warp[(threads + 31) / 32]) {}
  std::barrier<> all;
  std::unique_ptr<Warp[]> warps;
};
HostBlock* running = nullptr;

inline void __syncthreads() { running->all.arrive_and_wait(); }
/// Every lane of the warp offers v; read(slots, lane) runs once all have, and no slot changes
/// until every lane has read.
template <class Read>
unsigned warp_exchange(unsigned long long v, Read read) {
  HostBlock::Warp& w = running->warps[threadIdx.x / 32];
  const unsigned lane = threadIdx.x % 32;
  w.slot[lane] = v;
  w.sync.arrive_and_wait();
  const unsigned r = read(w.slot, lane);
  w.sync.arrive_and_wait();
  return r;
}
inline unsigned __match_any_sync(unsigned, unsigned v) {
  return warp_exchange(v, [v](const unsigned long long* s, unsigned) {
    unsigned m = 0;
    for (unsigned l = 0; l < 32; ++l) m |= static_cast<unsigned>(s[l] == v) << l;
    return m;
  });
}
inline unsigned __ballot_sync(unsigned, int bit) {
  return warp_exchange(bit != 0, [](const unsigned long long* s, unsigned) {
    unsigned m = 0;
    for (unsigned l = 0; l < 32; ++l) m |= static_cast<unsigned>(s[l] != 0) << l;
    return m;
  });
}
inline unsigned __shfl_sync(unsigned, unsigned v, int from) {
  return warp_exchange(v, [from](const unsigned long long* s, unsigned) { return static_cast<unsigned>(s[from]); });
}
inline unsigned __shfl_up_sync(unsigned, unsigned v, int delta) {
  return warp_exchange(v, [v, delta](const unsigned long long* s, unsigned lane) {
    return lane >= static_cast<unsigned>(delta) ? static_cast<unsigned>(s[lane - delta]) : v;
  });
}
inline void __syncwarp() {
  warp_exchange(0, [](const unsigned long long*, unsigned) { return 0u; });
}
inline int __clz(unsigned v) { return v ? __builtin_clz(v) : 32; }
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline unsigned atomicOr(unsigned* p, unsigned v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }

/// Runs body() as `threads` threads of one block (blockIdx.x as set by the caller).
template <class Body>
void run_block(unsigned threads, Body body) {
  HostBlock block(static_cast<int>(threads));
  running = &block;
  blockDim.x = threads;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([t, &body] {
      threadIdx.x = t;
      body();
    });
  for (std::thread& th : pool) th.join();
  running = nullptr;
}
}  // namespace

#include "cupric/cupric.hpp"
// the kernel headers get a namespace of their own: another test compiles them for one thread
#define kernels kernels_threaded
#include "cupric/kernels/sort_pass.cuh"
#include "unique_reference.hpp"

using namespace cupric::kernels;

namespace {
/// The launcher's sequence (src/backend/cuda/sort.cpp, RadixSort::run) with the sweep pass in
/// tiles of Threads x Items: digit histograms of every pass (three blocks), their starts, then a
/// pass per key byte from the values to sorted values and int64 indices.
template <class T, class D, int Threads, int Items, int Peers>
void sweep_sort(const std::vector<T>& in, std::int64_t rows, std::int64_t n, bool desc, std::vector<T>& values,
                std::vector<i64>& indices) {
  typedef typename cu::SortKey<T>::Key U;
  constexpr int kb = sizeof(U), tile = Threads * Items;
  const std::int64_t tiles = (n + tile - 1) / tile, ntiles = rows * tiles, total = rows * n;
  std::vector<U> keys[2] = {std::vector<U>(total), std::vector<U>(total)};
  std::vector<u32> idx[2] = {std::vector<u32>(total), std::vector<u32>(total)};
  std::vector<u32> hist(rows * kb * kSortRadix), counters(kb);
  std::vector<D> status[2] = {std::vector<D>(ntiles * kSortRadix), std::vector<D>(ntiles * kSortRadix)};
  const int dir = desc ? kSortDescending : 0;
  gridDim.x = 3;
  for (blockIdx.x = 0; blockIdx.x < gridDim.x; ++blockIdx.x)
    run_block(64, [&] { sort_histograms<T, U>(in.data(), hist.data(), n, tiles, ntiles, tile, kSortFirst | dir); });
  gridDim.x = 1, blockIdx.x = 0;
  run_block(64, [&] { sort_digit_starts(hist.data(), rows * kb); });
  values.assign(total, T());
  indices.assign(total, 0);
  int cur = 0;
  for (int pass = 0; pass < kb; ++pass) {
    const bool first = pass == 0, last = pass == kb - 1;
    const void* src = first ? static_cast<const void*>(in.data()) : keys[cur].data();
    void* out = last ? static_cast<void*>(values.data()) : keys[1 - cur].data();
    void* iout = last ? static_cast<void*>(indices.data()) : idx[1 - cur].data();
    run_block(Threads, [&] {
      sort_sweep<T, U, D, true, Threads, Items, Peers>(src, out, idx[cur].data(), iout, hist.data() + pass * kSortRadix,
                                                       status[pass % 2].data(), status[1 - pass % 2].data(),
                                                       &counters[pass], n, tiles, ntiles, 8 * pass,
                                                       (first ? kSortFirst : 0) | (last ? kSortLast : 0) | dir);
    });
    cur = 1 - cur;
  }
}

template <class T, class D = u32, int Threads = 64, int Items = 5, int Peers = kSweepPeers>
void expect_sweep_matches_the_cpu_backend(const std::vector<T>& data, std::int64_t rows, std::int64_t n, bool desc) {
  std::vector<T> values;
  std::vector<i64> indices;
  sweep_sort<T, D, Threads, Items, Peers>(data, rows, n, desc, values, indices);
  const cupric::DType t = cupric::dtype_of<T>();
  cupric::Array in = cupric::Array::empty({rows, n}, t);
  std::memcpy(in.data(), data.data(), data.size() * sizeof(T));
  cupric::Array want_values = cupric::Array::empty({rows, n}, t);
  cupric::Array want_indices = cupric::Array::empty({rows, n}, cupric::DType::int64);
  cupric::backend_for(cupric::Device::cpu()).sort(in, want_values, want_indices, desc);
  // indices equal to the stable CPU sort's: equal keys kept their order in every pass
  EXPECT_EQ(0, std::memcmp(values.data(), want_values.data(), values.size() * sizeof(T))) << rows << "x" << n;
  EXPECT_EQ(0, std::memcmp(indices.data(), want_indices.data(), indices.size() * sizeof(i64))) << rows << "x" << n;
}

/// count values of `distinct` kinds (negative ones too) from a fixed linear congruential stream.
template <class T>
std::vector<T> sweep_input(std::int64_t count, std::int64_t distinct) {
  std::vector<T> v(static_cast<std::size_t>(count));
  std::uint64_t state = 987654321;
  for (T& x : v) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const std::int64_t r =
        static_cast<std::int64_t>((state >> 20) % static_cast<std::uint64_t>(distinct)) - distinct / 2;
    x = static_cast<T>(r);
  }
  return v;
}
}  // namespace

TEST(SortSweepThreads, TilesOfTwoWarpsMatchTheCpuBackend) {
  // tiles of 320 keys: sizes around one and two tiles, rows of one tile and of several
  for (bool desc : {false, true}) {
    for (auto [rows, n] :
         {std::pair<std::int64_t, std::int64_t>{1, 1}, {1, 319}, {1, 320}, {1, 321}, {1, 1000}, {3, 333}, {5, 17}}) {
      expect_sweep_matches_the_cpu_backend(sweep_input<float>(rows * n, 40), rows, n, desc);
      expect_sweep_matches_the_cpu_backend(sweep_input<std::int64_t>(rows * n, std::int64_t{1} << 40), rows, n, desc);
    }
  }
  expect_sweep_matches_the_cpu_backend(sweep_input<std::int16_t>(2000, 3000), 1, 2000, false);
  expect_sweep_matches_the_cpu_backend(sweep_input<std::uint8_t>(1500, 200), 3, 500, true);
  expect_sweep_matches_the_cpu_backend(sweep_input<std::int32_t>(1300, 1), 1, 1300, false);  // all equal
  expect_sweep_matches_the_cpu_backend<double, unsigned long long>(sweep_input<double>(700, 1 << 20), 1, 700, false);
}

TEST(SortSweepThreads, SpecialFloatsOrderAsNumpy) {
  std::vector<float> v = sweep_input<float>(700, 9);
  const float specials[] = {NAN, -0.0f, INFINITY, 0.0f, -NAN, -INFINITY};
  for (std::size_t i = 0; i < v.size(); i += 7) v[i] = specials[(i / 7) % 6];
  expect_sweep_matches_the_cpu_backend(v, 1, 700, false);
  expect_sweep_matches_the_cpu_backend(v, 2, 350, true);
}

TEST(SortSweepThreads, TheLaunchedShapeMatchesTheCpuBackend) {
  // the shape src/backend/cuda/sort.cpp launches for 4-byte keys (threads past the 256th own no
  // digit), and the one it launched before
  expect_sweep_matches_the_cpu_backend<float, u32, 384, 12>(sweep_input<float>(2 * 4608 + 5, 5000), 1, 2 * 4608 + 5,
                                                            true);
  expect_sweep_matches_the_cpu_backend<float, u32, 384, 16>(sweep_input<float>(2 * 6144 + 5, 5000), 1, 2 * 6144 + 5,
                                                            false);
}

namespace {
/// Floats uniform in [0, 1): their top byte takes a few values (most lanes of a warp share it),
/// their low bytes spread over all 256.
std::vector<float> unit_floats(std::int64_t count) {
  std::vector<float> v(static_cast<std::size_t>(count));
  std::uint64_t state = 12345;
  for (float& x : v) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x = static_cast<float>(state >> 40) * 0x1p-24f;
  }
  return v;
}
}  // namespace

TEST(SortSweepThreads, DigitsMostLanesShareRankStably) {
  const std::vector<float> v = unit_floats(3 * 1111);
  expect_sweep_matches_the_cpu_backend(v, 1, 3 * 1111, false);
  expect_sweep_matches_the_cpu_backend(v, 3, 1111, true);
  expect_sweep_matches_the_cpu_backend<float, u32, 384, 16>(unit_floats(6144 + 700), 1, 6144 + 700, false);
}

template <int Peers>
void expect_peers_rank_as_the_default_does() {
  for (bool desc : {false, true}) {
    for (auto [rows, n] : {std::pair<std::int64_t, std::int64_t>{1, 319}, {1, 1000}, {3, 333}}) {
      expect_sweep_matches_the_cpu_backend<float, u32, 64, 5, Peers>(sweep_input<float>(rows * n, 40), rows, n, desc);
      expect_sweep_matches_the_cpu_backend<std::int64_t, u32, 64, 5, Peers>(
          sweep_input<std::int64_t>(rows * n, std::int64_t{1} << 40), rows, n, desc);
    }
  }
  expect_sweep_matches_the_cpu_backend<float, u32, 64, 5, Peers>(unit_floats(3 * 1111), 1, 3 * 1111, false);
}

// CUPRIC_SORT_PEERS=match / ballots: the other ways to find a key's warp peers (the default, an
// atomic OR, runs in the other tests); ragged tiles have invalid lanes, unit floats many lanes of one digit
TEST(SortSweepThreads, MatchAnyPeersRankAsTheDefaultDoes) { expect_peers_rank_as_the_default_does<kPeersMatchAny>(); }
TEST(SortSweepThreads, BallotPeersRankAsTheDefaultDoes) { expect_peers_rank_as_the_default_does<kPeersBallots>(); }

TEST(SortSweepThreads, HistogramsCountEveryDigitOfEveryRow) {
  // rows of 1111 in tiles of 320 over 3 blocks of 64 threads: runs of kHistItems loads end inside
  // tiles, blocks' runs of tiles cross rows
  const std::int64_t rows = 3, n = 1111, tile = 320, tiles = (n + tile - 1) / tile;
  for (bool desc : {false, true}) {
    const std::vector<float> v = unit_floats(rows * n);
    std::vector<u32> hist(rows * 4 * kSortRadix), want(hist.size());
    for (std::int64_t j = 0; j < rows * n; ++j) {
      const u32 key = cu::directed_key(v[j], desc);
      for (int p = 0; p < 4; ++p) ++want[((j / n) * 4 + p) * kSortRadix + ((key >> (8 * p)) & 255u)];
    }
    gridDim.x = 3;
    for (blockIdx.x = 0; blockIdx.x < gridDim.x; ++blockIdx.x)
      run_block(64, [&] {
        sort_histograms<float, u32>(v.data(), hist.data(), n, tiles, rows * tiles, tile,
                                    kSortFirst | (desc ? kSortDescending : 0));
      });
    gridDim.x = 1, blockIdx.x = 0;
    EXPECT_EQ(hist, want) << (desc ? "descending" : "ascending");
  }
}

namespace {
/// unique_tiles (tiles of 64 threads x kUniqueItems) against CpuBackend::unique_runs over the CPU
/// backend's sort of `data`; want_perm false: values and ends alone, as a plain unique asks.
template <class T>
void expect_unique_tiles_match_the_cpu_backend(const std::vector<T>& data, bool equal_nan, bool want_perm = true) {
  const std::int64_t n = static_cast<std::int64_t>(data.size());
  const UniqueReference want = unique_reference(data.data(), n, equal_nan);
  std::vector<T> values(n);
  std::vector<i64> index(n, -7), ends(n + 1), inverse(n, -7);
  std::vector<unsigned long long> status(n / 1024 + 2);
  u32 counter = 0;
  i64 runs = -1;
  run_block(64, [&] {
    unique_tiles<T, 64>(static_cast<const T*>(want.sorted.data()),
                        want_perm ? static_cast<const i64*>(want.perm.data()) : nullptr, values.data(),
                        want_perm ? index.data() : nullptr, ends.data(), want_perm ? inverse.data() : nullptr,
                        status.data(), &counter, &runs, n, equal_nan);
  });
  expect_unique_equal(want, runs, values.data(), want_perm ? index.data() : nullptr, ends.data(),
                      want_perm ? inverse.data() : nullptr);
}
}  // namespace

TEST(SortSweepThreads, UniqueTilesMatchTheCpuBackend) {
  for (bool equal_nan : {true, false}) {
    // tiles of 1024 elements: sizes around one and two tiles, runs across tile and thread edges
    for (std::int64_t n : {1, 15, 16, 17, 1023, 1024, 1025, 3000}) {
      expect_unique_tiles_match_the_cpu_backend(sweep_input<std::int32_t>(n, 9), equal_nan);
      expect_unique_tiles_match_the_cpu_backend(sweep_input<std::int64_t>(n, std::int64_t{1} << 40), equal_nan);
      expect_unique_tiles_match_the_cpu_backend(sweep_input<std::uint8_t>(n, 1), equal_nan, false);
    }
    std::vector<double> v = sweep_input<double>(2500, 40);
    const double specials[] = {NAN, -0.0, INFINITY, 0.0, -NAN, -INFINITY};
    for (std::size_t i = 0; i < v.size(); i += 5) v[i] = specials[(i / 5) % 6];
    expect_unique_tiles_match_the_cpu_backend(v, equal_nan);
    expect_unique_tiles_match_the_cpu_backend(sweep_input<std::int16_t>(2100, 3000), equal_nan);
    for (std::int64_t edge : {1023, 1024, 1025}) {  // a run of zeros ends at (or beside) the first tile's end
      std::vector<std::int32_t> runs(2100, 5);
      std::fill(runs.begin(), runs.begin() + edge, 0);
      expect_unique_tiles_match_the_cpu_backend(runs, equal_nan);
    }
    expect_unique_tiles_match_the_cpu_backend(sweep_input<std::uint8_t>(1500, 2), equal_nan, false);
  }
}

namespace {
/// The radix select of CudaBackend::select_ranks (two blocks of 64 threads a digit, most
/// significant first, then the step) against the CPU backend's sort: same keys at each rank.
template <class T>
void expect_select_matches_the_sort(const std::vector<T>& data, const std::vector<i64>& ranks) {
  typedef typename cu::SortKey<T>::Key U;
  const std::int64_t n = static_cast<std::int64_t>(data.size());
  const int targets = static_cast<int>(ranks.size());
  cupric::Array in = cupric::Array::empty({n}, cupric::dtype_of<T>()), sorted = cupric::Array::empty({n}, in.dtype());
  std::memcpy(in.data(), data.data(), data.size() * sizeof(T));
  cupric::backend_for(cupric::Device::cpu()).sort(in, sorted, cupric::Array(), false);
  std::vector<U> prefix(targets, 0);
  std::vector<i64> rank = ranks;
  std::vector<T> out(targets);
  for (int shift = 8 * (static_cast<int>(sizeof(U)) - 1); shift >= 0; shift -= 8) {
    std::vector<u32> hist(static_cast<std::size_t>(targets) * kSortRadix);
    gridDim.x = 2;
    for (blockIdx.x = 0; blockIdx.x < gridDim.x; ++blockIdx.x)
      run_block(64, [&] { select_histograms<T>(data.data(), n, prefix.data(), hist.data(), targets, shift); });
    gridDim.x = 1, blockIdx.x = 0;
    run_block(32, [&] { select_step<T>(hist.data(), prefix.data(), rank.data(), out.data(), targets, shift); });
  }
  for (int t = 0; t < targets; ++t)
    EXPECT_EQ(cu::SortKey<T>::key(out[t]), cu::SortKey<T>::key(static_cast<const T*>(sorted.data())[ranks[t]]))
        << "rank " << ranks[t] << " of " << n;
}
}  // namespace

TEST(SortSweepThreads, RadixSelectFindsTheSortedRanks) {
  std::vector<double> f8 = sweep_input<double>(3001, 700);
  const double specials[] = {NAN, -0.0, INFINITY, 0.0, -NAN, -INFINITY};
  for (std::size_t i = 0; i < f8.size(); i += 11) f8[i] = specials[(i / 11) % 6];
  expect_select_matches_the_sort(f8, {0, 1, 1500, 1500, 2000, 2700, 2999, 3000});
  expect_select_matches_the_sort(sweep_input<float>(2000, 1 << 20), {999, 1000, 0, 1999});
  expect_select_matches_the_sort(sweep_input<std::int16_t>(1500, 3000), {3, 749, 750, 1499});
  expect_select_matches_the_sort(sweep_input<std::uint8_t>(900, 1), {0, 450, 899});  // all equal
  expect_select_matches_the_sort(sweep_input<std::int64_t>(777, std::int64_t{1} << 50), {0, 388, 776});
}
