// cupric/tile/mma.h — out = acc + a @ b for tiles a (M, K), b (K, N), acc (M, N). CPU: a loop
// nest that vectorises along N. GPU: float16/bfloat16 inputs use tensor cores (mma.sync
// m16n8k16, float32 accumulation) through shared memory, float32 with allow_tf32 too (m16n8k8
// TF32); other dtypes use FMAs.
#pragma once

namespace cu::tile {

CUPRIC_TC int round_up(int x, int m) { return (x + m - 1) / m * m; }

#ifndef CUPRIC_TILE_DEVICE
/// CPU: one 64-byte vector of accumulator-type values (GCC / Clang vector extension).
template <class A>
struct Vec64 {
  static constexpr int L = 64 / sizeof(A);
  typedef A type __attribute__((vector_size(64)));
};

/// CPU micro-kernel: out[m0:m0+RB, n0:n0+W*L] += a[m0:m0+RB, :] @ b[:, n0:n0+W*L], with the RB x W
/// vectors of accumulators in registers for the whole K loop.
template <int RB, int W, int K, int N, class A>
inline void mma_block(A* __restrict out, const A* __restrict a, const A* __restrict b, int m0, int n0) {
  using V = typename Vec64<A>::type;
  constexpr int L = Vec64<A>::L;
  V acc[RB][W];
  for (int r = 0; r < RB; ++r)
    for (int w = 0; w < W; ++w) __builtin_memcpy(&acc[r][w], out + (m0 + r) * N + n0 + w * L, sizeof(V));
  for (int k = 0; k < K; ++k) {
    V bv[W];
    for (int w = 0; w < W; ++w) __builtin_memcpy(&bv[w], b + k * N + n0 + w * L, sizeof(V));
    for (int r = 0; r < RB; ++r) {
      const A av = a[(m0 + r) * K + k];
      for (int w = 0; w < W; ++w) acc[r][w] += bv[w] * av;
    }
  }
  for (int r = 0; r < RB; ++r)
    for (int w = 0; w < W; ++w) __builtin_memcpy(out + (m0 + r) * N + n0 + w * L, &acc[r][w], sizeof(V));
}

template <int RB, int K, int N, class A>
inline void mma_rows(A* __restrict out, const A* __restrict a, const A* __restrict b, int m0) {
  constexpr int L = Vec64<A>::L;
  int n0 = 0;
  for (; n0 + 2 * L <= N; n0 += 2 * L) mma_block<RB, 2, K, N>(out, a, b, m0, n0);
  if constexpr (N % (2 * L) >= L) {
    mma_block<RB, 1, K, N>(out, a, b, m0, n0);
    n0 += L;
  }
  if constexpr (N % L != 0)
    for (int r = 0; r < RB; ++r)  // remaining columns
      for (int k = 0; k < K; ++k) {
        const A av = a[(m0 + r) * K + k];
        for (int n = n0; n < N; ++n) out[(m0 + r) * N + n] += av * b[k * N + n];
      }
}

/// (TF32 is a GPU request; the CPU computes float32 products exactly.)
template <int M, int K, int N, class A, bool TF32 = false, class TI>
inline void mma(const Block&, Tile<A, M * N>& out, const Tile<TI, M * K>& a, const Tile<TI, K * N>& bm,
                const Tile<A, M * N>& acc) {
  if (&out != &acc)
    for (int i = 0; i < M * N; ++i) out.v[i] = acc.v[i];
  // inputs in the accumulator type once (16-bit floats, int8), not in the inner loop
  const A* av = reinterpret_cast<const A*>(a.v);
  const A* bv = reinterpret_cast<const A*>(bm.v);
  if constexpr (!same_v<TI, A>) {
    alignas(64) static thread_local A aconv[M * K], bconv[K * N];
    for (int i = 0; i < M * K; ++i) aconv[i] = convert<A>(a.v[i]);
    for (int i = 0; i < K * N; ++i) bconv[i] = convert<A>(bm.v[i]);
    av = aconv;
    bv = bconv;
  }
  constexpr int RB = 4;  // 4 rows x 2 vectors: 8 accumulator registers
  int m = 0;
  for (; m + RB <= M; m += RB) mma_rows<RB, K, N>(out.v, av, bv, m);
  for (; m < M; ++m) mma_rows<1, K, N>(out.v, av, bv, m);
}
#else

/// Shared scratch of the tensor-core path (the emitters use the same formula).
template <int M, int K, int N>
CUPRIC_TC int mma_sync_smem() {
  return smem_align(2LL * round_up(M, 16) * (round_up(K, 16) + 8)) + smem_align(2LL * round_up(N, 8) * (round_up(K, 16) + 8)) +
         smem_align(4LL * round_up(M, 16) * round_up(N, 8));
}

template <int M, int K, int N, class TI>
CUPRIC_TD void mma_sync(const Block& b, Tile<float, M * N>& out, const Tile<TI, M * K>& a, const Tile<TI, K * N>& bm,
                        const Tile<float, M * N>& acc) {
  constexpr int Mp = round_up(M, 16), Np = round_up(N, 8), Kp = round_up(K, 16), LD = Kp + 8;
  static_assert(mma_sync_smem<M, K, N>() <= kSmemBytes, "cupric.tile: scratch too small (mma)");
  u16* sa = reinterpret_cast<u16*>(b.smem);                       // [Mp][LD]  a, row-major
  u16* sb = reinterpret_cast<u16*>(b.smem + smem_align(2LL * Mp * LD));  // [Np][LD]  b transposed
  float* sc = reinterpret_cast<float*>(b.smem + smem_align(2LL * Mp * LD) + smem_align(2LL * Np * LD));  // [Mp][Np]
  if constexpr (Mp != M || Kp != K)
    for (int i = b.tid; i < Mp * Kp; i += kThreads)
      if (i / Kp >= M || i % Kp >= K) sa[(i / Kp) * LD + i % Kp] = 0;
  if constexpr (Np != N || Kp != K)
    for (int i = b.tid; i < Np * Kp; i += kThreads)
      if (i / Kp >= N || i % Kp >= K) sb[(i / Kp) * LD + i % Kp] = 0;
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < Layout<M * K>::kSlots; ++s)
    if (Layout<M * K>::owns(b.tid, s)) {
      const int e = Layout<M * K>::elem(b.tid, s);
      sa[(e / K) * LD + e % K] = a.v[s].bits;
    }
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < Layout<K * N>::kSlots; ++s)
    if (Layout<K * N>::owns(b.tid, s)) {
      const int e = Layout<K * N>::elem(b.tid, s);
      sb[(e % N) * LD + e / N] = bm.v[s].bits;
    }
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < Layout<M * N>::kSlots; ++s)
    if (Layout<M * N>::owns(b.tid, s)) {
      const int e = Layout<M * N>::elem(b.tid, s);
      sc[(e / N) * Np + e % N] = acc.v[s];
    }
  __syncthreads();
  const int warp = b.tid / 32, lane = b.tid % 32, g = lane / 4, q = lane % 4;
  for (int t = warp; t < (Mp / 16) * (Np / 8); t += kThreads / 32) {
    const int m0 = (t / (Np / 8)) * 16, n0 = (t % (Np / 8)) * 8;
    float* c0 = sc + (m0 + g) * Np + n0 + 2 * q;
    float* c1 = c0 + 8 * Np;
    float d[4] = {c0[0], c0[1], c1[0], c1[1]};
    for (int k0 = 0; k0 < Kp; k0 += 16) {
      const u16* ar = sa + (m0 + g) * LD + k0 + 2 * q;
      const u16* br = sb + (n0 + g) * LD + k0 + 2 * q;
      const u32 a0 = *reinterpret_cast<const u32*>(ar), a1 = *reinterpret_cast<const u32*>(ar + 8 * LD);
      const u32 a2 = *reinterpret_cast<const u32*>(ar + 8), a3 = *reinterpret_cast<const u32*>(ar + 8 * LD + 8);
      const u32 b0 = *reinterpret_cast<const u32*>(br), b1 = *reinterpret_cast<const u32*>(br + 8);
      if constexpr (same_v<TI, bf16>) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
      } else {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
      }
    }
    c0[0] = d[0];
    c0[1] = d[1];
    c1[0] = d[2];
    c1[1] = d[3];
  }
  __syncthreads();
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < Layout<M * N>::kSlots; ++s) {
    const int e = Layout<M * N>::elem(b.tid, s);
    out.v[s] = e < M * N ? sc[(e / N) * Np + e % N] : 0.0f;
  }
  __syncthreads();
}

