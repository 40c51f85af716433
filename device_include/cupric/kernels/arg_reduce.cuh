// cupric/kernels/arg_reduce.cuh — argmin / argmax along one axis on the CUDA backend: a block per
// output (grid-stride over outputs), 256 candidates reduced in shared memory. The winner of two
// candidates: NaN first, then the extreme, then the smaller index (NumPy's first occurrence).
// S is the stored type, C the compared one (float for float16/bfloat16).
#pragma once

#include "cupric/kernels/common.cuh"

#define CUPRIC_ARG_REDUCE_PARAMS(S) \
  const S *__restrict__ in, i64 *__restrict__ out, i64 nout, i64 len, i64 step, const Geo<2> keep
#define CUPRIC_ARG_REDUCE_ARGS in, out, nout, len, step, keep

namespace cupric::kernels {

template <class C>
struct ArgCandidate {
  C v;
  i64 i;  ///< -1: none yet
};

template <bool IsMax, class C>
__device__ __forceinline__ ArgCandidate<C> arg_pick(ArgCandidate<C> x, ArgCandidate<C> y) {
  if (y.i < 0) return x;
  if (x.i < 0) return y;
  const bool xn = !(x.v == x.v), yn = !(y.v == y.v);
  if (xn || yn) return (xn && yn) ? (x.i < y.i ? x : y) : (xn ? x : y);
  if (IsMax ? cu::less(y.v, x.v) : cu::less(x.v, y.v)) return x;
  if (IsMax ? cu::less(x.v, y.v) : cu::less(y.v, x.v)) return y;
  return x.i < y.i ? x : y;
}

template <bool IsMax, class S, class C>
__device__ __forceinline__ void arg_reduce(CUPRIC_ARG_REDUCE_PARAMS(S)) {
  typedef ArgCandidate<C> Q;
  __shared__ alignas(16) unsigned char raw[256 * sizeof(C)];
  __shared__ i64 idx[256];
  C* sv = reinterpret_cast<C*>(raw);
  const int t = threadIdx.x;
  for (i64 o = blockIdx.x; o < nout; o += gridDim.x) {
    i64 ko[2];
    offsets_of(keep, o, ko);
    const char* base = reinterpret_cast<const char*>(in) + ko[0];
    Q q{C(), -1};
    for (i64 j = t; j < len; j += 256) q = arg_pick<IsMax>(q, Q{cu::convert<C>(at<S>(base, j * step)), j});
    sv[t] = q.v;
    idx[t] = q.i;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
      if (t < s) {
        const Q r = arg_pick<IsMax>(Q{sv[t], idx[t]}, Q{sv[t + s], idx[t + s]});
        sv[t] = r.v;
        idx[t] = r.i;
      }
      __syncthreads();
    }
    if (t == 0) at_mut<i64>(out, ko[1]) = idx[0];
    __syncthreads();
  }
}

}  // namespace cupric::kernels
