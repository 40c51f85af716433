// A probe of cupric/tile/staged.h outside the tile compiler (nvcc on the GPU machine): the K loop
// the emitter writes for a staged product (a ring of cp.async stages feeding wgmma / mma.sync),
// checked against a float64 host reference on a ragged shape and timed at 8192^3 bf16.
//   nvcc -std=c++20 -O3 -I device_include -gencode=arch=compute_90a,code=sm_90a tools/probes/wgmma_staged.cu
#define CUPRIC_TILE_THREADS 256
#define CUPRIC_TILE_VEC 8
#ifndef STAGES
#define STAGES 3
#endif
#ifndef DEPTH
#define DEPTH 0  // products left in flight by each iteration (0 or 1)
#endif
#ifndef MINB
#define MINB 1
#endif
#define BM 128
#ifndef BN
#define BN 128
#endif
#define BK 64
#define CUPRIC_TILE_SMEM (STAGES * (BM * BK + BK * BN) * 2 + 1024)
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include "cupric/tile/tile.h"

using namespace cu::tile;
using L = MmaLayout<BM, BN, 8, 1>;
static_assert(DEPTH == 0 || STAGES >= 3);

extern "C" __global__ void __launch_bounds__(256, MINB)
    gemm(const bf16* A, const bf16* B, bf16* C, long long m, long long n, long long k) {
  extern __shared__ __align__(16) unsigned char smem[];
  const Block blk{{blockIdx.x, blockIdx.y, 0}, {gridDim.x, gridDim.y, 1}, static_cast<int>(threadIdx.x), smem, nullptr};
  const ArrayRef<bf16, 2> a{const_cast<bf16*>(A), {m, k}, {k, 1}}, b{const_cast<bf16*>(B), {k, n}, {n, 1}};
  unsigned char* stages =
      reinterpret_cast<unsigned char*>((reinterpret_cast<unsigned long long>(smem) + 1023) & ~1023ULL);
  constexpr int SA = panel_bytes<BM, BK>(), SB = panel_bytes<BK, BN>(), SS = SA + SB;
  Tile<float, BM * BN, L> acc;
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < L::kSlots; ++s) acc.v[s] = 0.f;
  const long long nk = (k + BK - 1) / BK;
  constexpr int AHEAD = STAGES - 1 - DEPTH;  // tiles in flight ahead of the one computed
  for (int s = 0; s < AHEAD; ++s) {
    const i64 sa[2] = {blk.bid[0] * BM, s * BK}, sb[2] = {s * BK, blk.bid[1] * BN};
    copy_async<BM, BK>(blk, stages + s * SS, a, sa);
    copy_async<BK, BN>(blk, stages + s * SS + SA, b, sb);
    cp_async_commit();
  }
  int stage = 0;
  for (long long kk = 0; kk < nk; ++kk) {
    stage_ready<AHEAD - 1>();
    {
      const long long ahead = kk + AHEAD;
      const int st = (stage + AHEAD) % STAGES;
      const i64 sa[2] = {blk.bid[0] * BM, ahead * BK}, sb[2] = {ahead * BK, blk.bid[1] * BN};
      copy_async<BM, BK>(blk, stages + st * SS, a, sa);
      copy_async<BK, BN>(blk, stages + st * SS + SA, b, sb);
      cp_async_commit();
    }
    mma_staged<BM, BK, BN, false, DEPTH, bf16>(blk, acc, static_cast<const unsigned char*>(stages + stage * SS),
                                               stages + stage * SS + SA, acc);
    stage = stage + 1 == STAGES ? 0 : stage + 1;
  }
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  wgmma_wait<0>();
#endif
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < L::kSlots; ++s) {
    const int r = L::row(blk.tid, s), cc = L::col(blk.tid, s);
    const long long gr = blk.bid[0] * BM + r, gc = blk.bid[1] * BN + cc;
    if (gr < m && gc < n) C[gr * n + gc] = to_bf16(acc.v[s]);
  }
}

static float bf(unsigned short h) {
  unsigned u = unsigned(h) << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static unsigned short tobf(float f) {
  unsigned u;
  memcpy(&u, &f, 4);
  return (unsigned short)((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

static int check(long long m, long long n, long long k) {
  std::vector<unsigned short> ha(m * k), hb(k * n), hc(m * n);
  srand(1);
  for (auto& x : ha) x = tobf((rand() / (float)RAND_MAX) * 2 - 1);
  for (auto& x : hb) x = tobf((rand() / (float)RAND_MAX) * 2 - 1);
  bf16 *da, *db, *dc;
  cudaMalloc(&da, m * k * 2);
  cudaMalloc(&db, k * n * 2);
  cudaMalloc(&dc, m * n * 2);
  cudaMemcpy(da, ha.data(), m * k * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(db, hb.data(), k * n * 2, cudaMemcpyHostToDevice);
  cudaMemset(dc, 0xFF, m * n * 2);
  dim3 grid((m + BM - 1) / BM, (n + BN - 1) / BN);
  gemm<<<grid, 256, CUPRIC_TILE_SMEM>>>(da, db, dc, m, n, k);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    printf("  %lldx%lldx%lld: %s\n", m, n, k, cudaGetErrorString(e));
    return 1;
  }
  cudaMemcpy(hc.data(), dc, m * n * 2, cudaMemcpyDeviceToHost);
  double worst = 0;
  long long bad = 0;
  for (long long i = 0; i < m; ++i)
    for (long long j = 0; j < n; ++j) {
      double r = 0;
      for (long long q = 0; q < k; ++q) r += (double)bf(ha[i * k + q]) * bf(hb[q * n + j]);
      double d = fabs(bf(hc[i * n + j]) - r) / (1 + fabs(r));
      if (!(d <= 2e-2)) ++bad;
      if (d > worst || d != d) worst = d;
    }
  printf("  %lldx%lldx%lld: worst rel err %.3g, %lld bad of %lld\n", m, n, k, worst, bad, m * n);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  return bad != 0;
}

int main() {
  cudaFuncSetAttribute(gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, CUPRIC_TILE_SMEM);
  int bad = check(128, 128, 64) + check(256, 384, 512) + check(200, 136, 100);
  const long long S = 8192;
  bf16 *da, *db, *dc;
  cudaMalloc(&da, S * S * 2);
  cudaMalloc(&db, S * S * 2);
  cudaMalloc(&dc, S * S * 2);
  cudaMemset(da, 0, S * S * 2);
  cudaMemset(db, 0, S * S * 2);
  dim3 grid(S / BM, S / BN);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int w = 0; w < 2; ++w) gemm<<<grid, 256, CUPRIC_TILE_SMEM>>>(da, db, dc, S, S, S);
  cudaEventRecord(e0);
  for (int r = 0; r < 5; ++r) gemm<<<grid, 256, CUPRIC_TILE_SMEM>>>(da, db, dc, S, S, S);
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  float ms;
  cudaEventElapsedTime(&ms, e0, e1);
  printf("  8192^3 bf16: %.3f ms, %.1f TFLOP/s (%s)\n", ms / 5, 2.0 * S * S * S / (ms / 5 * 1e-3) / 1e12,
         cudaGetErrorString(cudaGetLastError()));
  printf("%s\n", bad ? "FAILED" : "ok");
  return bad;
}
