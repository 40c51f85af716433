// cupric/tile/mma.h — out = acc + a @ b for tiles a (M, K), b (K, N), acc (M, N). CPU: a loop
// nest that vectorises along N. GPU: float16/bfloat16 inputs use tensor cores (mma.sync
// m16n8k16, float32 accumulation), float32 with allow_tf32 too (m16n8k8 TF32): a and b are staged
// in shared memory, the accumulator stays in registers in the mma layout (MmaLayout, core.h);
// other dtypes use FMAs.
#pragma once

namespace cu::tile {

CUPRIC_TC int round_up(int x, int m) { return (x + m - 1) / m * m; }

#ifndef CUPRIC_TILE_DEVICE
// CPU: the vectors and registers of the instruction set the kernel is compiled for (the host
// compiler targets the CPU kernels' variant: -march=x86-64-v3 has 16 32-byte registers, x86-64-v4
// 32 64-byte ones). A vector wider than the target's is split by the compiler through memory.
#if defined(__AVX512F__)
inline constexpr int kVectorBytes = 64, kVectorRegisters = 32;
#elif defined(__AVX__)
inline constexpr int kVectorBytes = 32, kVectorRegisters = 16;
#elif defined(__aarch64__)
inline constexpr int kVectorBytes = 16, kVectorRegisters = 32;
#else
inline constexpr int kVectorBytes = 16, kVectorRegisters = 16;
#endif

/// One vector register of accumulator-type values (GCC / Clang vector extension).
template <class A>
struct CpuVec {
  static constexpr int L = kVectorBytes / sizeof(A);
  typedef A type __attribute__((vector_size(kVectorBytes)));
};

/// The register block of the micro-kernel: RB rows x W vectors of accumulators, W vectors of b
/// and one broadcast of a live at once, within the target's registers.
inline constexpr int kMmaW = kVectorRegisters >= 32 ? 4 : 2;
inline constexpr int kMmaRB = (kVectorRegisters - kMmaW - 1) / kMmaW;

/// CPU micro-kernel: out[m0:m0+RB, n0:n0+W*L] += a[m0:m0+RB, :] @ b[:, n0:n0+W*L], with the RB x W
/// vectors of accumulators in registers for the whole K loop.
template <int RB, int W, int K, int N, class A>
inline void mma_block(A* __restrict out, const A* __restrict a, const A* __restrict b, int m0, int n0) {
  using V = typename CpuVec<A>::type;
  constexpr int L = CpuVec<A>::L;
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

/// Rows m0 .. m0+RB of the product: blocks of kMmaW vectors, then of one, then single columns.
template <int RB, int K, int N, class A>
inline void mma_rows(A* __restrict out, const A* __restrict a, const A* __restrict b, int m0) {
  constexpr int L = CpuVec<A>::L, W = kMmaW;
  int n0 = 0;
  for (; n0 + W * L <= N; n0 += W * L) mma_block<RB, W, K, N>(out, a, b, m0, n0);
  for (; n0 + L <= N; n0 += L) mma_block<RB, 1, K, N>(out, a, b, m0, n0);
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
  constexpr int RB = kMmaRB;
  int m = 0;
  for (; m + RB <= M; m += RB) mma_rows<RB, K, N>(out.v, av, bv, m);
  if constexpr (M % RB != 0) mma_rows<M % RB, K, N>(out.v, av, bv, m);
}
#else

/// Shared scratch of the tensor-core paths for an accumulator of layout L (the emitter uses the
/// same formulas). 16-bit inputs: A as MA x (KP + 8) values (MA = the rows the warps cover), B as
/// KP x (NB + 8) (NB = the columns they cover, rounded to 16); TF32: A as MA x (K8 + 4) 32-bit
/// values, B transposed as NB x (K8 + 4). The pads keep ldmatrix and the fragment loads free of
/// bank conflicts.
template <class L>
struct MmaStaging {
  static constexpr int MA = L::kWM * L::TM * 16, NB = L::kWN * L::TN * 8;
};
template <int K, class L, bool TF32>
CUPRIC_TC int mma_smem_a() {
  if constexpr (TF32) return smem_align(4LL * MmaStaging<L>::MA * (round_up(K, 8) + 4));
  else return smem_align(2LL * MmaStaging<L>::MA * (round_up(K, 16) + 8));
}
template <int K, class L, bool TF32, bool BT = false, bool HasA = true>
CUPRIC_TC int mma_smem() {
  constexpr int NB = MmaStaging<L>::NB, A = HasA ? mma_smem_a<K, L, TF32>() : 0;
  if constexpr (TF32) {
    return A + smem_align(4LL * NB * (round_up(K, 8) + 4));
  } else if constexpr (BT) {  // b given as (N, K): staged as NB rows of KP + 8
    return A + smem_align(2LL * round_up(NB, 16) * (round_up(K, 16) + 8));
  } else {
    return A + smem_align(2LL * round_up(K, 16) * (round_up(NB, 16) + 8));
  }
}

/// An a operand already staged in shared memory (mma_stage_a): a loop-invariant a (attention's q)
/// is staged once before the loop, in a region of its own, instead of at every product.
template <class TI>
struct StagedA {
  const void* p;
};
template <class X>
inline constexpr bool is_staged_v = false;
template <class TI>
inline constexpr bool is_staged_v<StagedA<TI> > = true;

/// Zeroes dst[r * LD + c] for r < RA, c < CA outside the (R, C) tile (the padding mma reads).
template <class U, int RA, int CA, int LD, int R, int C>
CUPRIC_TD void zero_padding(const Block& b, U* dst) {
  if constexpr (RA != R || CA != C)
    for (int i = b.tid; i < RA * CA; i += kThreads)
      if (i / CA >= R || i % CA >= C) dst[(i / CA) * LD + i % CA] = 0;
}

/// dst[r * LD + c] = the bits of x[r, c] for an (R, C) tile of 16-bit floats, a run of the
/// layout's consecutive elements per store (16 bytes for the blocked layout's 8-element runs).
template <int R, int C, int LD, class T, class L>
CUPRIC_TD void stage_b16(const Block& b, u16* dst, const Tile<T, R * C, L>& x) {
  constexpr int Run = C % L::kRun == 0 && L::kRun <= 8 ? L::kRun : 1;
  CUPRIC_TILE_UNROLL
  for (int j = 0; j < L::kSlots / Run; ++j) {
    if (!L::owns(b.tid, j * Run)) continue;
    const int e0 = L::elem(b.tid, j * Run);
    u16* p = dst + (e0 / C) * LD + e0 % C;
    if constexpr (Run == 1) {
      *p = x.v[j].bits;
    } else {
      u32 w[Run / 2];
      CUPRIC_TILE_UNROLL
      for (int i = 0; i < Run / 2; ++i)
        w[i] = static_cast<u32>(x.v[j * Run + 2 * i].bits) | (static_cast<u32>(x.v[j * Run + 2 * i + 1].bits) << 16);
      if constexpr (Run == 8) *reinterpret_cast<uint4*>(p) = make_uint4(w[0], w[1], w[2], w[3]);
      else if constexpr (Run == 4) *reinterpret_cast<uint2*>(p) = make_uint2(w[0], w[1]);
      else *reinterpret_cast<u32*>(p) = w[0];
    }
  }
}

CUPRIC_TD u32 tf32_bits(float x) {
  u32 r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

/// dst[r * LD + c] (Tr: dst[c * LD + r]) = x[r, c] rounded to TF32, for an (R, C) float tile.
template <int R, int C, int LD, bool Tr, class L>
CUPRIC_TD void stage_tf32(const Block& b, u32* dst, const Tile<float, R * C, L>& x) {
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < L::kSlots; ++s)
    if (L::owns(b.tid, s)) {
      const int e = L::elem(b.tid, s), r = e / C, c = e % C;
      dst[Tr ? c * LD + r : r * LD + c] = tf32_bits(x.v[s]);
    }
}

CUPRIC_TD u32 smem_address(const void* p) { return static_cast<u32>(__cvta_generic_to_shared(p)); }

/// Four 8x8 16-bit matrices from shared memory; lane l gives the address of row l % 8 of matrix l / 8.
CUPRIC_TD void ldmatrix_x4(u32 (&r)[4], const u16* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(p))
               : "memory");
}
CUPRIC_TD void ldmatrix_x4_trans(u32& r0, u32& r1, u32& r2, u32& r3, const u16* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(smem_address(p))
               : "memory");
}
CUPRIC_TD void ldmatrix_x2(u32& r0, u32& r1, const u16* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
               : "=r"(r0), "=r"(r1)
               : "r"(smem_address(p))
               : "memory");
}
CUPRIC_TD void ldmatrix_x2_trans(u32& r0, u32& r1, const u16* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
               : "=r"(r0), "=r"(r1)
               : "r"(smem_address(p))
               : "memory");
}

