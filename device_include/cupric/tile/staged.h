// cupric/tile/staged.h — operands of tensor-core products that go global memory -> shared memory
// asynchronously (GPU). A K loop whose products read loads of the loop (a (M, K), b (K, N) or
// (N, K)) keeps a ring of stages in shared memory: the loads of later iterations are in flight
// (cp.async) while the products of this one run, which read their stage directly — wgmma on sm_90a
// (the accumulator of each warpgroup's 64 rows in registers; a from shared memory, or from
// registers when it was computed from an earlier product), ldmatrix + mma.sync elsewhere. The
// emitter (src/tile/emit_body.cpp, emit_staged_for) writes the loop; stage_products marks it.
//
// A stage holds each operand as Panels: the columns cut into panels of 128 bytes (64 16-bit values,
// 128 8-bit ones), each panel its R rows of 128 bytes one after the other, and in each row the eight
// 16-byte chunks permuted (chunk ^ row % 8): the 128-byte swizzle of wgmma's canonical layouts
// (K-major for a and a transposed b, MN-major for b), which also keeps the copies and ldmatrix free
// of bank conflicts. Panels start at 1024-byte boundaries. 8-bit floats (fp8) take K-major panels
// only (a and a transposed b: wgmma has no MN-major 8-bit operands).
#pragma once

#ifdef CUPRIC_TILE_DEVICE
namespace cu::tile {

/// Byte offset of chunk c (columns 8c ... 8c + 7) of row r in the panels of an (R, C) tile.
template <int R>
CUPRIC_TD int panel_offset(int r, int c) {
  return (c / 8) * (R * 128) + r * 128 + (((c % 8) ^ (r % 8)) * 16);
}

/// Bytes of an (R, C) operand's panels of S-byte values (C * S a multiple of 128).
template <int R, int C, int S = 2>
CUPRIC_TC int panel_bytes() {
  return R * C * S;
}

/// p rounded up to a multiple of N bytes (shared memory).
template <int N>
CUPRIC_TD unsigned char* align_smem(unsigned char* p) {
  return p + ((N - (smem_address(p) % N)) % N);
}

CUPRIC_TD void cp_async16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_address(dst)), "l"(src) : "memory");
}
CUPRIC_TD void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
CUPRIC_TD void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

/// Waits for the copies of all but the `Pending` most recent groups, then makes the stage they
/// filled visible to every thread of the block and to the tensor cores' (async) proxy.
template <int Pending>
CUPRIC_TD void stage_ready() {
  cp_async_wait<Pending>();
#if __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
  CUPRIC_TILE_SYNC();
}

