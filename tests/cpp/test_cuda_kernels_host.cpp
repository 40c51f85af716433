// test_cuda_kernels_host.cpp — the CUDA backend's kernel bodies (device_include/cupric/kernels)
// compiled by the host compiler and run as one thread of a one-block grid, for the families
// whose threads never talk to each other (maps, gather/scatter, arange, random) and the radix
// sort and unique (warps of one lane still rank, count, scan and look back over every tile): their logic
// (vector paths and tails, masks, broadcast values, strided walks, Philox streams) is checked
// against the CPU backend without a GPU. NVRTC compiles every family for every dtype in
// tests/python/backend/test_cuda_kernels.py; these check what the code computes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

// ---- one CUDA thread on the host ----------------------------------------------------------------
#define __device__
#define __forceinline__ inline __attribute__((always_inline))
#define __shared__  // one thread: block-shared arrays are its own
namespace {
struct HostDim3 {
  unsigned x = 0, y = 0, z = 0;
};
HostDim3 threadIdx, blockIdx, blockDim{1, 1, 1}, gridDim{1, 1, 1};
inline void __syncthreads() {}
// one lane per warp: a key's only peer is itself
inline unsigned atomicAdd(unsigned* p, unsigned v) {
  const unsigned old = *p;
  *p += v;
  return old;
}
inline unsigned __match_any_sync(unsigned, unsigned) { return 1u; }
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline void __syncwarp() {}
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
}  // namespace

#include "cupric/cupric.hpp"
#include "cupric/kernels/arange.cuh"
#include "cupric/kernels/gather.cuh"
#include "cupric/kernels/map.cuh"
#include "cupric/kernels/random.cuh"
#include "cupric/kernels/sort.cuh"
#include "unique_reference.hpp"

using namespace cupric::kernels;

namespace {
/// What render_map writes for `add` with float32 inputs and output.
struct AddF4 {
  static float apply(float a, float b) { return cu::convert<float>(static_cast<float>(a + b)); }
};
/// ... and for a cast to float16 (the expression is `a`).
struct CastToF2 {
  static cupric::float16 apply(cupric::float16 a) { return a; }
};

std::vector<float> iota(std::int64_t n, float scale) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = scale * static_cast<float>(i % 97) - 7.0f;
  return v;
}
}  // namespace

TEST(CudaKernelsOnHost, MapPathsAgree) {
  const std::int64_t n = 1003;  // vectors of 4 and a tail of 3
  alignas(16) std::vector<float> x = iota(n, 0.5f), y = iota(n, -1.5f);
  std::vector<float> vec(n), one(n), nd(n);
  map_vec<AddF4, 4>(vec.data(), n, NoMask(), MapArray<float, float, 4, 0>(x.data()),
                    MapArray<float, float, 4, 1>(y.data()));
  map_one<AddF4, kOnePerThread>(one.data(), n, NoMask(), MapArray<float, float, kOnePerThread, 0>(x.data()),
                                MapValue<float>(2.5f));
  Geo<3> g{};  // x read backwards, y forwards, the output forwards: byte strides
  g.nd = 1;
  g.shape[0] = n;
  g.st[0][0] = -4;
  g.st[1][0] = 4;
  g.st[2][0] = 4;
  map_nd<AddF4>(nd.data(), n, g, NoMask(), MapArray<float, float, 1, 0>(x.data() + n - 1),
                MapArray<float, float, 1, 1>(y.data()));
  for (std::int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(vec[i], x[i] + y[i]) << i;
    ASSERT_EQ(one[i], x[i] + 2.5f) << i;
    ASSERT_EQ(nd[i], x[n - 1 - i] + y[i]) << i;
  }
}