/// d += a @ b for one m16n8k16 fragment (16-bit inputs, float32 accumulator).
template <class TI>
CUPRIC_TD void mma_m16n8k16(float* d, const u32 (&a)[4], const u32 (&b)[2]) {
  if constexpr (same_v<TI, bf16>) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

/// out = acc + a @ b on the tensor cores (mma.sync.m16n8k16, float16 / bfloat16 inputs). The
/// accumulator stays in registers in the mma layout L: each warp updates its own fragments. a and
/// b (any layout) are staged in shared memory, a row-major and b as (K, N) rows, and read as
/// fragments with ldmatrix (.trans for b). BT: b is given transposed, (N, K) (a K^T of attention):
/// it is staged as (N, K) rows and read with ldmatrix without .trans.
template <int M, int K, int N, bool BT, bool DB, class AOp, class TI, class LB, class L>
CUPRIC_TD void mma_sync(const Block& b, Tile<float, M * N, L>& out, const AOp& a, const Tile<TI, K * N, LB>& bm,
                        const Tile<float, M * N, L>& acc, int phase) {
  constexpr bool HasA = !is_staged_v<AOp>;
  static_assert(is_mma_layout_v<L> && L::kM == M && L::kN == N,
                "cupric.tile: a tensor-core mma keeps its accumulator in the mma layout (assign_layouts)");
  constexpr int TM = L::TM, TN = L::TN, MA = MmaStaging<L>::MA, NB = round_up(MmaStaging<L>::NB, 16);
  constexpr int KP = round_up(K, 16), LDA = KP + 8, LDB = BT ? KP + 8 : NB + 8;
  constexpr int bytes = mma_smem<K, L, false, BT, HasA>();
  static_assert((DB ? 2 : 1) * bytes <= kSmemBytes, "cupric.tile: scratch too small (mma)");
  unsigned char* base = b.smem + (DB ? phase * bytes : 0);
  const u16* sa;                                                                     // [MA][LDA]  a
  u16* sb = reinterpret_cast<u16*>(base + (HasA ? smem_align(2LL * MA * LDA) : 0));  // [KP][LDB]  b ([NB][LDB] if BT)
  if constexpr (HasA) {
    u16* st = reinterpret_cast<u16*>(base);
    zero_padding<u16, MA, KP, LDA, M, K>(b, st);
    stage_b16<M, K, LDA>(b, st, a);
    sa = st;
  } else {
    sa = static_cast<const u16*>(a.p);
  }
  if constexpr (BT) {
    zero_padding<u16, NB, KP, LDB, N, K>(b, sb);
    stage_b16<N, K, LDB>(b, sb, bm);
  } else {
    zero_padding<u16, KP, NB, LDB, K, N>(b, sb);
    stage_b16<K, N, LDB>(b, sb, bm);
  }
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < L::kSlots; ++s) out.v[s] = acc.v[s];
  CUPRIC_TILE_SYNC();
  const int warp = b.tid / 32, lane = b.tid % 32;
  const int m0 = (warp / L::kWN) * TM * 16, n0 = (warp % L::kWN) * TN * 8;
  CUPRIC_TILE_UNROLL
  for (int k0 = 0; k0 < KP; k0 += 16) {
    u32 af[TM][4], bf[TN][2];
    CUPRIC_TILE_UNROLL
    for (int tm = 0; tm < TM; ++tm) ldmatrix_x4(af[tm], sa + (m0 + tm * 16 + lane % 16) * LDA + k0 + (lane / 16) * 8);
    if constexpr (BT) {  // lane l: row n0 + 8 tn + l % 8 (+ 8 for l >= 16), column k0 (+ 8 for l % 16 >= 8)
      const u16* bcol = sb + (n0 + (lane / 16) * 8 + lane % 8) * LDB + k0 + ((lane / 8) % 2) * 8;
      CUPRIC_TILE_UNROLL
      for (int tn = 0; tn + 1 < TN; tn += 2) {
        u32 r[4];
        ldmatrix_x4(r, bcol + tn * 8 * LDB);
        bf[tn][0] = r[0];
        bf[tn][1] = r[1];
        bf[tn + 1][0] = r[2];
        bf[tn + 1][1] = r[3];
      }
      if constexpr (TN % 2 == 1)
        ldmatrix_x2(bf[TN - 1][0], bf[TN - 1][1], bcol - (lane / 16) * 8 * LDB + (TN - 1) * 8 * LDB);
    } else {
      const u16* brow = sb + (k0 + lane % 16) * LDB + n0;
      CUPRIC_TILE_UNROLL
      for (int tn = 0; tn + 1 < TN; tn += 2)
        ldmatrix_x4_trans(bf[tn][0], bf[tn][1], bf[tn + 1][0], bf[tn + 1][1], brow + tn * 8 + (lane / 16) * 8);
      if constexpr (TN % 2 == 1) ldmatrix_x2_trans(bf[TN - 1][0], bf[TN - 1][1], brow + (TN - 1) * 8);
    }
    CUPRIC_TILE_UNROLL
    for (int tm = 0; tm < TM; ++tm) CUPRIC_TILE_UNROLL
    for (int tn = 0; tn < TN; ++tn) mma_m16n8k16<TI>(out.v + (tm * TN + tn) * 4, af[tm], bf[tn]);
  }
  if constexpr (!DB) CUPRIC_TILE_SYNC();
}