/// Shared scratch of the TF32 tensor-core path (float32 inputs rounded to TF32, m16n8k8).
template <int M, int K, int N>
CUPRIC_TC int mma_tf32_smem() {
  return smem_align(4LL * round_up(M, 16) * (round_up(K, 8) + 4)) + smem_align(4LL * round_up(N, 8) * (round_up(K, 8) + 4)) +
         smem_align(4LL * round_up(M, 16) * round_up(N, 8));
}

template <int M, int K, int N>
CUPRIC_TD void mma_tf32(const Block& b, Tile<float, M * N>& out, const Tile<float, M * K>& a, const Tile<float, K * N>& bm,
                        const Tile<float, M * N>& acc) {
  constexpr int Mp = round_up(M, 16), Np = round_up(N, 8), Kp = round_up(K, 8), LD = Kp + 4;
  static_assert(mma_tf32_smem<M, K, N>() <= kSmemBytes, "cupric.tile: scratch too small (mma tf32)");
  u32* sa = reinterpret_cast<u32*>(b.smem);                                   // [Mp][LD]
  u32* sb = reinterpret_cast<u32*>(b.smem + smem_align(4LL * Mp * LD));       // [Np][LD], b transposed
  float* sc = reinterpret_cast<float*>(b.smem + smem_align(4LL * Mp * LD) + smem_align(4LL * Np * LD));
  auto tf32 = [](float x) {
    u32 r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
  };
  if constexpr (Mp != M || Kp != K)
    for (int i = b.tid; i < Mp * Kp; i += kThreads)
      if (i / Kp >= M || i % Kp >= K) sa[(i / Kp) * LD + i % Kp] = 0;
  if constexpr (Np != N || Kp != K)
    for (int i = b.tid; i < Np * Kp; i += kThreads)
      if (i / Kp >= N || i % Kp >= K) sb[(i / Kp) * LD + i % Kp] = 0;
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < Layout<M * K>::kSlots; ++s)
    if (Layout<M * K>::owns(b.tid, s)) {
      const int e = Layout<M * K>::elem(b.tid, s);
      sa[(e / K) * LD + e % K] = tf32(a.v[s]);
    }
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < Layout<K * N>::kSlots; ++s)
    if (Layout<K * N>::owns(b.tid, s)) {
      const int e = Layout<K * N>::elem(b.tid, s);
      sb[(e % N) * LD + e / N] = tf32(bm.v[s]);
    }
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < Layout<M * N>::kSlots; ++s)
    if (Layout<M * N>::owns(b.tid, s)) {
      const int e = Layout<M * N>::elem(b.tid, s);
      sc[(e / N) * Np + e % N] = acc.v[s];
    }
  __syncthreads();
  const int warp = b.tid / 32, lane = b.tid % 32, g = lane / 4, q = lane % 4;
  for (int t = warp; t < (Mp / 16) * (Np / 8); t += kThreads / 32) {
    const int m0 = (t / (Np / 8)) * 16, n0 = (t % (Np / 8)) * 8;
    float* c0 = sc + (m0 + g) * Np + n0 + 2 * q;
    float* c1 = c0 + 8 * Np;
    float d[4] = {c0[0], c0[1], c1[0], c1[1]};
    for (int k0 = 0; k0 < Kp; k0 += 8) {
      const u32* ar = sa + (m0 + g) * LD + k0 + q;
      const u32* br = sb + (n0 + g) * LD + k0 + q;
      asm volatile(
          "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
          "{%0, %1, %2, %3};"
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
          : "r"(ar[0]), "r"(ar[8 * LD]), "r"(ar[4]), "r"(ar[8 * LD + 4]), "r"(br[0]), "r"(br[4]));
    }
    c0[0] = d[0];
    c0[1] = d[1];
    c1[0] = d[2];
    c1[1] = d[3];
  }
  __syncthreads();
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < Layout<M * N>::kSlots; ++s) {
    const int e = Layout<M * N>::elem(b.tid, s);
    out.v[s] = e < M * N ? sc[(e / N) * Np + e % N] : 0.0f;
  }
  __syncthreads();
}