TEST(CudaKernelsOnHost, MaskKeepsTheOutputAndBroadcastIsReadOnce) {
  const std::int64_t n = 517;
  std::vector<float> x = iota(n, 0.25f), out(n, -100.0f), out_one(n, -100.0f);
  std::vector<unsigned char> mask_bytes(n);
  for (std::int64_t i = 0; i < n; ++i) mask_bytes[i] = (i % 3) != 0;
  const bool* mask = reinterpret_cast<const bool*>(mask_bytes.data());
  const float zero_d = 10.0f;  // a 0-d device operand: read once, as a value
  map_vec<AddF4, 4>(out.data(), n, MapMask<4, 2>(mask), MapArray<float, float, 4, 0>(x.data()),
                    MapValue<float>(cu::convert<float>(zero_d)));
  map_one<AddF4, kOnePerThread>(out_one.data(), n, MapMask<kOnePerThread, 2>(mask),
                                MapArray<float, float, kOnePerThread, 0>(x.data()), MapValue<float>(zero_d));
  for (std::int64_t i = 0; i < n; ++i) {
    const float want = mask_bytes[i] ? x[i] + 10.0f : -100.0f;
    ASSERT_EQ(out[i], want) << i;
    ASSERT_EQ(out_one[i], want) << i;
  }
}

/// Runs `body` as every thread of a grid of `blocks` x `threads`, one after another (map threads
/// never talk to each other, so any order is one the GPU could take).
template <class Body>
void as_grid(unsigned blocks, unsigned threads, const Body& body) {
  gridDim.x = blocks, blockDim.x = threads;
  for (blockIdx.x = 0; blockIdx.x < blocks; ++blockIdx.x)
    for (threadIdx.x = 0; threadIdx.x < threads; ++threadIdx.x) body();
  gridDim.x = blockDim.x = 1, blockIdx.x = threadIdx.x = 0;
}

TEST(CudaKernelsOnHost, MapsCoverEveryElementOnceForAnyGrid) {
  // the launcher's one-pass grid (map_launch.h), and grids too small for one pass (clamped at
  // 2^31 - 1 blocks on the GPU): every element is written, by the vector body or the tail
  for (const std::int64_t n : {1, 3, 4, 5, 127, 128, 513, 1003, 4099}) {
    const std::vector<float> x = iota(n, 0.5f), y = iota(n, -1.5f);
    const auto nv = static_cast<unsigned>(n / 4);
    const auto pass_vec = static_cast<unsigned>((nv + kVecThreads - 1) / kVecThreads);
    const auto pass_one = static_cast<unsigned>((n + kOneThreads * kOnePerThread - 1) / (kOneThreads * kOnePerThread));
    for (const unsigned blocks : {std::max(pass_vec, 1u), 1u, 2u}) {
      std::vector<float> vec(n, NAN), one(n, NAN);
      as_grid(blocks, kVecThreads, [&] {
        map_vec<AddF4, 4>(vec.data(), n, NoMask(), MapArray<float, float, 4, 0>(x.data()),
                          MapArray<float, float, 4, 1>(y.data()));
      });
      as_grid(blocks == 1 ? 1 : std::max(pass_one, 1u), blocks == 2 ? 3 : kOneThreads, [&] {
        map_one<AddF4, kOnePerThread>(one.data(), n, NoMask(), MapArray<float, float, kOnePerThread, 0>(x.data()),
                                      MapArray<float, float, kOnePerThread, 1>(y.data()));
      });
      for (std::int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(vec[i], x[i] + y[i]) << n << " " << blocks << " " << i;
        ASSERT_EQ(one[i], x[i] + y[i]) << n << " " << blocks << " " << i;
      }
    }
  }
}

TEST(CudaKernelsOnHost, CastMapMatchesTheCpuBackend) {
  const std::int64_t n = 300;
  cupric::Array src = cupric::Array::empty({n}, cupric::DType::float64);
  auto* s = static_cast<double*>(src.data());
  for (std::int64_t i = 0; i < n; ++i) s[i] = std::ldexp(static_cast<double>(i) - 150.3, static_cast<int>(i % 40) - 20);
  const cupric::Array want = cupric::Array::empty({n}, cupric::DType::float16);
  cupric::backend_for(cupric::Device::cpu()).cast(cupric::elementwise_plan({&src, &want}, src.shape()));
  std::vector<cupric::float16> got(n);
  struct Cast {  // render_map's cast: compute in the output type, converted as the kernel reads
    static cupric::float16 apply(cupric::float16 a) { return CastToF2::apply(a); }
  };
  map_vec<Cast, 2>(got.data(), n, NoMask(), MapArray<double, cupric::float16, 2, 0>(s));
  EXPECT_EQ(std::memcmp(got.data(), want.data(), static_cast<std::size_t>(n) * 2), 0);
}

