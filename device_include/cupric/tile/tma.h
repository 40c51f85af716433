// cupric/tile/tma.h — the ring of a staged K loop filled by the tensor memory accelerator (TMA,
// sm_90) and handed over on mbarriers (CUPRIC_TILE_TMA=1; staged.h's cp.async ring otherwise).
// Each operand's tensor map is made on the host (cuTensorMapEncodeTiled, 128-byte swizzle: the
// same panels copy_async writes) and passed by value as a __grid_constant__ parameter; a map of
// zeros means the host could not describe the view (strides, alignment, rank), and then the whole
// loop copies with cp.async, still on the same barriers. Stage s has a full barrier (the copies
// landed: TMA's transaction bytes, or every thread's cp.async) and an empty one (every warp's
// products read it: one arrival per warp). One thread issues every TMA copy: thread 0, or in a
// warp-specialised kernel (CUPRIC_TILE_PRODUCERS) the first thread of a producer warpgroup
// launched after the kThreads that run the tile code, which does nothing but fill the ring while
// those only wait for stages, multiply and release them (the emitter writes the producer's loop:
// emit_producer in src/tile/emit_body.cpp). Registers move from the producer to them (setmaxnreg).
#pragma once

#ifdef CUPRIC_TILE_DEVICE
namespace cu::tile {

/// CUtensorMap's bytes (cuda.h's CUtensorMap: 128 bytes, 64-byte aligned).
struct alignas(64) TensorMap {
  unsigned long long opaque[16];
};

/// The thread that issues the TMA copies.
inline constexpr int kTmaIssuer = kProducers > 0 ? kThreads : 0;

/// Whether the host made this map (a made map is never all zeros: it holds the address).
CUPRIC_TD bool tma_ready(const TensorMap& m) {
#if __CUDA_ARCH__ >= 900
  unsigned long long any = 0;
  CUPRIC_TILE_UNROLL
  for (int i = 0; i < 16; ++i) any |= m.opaque[i];
  return any != 0;
#else
  (void)m;
  return false;  // no TMA before sm_90: the cp.async ring
#endif
}

CUPRIC_TD void mbar_init(u64* bar, int count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(smem_address(bar)), "r"(count) : "memory");
}
CUPRIC_TD void mbar_arrive(u64* bar) {
  asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.shared.b64 state, [%0];\n}" ::"r"(smem_address(bar)) : "memory");
}
/// Waits until the barrier's phase of this parity has completed (try_wait suspends the thread a
/// while on sm_90; test_wait polls).
CUPRIC_TD void mbar_wait(u64* bar, int parity) {
#if __CUDA_ARCH__ >= 900
#define CUPRIC_MBAR_WAIT "mbarrier.try_wait.parity.shared.b64"
#else
#define CUPRIC_MBAR_WAIT "mbarrier.test_wait.parity.shared.b64"
#endif
  asm volatile("{\n.reg .pred done;\nwait_%=:\n" CUPRIC_MBAR_WAIT
               " done, [%0], %1;\n"
               "@!done bra wait_%=;\n}" ::"r"(smem_address(bar)),
               "r"(parity)
               : "memory");
#undef CUPRIC_MBAR_WAIT
}
CUPRIC_TD void mbar_inval(u64* bar) {
  asm volatile("mbarrier.inval.shared.b64 [%0];" ::"r"(smem_address(bar)) : "memory");
}

