// cupric/kernels/arange.cuh — arange on the CUDA backend: out[i] = start + i * step. Floating
// and bool outputs compute in double, rounded once (as the CPU's); integer outputs in unsigned
// 64-bit arithmetic, exact to the ends of the type.
#pragma once

#include "cupric/kernels/common.cuh"

namespace cupric::kernels {

template <class T>
__device__ __forceinline__ void arange_floating(T* __restrict__ out, double start, double step, i64 n) {
  CUPRIC_GRID_LOOP(i, 0, n) out[i] = cu::convert<T>(__dadd_rn(start, __dmul_rn((double)i, step)));
}

template <class T>
__device__ __forceinline__ void arange_integer(T* __restrict__ out, unsigned long long start, unsigned long long step,
                                               i64 n) {
  CUPRIC_GRID_LOOP(i, 0, n) out[i] = (T)(start + (unsigned long long)i * step);
}

}  // namespace cupric::kernels