TEST(CudaKernelsOnHost, GatherAndScatterRows) {
  // rows of 3 complex128 (16-byte words) picked by offsets; scatter writes them back, last wins
  const std::int64_t rows = 5, per = 3, n = 4;
  std::vector<U16> src(rows * per), out(n * per), back(rows * per);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = {i, 1000 + i};
  const i64 offs[n] = {3 * per, 0, 3 * per, 4 * per};  // in elements
  Geo<2> g{};
  g.nd = 1;
  g.shape[0] = per;
  g.st[0][0] = 16;
  g.st[1][0] = 16;
  gather_rows<U16, 16>(reinterpret_cast<const char*>(src.data()), reinterpret_cast<char*>(out.data()), offs, n, per,
                       per * 16, g);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < per; ++j) EXPECT_EQ(out[i * per + j].hi, src[offs[i] + j].hi) << i << "," << j;
  out[2 * per].lo = 77;  // the later write of row 3 wins
  scatter_rows<U16, 16>(reinterpret_cast<char*>(back.data()), reinterpret_cast<const char*>(out.data()), offs, n, per,
                        per * 16, g);
  EXPECT_EQ(back[3 * per].lo, 77u);
  EXPECT_EQ(back[4 * per + 2].hi, src[4 * per + 2].hi);
}

TEST(CudaKernelsOnHost, ArangeMatchesTheCpuBackend) {
  const std::int64_t n = 1001;
  std::vector<double> f(n);
  arange_floating<double>(f.data(), -3.25, 0.1, n);
  const cupric::Array want = cupric::Array::empty({n}, cupric::DType::float64);
  cupric::backend_for(cupric::Device::cpu()).arange(want, -3.25, 0.1);
  EXPECT_EQ(std::memcmp(f.data(), want.data(), static_cast<std::size_t>(n) * 8), 0);
  std::vector<std::int8_t> b(n);
  arange_integer<std::int8_t>(b.data(), static_cast<unsigned long long>(-100), 3, n);  // wraps as the CPU's
  for (std::int64_t i = 0; i < n; ++i) EXPECT_EQ(b[i], static_cast<std::int8_t>(-100 + 3 * i)) << i;
}

TEST(CudaKernelsOnHost, RandomStreamsMatchTheCpuBackend) {
  cupric::Backend& cpu = cupric::backend_for(cupric::Device::cpu());
  const std::int64_t n = 4099;
  for (auto dist : {cupric::RandomDistribution::uniform, cupric::RandomDistribution::normal,
                    cupric::RandomDistribution::exponential}) {
    cupric::RandomRequest r;
    r.dist = dist;
    r.key = 0x1234567890abcdefull;
    r.counter = 77;
    r.a = dist == cupric::RandomDistribution::uniform ? -2.0 : 1.5;
    r.b = dist == cupric::RandomDistribution::uniform ? 3.0 : 0.5;
    const cupric::Array want = cupric::Array::empty({n}, cupric::DType::float32);
    cpu.random(r, want);
    std::vector<float> got(n);
    random_floats<float>(got.data(), n, r.key, r.counter, static_cast<int>(dist), r.a, r.b, 0, 0);
    const float* w = static_cast<const float*>(want.data());
    for (std::int64_t i = 0; i < n; ++i) ASSERT_NEAR(got[i], w[i], 2e-6f * (1 + std::fabs(w[i]))) << i;
  }
  cupric::RandomRequest r;
  r.dist = cupric::RandomDistribution::integers;
  r.key = 99;
  r.low = -5;
  r.range = 11;
  const cupric::Array want = cupric::Array::empty({n}, cupric::DType::int8);
  cpu.random(r, want);
  std::vector<std::int8_t> got(n);
  random_integers<std::int8_t>(got.data(), n, r.key, r.counter, 0, 0, 0, r.low, r.range);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), static_cast<std::size_t>(n)), 0);
}

// ---- the radix sort: the launcher's sequence of kernels (src/backend/cuda/sort.cpp) on one thread --