template <int M, int K, int N, class A, bool TF32 = false, class TI>
CUPRIC_TD void mma(const Block& b, Tile<A, M * N>& out, const Tile<TI, M * K>& a, const Tile<TI, K * N>& bm,
                   const Tile<A, M * N>& acc) {
  if constexpr (is_half_v<TI> && same_v<A, float>) {
    mma_sync<M, K, N>(b, out, a, bm, acc);
  } else if constexpr (TF32 && same_v<TI, float> && same_v<A, float>) {
    mma_tf32<M, K, N>(b, out, a, bm, acc);
  } else {
    static_assert(smem_align(sizeof(A) * M * K) + smem_align(sizeof(A) * K * N) <= kSmemBytes,
                  "cupric.tile: scratch too small (mma)");
    A* sa = reinterpret_cast<A*>(b.smem);
    A* sb = reinterpret_cast<A*>(b.smem + smem_align(sizeof(A) * M * K));
    CUPRIC_TILE_UNROLL
    for (int s = 0; s < Layout<M * K>::kSlots; ++s)
      if (Layout<M * K>::owns(b.tid, s)) sa[Layout<M * K>::elem(b.tid, s)] = convert<A>(a.v[s]);
    CUPRIC_TILE_UNROLL
    for (int s = 0; s < Layout<K * N>::kSlots; ++s)
      if (Layout<K * N>::owns(b.tid, s)) sb[Layout<K * N>::elem(b.tid, s)] = convert<A>(bm.v[s]);
    __syncthreads();
    CUPRIC_TILE_UNROLL
    for (int s = 0; s < Layout<M * N>::kSlots; ++s) {
      const int e = Layout<M * N>::elem(b.tid, s);
      A sum = acc.v[s];
      if (e < M * N)
        for (int k = 0; k < K; ++k) sum += sa[(e / N) * K + k] * sb[k * N + e % N];
      out.v[s] = sum;
    }
    __syncthreads();
  }
}
#endif

}  // namespace cu::tile
