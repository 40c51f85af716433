// cupric/kernels/gather.cuh — gather and scatter of elements of one size on the CUDA backend
// (advanced indexing): rows of a source picked by byte offsets. Elements are copied as opaque
// words U of their size (U16: 16 bytes, complex128), so one kernel serves every dtype of a size.
#pragma once

#include "cupric/kernels/common.cuh"

#define CUPRIC_GATHER_PARAMS \
  const char *src, char *out, const i64 *__restrict__ offs, i64 n, i64 per, i64 out_step, const Geo<2> g
#define CUPRIC_GATHER_ARGS src, out, offs, n, per, out_step, g
#define CUPRIC_SCATTER_PARAMS \
  char *dst, const char *values, const i64 *__restrict__ offs, i64 n, i64 per, i64 values_step, const Geo<2> g
#define CUPRIC_SCATTER_ARGS dst, values, offs, n, per, values_step, g

namespace cupric::kernels {

struct alignas(8) U16 {
  unsigned long long lo, hi;
};

/// out[i] (row i, out_step bytes apart) = the row of src at byte offset offs[i] * ISZ.
template <class U, int ISZ>
__device__ __forceinline__ void gather_rows(CUPRIC_GATHER_PARAMS) {
  CUPRIC_GRID_LOOP(e, 0, n * per) {
    const i64 i = e / per;
    i64 o[2];
    offsets_of(g, e - i * per, o);
    at_mut<U>(out, i * out_step + o[1]) = at<U>(src, offs[i] * ISZ + o[0]);
  }
}

/// The row of dst at offs[i] * ISZ = values' row i: one thread per element of a row, rows in
/// index order, so the last write wins.
template <class U, int ISZ>
__device__ __forceinline__ void scatter_rows(CUPRIC_SCATTER_PARAMS) {
  CUPRIC_GRID_LOOP(r, 0, per) {
    i64 o[2];
    offsets_of(g, r, o);
    for (i64 i = 0; i < n; ++i) at_mut<U>(dst, offs[i] * ISZ + o[0]) = at<U>(values, i * values_step + o[1]);
  }
}

}  // namespace cupric::kernels