namespace {
/// A host buffer of n elements (std::vector<bool> has no data()).
template <class T>
struct HostBuffer {
  std::unique_ptr<T[]> p;
  std::size_t n = 0;
  explicit HostBuffer(std::size_t count = 0) : p(new T[count]()), n(count) {}
  T* data() { return p.get(); }
  const T* data() const { return p.get(); }
  std::size_t size() const { return n; }
  T& operator[](std::size_t i) { return p[i]; }
};

/// The onesweep sequence of CudaBackend::sort (RadixSort::run) on one thread: the digit
/// histograms of every pass, their starts, then a pass per key byte; from values (values_in) or
/// from the keys and payload already in keys[cur] / idx[cur]; the last pass writes values and
/// indices when asked (values_out or indices_out), else keys and payload.
template <class T, class U>
void onesweep_on_host(const T* values_in, std::vector<U> (&keys)[2], std::vector<u32> (&idx)[2], int& cur,
                      std::int64_t rows, std::int64_t n, bool desc, T* values_out, i64* indices_out) {
  constexpr int kb = sizeof(U);
  const std::int64_t tile = kSortItems<U>, tiles = (n + tile - 1) / tile, ntiles = rows * tiles;
  std::vector<u32> hist(rows * kb * kSortRadix), counters(kb);
  std::vector<u32> status[2] = {std::vector<u32>(ntiles * kSortRadix), std::vector<u32>(ntiles * kSortRadix)};
  const int dir = desc ? kSortDescending : 0;
  const void* first_in = values_in ? static_cast<const void*>(values_in) : keys[cur].data();
  gridDim.x = 3;  // blocks walk runs of tiles: three of them, one after another
  for (blockIdx.x = 0; blockIdx.x < gridDim.x; ++blockIdx.x)
    sort_histograms<T, U>(first_in, hist.data(), n, tiles, ntiles, tile, values_in ? kSortFirst | dir : 0);
  gridDim.x = 1, blockIdx.x = 0;
  sort_digit_starts(hist.data(), rows * kb);
  const bool fused_last = values_out || indices_out;
  for (int pass = 0; pass < kb; ++pass) {
    const bool first = pass == 0 && values_in, last = pass == kb - 1 && fused_last;
    void* out = last ? static_cast<void*>(values_out) : keys[1 - cur].data();
    void* iout = last ? static_cast<void*>(indices_out) : idx[1 - cur].data();
    sort_onesweep<T, U, u32, true>(first ? first_in : keys[cur].data(), out, idx[cur].data(), iout,
                                   hist.data() + pass * kSortRadix, status[pass % 2].data(),
                                   status[1 - pass % 2].data(), &counters[pass], n, tiles, ntiles, 8 * pass,
                                   (first ? kSortFirst : 0) | (last ? kSortLast : 0) | dir);
    cur = 1 - cur;
  }
}

/// Sorts rows x n elements as CudaBackend::sort does (complex: ComplexSortKey's three keys in
/// turn, then a gather), into values and indices.
template <class T>
void radix_sort_on_host(const HostBuffer<T>& in, std::int64_t rows, std::int64_t n, bool desc, HostBuffer<T>& values,
                        HostBuffer<i64>& indices) {
  constexpr bool kComplex = cu::is_complex_v<T>;
  using R = std::conditional_t<kComplex, float, T>;  // the tests' complex type is complex<float>
  using U = typename cu::SortKey<R>::Key;
  const std::int64_t total = rows * n;
  std::vector<U> keys[2] = {std::vector<U>(total), std::vector<U>(total)};
  std::vector<u32> idx[2] = {std::vector<u32>(total), std::vector<u32>(total)};
  int cur = 0;
  values = HostBuffer<T>(total);
  indices = HostBuffer<i64>(total);
  if constexpr (kComplex) {
    for (int part = 0; part < 3; ++part) {
      sort_complex_keys<T>(in.data(), keys[cur].data(), part ? idx[cur].data() : nullptr, idx[cur].data(), total, n,
                           part, desc);
      onesweep_on_host<R, U>(nullptr, keys, idx, cur, rows, n, false, nullptr, nullptr);
    }
    sort_gather<T>(in.data(), idx[cur].data(), values.data(), indices.data(), total, n);
  } else {
    onesweep_on_host<T, U>(in.data(), keys, idx, cur, rows, n, desc, values.data(), indices.data());
  }
}

template <class T>
void expect_sort_matches_the_cpu_backend(const HostBuffer<T>& data, std::int64_t rows, std::int64_t n, bool desc) {
  HostBuffer<T> values;
  HostBuffer<i64> indices;
  radix_sort_on_host(data, rows, n, desc, values, indices);
  const cupric::DType t = cupric::dtype_of<T>();
  cupric::Array in = cupric::Array::empty({rows, n}, t);
  std::memcpy(in.data(), data.data(), data.size() * sizeof(T));
  cupric::Array want_values = cupric::Array::empty({rows, n}, t);
  cupric::Array want_indices = cupric::Array::empty({rows, n}, cupric::DType::int64);
  cupric::backend_for(cupric::Device::cpu()).sort(in, want_values, want_indices, desc);
  EXPECT_EQ(0, std::memcmp(values.data(), want_values.data(), values.size() * sizeof(T)));
  EXPECT_EQ(0, std::memcmp(indices.data(), want_indices.data(), indices.size() * sizeof(std::int64_t)));
}

template <class T>
HostBuffer<T> sort_input(std::int64_t count, int distinct) {
  HostBuffer<T> v(static_cast<std::size_t>(count));
  std::uint64_t state = 12345;
  for (std::size_t i = 0; i < v.size(); ++i) {
    T& x = v[i];
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const int r = static_cast<int>((state >> 33) % static_cast<std::uint64_t>(distinct)) - distinct / 2;
    if constexpr (cu::is_complex_v<T>) x = T(static_cast<float>(r % 5), static_cast<float>(r / 5));
    else if constexpr (std::is_same_v<T, bool>) x = r > 0;
    else x = static_cast<T>(r);
  }
  return v;
}
}  // namespace

