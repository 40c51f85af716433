// cupric/kernels/random.cuh — cupric.random's draws on the CUDA backend: one Philox block per
// thread and grid step, the same streams as the CPU (src/backend/cpu/random.cpp): value i depends
// only on (key, counter, i). Integers: two 64-bit words per block, low + the bounded offset.
// Floats: 4 float32 or 2 float64 uniforms per block, turned into the distribution `dist`
// (0 uniform in [a, b_), 1 normal (Box-Muller on pairs), 2 exponential).
#pragma once

#include "cupric/kernels/common.cuh"
#include "cupric/philox.h"

#define CUPRIC_RANDOM_PARAMS(T)                                                                                  \
  T *__restrict__ out, i64 n, unsigned long long key, unsigned long long counter, int dist, double a, double b_, \
      long long low, unsigned long long range
#define CUPRIC_RANDOM_ARGS out, n, key, counter, dist, a, b_, low, range

namespace cupric::kernels {

template <class T>
__device__ __forceinline__ void random_integers(CUPRIC_RANDOM_PARAMS(T)) {
  (void)dist;
  (void)a;
  (void)b_;
  // two values per block, from words (0, 1) and (2, 3): as src/backend/cpu/random.cpp
  CUPRIC_GRID_LOOP(b, 0, (n + 1) / 2) {
    const cu::Philox4 w = cu::philox4x32_10(counter + (unsigned long long)b, 0, key);
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      if (2 * b + k >= n) break;
      const unsigned long long x = ((unsigned long long)w.v[2 * k] << 32) | w.v[2 * k + 1];
      const unsigned long long off = range == 0 ? x : cu::bounded(w.v[2 * k], w.v[2 * k + 1], range);
      out[2 * b + k] = (T)((unsigned long long)low + off);
    }
  }
}

template <class T>
__device__ __forceinline__ void random_floats(CUPRIC_RANDOM_PARAMS(T)) {
  (void)low;
  (void)range;
  constexpr int per = sizeof(T) == 4 ? 4 : 2;
  const bool aligned = reinterpret_cast<unsigned long long>(out) % sizeof(Vec<T, per>) == 0;
  const bool unit = dist == 0 && a == 0.0 && b_ == 1.0;
  CUPRIC_GRID_LOOP(b, 0, (n + per - 1) / per) {
    const cu::Philox4 w = cu::philox4x32_10(counter + (unsigned long long)b, 0, key);
    T u[per], v[per];
    if constexpr (per == 4) {
      for (int k = 0; k < 4; ++k) u[k] = cu::uniform_float(w.v[k]);
    } else {
      u[0] = cu::uniform_double(w.v[0], w.v[1]);
      u[1] = cu::uniform_double(w.v[2], w.v[3]);
    }
    if (unit) {  // [0, 1): a + (b - a) * u is u itself, exactly
      for (int k = 0; k < per; ++k) v[k] = u[k];
    } else if (dist == 0) {
      for (int k = 0; k < per; ++k) v[k] = (T)__dadd_rn(a, __dmul_rn(b_ - a, (double)u[k]));
    } else if (dist == 2) {
      for (int k = 0; k < per; ++k) v[k] = (T)__dmul_rn(-a, log1p(-(double)u[k]));
    } else {
      for (int k = 0; k < per; k += 2) {
        const T radius = sqrt(T(-2) * log(T(1) - u[k]));
        const T theta = (T)6.283185307179586 * u[k + 1];
        v[k] = (T)__dadd_rn(a, __dmul_rn(b_, (double)(radius * cos(theta))));
        v[k + 1] = (T)__dadd_rn(a, __dmul_rn(b_, (double)(radius * sin(theta))));
      }
    }
    const i64 first = b * per;
    if (aligned && first + per <= n) {  // one 8- or 16-byte store
      Vec<T, per> w;
      for (int k = 0; k < per; ++k) w.v[k] = v[k];
      *reinterpret_cast<Vec<T, per>*>(out + first) = w;
    } else {
      for (int k = 0; k < per; ++k)
        if (first + k < n) out[first + k] = v[k];
    }
  }
}

}  // namespace cupric::kernels
