// passes.hpp — IR-to-IR passes run between the frontend and the emitters.
#pragma once

#include "tile/ir.hpp"

namespace cupric::tile {

/// Folds elementwise ops on constant scalars (with the array core's own ufunc loops, so that
/// folding gives exactly what the kernel would compute), merges repeated pure ops (common
/// subexpressions) and removes ops whose results are unused and that have no side effects.
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

/// GPU: mma(a, permute(x, [1, 0]), acc) becomes mma(a, x, acc) with b given transposed (ints {1})
/// where the permute feeds only mma b operands, so that x's rows are staged as they are (attention's
/// q @ k^T) and the permute's round trip through shared memory goes away.
void fold_transposes(Function& f);

}  // namespace cupric::tile
