// cupric/cuda/fft.hpp — Fourier transforms of cuda:N arrays through cuFFT: C2C, R2C and C2R over
// the trailing 1-3 axes of a batch, with plans kept in a per-device LRU cache bounded in count and
// in workspace bytes. The NumPy semantics (n/s, axes, norm) live above, in python/cupric/fft.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cupric/array.hpp"

namespace cupric::cuda_backend {

enum class FftKind { c2c, r2c, c2r };

/// A JIT LTO callback (cuFFT's cufftXtSetJITCallback) attached to a plan. cuFFT takes callbacks
/// only between cufftCreate and cufftMakePlan*, so they are part of the plan: the cache keys a
/// plan by its callbacks too (a plan with callbacks is another plan than one without).
struct FftCallback {
  std::string ltoir;               ///< the callback compiled to LTO-IR (nvJitLink's input)
  std::string symbol;              ///< the device function's name in `ltoir`
  int type = 0;                    ///< cufftXtCallbackType (CUFFT_CB_LD_COMPLEX, CUFFT_CB_ST_REAL, ...)
  std::uintptr_t caller_info = 0;  ///< device pointer the callback receives as its caller_info (0: none)
};

/// out = the transform of `in` over their last `rank` (1 to 3) axes, the leading axes a batch.
/// c2c: complex64/complex128 in and out, same shape; r2c: float32/float64 in, out's last axis
/// n // 2 + 1; c2r: out's last axis n, in's n // 2 + 1. `out` must be a fresh C-contiguous array
/// on the same device; `in` may be any view (one cuFFT cannot describe is copied first). cuFFT's
/// c2r overwrites its input: `in` is copied first unless `input_is_scratch`. Unnormalised, on the
/// current stream of the arrays' device.
void fft_execute(const Array& in, const Array& out, int rank, FftKind kind, bool forward,
                 const std::vector<FftCallback>& callbacks = {}, bool input_is_scratch = false);

struct FftPlanEntry {
  std::string description;  ///< "C2C complex64 n=(4096,) batch=4096 ..."
  std::size_t workspace = 0;
};
struct FftPlanCacheInfo {
  int device = 0;
  std::int64_t max_size = 0, max_memsize = 0;  ///< -1: no bound
  std::size_t size = 0, memsize = 0;           ///< plans cached and their workspace bytes
  std::uint64_t hits = 0, misses = 0;
  std::vector<FftPlanEntry> entries;  ///< most recently used first
};
/// The plan cache of cuda:`device` (nothing is loaded to answer).
FftPlanCacheInfo fft_plan_cache_info(int device);
/// Bounds the cache (a value < 0 means no bound; 0 caches nothing); evicts down to them now.
void set_fft_plan_cache_limits(int device, std::int64_t max_size, std::int64_t max_memsize);
/// Destroys every cached plan of the device (plans in use live until their call ends).
void clear_fft_plan_cache(int device);

}  // namespace cupric::cuda_backend
