// random.cpp — the CPU half of cupric.random: Philox blocks turned into numbers, block by
// block over the thread pool (the stream does not depend on how the work is split).
#include <cmath>
#include <cstring>

#include "cpu_backend.hpp"
#include "cupric/philox.h"
#include "cupric/thread_pool.hpp"
#include "vector_math.hpp"

namespace cupric::cpu {

namespace {
constexpr double kTwoPi = 6.283185307179586;

template <class T>
void fill_float(const RandomRequest& r, T* out, std::int64_t n) {
  constexpr int per = std::is_same_v<T, float> ? 4 : 2;  // values per block
  const std::int64_t nblocks = (n + per - 1) / per;
  parallel_for(nblocks, 4096, [&](std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      const cu::Philox4 w = cu::philox4x32_10(r.counter + static_cast<std::uint64_t>(b), 0, r.key);
      T u[per];
      if constexpr (per == 4) {
        for (int k = 0; k < 4; ++k) u[k] = cu::uniform_float(w.v[k]);
      } else {
        u[0] = cu::uniform_double(w.v[0], w.v[1]);
        u[1] = cu::uniform_double(w.v[2], w.v[3]);
      }
      T v[per];
      switch (r.dist) {
        case RandomDistribution::uniform:
          for (int k = 0; k < per; ++k) v[k] = static_cast<T>(r.a + (r.b - r.a) * static_cast<double>(u[k]));
          break;
        case RandomDistribution::exponential:
          for (int k = 0; k < per; ++k) v[k] = static_cast<T>(-r.a * std::log1p(-static_cast<double>(u[k])));
          break;
        default:  // normal, Box-Muller on pairs
          for (int k = 0; k < per; k += 2) {
            const T radius = std::sqrt(T(-2) * vm::log(T(1) - u[k]));
            const T theta = static_cast<T>(kTwoPi) * u[k + 1];
            v[k] = static_cast<T>(r.a + r.b * static_cast<double>(radius * vm::cos(theta)));
            v[k + 1] = static_cast<T>(r.a + r.b * static_cast<double>(radius * vm::sin(theta)));
          }
          break;
      }
      const std::int64_t first = b * per;
      const std::int64_t m = std::min<std::int64_t>(per, n - first);
      for (int k = 0; k < m; ++k) out[first + k] = v[k];
    }
  });
}

template <class T>
void fill_integers(const RandomRequest& r, T* out, std::int64_t n) {
  const std::int64_t nblocks = (n + 1) / 2;
  parallel_for(nblocks, 4096, [&](std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      const cu::Philox4 w = cu::philox4x32_10(r.counter + static_cast<std::uint64_t>(b), 0, r.key);
      for (int k = 0; k < 2 && 2 * b + k < n; ++k) {
        const std::uint64_t x = (static_cast<std::uint64_t>(w.v[2 * k]) << 32) | w.v[2 * k + 1];
        const std::uint64_t off = r.range == 0 ? x : cu::bounded(w.v[2 * k], w.v[2 * k + 1], r.range);
        out[2 * b + k] = static_cast<T>(static_cast<std::uint64_t>(r.low) + off);
      }
    }
  });
}
}  // namespace

void CpuBackend::random(const RandomRequest& request, const Array& out) {
  const std::int64_t n = out.size();
  if (request.dist == RandomDistribution::integers) {
    visit_dtype(out.dtype(), [&]<class T>() {
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
        fill_integers(request, static_cast<T*>(out.data()), n);
    });
  } else if (out.dtype() == DType::float32) {
    fill_float(request, static_cast<float*>(out.data()), n);
  } else {
    fill_float(request, static_cast<double*>(out.data()), n);
  }
}

}  // namespace cupric::cpu
