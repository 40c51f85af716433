// test_cpu_dispatch.cpp — the CPU kernels' instruction-set variants (backend/cpu/cpu_dispatch.hpp):
// every compiled variant provides the same kernels, and those this CPU runs compute the same
// results (the Python suite compares each with NumPy: tests/python/backend/test_cpu_dispatch.py).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backend/cpu/cpu_dispatch.hpp"
#include "cupric/ufunc.hpp"

using namespace cupric;
using namespace cupric::cpu;

namespace {
struct Tables {
  std::vector<std::array<LoopFn, kNumDTypes>> ufunc;
  std::array<std::array<CastFn, kNumDTypes>, kNumDTypes> cast{};
  std::array<std::array<ReduceLoops, kNumDTypes>, kNumReduceOps> reduce{};
  std::array<TransposeFn, 4> transpose{};
};

Tables filled(const CpuVariant& v) {
  Tables t;
  t.ufunc.resize(all_ufuncs().size());
  for (auto& row : t.ufunc) row.fill(nullptr);
  for (auto fill : v.fill_ufunc_loops) fill(reinterpret_cast<UfuncLoopRow*>(t.ufunc.data()));
  v.fill_cast_loops(reinterpret_cast<CastLoopRow*>(t.cast.data()));
  v.fill_reduce_loops(reinterpret_cast<ReduceLoopRow*>(t.reduce.data()));
  v.fill_transpose_loops(t.transpose.data());
  return t;
}
}  // namespace

TEST(CpuDispatch, BaselineIsLastAndAlwaysSupported) {
  const auto& variants = compiled_cpu_variants();
  ASSERT_FALSE(variants.empty());
  EXPECT_STREQ(variants.back().name, "baseline");
  EXPECT_TRUE(variants.back().supported());
  bool found = false;
  for (const auto& v : variants) found |= &v == &cpu_variant();
  EXPECT_TRUE(found) << "the variant in use is one of the compiled ones";
}

TEST(CpuDispatch, EveryVariantHasTheSameKernels) {
  const auto& variants = compiled_cpu_variants();
  const Tables base = filled(variants.back());
  for (const auto& v : variants) {
    const Tables t = filled(v);  // filling only stores addresses: safe for variants this CPU lacks
    for (std::size_t u = 0; u < base.ufunc.size(); ++u)
      for (int d = 0; d < kNumDTypes; ++d)
        EXPECT_EQ(t.ufunc[u][d] != nullptr, base.ufunc[u][d] != nullptr) << v.name << " ufunc " << u << " dtype " << d;
    for (int a = 0; a < kNumDTypes; ++a)
      for (int b = 0; b < kNumDTypes; ++b) EXPECT_NE(t.cast[a][b], nullptr) << v.name;
    for (int op = 0; op < kNumReduceOps; ++op)
      for (int d = 0; d < kNumDTypes; ++d)
        EXPECT_EQ(t.reduce[op][d].contiguous != nullptr, base.reduce[op][d].contiguous != nullptr) << v.name;
    for (auto fn : t.transpose) EXPECT_NE(fn, nullptr) << v.name;
  }
}

TEST(CpuDispatch, SupportedVariantsAgree) {
  // a transposing copy of 8-byte elements, odd sizes (vector blocks and edges), and float32 sin
  // through the ufunc table (the vector math with its libm fallback block)
  constexpr int rows = 45, cols = 37;
  std::vector<std::uint64_t> src(rows * cols);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = i * 2654435761u;
  std::vector<float> x(1000);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i)) * 40.0f;
  x[300] = NAN, x[301] = INFINITY, x[302] = 3e30f;
  const int sin_id = find_ufunc("sin").id;
  std::vector<std::uint64_t> want_t;
  std::vector<float> want_sin;
  for (auto it = compiled_cpu_variants().rbegin(); it != compiled_cpu_variants().rend(); ++it) {
    if (!it->supported()) continue;
    const Tables t = filled(*it);
    std::vector<std::uint64_t> dst(rows * cols);
    // element (r, c): source dense along r (rows apart by `rows` elements), destination along c
    t.transpose[3](reinterpret_cast<const char*>(src.data()), rows * 8, reinterpret_cast<char*>(dst.data()), cols * 8,
                   rows, cols);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) ASSERT_EQ(dst[r * cols + c], src[c * rows + r]) << it->name;
    std::vector<float> y(x.size());
    char* args[2] = {reinterpret_cast<char*>(x.data()), reinterpret_cast<char*>(y.data())};
    const std::int64_t strides[2] = {4, 4};
    t.ufunc[sin_id][static_cast<int>(DType::float32)](args, strides, static_cast<std::int64_t>(x.size()));
    if (want_sin.empty()) {
      want_t = dst, want_sin = y;
      continue;
    }
    for (std::size_t i = 0; i < y.size(); ++i) {
      if (std::isnan(want_sin[i])) {
        EXPECT_TRUE(std::isnan(y[i])) << it->name << " at " << i;
        continue;
      }
      // within 2 ulp of the baseline's (each is within about 1.5 ulp of the exact value)
      EXPECT_NEAR(y[i], want_sin[i], 2 * std::nextafter(std::fabs(want_sin[i]), INFINITY) - 2 * std::fabs(want_sin[i]))
          << it->name << " sin(" << x[i] << ")";
    }
  }
}