/// Starts copying the (R, C) tile of the last two dimensions of array `a`, at element `start`
/// (the leading dimensions pick one matrix), into panels at dst. Out-of-bounds elements read 0.
/// A 16-byte chunk inside the array, contiguous and aligned, is copied by cp.async; the others (array
/// edges, odd strides or alignment) are read element by element and stored directly. Fast = false:
/// the edge path alone, for callers where the tile rarely takes this way (a TMA ring's fallback:
/// the unrolled fast path's code was a third of the matmul's cold compile).
template <int R, int C, bool Fast = true, class T, int ND>
CUPRIC_TD void copy_async(const Block& b, unsigned char* dst, const ArrayRef<T, ND>& a, const i64 (&start)[ND]) {
  constexpr int S = sizeof(T), EC = 16 / S;  // bytes a value, values a 16-byte chunk
  static_assert((S == 2 || S == 1) && C * S % 128 == 0 && ND >= 2,
                "cupric.tile: async operands are 16- or 8-bit, in panels of 128 bytes a row");
  constexpr int chunks = R * C / EC, per_thread = (chunks + kThreads - 1) / kThreads, DR = ND - 2, DC = ND - 1;
  bool lead_in = true;  // the leading indices inside the array
  i64 lead = 0;
  CUPRIC_TILE_UNROLL
  for (int d = 0; d < DR; ++d) {
    lead_in = lead_in && start[d] >= 0 && start[d] < a.shape[d];
    lead += start[d] * a.stride[d];
  }
  // the common case, tested once: the whole tile inside the array, rows contiguous and 16-byte aligned
  const bool whole = lead_in && start[DR] >= 0 && start[DR] + R <= a.shape[DR] && start[DC] >= 0 &&
                     start[DC] + C <= a.shape[DC] && a.stride[DC] == 1 && a.stride[DR] % EC == 0 && lead % EC == 0 &&
                     (reinterpret_cast<unsigned long long>(a.data) & 15) == 0;
  if (Fast && whole) {
    const T* base = a.data + lead + start[DR] * a.stride[DR] + start[DC];
    CUPRIC_TILE_UNROLL
    for (int j = 0; j < per_thread; ++j) {
      const int i = j * kThreads + b.tid;
      if (chunks % kThreads != 0 && i >= chunks) break;
      const int r = (i / 8) % R, c = (i / (8 * R)) * 8 + i % 8;
      cp_async16(dst + panel_offset<R>(r, c), base + r * a.stride[DR] + EC * c);
    }
    return;
  }
  // the edge path, not unrolled: its code once instead of per chunk (NVRTC time)
  CUPRIC_TILE_NO_UNROLL
  for (int j = 0; j < per_thread; ++j) {
    const int i = j * kThreads + b.tid;
    if (chunks % kThreads != 0 && i >= chunks) break;
    const int r = (i / 8) % R, c = (i / (8 * R)) * 8 + i % 8;
    const i64 gr = start[DR] + r, gc = start[DC] + static_cast<i64>(EC) * c;
    unsigned char* d = dst + panel_offset<R>(r, c);
    const T* src = a.data + lead + gr * a.stride[DR] + gc * a.stride[DC];
    const bool row_in = lead_in && gr >= 0 && gr < a.shape[DR];
    if (row_in && gc >= 0 && gc + EC <= a.shape[DC] && a.stride[DC] == 1 &&
        (reinterpret_cast<unsigned long long>(src) & 15) == 0) {
      cp_async16(d, src);
    } else {
      u32 w[4] = {0, 0, 0, 0};
      CUPRIC_TILE_UNROLL
      for (int e = 0; e < EC; ++e)
        if (row_in && gc + e >= 0 && gc + e < a.shape[DC])
          w[e * S / 4] |= static_cast<u32>(a.data[lead + gr * a.stride[DR] + (gc + e) * a.stride[DC]].bits)
                          << (8 * S * (e % (4 / S)));
      *reinterpret_cast<uint4*>(d) = make_uint4(w[0], w[1], w[2], w[3]);
    }
  }
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// wgmma.mma_async m64nNk16, float32 accumulators d[0 .. N/2), operands by descriptor; TB: b is
// MN-major (a (K, N) tile), else K-major (an (N, K) tile).
// The accumulator operands of wgmma m64nNk16 (N / 2 float32 registers d[0 .. N/2)): their
// place-holders in the instruction text and their constraints.
#define CUPRIC_D8(b)                                                                                          \
  "+f"(d[b]), "+f"(d[b + 1]), "+f"(d[b + 2]), "+f"(d[b + 3]), "+f"(d[b + 4]), "+f"(d[b + 5]), "+f"(d[b + 6]), \
      "+f"(d[b + 7])
#define CUPRIC_D32(b) CUPRIC_D8(b), CUPRIC_D8(b + 8), CUPRIC_D8(b + 16), CUPRIC_D8(b + 24)
#define CUPRIC_WGMMA_REGS_64                                               \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define CUPRIC_WGMMA_D_64 CUPRIC_D32(0)
#define CUPRIC_WGMMA_SS_TAIL_64 "}, %32, %33, p, 1, 1, 0, %35;\n}\n"
#define CUPRIC_WGMMA_SS_PRED_64 "%34"
#define CUPRIC_WGMMA_RS_TAIL_64 "}, {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
#define CUPRIC_WGMMA_RS_PRED_64 "%37"
#define CUPRIC_WGMMA_REGS_128                                                        \
  CUPRIC_WGMMA_REGS_64                                                               \
  ", "                                                                               \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define CUPRIC_WGMMA_D_128 CUPRIC_D32(0), CUPRIC_D32(32)
#define CUPRIC_WGMMA_SS_TAIL_128 "}, %64, %65, p, 1, 1, 0, %67;\n}\n"
#define CUPRIC_WGMMA_SS_PRED_128 "%66"
#define CUPRIC_WGMMA_RS_TAIL_128 "}, {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
#define CUPRIC_WGMMA_RS_PRED_128 "%69"
#define CUPRIC_WGMMA_REGS_192                                                        \
  CUPRIC_WGMMA_REGS_128                                                              \
  ", "                                                                               \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define CUPRIC_WGMMA_D_192 CUPRIC_D32(0), CUPRIC_D32(32), CUPRIC_D32(64)
#define CUPRIC_WGMMA_SS_TAIL_192 "}, %96, %97, p, 1, 1, 0, %99;\n}\n"
#define CUPRIC_WGMMA_SS_PRED_192 "%98"
#define CUPRIC_WGMMA_RS_TAIL_192 "}, {%96, %97, %98, %99}, %100, p, 1, 1, %102;\n}\n"
#define CUPRIC_WGMMA_RS_PRED_192 "%101"
#define CUPRIC_WGMMA_REGS_256                                                                    \
  CUPRIC_WGMMA_REGS_192                                                                          \
  ", "                                                                                           \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define CUPRIC_WGMMA_D_256 CUPRIC_D32(0), CUPRIC_D32(32), CUPRIC_D32(64), CUPRIC_D32(96)
#define CUPRIC_WGMMA_SS_TAIL_256 "}, %128, %129, p, 1, 1, 0, %131;\n}\n"
#define CUPRIC_WGMMA_SS_PRED_256 "%130"
#define CUPRIC_WGMMA_RS_TAIL_256 "}, {%128, %129, %130, %131}, %132, p, 1, 1, %134;\n}\n"
#define CUPRIC_WGMMA_RS_PRED_256 "%133"
// wgmma with a and b by descriptor (SS) and with a from registers (RS), for a type ("bf16", "f16")
#define CUPRIC_WGMMA_SS(N, T)                                               \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " CUPRIC_WGMMA_SS_PRED_##N \
               ", 0;\n"                                                     \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." T "." T    \
               " {" CUPRIC_WGMMA_REGS_##N CUPRIC_WGMMA_SS_TAIL_##N          \
               : CUPRIC_WGMMA_D_##N                                         \
               : "l"(da), "l"(db), "r"(1), "n"(TB))
#define CUPRIC_WGMMA_RS(N, T)                                               \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " CUPRIC_WGMMA_RS_PRED_##N \
               ", 0;\n"                                                     \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." T "." T    \
               " {" CUPRIC_WGMMA_REGS_##N CUPRIC_WGMMA_RS_TAIL_##N          \
               : CUPRIC_WGMMA_D_##N                                         \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1), "n"(TB))

// fp8 (k32): both operands K-major, by descriptor; no transpose immediates
#define CUPRIC_WGMMA_F8_TAIL_64 "}, %32, %33, p, 1, 1;\n}\n"
#define CUPRIC_WGMMA_F8_TAIL_128 "}, %64, %65, p, 1, 1;\n}\n"
#define CUPRIC_WGMMA_F8_TAIL_192 "}, %96, %97, p, 1, 1;\n}\n"
#define CUPRIC_WGMMA_F8_TAIL_256 "}, %128, %129, p, 1, 1;\n}\n"
#define CUPRIC_WGMMA_F8(N, T)                                               \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " CUPRIC_WGMMA_SS_PRED_##N \
               ", 0;\n"                                                     \
               "wgmma.mma_async.sync.aligned.m64n" #N "k32.f32." T "." T    \
               " {" CUPRIC_WGMMA_REGS_##N CUPRIC_WGMMA_F8_TAIL_##N          \
               : CUPRIC_WGMMA_D_##N                                         \
               : "l"(da), "l"(db), "r"(1))

/// wgmma of 8-bit floats (e4m3 or e5m2) with a and b K-major by descriptor, k32.
template <int N, class TI>
CUPRIC_TD void wgmma_f8(float* d, u64 da, u64 db) {
  static_assert(N == 64 || N == 128 || N == 192 || N == 256, "cupric.tile: wgmma widths are 64, 128, 192, 256");
  constexpr bool E4 = same_v<TI, f8e4m3>;
  if constexpr (N == 64) {
    if constexpr (E4) CUPRIC_WGMMA_F8(64, "e4m3");
    else CUPRIC_WGMMA_F8(64, "e5m2");
  }
  if constexpr (N == 128) {
    if constexpr (E4) CUPRIC_WGMMA_F8(128, "e4m3");
    else CUPRIC_WGMMA_F8(128, "e5m2");
  }
  if constexpr (N == 192) {
    if constexpr (E4) CUPRIC_WGMMA_F8(192, "e4m3");
    else CUPRIC_WGMMA_F8(192, "e5m2");
  }
  if constexpr (N == 256) {
    if constexpr (E4) CUPRIC_WGMMA_F8(256, "e4m3");
    else CUPRIC_WGMMA_F8(256, "e5m2");
  }
}

/// wgmma with a from registers: a[0..3] the m16k16 fragment of this warp's 16 rows (mma.sync's).
template <int N, int TB, class TI>
CUPRIC_TD void wgmma_rs(float* d, const u32 (&a)[4], u64 db) {
  static_assert(N == 64 || N == 128 || N == 192 || N == 256, "cupric.tile: wgmma widths are 64, 128, 192, 256");
  constexpr bool B = same_v<TI, bf16>;
  if constexpr (N == 64) {
    if constexpr (B) CUPRIC_WGMMA_RS(64, "bf16");
    else CUPRIC_WGMMA_RS(64, "f16");
  }
  if constexpr (N == 128) {
    if constexpr (B) CUPRIC_WGMMA_RS(128, "bf16");
    else CUPRIC_WGMMA_RS(128, "f16");
  }
  if constexpr (N == 192) {
    if constexpr (B) CUPRIC_WGMMA_RS(192, "bf16");
    else CUPRIC_WGMMA_RS(192, "f16");
  }
  if constexpr (N == 256) {
    if constexpr (B) CUPRIC_WGMMA_RS(256, "bf16");
    else CUPRIC_WGMMA_RS(256, "f16");
  }
}

/// wgmma with a and b by shared-memory descriptor.
template <int N, int TB, class TI>
CUPRIC_TD void wgmma(float* d, u64 da, u64 db) {
  static_assert(N == 64 || N == 128 || N == 192 || N == 256, "cupric.tile: wgmma widths are 64, 128, 192, 256");
  constexpr bool B = same_v<TI, bf16>;
  if constexpr (N == 64) {
    if constexpr (B) CUPRIC_WGMMA_SS(64, "bf16");
    else CUPRIC_WGMMA_SS(64, "f16");
  }
  if constexpr (N == 128) {
    if constexpr (B) CUPRIC_WGMMA_SS(128, "bf16");
    else CUPRIC_WGMMA_SS(128, "f16");
  }
  if constexpr (N == 192) {
    if constexpr (B) CUPRIC_WGMMA_SS(192, "bf16");
    else CUPRIC_WGMMA_SS(192, "f16");
  }
  if constexpr (N == 256) {
    if constexpr (B) CUPRIC_WGMMA_SS(256, "bf16");
    else CUPRIC_WGMMA_SS(256, "f16");
  }
}

// b as (K, N) panels: the leading byte offset steps from one 64-column panel to the next (K * 128
// bytes), the stride byte offset from one group of 8 rows to the next (1024)
#ifndef CUPRIC_WGMMA_B_LEAD
#define CUPRIC_WGMMA_B_LEAD (K * 128)
#define CUPRIC_WGMMA_B_STRIDE 1024
#endif

/// Waits until at most N groups of this warpgroup's wgmmas are in flight.
template <int N>
CUPRIC_TD void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

/// A shared-memory matrix descriptor with the 128-byte swizzle: start address, the two byte
/// strides (leading, stride dimension), all in 16-byte units.
CUPRIC_TD u64 wgmma_desc(const void* p, u32 lead, u32 stride) {
  return static_cast<u64>((smem_address(p) & 0x3FFFF) >> 4) | (static_cast<u64>(lead >> 4) << 16) |
         (static_cast<u64>(stride >> 4) << 32) | (1ULL << 62);
}
#endif

/// The m16k16 fragment (mma.sync's a registers) of columns k0 ... k0 + 15 of this warp's 16 rows of
/// a 16-bit tile in the layout MmaLayout<M, K, warps, 1> (an accumulator's, cast).
template <class TI, int S, class L>
CUPRIC_TD void a_fragment(u32 (&af)[4], const Tile<TI, S, L>& a, int k0) {
  const int c = k0 / 8;  // the fragment's first 8-column block: slots 4c ... 4c + 7
  CUPRIC_TILE_UNROLL
  for (int i = 0; i < 4; ++i)
    af[i] = static_cast<u32>(a.v[4 * c + 2 * i].bits) | (static_cast<u32>(a.v[4 * c + 2 * i + 1].bits) << 16);
}

template <class X>
inline constexpr bool is_panels_v = same_v<X, const unsigned char*> || same_v<X, unsigned char*>;

/// A register operand of a staged product as its k16 fragments (this warp's 16 rows, K columns),
/// made ahead (make_fragments) and kept by the caller: a product left running past its call
/// (a deferred product, emit_schedule.cpp) still reads them, so they must outlive the call.
template <int K>
struct AFragments {
  u32 r[K / 16][4];
};
template <class X>
inline constexpr bool is_fragments_v = false;
template <int K>
inline constexpr bool is_fragments_v<AFragments<K>> = true;

template <int K>
CUPRIC_TD void a_fragment(u32 (&af)[4], const AFragments<K>& a, int k0) {
  CUPRIC_TILE_UNROLL
  for (int i = 0; i < 4; ++i) af[i] = a.r[k0 / 16][i];
}

/// The fragments of a float32 tile's values converted to TI (16-bit): a deferred product's a, made
/// where the product is issued from the float32 values its loop carries (emit_overlap_mma).
template <class TI, int K, int S, class L>
CUPRIC_TD void make_fragments(AFragments<K>& out, const Tile<float, S, L>& a) {
  static_assert(is_mma_layout_v<L> && L::kWN == 1 && L::TM == 1 && L::kN == K,
                "cupric.tile: a register operand of a staged product is in the layout of an accumulator of its rows");
  CUPRIC_TILE_UNROLL
  for (int k = 0; k < K / 16; ++k) CUPRIC_TILE_UNROLL
  for (int i = 0; i < 4; ++i) {  // (a_fragment's slots: 8k + 2i and the next)
    const int s = 8 * k + 2 * i;
    out.r[k][i] = static_cast<u32>(convert<TI>(a.v[s]).bits) | (static_cast<u32>(convert<TI>(a.v[s + 1]).bits) << 16);
  }
}

/// Orders the registers of a tile (or fragments) after the wgmma wait before it: NVVM may not move
/// their reads (or writes) above it — an empty asm that reads and writes each (no instruction).
template <int S, class L>
CUPRIC_TD void fence_registers(Tile<float, S, L>& t) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  CUPRIC_TILE_UNROLL
  for (int s = 0; s < L::kSlots; ++s) asm volatile("" : "+f"(t.v[s])::"memory");
#else
  (void)t;
#endif
}
template <int K>
CUPRIC_TD void fence_registers(AFragments<K>& a) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  CUPRIC_TILE_UNROLL
  for (int k = 0; k < K / 16; ++k) CUPRIC_TILE_UNROLL
  for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(a.r[k][i])::"memory");
