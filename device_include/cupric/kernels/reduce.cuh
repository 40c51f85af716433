// cupric/kernels/reduce.cuh — the reduction kernels of the CUDA backend, for an operator R that
// the renderer (src/backend/cuda/reduce.cpp) writes from a row of the reduction table: types S
// (read), O (written), A (accumulated); load, combine, identity; kSeedFromData. Kernels: rows (a
// block per output and split, 256 threads along the reduced elements, 16-byte loads where they
// are contiguous), cols (32 contiguous outputs per block) and colsv (as cols, 16 bytes of
// adjacent outputs per thread). Each writes the result or per-split partials in the A type.
#pragma once

#include "cupric/kernels/common.cuh"
#include "cupric/reduction.h"

// The parameters of every reduction kernel, and the arguments that pass them on.
#define CUPRIC_REDUCE_PARAMS(R)                                                                             \
  const typename R::S *__restrict__ in, void *__restrict__ out, i64 nout, i64 nred, i64 chunk, int partial, \
      const Geo<2> keep, const Geo<1> red
#define CUPRIC_REDUCE_ARGS in, out, nout, nred, chunk, partial, keep, red

namespace cupric::kernels {

// Every thread's accumulator starts valid: from the identity, or (kSeedFromData: min/max, which
// have none) from the first element of its block's segment, which the idempotent combine may
// see twice. VW elements make one 16-byte vector.
template <class R>
inline constexpr int kReduceVW = sizeof(typename R::S) >= 16 ? 1 : 16 / (int)sizeof(typename R::S);

template <class T>
__device__ __forceinline__ T shfl_down(T v, int d) {
  constexpr int W = (sizeof(T) + 3) / 4;
  alignas(alignof(T) > 4 ? alignof(T) : 4) unsigned w[W] = {};
  *reinterpret_cast<T*>(w) = v;
#pragma unroll
  for (int k = 0; k < W; ++k) w[k] = __shfl_down_sync(0xffffffffu, w[k], d);
  return *reinterpret_cast<const T*>(w);
}
// the combination of the 256 threads' values, valid in thread 0 (sw: 8 values of shared memory)
template <class R, class A = typename R::A>
__device__ __forceinline__ A block_reduce(A v, A* sw, int t) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) v = R::combine(v, shfl_down(v, d));
  __syncthreads();
  if ((t & 31) == 0) sw[t >> 5] = v;
  __syncthreads();
  if (t == 0)
    for (int w = 1; w < 8; ++w) v = R::combine(v, sw[w]);
  return v;
}
// partial 1: [output][split] (row kernel), 2: [split][output] (column kernels), 0: the result
template <class R, class A = typename R::A>
__device__ __forceinline__ void finish(void* out, i64 o, i64 out_off, A v, int partial, i64 nout) {
  if (partial == 1) reinterpret_cast<A*>(out)[o * gridDim.y + blockIdx.y] = v;
  else if (partial == 2) reinterpret_cast<A*>(out)[blockIdx.y * nout + o] = v;
  else at_mut<typename R::O>(out, out_off) = cu::convert<typename R::O>(v);
}
__device__ __forceinline__ i64 red_offset(const Geo<1>& red, i64 j) {
  if (red.nd == 1) return j * red.st[0][0];
  i64 o[1];
  offsets_of(red, j, o);
  return o[0];
}
// acc combined with p[t], p[t + nt], ... below len: 16-byte vector loads between a scalar head
// (to the first aligned element) and a scalar tail
template <class R, class A = typename R::A, class S = typename R::S>
__device__ __forceinline__ void acc_contiguous(A& acc, const S* p, i64 len, int t, int nt) {
  constexpr int VW = kReduceVW<R>;
  typedef Vec<S, VW> SV;
  const i64 mis = (i64)((reinterpret_cast<unsigned long long>(p) / sizeof(S)) % VW);
  const i64 head = mis ? min(len, (i64)(VW - mis)) : 0;
  if (t < head) acc = R::combine(acc, R::load(p[t]));
  const SV* pv = reinterpret_cast<const SV*>(p + head);
  const i64 nv = (len - head) / VW;
#pragma unroll 4
  for (i64 j = t; j < nv; j += nt) {
    const SV w = pv[j];
#pragma unroll
    for (int k = 0; k < VW; ++k) acc = R::combine(acc, R::load(w.v[k]));
  }
  for (i64 j = head + nv * VW + t; j < len; j += nt) acc = R::combine(acc, R::load(p[j]));
}

