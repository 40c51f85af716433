// cupric/kernels/map.cuh — the elementwise map kernels of the CUDA backend (ufunc loops, casts,
// fills): out = F::apply(inputs...) over n elements. Paths: map_vec (contiguous, 16-byte vectors,
// grid-stride, each thread's next vectors requested an iteration ahead), map_one (contiguous,
// element by element), map_nd (any strides, through Geo) and map_t2 (a 2-d copy through 32x32
// shared-memory tiles). The renderer (src/backend/cuda/elementwise.cpp) writes F and the entry
// points; inputs are MapArray (read from memory) or MapValue (one value), the mask MapMask or NoMask.
#pragma once

#include "cupric/kernels/common.cuh"

namespace cupric::kernels {

/// Input K of a map, read from memory in its stored type S and converted to its compute type C:
/// element by element, or V at a time (x holds this iteration's vector, y the next one's).
template <class S, class C, int V, int K>
struct MapArray {
  __device__ __forceinline__ explicit MapArray(const S* q) : p(q) {}  // (x and y start unset)
  const S* p;
  Vec<S, V> x, y;
  __device__ __forceinline__ void first(i64 j) { x = reinterpret_cast<const Vec<S, V>*>(p)[j]; }
  __device__ __forceinline__ void next(i64 j) { y = reinterpret_cast<const Vec<S, V>*>(p)[j]; }
  __device__ __forceinline__ void shift() { x = y; }
  __device__ __forceinline__ C lane(int e) const { return cu::convert<C>(x.v[e]); }
  __device__ __forceinline__ C value(i64 i) const { return cu::convert<C>(p[i]); }
  __device__ __forceinline__ C value_at(const i64* o) const { return cu::convert<C>(at<S>(p, o[K])); }
};

/// What an operand that reads no memory per element does on the vector path: nothing.
struct Unread {
  __device__ __forceinline__ void first(i64) {}
  __device__ __forceinline__ void next(i64) {}
  __device__ __forceinline__ void shift() {}
};

/// An input that is one value: a Python scalar passed by value, or a 0-d device operand read
/// once per thread (MapValue<C>(cu::convert<C>(*p))).
template <class C>
struct MapValue : Unread {
  __device__ __forceinline__ explicit MapValue(C v) : s(v) {}
  C s;
  __device__ __forceinline__ C lane(int) const { return s; }
  __device__ __forceinline__ C value(i64) const { return s; }
  __device__ __forceinline__ C value_at(const i64*) const { return s; }
};

/// The where= mask (operand K): elements where it is false keep the output's value.
template <int V, int K>
struct MapMask {
  static constexpr bool kOn = true;
  __device__ __forceinline__ explicit MapMask(const bool* q) : p(q) {}
  const bool* p;
  Vec<bool, V> w, yw;
  __device__ __forceinline__ void first(i64 j) { w = reinterpret_cast<const Vec<bool, V>*>(p)[j]; }
  __device__ __forceinline__ void next(i64 j) { yw = reinterpret_cast<const Vec<bool, V>*>(p)[j]; }
  __device__ __forceinline__ void shift() { w = yw; }
  __device__ __forceinline__ bool lane(int e) const { return w.v[e]; }
  __device__ __forceinline__ bool on(i64 i) const { return p[i]; }
  __device__ __forceinline__ bool on_at(const i64* o) const { return at<bool>(p, o[K]); }
};
struct NoMask : Unread {
  static constexpr bool kOn = false;
  __device__ __forceinline__ bool lane(int) const { return true; }
  __device__ __forceinline__ bool on(i64) const { return true; }
  __device__ __forceinline__ bool on_at(const i64*) const { return true; }
};

/// Contiguous operands, V elements per 16-byte vector (n / V vectors, then the tail one by one).
template <class F, int V, class SO, class Mask, class... In>
__device__ __forceinline__ void map_vec(SO* __restrict__ po, i64 n, Mask w, In... in) {
  const i64 nv = n / V;
  const i64 step = (i64)gridDim.x * blockDim.x;
  i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  if (j < nv) {
    (in.first(j), ...);
    w.first(j);
  }
  for (; j < nv; j += step) {
    if (j + step < nv) {
      (in.next(j + step), ...);
      w.next(j + step);
    }
    Vec<SO, V> r;
    if constexpr (Mask::kOn) r = reinterpret_cast<const Vec<SO, V>*>(po)[j];
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (w.lane(e)) r.v[e] = F::apply(in.lane(e)...);
    reinterpret_cast<Vec<SO, V>*>(po)[j] = r;
    (in.shift(), ...);
    w.shift();
  }
  CUPRIC_GRID_LOOP(i, nv * V, n) {
    if (!w.on(i)) continue;
    po[i] = F::apply(in.value(i)...);
  }
}

/// Contiguous operands, one element at a time (misaligned or too short for vectors).
template <class F, class SO, class Mask, class... In>
__device__ __forceinline__ void map_one(SO* __restrict__ po, i64 n, Mask w, In... in) {
  CUPRIC_GRID_LOOP(i, 0, n) {
    if (!w.on(i)) continue;
    po[i] = F::apply(in.value(i)...);
  }
}

/// Any strides: operand k's byte offset of element i is walked from g (inputs, output, mask).
template <class F, class SO, int N, class Mask, class... In>
__device__ __forceinline__ void map_nd(SO* __restrict__ po, i64 n, const Geo<N>& g, Mask w, In... in) {
  CUPRIC_GRID_LOOP(i, 0, n) {
    i64 o[N];
    offsets_of(g, i, o);
    if (!w.on_at(o)) continue;
    at_mut<SO>(po, o[sizeof...(In)]) = F::apply(in.value_at(o)...);
  }
}

/// A 2-d copy whose input is contiguous along one dimension (x, extent nx) and whose output is
/// contiguous along the other (y, extent ny): 32x32 tiles staged in shared memory, so that both
/// the reads and the writes are coalesced. Block (32, 8); grid (ceil(nx/32), ceil(ny/32)).
template <class F, class C0, class S0, class SO>
__device__ __forceinline__ void map_t2(const S0* __restrict__ p0, SO* __restrict__ po, i64 nx, i64 ny, i64 in_sy,
                                       i64 out_sx) {
  __shared__ alignas(16) unsigned char raw[32 * 33 * sizeof(SO)];
  SO* tile = reinterpret_cast<SO*>(raw);
  const i64 x0 = (i64)blockIdx.x * 32, y0 = (i64)blockIdx.y * 32;
  const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
  for (int k = 0; k < 32; k += 8) {
    const i64 x = x0 + tx, y = y0 + ty + k;
    if (x < nx && y < ny) tile[(ty + k) * 33 + tx] = F::apply(cu::convert<C0>(p0[x + y * in_sy]));
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < 32; k += 8) {
    const i64 x = x0 + ty + k, y = y0 + tx;
    if (x < nx && y < ny) po[y + x * out_sx] = tile[tx * 33 + ty + k];
  }
}

}  // namespace cupric::kernels