/// Sets `ctas` to the CTAs of this block's cluster (1: the launch made none) and `rank` to this
/// block's rank in it.
CUPRIC_TD void cluster_place(int& ctas, int& rank) {
#if __CUDA_ARCH__ >= 900
  unsigned n, r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\nmov.u32 %1, %%cluster_ctarank;" : "=r"(n), "=r"(r));
  ctas = static_cast<int>(n);
  rank = static_cast<int>(r);
#else
  ctas = 1;
  rank = 0;
#endif
}
/// Every (not exited) thread of the cluster: the barriers each CTA set up are visible to the
/// others, and nothing of a CTA is used by another after it passes the last one.
CUPRIC_TD void cluster_barrier() {
#if __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
#endif
}
/// An arrival on the barrier at `bar`'s place in the shared memory of cluster CTA `cta` (release at
/// the CTA's scope, as a local arrival: with .release.cluster, which orders every earlier access of
/// the thread cluster-wide, a paired matmul ran at 0.64 × the unpaired one on the H200).
CUPRIC_TD void mbar_arrive_cluster(u64* bar, int cta) {
#if __CUDA_ARCH__ >= 900
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}" ::"r"(smem_address(bar)),
      "r"(cta)
      : "memory");
#else
  (void)bar;
  (void)cta;
#endif
}

#if __CUDA_ARCH__ >= 900
CUPRIC_TD void mbar_expect_bytes(u64* bar, int bytes) {
  asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.expect_tx.shared.b64 state, [%0], %1;\n}" ::"r"(smem_address(bar)),
               "r"(bytes)
               : "memory");
}

/// One box of the map (128 bytes of columns x R rows of the last two dimensions, one index of the others)
/// into shared memory at dst, completing on bar. c[0] is the column, c[1] the row, c[2...] the
/// leading dimensions from the innermost out (TMA's order).
template <int ND>
CUPRIC_TD void tma_load(void* dst, const TensorMap& m, const int (&c)[ND], u64* bar) {
  const unsigned long long map = reinterpret_cast<unsigned long long>(&m);
  const unsigned d = smem_address(dst), b = smem_address(bar);
  if constexpr (ND == 2)
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(
            d),
        "l"(map), "r"(b), "r"(c[0]), "r"(c[1])
        : "memory");
  if constexpr (ND == 3)
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], "
        "[%2];" ::"r"(d),
        "l"(map), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2])
        : "memory");
  if constexpr (ND == 4)
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], "
        "[%2];" ::"r"(d),
        "l"(map), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3])
        : "memory");
  if constexpr (ND == 5)
    asm volatile(
        "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6, "
        "%7}], [%2];" ::"r"(d),
        "l"(map), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4])
        : "memory");
}
/// tma_load's box into shared memory at dst of every CTA of the cluster in `ctas` (a bit per rank),
/// each completing on its own barrier at bar's place (cluster multicast).
template <int ND>
CUPRIC_TD void tma_load_multicast(void* dst, const TensorMap& m, const int (&c)[ND], u64* bar, unsigned short ctas) {
  const unsigned long long map = reinterpret_cast<unsigned long long>(&m);
  const unsigned d = smem_address(dst), b = smem_address(bar);
#define CUPRIC_TMA_MC(DIMS) \
  "cp.async.bulk.tensor." DIMS ".shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
  if constexpr (ND == 2)
    asm volatile(CUPRIC_TMA_MC("2d") "[%0], [%1, {%4, %5}], [%2], %3;" ::"r"(d), "l"(map), "r"(b), "h"(ctas), "r"(c[0]),
                 "r"(c[1])
                 : "memory");
  if constexpr (ND == 3)
    asm volatile(CUPRIC_TMA_MC("3d") "[%0], [%1, {%4, %5, %6}], [%2], %3;" ::"r"(d), "l"(map), "r"(b), "h"(ctas),
                 "r"(c[0]), "r"(c[1]), "r"(c[2])
                 : "memory");
  if constexpr (ND == 4)
    asm volatile(CUPRIC_TMA_MC("4d") "[%0], [%1, {%4, %5, %6, %7}], [%2], %3;" ::"r"(d), "l"(map), "r"(b), "h"(ctas),
                 "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3])
                 : "memory");
  if constexpr (ND == 5)
    asm volatile(CUPRIC_TMA_MC("5d") "[%0], [%1, {%4, %5, %6, %7, %8}], [%2], %3;" ::"r"(d), "l"(map), "r"(b),
                 "h"(ctas), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4])
                 : "memory");