/// rows: a block per (output, split) (grid-stride over outputs), 256 threads along the reduced
/// elements; vector loads when they are contiguous. (j0 >= j1 only for an empty reduction, which
/// the host fills instead; kept so that the kernel stands alone.)
template <class R>
__device__ __forceinline__ void reduce_rows(CUPRIC_REDUCE_PARAMS(R)) {
  typedef typename R::S S;
  typedef typename R::A A;
  __shared__ alignas(16) unsigned char raw[8 * sizeof(A)];
  A* sw = reinterpret_cast<A*>(raw);
  const int t = threadIdx.x;
  const bool unit = red.nd == 1 && red.st[0][0] == (i64)sizeof(S);
  for (i64 o = blockIdx.x; o < nout; o += gridDim.x) {
    i64 ko[2];
    offsets_of(keep, o, ko);
    const char* base = reinterpret_cast<const char*>(in) + ko[0];
    const i64 j0 = (i64)blockIdx.y * chunk;
    const i64 j1 = min(nred, j0 + chunk);
    if (j0 >= j1) {  // an empty reduction (nred == 0)
      if (t == 0) finish<R>(out, o, ko[1], R::identity(), partial, nout);
      continue;
    }
    A acc = R::kSeedFromData ? R::load(at<S>(base, red_offset(red, j0))) : R::identity();
    if (unit) {
      acc_contiguous<R>(acc, reinterpret_cast<const S*>(base) + j0, j1 - j0, t, 256);
    } else {
#pragma unroll 4
      for (i64 j = j0 + t; j < j1; j += 256) acc = R::combine(acc, R::load(at<S>(base, red_offset(red, j))));
    }
    acc = block_reduce<R>(acc, sw, t);
    if (t == 0) finish<R>(out, o, ko[1], acc, partial, nout);
  }
}

/// cols: 32 contiguous outputs per block (coalesced), 8 rows of threads along the reduced elements.
template <class R>
__device__ __forceinline__ void reduce_cols(CUPRIC_REDUCE_PARAMS(R)) {
  typedef typename R::S S;
  typedef typename R::A A;
  __shared__ alignas(16) unsigned char raw[256 * sizeof(A)];
  A* sv = reinterpret_cast<A*>(raw);
  const int tx = threadIdx.x, ty = threadIdx.y, t = ty * 32 + tx;
  const i64 o = (i64)blockIdx.x * 32 + tx;
  const i64 j0 = (i64)blockIdx.y * chunk;
  const i64 j1 = min(nred, j0 + chunk);
  i64 ko[2] = {0, 0};
  A acc = R::identity();
  if (o < nout) {
    offsets_of(keep, o, ko);
    const char* base = reinterpret_cast<const char*>(in) + ko[0];
    if (R::kSeedFromData && j0 < j1) acc = R::load(at<S>(base, red_offset(red, j0)));
#pragma unroll 4
    for (i64 j = j0 + ty; j < j1; j += 8) acc = R::combine(acc, R::load(at<S>(base, red_offset(red, j))));
  }
  sv[t] = acc;
  __syncthreads();
  if (ty == 0 && o < nout) {
    A r = sv[tx];
    for (int y = 1; y < 8; ++y) r = R::combine(r, sv[y * 32 + tx]);
    finish<R>(out, o, ko[1], r, partial, nout);
  }
}

/// colsv: as cols, each thread owning VW adjacent outputs read with one vector load per row
/// (the caller checks: one kept and one reduced dimension, 16-byte aligned rows, nout % VW == 0).
template <class R>
__device__ __forceinline__ void reduce_colsv(CUPRIC_REDUCE_PARAMS(R)) {
  typedef typename R::S S;
  typedef typename R::A A;
  constexpr int VW = kReduceVW<R>;
  typedef Vec<S, VW> SV;
  __shared__ alignas(16) unsigned char raw[256 * VW * sizeof(A)];
  A* sv = reinterpret_cast<A*>(raw);
  const int tx = threadIdx.x, ty = threadIdx.y, t = ty * 32 + tx;
  const i64 o0 = ((i64)blockIdx.x * 32 + tx) * VW;
  const i64 j0 = (i64)blockIdx.y * chunk;
  const i64 j1 = min(nred, j0 + chunk);
  const i64 rs = red.st[0][0];
  A acc[VW];
#pragma unroll
  for (int k = 0; k < VW; ++k) acc[k] = R::identity();
  if (o0 < nout) {
    const char* base = reinterpret_cast<const char*>(in) + o0 * (i64)sizeof(S);
    if (R::kSeedFromData) {
      const SV w = at<SV>(base, j0 * rs);
#pragma unroll
      for (int k = 0; k < VW; ++k) acc[k] = R::load(w.v[k]);
    }
#pragma unroll 4
    for (i64 j = j0 + ty; j < j1; j += 8) {
      const SV w = at<SV>(base, j * rs);
#pragma unroll
      for (int k = 0; k < VW; ++k) acc[k] = R::combine(acc[k], R::load(w.v[k]));
    }
  }
#pragma unroll
  for (int k = 0; k < VW; ++k) sv[k * 256 + t] = acc[k];
  __syncthreads();
  if (ty == 0 && o0 < nout) {
#pragma unroll
    for (int k = 0; k < VW; ++k) {
      A r = sv[k * 256 + tx];
      for (int y = 1; y < 8; ++y) r = R::combine(r, sv[k * 256 + y * 32 + tx]);
      finish<R>(out, o0 + k, (o0 + k) * keep.st[1][0], r, partial, nout);
    }
  }
}

}  // namespace cupric::kernels
