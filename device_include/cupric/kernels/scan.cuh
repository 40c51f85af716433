// cupric/kernels/scan.cuh — inclusive scans along one axis on the CUDA backend, for an operator
// R that the renderer (src/backend/cuda/scan.cpp) writes from a scan of the reduction table:
// types S (read), O (written), A (running); load, step, identity. A block per line (grid-stride
// over lines): scan_lines scans 256-element chunks in shared memory with a carry; scan_in_order
// runs one thread along the line (float16/bfloat16: a float32 running value rounded after every
// step, so that results match NumPy's sequential order).
#pragma once

#include "cupric/kernels/common.cuh"
#include "cupric/reduction.h"

// (in and out may be the very same view: no __restrict__)
#define CUPRIC_SCAN_PARAMS(R) \
  const typename R::S *in, typename R::O *out, i64 nlines, i64 len, i64 in_step, i64 out_step, const Geo<2> lines
#define CUPRIC_SCAN_ARGS in, out, nlines, len, in_step, out_step, lines

namespace cupric::kernels {

/// Calls body(src, dst) with the first bytes of each line of this block (grid-stride over lines).
template <class R, class Body>
__device__ __forceinline__ void for_each_line(CUPRIC_SCAN_PARAMS(R), Body body) {
  (void)len;
  (void)in_step;
  (void)out_step;
  for (i64 line = blockIdx.x; line < nlines; line += gridDim.x) {
    i64 lo[2];
    offsets_of(lines, line, lo);
    body(reinterpret_cast<const char*>(in) + lo[0], reinterpret_cast<char*>(out) + lo[1]);
  }
}

template <class R>
__device__ __forceinline__ void scan_lines(CUPRIC_SCAN_PARAMS(R)) {
  typedef typename R::S S;
  typedef typename R::O O;
  typedef typename R::A A;
  __shared__ alignas(16) unsigned char raw[256 * sizeof(A)];
  A* sv = reinterpret_cast<A*>(raw);
  const int t = threadIdx.x;
  for_each_line<R>(CUPRIC_SCAN_ARGS, [&](const char* src, char* dst) {
    A carry = R::identity();
    for (i64 base = 0; base < len; base += 256) {
      const i64 j = base + t;
      sv[t] = j < len ? R::load(at<S>(src, j * in_step)) : R::identity();
      __syncthreads();
      for (int off = 1; off < 256; off <<= 1) {
        const A u = t >= off ? R::step(sv[t - off], sv[t]) : sv[t];
        __syncthreads();
        sv[t] = u;
        __syncthreads();
      }
      if (j < len) at_mut<O>(dst, j * out_step) = cu::convert<O>(base == 0 ? sv[t] : R::step(carry, sv[t]));
      carry = base == 0 ? sv[255] : R::step(carry, sv[255]);
      __syncthreads();
    }
  });
}

template <class R>
__device__ __forceinline__ void scan_in_order(CUPRIC_SCAN_PARAMS(R)) {
  typedef typename R::S S;
  typedef typename R::O O;
  typedef typename R::A A;
  const int t = threadIdx.x;
  for_each_line<R>(CUPRIC_SCAN_ARGS, [&](const char* src, char* dst) {
    if (t == 0) {
      A run = R::identity();
      for (i64 j = 0; j < len; ++j) {
        run = j == 0 ? cu::convert<A>(cu::convert<O>(R::load(at<S>(src, j * in_step))))
                     : R::step(run, R::load(at<S>(src, j * in_step)));
        at_mut<O>(dst, j * out_step) = cu::convert<O>(run);
      }
    }
    __syncthreads();
  });
}

}  // namespace cupric::kernels
