// cupric/kernels/map.cuh — the elementwise map kernels of the CUDA backend (ufunc loops, casts,
// fills): out = F::apply(inputs...) over n elements. Paths: map_vec (contiguous, one 16-byte
// vector per operand and thread), map_one (contiguous, element by element), map_nd (any strides,
// through Geo) and map_t2 (a 2-d copy through 32x32 shared-memory tiles); map_launch.h says how a
// launch covers the elements. The renderer (src/backend/cuda/elementwise.cpp) writes F and the
// entry points; inputs are MapArray (read from memory) or MapValue (one value), the mask MapMask
// or NoMask.
#pragma once

#include "cupric/kernels/common.cuh"
#include "cupric/kernels/map_launch.h"

namespace cupric::kernels {

/// log2 of a power of two, so that counts of vectors are shifts: a signed 64-bit division by a
/// template constant became a call to a division routine under NVRTC's -Ofc=min.
template <int V>
__device__ constexpr int log2_of() {
  static_assert(V > 0 && (V & (V - 1)) == 0, "vector widths are powers of two");
  if constexpr (V == 1) return 0;
  else return 1 + log2_of<V / 2>();
}

/// Input K of a map, read from memory in its stored type S and converted to its compute type C:
/// element by element, or V at a time into x (one 16-byte vector, or V elements `spaced` apart).
template <class S, class C, int V, int K>
struct MapArray {
  __device__ __forceinline__ explicit MapArray(const S* q) : p(q) {}  // (x starts unset)
  const S* p;
  Vec<S, V> x;
  __device__ __forceinline__ void load(i64 j) { x = reinterpret_cast<const Vec<S, V>*>(p)[j]; }
  __device__ __forceinline__ void load_spaced(i64 i, i64 gap, i64 n) {
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (i + e * gap < n) x.v[e] = p[i + e * gap];
  }
  __device__ __forceinline__ C lane(int e) const { return cu::convert<C>(x.v[e]); }
  __device__ __forceinline__ C value(i64 i) const { return cu::convert<C>(p[i]); }
  __device__ __forceinline__ C value_at(const i64* o) const { return cu::convert<C>(at<S>(p, o[K])); }
};

/// What an operand that reads no memory per element does when the others load: nothing.
struct Unread {
  __device__ __forceinline__ void load(i64) {}
  __device__ __forceinline__ void load_spaced(i64, i64, i64) {}
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

/// The where= mask (operand K): elements where it is false keep the output's value. It loads as a
/// bool input does.
template <int V, int K>
struct MapMask : MapArray<bool, bool, V, K> {
  static constexpr bool kOn = true;
  using MapArray<bool, bool, V, K>::MapArray;
  __device__ __forceinline__ bool on(i64 i) const { return this->value(i); }
  __device__ __forceinline__ bool on_at(const i64* o) const { return this->value_at(o); }
};

struct NoMask : Unread {
  static constexpr bool kOn = false;
  __device__ __forceinline__ bool lane(int) const { return true; }
  __device__ __forceinline__ bool on(i64) const { return true; }
  __device__ __forceinline__ bool on_at(const i64*) const { return true; }
};

/// Contiguous operands, V elements per 16-byte vector: thread j maps vector j (every load issued
/// before the first store), then the n % V elements past the last vector one by one.
template <class F, int V, class SO, class Mask, class... In>
__device__ __forceinline__ void map_vec(SO* __restrict__ po, i64 n, Mask w, In... in) {
  const i64 nv = n >> log2_of<V>();
  const i64 step = (i64)gridDim.x * blockDim.x;
#pragma unroll 1  // one pass on the launcher's grid: unrolling would only add a trip-count division
  for (i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x; j < nv; j += step) {
    (in.load(j), ...);
    w.load(j);
    Vec<SO, V> r;
    if constexpr (Mask::kOn) r = reinterpret_cast<const Vec<SO, V>*>(po)[j];
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (w.lane(e)) r.v[e] = F::apply(in.lane(e)...);
    reinterpret_cast<Vec<SO, V>*>(po)[j] = r;
  }
#pragma unroll 1  // (fewer than V elements: a loop only for grids of fewer threads, as on the host)
  for (i64 i = nv * V + (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    if (!w.on(i)) continue;
    po[i] = F::apply(in.value(i)...);
  }
}

/// Contiguous operands, element by element (misaligned, or too short for vectors): a block maps
/// a tile of U * blockDim elements, each thread U of them a block apart, loaded before any is
/// stored (the operands are rendered with V = U).
template <class F, int U, class SO, class Mask, class... In>
__device__ __forceinline__ void map_one(SO* __restrict__ po, i64 n, Mask w, In... in) {
  const i64 tile = (i64)blockDim.x * U;
#pragma unroll 1
  for (i64 t = (i64)blockIdx.x * tile; t < n; t += (i64)gridDim.x * tile) {
    const i64 i = t + threadIdx.x;
    (in.load_spaced(i, blockDim.x, n), ...);
    w.load_spaced(i, blockDim.x, n);
#pragma unroll
    for (int e = 0; e < U; ++e)
      if (i + e * blockDim.x < n && w.lane(e)) po[i + e * blockDim.x] = F::apply(in.lane(e)...);
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