#undef CUPRIC_TMA_MC
}
/// The box of the map at coordinates c (as tma_load's) from shared memory at src, as a bulk group of
/// this thread (TMA drops what falls outside the array).
template <int ND>
CUPRIC_TD void tma_store(const TensorMap& m, const void* src, const int (&c)[ND]) {
  const unsigned long long map = reinterpret_cast<unsigned long long>(&m);
  const unsigned s = smem_address(src);
  if constexpr (ND == 2)
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(map), "r"(s),
                 "r"(c[0]), "r"(c[1])
                 : "memory");
  if constexpr (ND == 3)
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(map), "r"(s),
                 "r"(c[0]), "r"(c[1]), "r"(c[2])
                 : "memory");
  if constexpr (ND == 4)
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];" ::"l"(map),
                 "r"(s), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3])
                 : "memory");
  if constexpr (ND == 5)
    asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];" ::"l"(map),
                 "r"(s), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4])
                 : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
/// Waits until this thread's bulk stores have read their shared memory (not until they are written).
CUPRIC_TD void tma_store_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
#endif

/// store_staged (memory.h) with a TMA map of the array (boxes of the tile's rows × 128 bytes, the
/// swizzle stage_chunk writes): each chunk leaves shared memory as one bulk tensor store issued by
/// thread 0 — ragged windows too (TMA drops what lies outside). Thread 0 waits for the store of
/// chunk i - 2 to have read its buffer before the barrier after which chunk i is written there.
/// Without a map (a view TMA cannot describe, or before sm_90): memory.h's store_staged.
template <class Sh, class T, int ND, class L>
CUPRIC_TD void store_staged(const Block& b, const Tile<T, Sh::size, L>& in, const ArrayRef<T, ND>& a,
                            const i64 (&start)[ND], const TensorMap& m) {
#if __CUDA_ARCH__ >= 900
  constexpr int kCols = 128 / static_cast<int>(sizeof(T));
  static_assert(ND <= 5, "cupric.tile: a TMA store of more than 5 dimensions");
  const bool tma = tma_ready(m);
  int c[ND];
  CUPRIC_TILE_UNROLL
  for (int d = 1; d < ND; ++d) c[d] = static_cast<int>(start[ND - 1 - d]);
  store_staged_chunks<Sh>(
      b, align_smem<1024>(b.smem), in, a, start, tma,
      [&] {
        if (!tma) return;
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the writes, visible to TMA
        if (b.tid == 0) tma_store_wait_read();                        // chunk - 1's store has read the other buffer
      },
      [&](int chunk, unsigned char* buf) {
        if (b.tid == 0) {
          c[0] = static_cast<int>(start[ND - 1]) + chunk * kCols;
          tma_store<ND>(m, buf, c);
        }
      });
#else
  (void)m;
  store_staged<Sh>(b, in, a, start);
#endif
}

/// Barrier 0 for every thread of the block, reached from different places by the tile code's threads
/// (tma_ring_begin) and a producer warpgroup's (tma_ring_join): the non-.aligned form. __syncthreads
/// (bar.sync 0 = barrier.sync.aligned 0) requires the whole block at one instruction
/// (compute-sanitizer's synccheck reported 1,152 errors there).
CUPRIC_TD void all_threads_barrier() {
#ifdef CUPRIC_TILE_DEVICE
  asm volatile("barrier.sync 0;" ::: "memory");
#endif
}

/// The barriers of a ring of Stages stages (full ones, then empty ones), in shared memory.
template <int Stages>
struct TmaRing {
  u64* bars;
  bool tma;       // every operand's map made: TMA copies, else cp.async
  int peers = 1;  // the CTAs whose rings are filled together (a cluster of 2: shared operands multicast)
  int rank = 0;   // this CTA's in them
  CUPRIC_TD u64* full(int s) const { return bars + s; }
  CUPRIC_TD u64* empty(int s) const { return bars + Stages + s; }
  /// Every warp of the tile code releases stage s (lane 0 for the warp): in every CTA of the pair,
  /// whose producers may write this CTA's stage (multicast).
  CUPRIC_TD void release(int s) const {
    mbar_arrive(empty(s));
    if (peers > 1) mbar_arrive_cluster(empty(s), rank ^ 1);
  }
};