TEST(CudaKernelsOnHost, RadixSortMatchesTheCpuBackend) {
  for (bool desc : {false, true}) {
    for (auto [rows, n] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {1, 7}, {1, 1000}, {3, 333}, {40, 17}}) {
      expect_sort_matches_the_cpu_backend(sort_input<float>(rows * n, 50), rows, n, desc);
      expect_sort_matches_the_cpu_backend(sort_input<std::int16_t>(rows * n, 3000), rows, n, desc);
      expect_sort_matches_the_cpu_backend(sort_input<std::uint8_t>(rows * n, 200), rows, n, desc);
      expect_sort_matches_the_cpu_backend(sort_input<std::int64_t>(rows * n, 1 << 30), rows, n, desc);
      expect_sort_matches_the_cpu_backend(sort_input<bool>(rows * n, 2), rows, n, desc);
      expect_sort_matches_the_cpu_backend(sort_input<std::complex<float>>(rows * n, 25), rows, n, desc);
    }
  }
  // one thread's tiles hold kSortItems keys: sizes around one and two tiles, many tiles, all equal
  for (std::int64_t n : {15, 16, 17, 32, 33, 4099}) {
    expect_sort_matches_the_cpu_backend(sort_input<double>(n, 1 << 20), 1, n, false);
    expect_sort_matches_the_cpu_backend(sort_input<std::uint32_t>(2 * n, 7), 2, n, true);
    expect_sort_matches_the_cpu_backend(sort_input<std::int32_t>(n, 1), 1, n, false);
  }
  HostBuffer<float> specials(10);
  const float special_values[] = {NAN, 1.0f, -0.0f, INFINITY, 0.0f, -NAN, -INFINITY, 2.0f, 0.0f, -1.0f};
  std::memcpy(specials.data(), special_values, sizeof(special_values));
  expect_sort_matches_the_cpu_backend(specials, 1, 10, false);
  expect_sort_matches_the_cpu_backend(specials, 2, 5, true);
}