#else
  (void)a;
#endif
}

/// Two 8-bit floats at columns k, k + 1 (k even) of row r of K-major panels of R rows, as the f16x2
/// register of an m16n8k16 fragment (exact: every e4m3 and e5m2 value is a float16).
template <class TI, int R>
CUPRIC_TD u32 f8_pair_f16x2(const unsigned char* panels, int r, int k) {
  const unsigned char* p = panels + panel_offset<R>(r, k / 16) + k % 16;
  return static_cast<u32>(convert<f16>(TI{p[0]}).bits) | (static_cast<u32>(convert<f16>(TI{p[1]}).bits) << 16);
}

/// out = acc + a @ b with b (K, N) (BT: (N, K)) in shared memory as panels (copy_async), a either
/// panels too (a pointer) or registers (a 16-bit tile in the layout MmaLayout<M, K, warps, 1>, e.g.
/// attention's probabilities); 16-bit inputs, float32 accumulation. 8-bit floats (fp8): a and b
/// both K-major panels (BT), k32 wgmma on sm_90a; elsewhere their values widened to float16
/// fragments (exact) for mma.sync. The accumulator's layout gives
/// each warp 16 whole rows (MmaLayout<M, N, warps, 1>), which is wgmma's: warpgroup g holds rows
/// 64g ... 64g + 63. InFlight (wgmma): how many products may still run when it returns (1: the
/// previous call's are done, this one's may not be — the loop refills a stage two iterations old
/// and waits for all after the loop); ldmatrix + mma.sync where wgmma is not available.
/// Ping-pong (Turns, wgmma only): the warpgroups take turns to issue their products — a turn
/// passes from warpgroup w to w + 1 (mod their number, at most 3) by named barrier 2 + w (0 is
/// __syncthreads, 1 the tile code's CUPRIC_TILE_SYNC), so the tensor cores run one's products while
/// the others do the work between them. turns_begin / turns_end bracket the loop: the first turn is
/// the first warpgroup's, and it takes back the turn the last one passes on, so every barrier is
/// balanced. Turns is kTurn (wait for the turn, issue, pass it on), or for two products issued in
/// one turn kTurnWait on the first and kTurnPass on the second.
inline constexpr int kTurnWait = 1, kTurnPass = 2, kTurn = 3;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// (barrier numbers as immediates: ptxas then counts the barriers a kernel uses)
template <bool Arrive>
CUPRIC_TD void turn_barrier(int warpgroup) {
  if (warpgroup == 0) {
    if constexpr (Arrive) asm volatile("bar.arrive 2, 256;" ::: "memory");
    else asm volatile("bar.sync 2, 256;" ::: "memory");
  } else if (warpgroup == 1) {
    if constexpr (Arrive) asm volatile("bar.arrive 3, 256;" ::: "memory");
    else asm volatile("bar.sync 3, 256;" ::: "memory");
  } else if constexpr (kThreads / 128 > 2) {
    if constexpr (Arrive) asm volatile("bar.arrive 4, 256;" ::: "memory");
    else asm volatile("bar.sync 4, 256;" ::: "memory");
  }
}
CUPRIC_TD void turn_wait(int warpgroup) { turn_barrier<false>(warpgroup); }
CUPRIC_TD void turn_pass(int warpgroup) { turn_barrier<true>((warpgroup + 1) % (kThreads / 128)); }
// the barrier's number in a register: no branch between products issued and their wait (at a
// branch's join ptxas waits for every product in flight)
CUPRIC_TD void turn_pass_now(int warpgroup) {
  asm volatile("bar.arrive %0, 256;" ::"r"(2 + (warpgroup + 1) % (kThreads / 128)) : "memory");
}
#endif
CUPRIC_TD void turns_begin(const Block& b) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if (b.tid / 128 == kThreads / 128 - 1) turn_pass(b.tid / 128);
#else
  (void)b;
