// passes.hpp — IR-to-IR passes run between the frontend and the emitters; emit.cpp lists them as
// the tile compiler's named stages.
#pragma once

#include <optional>
#include <vector>

#include "cupric/tile_compiler/ir.hpp"

namespace cupric::tile {

/// Whether an op only computes its results from its operands (no memory reads, side effects or
/// control flow): it may be merged, dropped when unused, or computed again.
bool is_pure(const Op& op);

/// Whether an op itself writes an array (store, store_offset, scatter, atomic); ops with regions
/// (loops, ifs) answer false: their bodies are the callers' to look into.
bool writes_memory(const Op& op);

/// Whether an op, or an op of its regions, reads value v.
bool reads_value(const Op& op, int v);

/// Folds elementwise ops on constant scalars into constants, with the array core's own ufunc loops
/// (so that folding gives exactly what the kernel would compute). Returns the ops folded.
int fold_constants(Function& f);

/// Replaces each pure op equal to one before it (in its region or an enclosing one) by that one
/// (common subexpressions). Returns the ops replaced (they stay until remove_dead_code).
int merge_common_subexpressions(Function& f);

/// Removes the ops whose results are unused and that have no side effects. Returns the ops removed.
int remove_dead_code(Function& f);

/// The canonical stages in order (fold_constants, merge_common_subexpressions, remove_dead_code):
/// every target's first stages, which the GPU passes also run to clean up after themselves.
/// Returns the number of ops changed or removed.
int canonicalize(Function& f);

/// The GPU layout pass for blocks of `threads` threads: a copy of `f` in which the tiles made by
/// tensor-core mma ops, and the elementwise and loop-carried values computed from them, have the
/// mma.sync accumulator layout (TileLayout), values cheap to make in any layout take their users',
/// and convert_layout ops are inserted where a value meets a user that needs another layout.
Function assign_layouts(const Function& f, int threads);

/// The GPU load pipelining pass: a copy of `f` in which each load of a loop without stores whose
/// tile feeds only mma operands, and whose indices are computed from the induction variable and
/// values from outside the loop, is issued one iteration ahead into a loop-carried tile (the
/// first one before the loop), so that its latency overlaps the current iteration's mma.
Function pipeline_loads(const Function& f);

/// The ops of a loop body (indices, in order) that compute the operands of `load` (a load in the
/// body), or nullopt when one of them is not a pure scalar op or reads a carried value.
std::optional<std::vector<std::size_t>> index_chain(const Function& f, const Region& body, const Op& load);

/// The ops of `body` (indices, in order) that compute `values` from the kernel's parameters and
/// values from outside `body`, or nullopt when one of them is not a pure scalar op or reads a
/// carried value (index_chain is the slice of a load's operands). With `reads`, one-element loads
/// (and their reshapes to scalars) may be among them.
std::optional<std::vector<std::size_t>> scalar_slice(const Function& f, const Region& body, std::vector<int> values,
                                                     bool reads = false);

/// The staging of a tensor-core mma for blocks of `threads` threads (stages 0: it cannot be staged):
/// 16-bit a (M, K) and b (K, N) (or (N, K)), or fp8 a (M, K) and b (N, K), float32 accumulator,
/// M = 16 rows per warp in warpgroups of 4, K a whole number of 128-byte panels, N a multiple of 64
/// and at most 256.
StagedShape staged_shape(const Function& f, const Op& mma, int threads);

/// CUPRIC_TILE_TMA=1: staged loops fill their ring by TMA on mbarriers (device_include/cupric/tile/tma.h)
/// and may keep up to 5 stages; read at each compile (it is part of the kernel index's key), unless
/// the compile names its ring mode (EmitOptions::ring, through RingModeScope).
bool tma_requested();

/// Sets the ring mode tma_requested / ws_requested / persistent_requested answer from, for one
/// compile on this thread ("" : the environment's).
class RingModeScope {
 public:
  explicit RingModeScope(const std::string& mode);
  ~RingModeScope();
  RingModeScope(const RingModeScope&) = delete;
  RingModeScope& operator=(const RingModeScope&) = delete;

 private:
  const std::string* saved_;
};

/// Whether a staged loop filled by TMA gets a producer warpgroup (warp specialisation): with TMA,
/// unless CUPRIC_TILE_WS=0; read at each compile (part of the kernel index's key).
bool ws_requested();

/// Whether every kernel with a producer warpgroup is persistent (one block per SM looping over the
/// output tiles): with warp specialisation and CUPRIC_TILE_PERSISTENT=1 (measured no faster on the
/// H200 for the example matmul, slower for attention: docs/performance.md). Ring mode "tma ws
/// persistent".
bool persistent_requested();

/// Whether a kernel with a producer warpgroup whose K loop can be split (split K: one zero-started
/// product carried, nothing before the loop reading memory) is persistent, so that it splits where
/// its tiles do not fill the GPU: with warp specialisation unless CUPRIC_TILE_PERSISTENT=0 (ring
/// modes "tma ws", the default, and "tma ws persistent"; "tma ws plain" keeps one output tile per
/// block).
bool split_requested();
/// Whether a producer kernel whose blocks pair along grid x on a ring operand multicasts it in
/// clusters of 2: with CUPRIC_TILE_MULTICAST=1 (measured no faster on the H200 for the matmul at
/// 128 × 256 tiles and ~3 % slower for attention: docs/performance.md, session 13).
bool multicast_requested();

/// GPU: marks the K loops whose products read loads made in the loop from their indices (loads of
/// arrays of 2 or more dimensions, padding 0, used by nothing else) and can be staged (staged_shape):
/// the loop's `staged` gets its shape, the loads copied ahead each iteration `staging = ring`, the
/// loop-invariant a loads beside the loop `staging = resident`. The emitter keeps a ring of stages
/// in shared memory filled by asynchronous copies `stages - 1 - in_flight` iterations ahead
/// (cupric/tile/staged.h); pipeline_loads leaves staged loads alone.
void stage_products(Function& f, int threads);

/// GPU: the fp8 products no ring stages (stage_products) take float16 casts of their operands
/// (exact: every e4m3 and e5m2 value is a float16): the mma.sync path, for any layout of b.
void widen_float8_products(Function& f);

/// GPU: mma(a, permute(x, [1, 0]), acc) becomes mma(a, x, acc) with `b_transposed` where the permute
/// feeds only mma b operands, so that x's rows are staged as they are (attention's q @ k^T) and the
/// permute's round trip through shared memory goes away.
void fold_transposes(Function& f);

}  // namespace cupric::tile