/// The ring's barriers set up, then visible: to the block (barrier 0), or where the ring's CTAs
/// pair, to both CTAs of the cluster (the other's producer multicasts into this CTA's stages and
/// its warps release them here).
template <int Stages>
CUPRIC_TD void ring_ready(const TmaRing<Stages>& r) {
  if (r.peers > 1) cluster_barrier();
  else all_threads_barrier();
}

/// Sets up the barriers at `bars` (8-byte aligned shared memory) before the loop (with a producer
/// warpgroup: which waits at the same barrier in tma_ring_join). Paired (the emitter found an
/// operand every CTA of a pair along grid x loads the same tiles of): where the launch made
/// clusters of 2, each stage's empty barrier counts the warps of both CTAs, whose producers each
/// copy half of such a tile into both.
template <int Stages, bool Paired = false>
CUPRIC_TD TmaRing<Stages> tma_ring_begin(const Block& b, unsigned char* bars, bool tma) {
  TmaRing<Stages> r{reinterpret_cast<u64*>(bars), tma};
  if constexpr (Paired) cluster_place(r.peers, r.rank);
  if (b.tid == 0) {
    CUPRIC_TILE_UNROLL
    for (int s = 0; s < Stages; ++s) {
      mbar_init(r.full(s), tma ? 1 : kThreads);
      mbar_init(r.empty(s), kThreads / 32 * r.peers);
    }
#if __CUDA_ARCH__ >= 900
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
  }
#if __CUDA_ARCH__ >= 900
  // the ring was scratch of ordinary stores before the loop; TMA (the async proxy) writes it next
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
  ring_ready(r);
  return r;
}

/// Before filling stage `fill % Stages` with the tiles of iteration `fill`: waits until every warp
/// has released what the stage held before (iteration fill - Stages), and with TMA announces the
/// stage's bytes on its full barrier. The copying threads: thread 0 with TMA, all without.
template <int Stages>
CUPRIC_TD void tma_fill_begin(const Block& b, const TmaRing<Stages>& r, long long fill, int bytes) {
  if (r.tma && b.tid != kTmaIssuer) return;
  const int s = static_cast<int>(fill % Stages);
  if (fill >= Stages) mbar_wait(r.empty(s), static_cast<int>((fill / Stages + 1) & 1));
#if __CUDA_ARCH__ >= 900
  if (r.tma) mbar_expect_bytes(r.full(s), bytes);
#else
  (void)bytes;
#endif
}

/// Starts copying the (R, C) tile of array `a` at element `start` into panels at dst (as
/// copy_async): by TMA from thread 0 (a box per 128 bytes of a row), else by every thread with cp.async.
/// Shared (every CTA of a pair copies the same tile here: the emitter's proof): where the ring's
/// CTAs pair, each issues every other box, multicast to both.
template <int R, int C, bool Shared = false, int Stages, class T, int ND>
CUPRIC_TD void tma_copy(const Block& b, const TmaRing<Stages>& r, long long fill, unsigned char* dst,
                        const TensorMap& m, const ArrayRef<T, ND>& a, const i64 (&start)[ND]) {
#if __CUDA_ARCH__ >= 900
  if (r.tma) {
    if (b.tid != kTmaIssuer) return;
    static_assert(ND <= 5, "cupric.tile: TMA copies tiles of arrays of at most 5 dimensions");
    int c[ND];
    CUPRIC_TILE_UNROLL
    for (int d = 1; d < ND; ++d) c[d] = static_cast<int>(start[ND - 1 - d]);
    constexpr int EP = 128 / static_cast<int>(sizeof(T));  // a box is 128 bytes wide
    static_assert(!Shared || (C / EP) % 2 == 0, "cupric.tile: a shared tile of an odd count of boxes");
    CUPRIC_TILE_UNROLL
    for (int p = 0; p < C / EP; ++p) {
      c[0] = static_cast<int>(start[ND - 1]) + EP * p;
      u64* const full = r.full(static_cast<int>(fill % Stages));
      if (Shared && r.peers > 1) {
        if (p % 2 == r.rank) tma_load_multicast<ND>(dst + p * (R * 128), m, c, full, 3);
      } else {
        tma_load<ND>(dst + p * (R * 128), m, c, full);
      }
    }
    return;
  }
#endif
  (void)r;
  (void)fill;
  (void)m;
  // (a view TMA cannot describe, or no TMA: copy_async's edge path, one loop that is not unrolled —
  // the fast path's unrolled copies at each fill site were ~0.17 s of the matmul's cold compile)
  copy_async<R, C, false>(b, dst, a, start);
}