/// out = acc + a @ b with float32 inputs rounded to TF32 (mma.sync.m16n8k8); as mma_sync, with
/// b staged transposed, (N, K) (BT: as given), and the fragments read with 32-bit loads.
template <int M, int K, int N, bool BT, bool DB, class AOp, class LB, class L>
CUPRIC_TD void mma_tf32(const Block& b, Tile<float, M * N, L>& out, const AOp& a, const Tile<float, K * N, LB>& bm,
                        const Tile<float, M * N, L>& acc, int phase) {
  constexpr bool HasA = !is_staged_v<AOp>;
  static_assert(is_mma_layout_v<L> && L::kM == M && L::kN == N,
                "cupric.tile: a tensor-core mma keeps its accumulator in the mma layout (assign_layouts)");
  constexpr int TM = L::TM, TN = L::TN, MA = MmaStaging<L>::MA, NB = MmaStaging<L>::NB;
  constexpr int K8 = round_up(K, 8), LD = K8 + 4;
  constexpr int bytes = mma_smem<K, L, true, BT, HasA>();
  static_assert((DB ? 2 : 1) * bytes <= kSmemBytes, "cupric.tile: scratch too small (mma tf32)");
  unsigned char* base = b.smem + (DB ? phase * bytes : 0);
  const u32* sa;                                                                    // [MA][LD]
  u32* sb = reinterpret_cast<u32*>(base + (HasA ? smem_align(4LL * MA * LD) : 0));  // [NB][LD], b transposed
  if constexpr (HasA) {
    u32* st = reinterpret_cast<u32*>(base);
    zero_padding<u32, MA, K8, LD, M, K>(b, st);
    stage_tf32<M, K, LD, false>(b, st, a);
    sa = st;
  } else {
    sa = static_cast<const u32*>(a.p);
  }
  zero_padding<u32, NB, K8, LD, N, K>(b, sb);
  if constexpr (BT) stage_tf32<N, K, LD, false>(b, sb, bm);
  else stage_tf32<K, N, LD, true>(b, sb, bm);
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < L::kSlots; ++s) out.v[s] = acc.v[s];
  CUPRIC_TILE_SYNC();
  const int warp = b.tid / 32, lane = b.tid % 32, g = lane / 4, q = lane % 4;
  const int m0 = (warp / L::kWN) * TM * 16, n0 = (warp % L::kWN) * TN * 8;
  CUPRIC_TILE_UNROLL
  for (int k0 = 0; k0 < K8; k0 += 8) {
    u32 af[TM][4], bf[TN][2];
    CUPRIC_TILE_UNROLL
    for (int tm = 0; tm < TM; ++tm) {
      const u32* ar = sa + (m0 + tm * 16 + g) * LD + k0 + q;
      af[tm][0] = ar[0];
      af[tm][1] = ar[8 * LD];
      af[tm][2] = ar[4];
      af[tm][3] = ar[8 * LD + 4];
    }
    CUPRIC_TILE_UNROLL
    for (int tn = 0; tn < TN; ++tn) {
      const u32* br = sb + (n0 + tn * 8 + g) * LD + k0 + q;
      bf[tn][0] = br[0];
      bf[tn][1] = br[4];
    }
    CUPRIC_TILE_UNROLL
    for (int tm = 0; tm < TM; ++tm) CUPRIC_TILE_UNROLL
    for (int tn = 0; tn < TN; ++tn) {
      float* d = out.v + (tm * TN + tn) * 4;
      asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
          "{%0, %1, %2, %3};"
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
          : "r"(af[tm][0]), "r"(af[tm][1]), "r"(af[tm][2]), "r"(af[tm][3]), "r"(bf[tn][0]), "r"(bf[tn][1]));
    }
  }
  if constexpr (!DB) CUPRIC_TILE_SYNC();
}

