// passes.hpp — IR-to-IR passes run between the frontend and the emitters.
#pragma once

#include "tile/ir.hpp"

namespace cupric::tile {

/// Folds elementwise ops on constant scalars (with the array core's own ufunc loops, so that
/// folding gives exactly what the kernel would compute), merges repeated pure ops (common
/// subexpressions) and removes ops whose results are unused and that have no side effects.
/// Returns the number of ops changed or removed.
int canonicalize(Function& f);

}  // namespace cupric::tile
