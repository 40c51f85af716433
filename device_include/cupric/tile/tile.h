// cupric/tile/tile.h — the header library that generated tile kernels include, on both targets:
// NVRTC / nvcc compile it for the GPU (a tile is spread over the threads of a block), the host
// C++ compiler for the CPU (a block is one thread, a tile a plain array). The generated code
// defines CUPRIC_TILE_THREADS, CUPRIC_TILE_VEC and CUPRIC_TILE_SMEM first, and
// CUPRIC_TILE_PRODUCERS where a warp-specialised kernel launches a producer warpgroup beside the
// CUPRIC_TILE_THREADS threads that run the tile code (tma.h).
#pragma once

#ifndef CUPRIC_TILE_THREADS
#define CUPRIC_TILE_THREADS 1
#endif
#ifndef CUPRIC_TILE_VEC
#define CUPRIC_TILE_VEC 1
#endif
#ifndef CUPRIC_TILE_SMEM
#define CUPRIC_TILE_SMEM 0
#endif
#ifndef CUPRIC_TILE_PRODUCERS
#define CUPRIC_TILE_PRODUCERS 0
#endif
#define CUPRIC_TILE_STR2(x) #x
#define CUPRIC_TILE_STR(x) CUPRIC_TILE_STR2(x)

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define CUPRIC_TILE_DEVICE 1
#define CUPRIC_TD __device__ __forceinline__
#define CUPRIC_TC __host__ __device__ constexpr
#define CUPRIC_TILE_UNROLL _Pragma("unroll")
// edge paths: one copy of the loop body, not one per iteration (NVRTC time, code size)
#define CUPRIC_TILE_NO_UNROLL _Pragma("unroll 1")
#if CUPRIC_TILE_PRODUCERS > 0
// the tile code's threads only (named barrier 1): the producer warpgroup runs its own loop
#define CUPRIC_TILE_SYNC() asm volatile("bar.sync 1, " CUPRIC_TILE_STR(CUPRIC_TILE_THREADS) ";" ::: "memory")
#else
#define CUPRIC_TILE_SYNC() __syncthreads()
#endif
#define CUPRIC_TILE_ALIGN
#else
#define CUPRIC_TD inline __attribute__((always_inline))
#define CUPRIC_TC constexpr
#define CUPRIC_TILE_UNROLL _Pragma("GCC ivdep")
#define CUPRIC_TILE_NO_UNROLL
#define CUPRIC_TILE_SYNC() ((void)0)
#define CUPRIC_TILE_ALIGN alignas(64)
#endif

/// for (int s over the slots this thread holds of an N-element tile)
#define CUPRIC_TILE_FOR(s, N) CUPRIC_TILE_UNROLL for (int s = 0; s < ::cu::tile::Layout<N>::kSlots; ++s)
/// the same for a tile of layout `...` (a type)
#define CUPRIC_TILE_FOR_L(s, ...) CUPRIC_TILE_UNROLL for (int s = 0; s < __VA_ARGS__::kSlots; ++s)

#include "cupric/scalar_math.h"
#include "cupric/reduction.h"
#include "cupric/tile/abi.h"
#include "cupric/tile/types.h"
#include "cupric/tile/host_math.h"
#include "cupric/tile/core.h"
#include "cupric/tile/memory.h"
#include "cupric/tile/shape.h"
#include "cupric/tile/reduce.h"
#include "cupric/tile/mma.h"
#include "cupric/tile/staged.h"
#include "cupric/tile/tma.h"
#include "cupric/tile/debug.h"