/// Stages a (M, K) for the tensor-core products with an (M, N) accumulator in layout L at dst
/// (mma_smem_a bytes of their own), zero-padded; the products' barrier orders it before their reads.
template <int M, int K, int N, bool TF32, class L, class TI, class LA>
CUPRIC_TD void mma_stage_a(const Block& b, unsigned char* dst, const Tile<TI, M * K, LA>& a) {
  constexpr int MA = MmaStaging<L>::MA;
  if constexpr (TF32) {
    constexpr int K8 = round_up(K, 8), LD = K8 + 4;
    zero_padding<u32, MA, K8, LD, M, K>(b, reinterpret_cast<u32*>(dst));
    stage_tf32<M, K, LD, false>(b, reinterpret_cast<u32*>(dst), a);
  } else {
    constexpr int KP = round_up(K, 16), LDA = KP + 8;
    zero_padding<u16, MA, KP, LDA, M, K>(b, reinterpret_cast<u16*>(dst));
    stage_b16<M, K, LDA>(b, reinterpret_cast<u16*>(dst), a);
  }
}

/// out = acc + a @ b; BT: b is given transposed, as an (N, K) tile (the GPU's fold of a ct.transpose
/// into the product). DB (tensor cores, the only user of the scratch in its loop): a and b are
/// staged in buffer `phase` of two, which lets the product skip its closing barrier — the next
/// call stages into the other buffer, and its own barrier orders it after this call's reads; the
/// emitter alternates the phase and puts a barrier after the loop.
template <int M, int K, int N, class A, bool TF32 = false, bool BT = false, bool DB = false, class AOp, class TI,
          class LB, class LC>
