// occupancy.cpp — how many blocks of a kernel fit on one SM: the CUDA occupancy calculator's
// rules (warps, blocks, registers per warp in allocation units per scheduler, shared memory in
// allocation units plus the system's reserve) over a table of each generation's limits.
#include <algorithm>
#include <climits>

#include "cupric/errors.hpp"
#include "cupric/runtime/kernel_analysis.hpp"

namespace cupric::runtime {

namespace {
ArchLimits limits(int sm, const char* example, int warps, int blocks, std::int64_t shared_kib,
                  std::int64_t block_shared_kib) {
  ArchLimits a;
  a.sm = sm;
  a.example = example;
  a.max_warps_per_sm = warps;
  a.max_blocks_per_sm = blocks;
  a.shared_per_sm = shared_kib * 1024;
  a.max_shared_per_block = block_shared_kib * 1024;
  return a;
}

std::int64_t round_up(std::int64_t v, std::int64_t unit) { return (v + unit - 1) / unit * unit; }
}  // namespace

const std::vector<ArchLimits>& known_arch_limits() {
  // the programming guide's table of technical specifications, per compute capability
  static const std::vector<ArchLimits> table = {
      limits(80, "A100", 64, 32, 164, 163),
      limits(86, "RTX 3090", 48, 16, 100, 99),
      limits(89, "L40S, RTX 4090", 48, 24, 100, 99),
      limits(90, "H100, H200", 64, 32, 228, 227),
  };
  return table;
}

const ArchLimits& arch_limits(int sm) {
  std::string known;
  for (const ArchLimits& a : known_arch_limits()) {
    if (a.sm == sm) return a;
    known += cat(known.empty() ? "" : ", ", "sm_", a.sm);
  }
  throw ValueError(cat("no occupancy limits for sm_", sm, " (known: ", known, ")"));
}

Occupancy occupancy(const ArchLimits& a, int threads, int registers, std::int64_t shared_bytes) {
  if (threads <= 0 || registers < 0 || shared_bytes < 0)
    throw ValueError(cat("occupancy: threads (", threads, ") must be positive, registers (", registers,
                         ") and shared memory (", shared_bytes, " bytes) not negative"));
  Occupancy o;
  const int warps = (threads + 31) / 32;
  if (threads > a.max_threads_per_block) {
    o.limited_by = cat("threads per block (", threads, " > ", a.max_threads_per_block, ")");
    return o;
  }
  if (registers > a.max_registers_per_thread) {
    o.limited_by = cat("registers per thread (", registers, " > ", a.max_registers_per_thread, ")");
    return o;
  }
  if (shared_bytes > a.max_shared_per_block) {
    o.limited_by = cat("shared memory per block (", shared_bytes, " > ", a.max_shared_per_block, " bytes)");
    return o;
  }
  o.by_warps = a.max_warps_per_sm / warps;
  o.by_blocks = a.max_blocks_per_sm;
  // registers go to warps in units, from the part of the register file each scheduler owns
  const std::int64_t per_warp = round_up(std::int64_t{std::max(registers, 1)} * 32, a.register_unit);
  const std::int64_t warps_per_scheduler = a.registers_per_sm / a.warp_schedulers / per_warp;
  o.by_registers = per_warp * warps > a.max_registers_per_block
                       ? 0
                       : static_cast<int>(warps_per_scheduler * a.warp_schedulers / warps);
  const std::int64_t block_shared = round_up(shared_bytes + a.reserved_shared_per_block, a.shared_unit);
  o.by_shared = static_cast<int>(std::min<std::int64_t>(a.shared_per_sm / block_shared, INT_MAX));
  const std::pair<int, const char*> limits[] = {
      {o.by_warps, "warps"}, {o.by_blocks, "blocks"}, {o.by_registers, "registers"}, {o.by_shared, "shared memory"}};
  const auto* least = std::min_element(std::begin(limits), std::end(limits),
                                       [](const auto& x, const auto& y) { return x.first < y.first; });
  o.blocks_per_sm = least->first;
  o.limited_by = least->second;
  o.warps_per_sm = o.blocks_per_sm * warps;
  o.fraction = static_cast<double>(o.warps_per_sm) / a.max_warps_per_sm;
  return o;
}

}  // namespace cupric::runtime