/// After a fill's copies: cp.async's group (every thread commits one per fill, TMA or not, so
/// that the wait below counts the same), and the warp together again after thread 0's copies
/// (the products' wgmma instructions are warp-aligned).
CUPRIC_TD void tma_fill_end() {
  cp_async_commit();
  __syncwarp();
}

/// Waits until stage `it % Stages` holds iteration it's tiles. Without TMA each thread first
/// waits for its own copies (all but the Ahead - 1 later fills' groups), makes them visible to the
/// tensor cores' proxy and arrives.
template <int Ahead, int Stages>
CUPRIC_TD void tma_stage_ready(const TmaRing<Stages>& r, long long it, long long first = 0) {
  const int s = static_cast<int>(it % Stages);
  if (r.tma && it == first) {
    // the loop-invariant operands the threads copied before the loop (attention's q: cp.async),
    // which the cp.async ring waits for with its first stage: landed, visible to the tensor cores,
    // every thread's part
    cp_async_wait<0>();
#if __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
    CUPRIC_TILE_SYNC();
  }
  if (!r.tma) {
    cp_async_wait<Ahead - 1>();
#if __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
    mbar_arrive(r.full(s));
  }
  mbar_wait(r.full(s), static_cast<int>((it / Stages) & 1));
}

/// After the products of iteration `it` (InFlight of them possibly still running): the stage of
/// iteration it - InFlight is read, and each warp releases it. Iterations count on across the
/// output tiles of a persistent kernel; `first` is this tile's first.
template <int InFlight, int Stages>
CUPRIC_TD void tma_stage_done(const Block& b, const TmaRing<Stages>& r, long long it, long long first = 0) {
  if (it - first < InFlight) return;
  __syncwarp();
  if (b.tid % 32 == 0) r.release(static_cast<int>((it - InFlight) % Stages));
}

/// After the loop (every fill was waited for): no copy or product left running; the barriers are
/// invalidated so that the ring's memory is plain scratch again. Joined: a producer warpgroup is
/// done with the barriers too — it meets the tile code at one block-wide barrier (tma_ring_leave)
/// first. Its last arrive comes before the tile code's last full stage by the barriers' own order;
/// the block-wide barrier also shows that order to tools that do not follow mbarriers. (A
/// persistent kernel's ring ends once, after every tile, without: a barrier after the producer's
/// loop over tiles makes ptxas spill the tile code.)
template <bool Joined = false, int Stages>
CUPRIC_TD void tma_ring_end(const Block& b, const TmaRing<Stages>& r) {
  if constexpr (Joined) {
    cp_async_wait<0>();
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    wgmma_wait<0>();
#endif
    all_threads_barrier();  // (it holds the tile code's threads too: staged_loop_end's barrier)
  } else {
    staged_loop_end();
  }
  // paired: the other CTA's warps have released their last stages here, and its producer has no
  // copy left into this CTA's ring (nor this one's into the other's), before the barriers go
  if (r.peers > 1) cluster_barrier();
  if (b.tid == 0) {
    CUPRIC_TILE_UNROLL
    for (int s = 0; s < 2 * Stages; ++s) mbar_inval(r.bars + s);
  }
  CUPRIC_TILE_SYNC();
}

