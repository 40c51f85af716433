// test_cuda_kernels_host.cpp — the CUDA backend's kernel bodies (device_include/cupric/kernels)
// compiled by the host compiler and run as one thread of a one-block grid, for the families
// whose threads never talk to each other (maps, gather/scatter, arange, random): their logic
// (vector paths and tails, masks, broadcast values, strided walks, Philox streams) is checked
// against the CPU backend without a GPU. NVRTC compiles every family for every dtype in
// tests/python/backend/test_cuda_kernels.py; these check what the code computes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
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
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
}  // namespace

#include "cupric/cupric.hpp"
#include "cupric/kernels/arange.cuh"
#include "cupric/kernels/gather.cuh"
#include "cupric/kernels/map.cuh"
#include "cupric/kernels/random.cuh"

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
  map_one<AddF4>(one.data(), n, NoMask(), MapArray<float, float, 1, 0>(x.data()), MapValue<float>(2.5f));
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
  map_one<AddF4>(out_one.data(), n, MapMask<1, 2>(mask), MapArray<float, float, 1, 0>(x.data()),
                 MapValue<float>(zero_d));
  for (std::int64_t i = 0; i < n; ++i) {
    const float want = mask_bytes[i] ? x[i] + 10.0f : -100.0f;
    ASSERT_EQ(out[i], want) << i;
    ASSERT_EQ(out_one[i], want) << i;
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