#endif
}
CUPRIC_TD void turns_end(const Block& b) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if (b.tid / 128 == 0) turn_wait(0);
#else
  (void)b;
#endif
}

template <int M, int K, int N, bool BT, int InFlight, class TI, int Turns = 0, class L, class AOp>
CUPRIC_TD void mma_staged(const Block& b, Tile<float, M * N, L>& out, const AOp& a, const unsigned char* sb,
                          const Tile<float, M * N, L>& acc) {
  static_assert(is_mma_layout_v<L> && L::kWN == 1 && L::TM == 1 && L::kM == M && L::kN == N && M == 16 * L::kWM,
                "cupric.tile: a staged product keeps 16 rows of its accumulator per warp");
  constexpr int S = sizeof(TI), EP = 128 / S, KS = 32 / S;  // bytes a value, values a panel row, k a wgmma
  static_assert(K % KS == 0 && N % 64 == 0, "cupric.tile: staged product shape");
  constexpr bool APanels = is_panels_v<AOp>, AFrags = is_fragments_v<AOp>;
  static_assert(S == 2 || (S == 1 && BT && APanels && K % EP == 0),
                "cupric.tile: 8-bit products take a (M, K) and b (N, K) from panels, K a multiple of 128");
  if constexpr (!APanels && !AFrags) {
    using LA = typename AOp::layout;
    static_assert(is_mma_layout_v<LA> && LA::kWN == 1 && LA::TM == 1 && LA::kM == M && LA::kN == K,
                  "cupric.tile: a register operand of a staged product is in the layout of an accumulator of its rows");
  }
  if (&out != &acc) {
    CUPRIC_TILE_UNROLL
    for (int s = 0; s < L::kSlots; ++s) out.v[s] = acc.v[s];
  }
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(M % 64 == 0 && N <= 256, "cupric.tile: wgmma takes 64-row warpgroups and at most 256 columns");
  const int wg = b.tid / 128;
  // a from registers: every k16 fragment made before the fence, so that no register an issued
  // wgmma reads is written while it runs (else ptxas waits before each one: C7519); given as
  // fragments, the caller's (they outlive a product left running)
  u32 afs[APanels || AFrags ? 1 : K / 16][4];
  if constexpr (!APanels && !AFrags) {
    CUPRIC_TILE_UNROLL
    for (int k0 = 0; k0 < K; k0 += 16) a_fragment(afs[k0 / 16], a, k0);
  }
  static_assert(!Turns || (kThreads % 128 == 0 && kThreads >= 256 && kThreads <= 384),
                "cupric.tile: turns are between 2 or 3 warpgroups");
  if constexpr ((Turns & kTurnWait) != 0) turn_wait(wg);
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  CUPRIC_TILE_UNROLL
  for (int k0 = 0; k0 < K; k0 += KS) {
    u64 db;
    if constexpr (BT) {  // (N, K): K-major panels of N rows
      db = wgmma_desc(sb + (k0 / EP) * (N * 128) + (k0 % EP) * S, 16, 1024);
    } else {  // (K, N): MN-major panels of K rows; 8-row groups 1024 bytes apart, panels K * 128
      db = wgmma_desc(sb + k0 * 128, CUPRIC_WGMMA_B_LEAD, CUPRIC_WGMMA_B_STRIDE);
    }
    if constexpr (APanels) {
      // a: K-major panels of M rows; this warpgroup's 64 rows, 32 bytes per k step inside a panel
      const u64 da = wgmma_desc(a + (k0 / EP) * (M * 128) + wg * 64 * 128 + (k0 % EP) * S, 16, 1024);
      if constexpr (S == 1) wgmma_f8<N, TI>(out.v, da, db);
      else wgmma<N, BT ? 0 : 1, TI>(out.v, da, db);
    } else if constexpr (AFrags) {
      wgmma_rs<N, BT ? 0 : 1, TI>(out.v, a.r[k0 / 16], db);
    } else {
      wgmma_rs<N, BT ? 0 : 1, TI>(out.v, afs[k0 / 16], db);
    }
  }
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  if constexpr (Turns == kTurnPass) turn_pass_now(wg);
  else if constexpr ((Turns & kTurnPass) != 0) turn_pass(wg);
  wgmma_wait<InFlight>();
#else
  constexpr int TN = L::TN;
  const int warp = b.tid / 32, lane = b.tid % 32, m0 = warp * 16;
  if constexpr (S == 1) {  // fp8: each fragment register two values widened to float16
    const int g = lane / 4, q = lane % 4;
    CUPRIC_TILE_UNROLL
    for (int k0 = 0; k0 < K; k0 += 16) {
      const int k = k0 + 2 * q;
      const u32 af[4] = {f8_pair_f16x2<TI, M>(a, m0 + g, k), f8_pair_f16x2<TI, M>(a, m0 + g + 8, k),
                         f8_pair_f16x2<TI, M>(a, m0 + g, k + 8), f8_pair_f16x2<TI, M>(a, m0 + g + 8, k + 8)};
      CUPRIC_TILE_UNROLL
      for (int tn = 0; tn < TN; ++tn) {
        const u32 bf[2] = {f8_pair_f16x2<TI, N>(sb, tn * 8 + g, k), f8_pair_f16x2<TI, N>(sb, tn * 8 + g, k + 8)};
        mma_m16n8k16<f16>(out.v + tn * 4, af, bf);
      }
    }
    return;
  }
  CUPRIC_TILE_UNROLL
  for (int k0 = 0; k0 < K; k0 += 16) {
    u32 af[4], bf[TN][2];
    if constexpr (APanels)
      ldmatrix_x4(af, reinterpret_cast<const u16*>(a + panel_offset<M>(m0 + lane % 16, k0 / 8 + lane / 16)));
    else a_fragment(af, a, k0);
    CUPRIC_TILE_UNROLL
    for (int tn = 0; tn < TN; tn += 2) {
      if constexpr (BT) {  // lane l: row 8 tn + l % 8 (+ 8 for l >= 16), chunk k0 / 8 (+ 1 for l % 16 >= 8)
        u32 r[4];
        ldmatrix_x4(r, reinterpret_cast<const u16*>(
                           sb + panel_offset<N>(tn * 8 + (lane / 16) * 8 + lane % 8, k0 / 8 + (lane / 8) % 2)));
        bf[tn][0] = r[0];
        bf[tn][1] = r[1];
        bf[tn + 1][0] = r[2];
        bf[tn + 1][1] = r[3];
      } else {  // lane l: row k0 + l % 16, chunk tn (+ 1 for l >= 16)
        ldmatrix_x4_trans(bf[tn][0], bf[tn][1], bf[tn + 1][0], bf[tn + 1][1],
                          reinterpret_cast<const u16*>(sb + panel_offset<K>(k0 + lane % 16, tn + lane / 16)));
      }
    }
    CUPRIC_TILE_UNROLL
    for (int tn = 0; tn < TN; ++tn) mma_m16n8k16<TI>(out.v + tn * 4, af, bf[tn]);
  }
#endif
}

/// Before a deferred product's accumulator is read: the product is done, and neither its
/// accumulator's reads nor its a fragments' next writes move above the wait (fence_registers).
template <int S, class L, int K>
CUPRIC_TD void products_done(Tile<float, S, L>& acc, AFragments<K>& a) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  wgmma_wait<0>();
#endif
  fence_registers(acc);
  fence_registers(a);
}

/// After a staged loop: no copy and (wgmma) no product is left running, and the ring (the shared
/// scratch) is free for the ops that follow.
CUPRIC_TD void staged_loop_end() {
  cp_async_wait<0>();
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  wgmma_wait<0>();
#endif
  CUPRIC_TILE_SYNC();
}

}  // namespace cu::tile
#endif