/// After a persistent kernel's loop over one output tile's iterations [first, end): no product left
/// running, and the stages the loop did not release (its last InFlight) released, so that the
/// producer, already filling the next tile's, gets them back. The ring stays set up.
template <int InFlight, int Stages>
CUPRIC_TD void tma_tile_end(const Block& b, const TmaRing<Stages>& r, long long end, long long first) {
  cp_async_wait<0>();
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  wgmma_wait<0>();
#endif
  __syncwarp();
  for (long long it = end - InFlight > first ? end - InFlight : first; it < end; ++it)
    if (b.tid % 32 == 0) r.release(static_cast<int>(it % Stages));
  CUPRIC_TILE_SYNC();  // the epilogue's scratch: every thread is past the loop
}

/// A persistent kernel's output tiles: this block takes tiles blockIdx.x, + gridDim.x, ... of the
/// launch's grid (nblocks), each as the block it stands for (bid).
CUPRIC_TD bool next_tile(Block& b, long long t) {
  if (t >= b.nblocks[0] * b.nblocks[1] * b.nblocks[2]) return false;
  b.bid[0] = t % b.nblocks[0];
  b.bid[1] = (t / b.nblocks[0]) % b.nblocks[1];
  b.bid[2] = t / (b.nblocks[0] * b.nblocks[1]);
  return true;
}

/// Split K's work unit: part `split` of `parts` of an output tile's K loop; `tile` numbers the
/// launch's split tiles (its partial sums' slots and counter).
struct SplitUnit {
  long long tile = 0, split = 0, parts = 1;
};

/// Split K (a persistent kernel whose output tiles leave SMs idle: tile::split_plan on the host):
/// work units [0, whole) are output tiles 0 ... whole - 1; unit whole + i is part i % splits of
/// output tile whole + i / splits (the last wave's tiles, or all where they fill at most half the
/// SMs). The kernel's loop keeps only t and makes the unit where it is used (fewer registers live
/// across the products).
CUPRIC_TD SplitUnit split_unit(long long t, long long whole, long long splits) {
  if (t < whole) return SplitUnit{};
  return SplitUnit{(t - whole) / splits, (t - whole) % splits, splits};
}
CUPRIC_TD bool next_tile(Block& b, long long t, long long whole, long long splits) {
  return next_tile(b, t < whole ? t : whole + (t - whole) / splits);
}

/// Fewest iterations of the K loop a split is given (below, fewer splits run: the partial sums'
/// traffic would cost more than the products it spreads).
inline constexpr long long kSplitMinIterations = 8;

/// The iterations [lo, hi) of the loop lb, lb + step, ... < ub (step > 0) that unit u runs: equal
/// shares of at least kSplitMinIterations; parts past the count that gets work run none. Returns
/// that count (1: the loop is not split).
CUPRIC_TD long long split_range(long long lb, long long ub, long long step, const SplitUnit& u, long long& lo,
                                long long& hi) {
  const long long split = u.split;
  const long long n = ub > lb ? (ub - lb + step - 1) / step : 0;
  long long used = n / kSplitMinIterations;
  used = used < 1 ? 1 : (used > u.parts ? u.parts : used);
  const long long per = (n + used - 1) / used;
  const long long first = split * per < n ? split * per : n, last = (split + 1) * per < n ? (split + 1) * per : n;
  lo = lb + first * step;
  hi = last == n ? (ub > lb ? ub : lb) : lb + last * step;
  if (split >= used) hi = lo;
  return used;
}