namespace {
/// unique_runs (one thread: tiles of kUniqueItems) against CpuBackend::unique_runs over the
/// CPU backend's sort of `data`.
template <class T>
void expect_unique_runs_match_the_cpu_backend(const HostBuffer<T>& data, bool equal_nan) {
  const std::int64_t n = static_cast<std::int64_t>(data.size());
  const UniqueReference want = unique_reference(data.data(), n, equal_nan);
  HostBuffer<T> values(n);
  HostBuffer<i64> index(n), ends(n + 1), inverse(n);
  std::vector<unsigned long long> status((n + kUniqueItems - 1) / kUniqueItems + 1);
  u32 counter = 0;
  i64 runs = -1;
  unique_runs<T>(static_cast<const T*>(want.sorted.data()), static_cast<const i64*>(want.perm.data()), values.data(),
                 index.data(), ends.data(), inverse.data(), status.data(), &counter, &runs, n, equal_nan);
  expect_unique_equal(want, runs, values.data(), index.data(), ends.data(), inverse.data());
}
}  // namespace

TEST(CudaKernelsOnHost, UniqueRunsMatchTheCpuBackend) {
  for (bool equal_nan : {true, false}) {
    for (std::int64_t n : {1, 15, 16, 17, 33, 1000}) {
      expect_unique_runs_match_the_cpu_backend(sort_input<std::int32_t>(n, 9), equal_nan);
      expect_unique_runs_match_the_cpu_backend(sort_input<std::uint8_t>(n, 1), equal_nan);
      expect_unique_runs_match_the_cpu_backend(sort_input<std::int64_t>(n, 1 << 30), equal_nan);
      expect_unique_runs_match_the_cpu_backend(sort_input<bool>(n, 2), equal_nan);
    }
    HostBuffer<double> specials(12);
    const double special_values[] = {NAN, 1.0, -0.0, INFINITY, 0.0, -NAN, -INFINITY, 2.0, 0.0, NAN, 1.0, -1.0};
    std::memcpy(specials.data(), special_values, sizeof(special_values));
    expect_unique_runs_match_the_cpu_backend(specials, equal_nan);
  }
}

namespace {
void expect_search_matches_the_cpu_backend(const std::vector<double>& hay, const std::vector<double>& needles) {
  const std::int64_t m = static_cast<std::int64_t>(needles.size());
  cupric::Array h = cupric::Array::empty({static_cast<std::int64_t>(hay.size())}, cupric::DType::float64);
  cupric::Array q = cupric::Array::empty({m}, cupric::DType::float64);
  std::memcpy(h.data(), hay.data(), hay.size() * sizeof(double));
  std::memcpy(q.data(), needles.data(), needles.size() * sizeof(double));
  for (int right : {0, 1}) {
    std::vector<i64> got(needles.size());
    search_sorted<double>(hay.data(), static_cast<std::int64_t>(hay.size()), needles.data(), got.data(), m, right);
    cupric::Array want = cupric::Array::empty({m}, cupric::DType::int64);
    cupric::backend_for(cupric::Device::cpu()).search_sorted(h, q, want, right != 0);
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(std::int64_t)))
        << "right=" << right << " n=" << hay.size();
  }
}
}  // namespace

TEST(CudaKernelsOnHost, SearchSortedMatchesTheCpuBackend) {
  expect_search_matches_the_cpu_backend({-INFINITY, -2.0, -0.0, 0.0, 0.0, 1.5, 1.5, 3.0, INFINITY, NAN, NAN},
                                        {-3.0, 0.0, -0.0, 1.5, 2.0, NAN, INFINITY, 5.0});
}

TEST(CudaKernelsOnHost, SearchSortedThroughTheSamplesOfALongHay) {
  // hays longer than the 2048 samples a block keeps: a needle's run of `step` elements is found
  // through the samples, then searched; runs of equal values cross the samples' places
  for (std::int64_t n : {2047, 2048, 2049, 5000, 100003}) {
    std::vector<double> hay(static_cast<std::size_t>(n));
    std::uint64_t state = 42;
    for (double& v : hay) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      v = static_cast<double>(static_cast<std::int64_t>(state >> 40) % 997) - 498.0;
    }
    std::sort(hay.begin(), hay.end());
    hay.back() = NAN;  // NaN sorts last
    std::vector<double> needles = {-1000.0, -498.0, -497.5, 0.0, 0.5, 498.0, 1000.0, NAN, INFINITY, -INFINITY};
    for (std::int64_t j = 0; j < n; j += n / 37 + 1) needles.push_back(hay[static_cast<std::size_t>(j)]);
    expect_search_matches_the_cpu_backend(hay, needles);
  }
}
