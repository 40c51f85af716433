// cupric/tile_compiler/cost.hpp — what one block of a tile kernel moves and computes, counted from
// its IR (loads and stores by tile shape and dtype, mma shapes, elementwise and reduction work),
// so that a kernel's roofline bound is known before it runs.
#pragma once

#include <array>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "cupric/tile_compiler/ir.hpp"

namespace cupric::tile {

/// The run-time facts loop trip counts may depend on: each parameter's value by name (an array's
/// shape, a scalar's value; constants are folded in the IR already), the grid, and which block.
struct CostInputs {
  std::map<std::string, std::variant<Shape, double>> params;
  std::array<std::int64_t, 3> grid{1, 1, 1};
  std::array<std::int64_t, 3> block{0, 0, 0};
};

/// One block's traffic and work. Loads and stores count whole tiles (padding included: the
/// bound for blocks at an array's edge); a branch counts its costlier side; a loop whose trip
/// count the inputs do not decide counts one trip and is named in `notes` (then exact is false).
struct BlockCost {
  double load_bytes = 0, store_bytes = 0;
  double flops = 0;      ///< elementwise ops (one per element), reductions and scans (one per input element)
  double mma_flops = 0;  ///< tensor-core products: 2 * M * N * K each
  bool exact = true;
  std::vector<std::string> notes;
  double bytes() const { return load_bytes + store_bytes; }
  double total_flops() const { return flops + mma_flops; }
};

/// The cost of one block of `f` (run on the canonical IR: folded constants, no dead code).
BlockCost block_cost(const Function& f, const CostInputs& inputs);

}  // namespace cupric::tile