/// Whether any of the tile code's threads passes true (a barrier of those threads, like
/// CUPRIC_TILE_SYNC, with an OR of `p`).
CUPRIC_TD bool tile_threads_any(bool p) {
#if CUPRIC_TILE_PRODUCERS > 0
  unsigned any;
  asm volatile(
      "{\n.reg .pred p, q;\nsetp.ne.u32 p, %1, 0;\nbar.red.or.pred q, 1, " CUPRIC_TILE_STR(CUPRIC_TILE_THREADS) ", p;\n"
      "selp.u32 %0, 1, 0, q;\n}"
      : "=r"(any)
      : "r"(static_cast<unsigned>(p))
      : "memory");
  return any != 0;
#else
  return __syncthreads_or(p) != 0;
#endif
}

/// The end of unit u's share of its tile's K loop (`used` of its parts run: split_range): each
/// part writes its partial accumulator to `partials` (slot tile × parts + split, Bytes each,
/// slot s of thread t at s * kThreads + t: coalesced), and the last to finish (a counter per split
/// tile, zeroed by the host) adds every part's partial in split order — the same sum whichever
/// finishes last — and returns true: it alone runs the epilogue. The others return false.
template <int Bytes, class T, int N, class L>
CUPRIC_TD bool split_combine(const Block& b, Tile<T, N, L>& acc, void* scratch, unsigned* counters, const SplitUnit& u,
                             long long used) {
  const long long split = u.split, tile = u.tile, splits = u.parts;
  static_assert(sizeof(T) == 4 && L::kSlots * kThreads * 4 == Bytes, "split K: an exact 32-bit accumulator");
  if (split >= used) return false;  // (its loop ran no iteration)
  if (used == 1) return true;
  constexpr long long per = Bytes / 4;
  T* const partials = static_cast<T*>(scratch);
  T* const mine = partials + (tile * splits + split) * per + b.tid;
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < L::kSlots; ++s) __stcg(mine + s * kThreads, acc.v[s]);
  __threadfence();     // the partial is visible before the counter says so,
  CUPRIC_TILE_SYNC();  // every thread's, before thread 0 counts this split
  bool last = false;
  if (b.tid == 0) last = atomicAdd(counters + tile, 1u) == static_cast<unsigned>(used - 1);
  // (the same answer in every thread; read from lane 0, so that ptxas sees a warp-uniform branch:
  // around the products' aligned instructions a divergent one cost the matmul ~160 bytes of spills)
  if (!__shfl_sync(0xffffffffu, tile_threads_any(last), 0)) return false;
  __threadfence();
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < L::kSlots; ++s) acc.v[s] = T(0);
  const T* from = partials + tile * splits * per + b.tid;
  CUPRIC_TILE_NO_UNROLL
  for (long long part = 0; part < used; ++part, from += per) {
    CUPRIC_TILE_UNROLL
    for (int s = 0; s < L::kSlots; ++s) acc.v[s] += __ldcg(from + s * kThreads);
  }
  return true;
}

/// The producer warpgroup's side of tma_ring_begin: the ring as the tile code's threads set it up
/// (it waits with them at the block-wide barrier after the barriers' initialisation).
template <int Stages, bool Paired = false>
CUPRIC_TD TmaRing<Stages> tma_ring_join(unsigned char* bars, bool tma) {
  TmaRing<Stages> r{reinterpret_cast<u64*>(bars), tma};
  if constexpr (Paired) cluster_place(r.peers, r.rank);
  ring_ready(r);  // every thread of the block (or the pair): the tile code's at tma_ring_begin, the producer's here
  return r;
}

/// The producer warpgroup's side of tma_ring_end<true>: done with the ring's barriers.
CUPRIC_TD void tma_ring_leave() { all_threads_barrier(); }

/// Register reallocation between the producer warpgroup (few: it only issues copies) and the tile
/// code's warpgroups (the accumulators), sm_90a; each warpgroup's threads all run it.
template <int Regs>
CUPRIC_TD void producer_registers() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Regs));
#endif
}
template <int Regs>
CUPRIC_TD void consumer_registers() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Regs));
#endif
}

}  // namespace cu::tile
#endif