CUPRIC_TD void mma(const Block& b, Tile<A, M * N, LC>& out, const AOp& a, const Tile<TI, K * N, LB>& bm,
                   const Tile<A, M * N, LC>& acc, int phase = 0) {
  if constexpr (is_half_v<TI> && !is_f8_v<TI> && same_v<A, float>) {
    mma_sync<M, K, N, BT, DB>(b, out, a, bm, acc, phase);
  } else if constexpr (TF32 && same_v<TI, float> && same_v<A, float>) {
    mma_tf32<M, K, N, BT, DB>(b, out, a, bm, acc, phase);
  } else {
    static_assert(!DB && !is_staged_v<AOp>, "cupric.tile: staged operands are for the tensor-core products");
    using LA = typename AOp::layout;
    static_assert(smem_align(sizeof(A) * M * K) + smem_align(sizeof(A) * K * N) <= kSmemBytes,
                  "cupric.tile: scratch too small (mma)");
    A* sa = reinterpret_cast<A*>(b.smem);
    A* sb = reinterpret_cast<A*>(b.smem + smem_align(sizeof(A) * M * K));  // [K][N]
    CUPRIC_TILE_UNROLL
    for (int s = 0; s < LA::kSlots; ++s)
      if (LA::owns(b.tid, s)) sa[LA::elem(b.tid, s)] = convert<A>(a.v[s]);
    CUPRIC_TILE_UNROLL
    for (int s = 0; s < LB::kSlots; ++s)
      if (LB::owns(b.tid, s)) {
        const int e = LB::elem(b.tid, s);
        sb[BT ? (e % K) * N + e / K : e] = convert<A>(bm.v[s]);
      }
    CUPRIC_TILE_SYNC();
    CUPRIC_TILE_UNROLL
    for (int s = 0; s < LC::kSlots; ++s) {
      const int e = LC::elem(b.tid, s);
      A sum = acc.v[s];
      if (e < M * N)
        for (int k = 0; k < K; ++k) sum += sa[(e / N) * K + k] * sb[k * N + e % N];
      out.v[s] = sum;
    }
    CUPRIC_TILE_SYNC();
  }
}
#endif

}  // namespace cu::tile
