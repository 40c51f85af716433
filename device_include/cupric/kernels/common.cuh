// cupric/kernels/common.cuh — what every array kernel of the CUDA backend shares (NVRTC only):
// 16-byte vectors, the geometry of strided operands (Geo<N>: shape and byte strides passed by
// value) and its walk, byte-offset element access, and the grid-stride loop.
#pragma once

#include "cupric/convert.h"

typedef long long i64;
template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};
template <int N>
struct Geo {
  i64 nd;
  i64 shape[16];
  i64 st[N][16];
};
// Byte offsets of element i (C order over g.shape) for each of the N operands.
template <int N>
__device__ __forceinline__ void offsets_of(const Geo<N>& g, i64 i, i64* o) {
#pragma unroll
  for (int k = 0; k < N; ++k) o[k] = 0;
  for (int d = (int)g.nd - 1; d >= 0; --d) {
    const i64 s = g.shape[d];
    const i64 q = i / s;
    const i64 idx = i - q * s;
    i = q;
#pragma unroll
    for (int k = 0; k < N; ++k) o[k] += idx * g.st[k][d];
  }
}
template <class T>
__device__ __forceinline__ const T& at(const void* p, i64 off) {
  return *reinterpret_cast<const T*>(static_cast<const char*>(p) + off);
}
template <class T>
__device__ __forceinline__ T& at_mut(void* p, i64 off) {
  return *reinterpret_cast<T*>(static_cast<char*>(p) + off);
}
#define CUPRIC_GRID_LOOP(i, start, n) \
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x + (start); i < (n); i += (i64)gridDim.x * blockDim.x)
