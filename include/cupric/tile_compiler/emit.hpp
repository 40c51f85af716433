// emit.hpp — the tile compiler's driver: runs a target's named stages (passes) on a copy of a
// Function and renders the result as C++ over the header library device_include/cupric/tile: host
// C++ (a shared object run block by block on the thread pool) or CUDA C++ (one kernel for NVRTC /
// nvcc). Both targets share one body emitter; they differ in their stages and their wrapper.
#pragma once

#include <string>
#include <vector>

#include "cupric/tile_compiler/ir.hpp"

namespace cupric::tile {

/// host: a shared object run block by block; cuda: one __global__ kernel; device_function: one
/// CUDA `__device__` function of a one-thread block, called per element by other code (cuFFT's
/// callbacks): `void <name>(const ::cu::tile::Block& blk, <params>)`, arrays as
/// `const ::cu::tile::ArrayRef<T, N>&` and scalars by value, in the order of f.params.
enum class Target : std::uint8_t { host, cuda, device_function };

struct EmitOptions {
  Target target = Target::host;
  int threads = 0;             ///< CUDA threads per block (0: chosen from the tile sizes)
  bool debug = false;          ///< emit ct.print / ct.assert_ (dropped otherwise)
  bool record_stages = false;  ///< keep the IR after every stage in EmitResult::stages (kernel.inspect)
  /// CUDA: how staged loops' rings are filled — "cp.async", "tma", "tma ws" (a producer warpgroup),
  /// "tma ws persistent"; empty: from CUPRIC_TILE_TMA / _WS / _PERSISTENT (passes.hpp)
  std::string ring;
};

/// The IR after one stage of the compiler, as text.
struct StageText {
  std::string stage;
  std::string ir;
};

/// One parameter of a generated CUDA kernel, in order: an array is its data pointer, then one
/// extent and one stride (long long, in elements) per dimension; a scalar is passed as its dtype.
/// A debug build takes one more, last: the launch's status word (cupric_tile_status*, abi.h).
enum class ParamRole : std::uint8_t { data, extent, stride, scalar, status };
struct KernelParam {
  ParamRole role;
  DType dtype;  ///< data: the element type; extent and stride: int64; scalar: its type
  bool operator==(const KernelParam&) const = default;
};
const char* role_name(ParamRole r);
/// The C type the kernel declares a parameter with ("float*", "long long", "::cu::tile::bf16"),
/// for reading the generated source; launches go by the role and dtype.
std::string param_ctype(const KernelParam& p);

/// A TMA tensor map the CUDA kernel takes after its other parameters (CUPRIC_TILE_TMA=1): for the
/// array of parameter `param` (an index into f.params), boxes of box_cols x box_rows elements of
/// its last two dimensions (one index of the others), 128-byte swizzle. The host passes the 128
/// bytes of cuTensorMapEncodeTiled's map, or zeros where it cannot describe the view (the kernel
/// then copies with cp.async).
struct TensorMapParam {
  int param = 0;
  int box_rows = 0;
  int box_cols = 64;
  bool operator==(const TensorMapParam&) const = default;
};

/// What the runtime needs besides the source.
struct EmitResult {
  std::string source;
  std::string entry;                        ///< symbol to look up (host) or kernel name (CUDA)
  int threads = 1;                          ///< threads per block
  int vec = 1;                              ///< elements per thread and access
  int smem_bytes = 0;                       ///< dynamic shared memory per block (CUDA)
  std::vector<KernelParam> params;          ///< CUDA: each kernel parameter, in order
  std::vector<TensorMapParam> tensor_maps;  ///< CUDA: then these, in order (TMA rings)
  /// CUDA: then the launch's grid (three long long): the kernel loops over its blocks' output tiles,
  /// and is launched with at most one block per SM (a producer warpgroup's persistent kernel).
  bool persistent = false;
  /// CUDA: a persistent kernel that can split its K loop (split K) takes, after the grid, a
  /// SplitPlan's whole and splits (two long long), a scratch of (tiles - whole) × splits partial
  /// accumulators of split_bytes each, and a counter per split tile (unsigned int, zeroed); 0: no
  /// such parameters.
  long long split_bytes = 0;
  /// CUDA: blocks per cluster along grid x the kernel is written for: 2 where a pair of blocks
  /// (the same but for bid(0)) copies the same tiles of a ring operand, which each then copies half
  /// of to both (multicast) when the launch makes clusters (launch_cluster); 1: none.
  int cluster = 1;
  std::vector<StageText> stages;  ///< with record_stages: "frontend" (the input), then each stage
};

/// Cluster multicast: the blocks per cluster one launch of a kernel written for `cluster`
/// (EmitResult::cluster) uses: 2 where its blocks pair along grid x — an even grid x (`grid_x`),
/// an even count of blocks launched (`blocks`: a persistent kernel's min(work units, SMs), whose
/// blocks 2c and 2c + 1 then take tiles t and t + 1 of one tile row) and no split tile (`splits`:
/// split K's parts run different iterations) — else 1: no clusters, each block copies its own.
int launch_cluster(int cluster, long long grid_x, long long blocks, long long splits);

/// Split K: which output tiles of a persistent kernel with split_bytes run whole and how many parts
/// the others' K loops are split into. The first `whole` tiles (in the launch's order) each run as
/// one work unit; each later one as `splits` units, whose partial sums the last to finish adds.
struct SplitPlan {
  long long whole = 0;
  long long splits = 1;
  long long units(long long tiles) const { return whole + (tiles - whole) * splits; }
};

/// The plan for `tiles` output tiles on `sms` SMs: tiles that fill at most half the SMs are all
/// split; so are the last wave's tiles where they fill at most half of it (the full waves before
/// run whole: the last wave's SMs are busy again instead of idle); otherwise none is (a last
/// wave more than half full would gain less than its partial sums cost). Parts: as many as keep
/// every SM busy, at most 16. (The kernel gives fewer parts work where the loop is short:
/// split_range in tma.h.)
SplitPlan split_plan(long long tiles, long long sms);

/// Compiles `f` for options.target: runs the target's stages (stage_names) on a copy of it, then
/// renders the result. CUPRIC_TILE_DUMP=<stage>[,<stage>...] (or `all`) prints the IR after those
/// stages to stderr, headed by the kernel's name; an unknown name is a ValueError listing the stages.
EmitResult emit(const Function& f, const EmitOptions& options);

/// The stages emit runs for a target, in order: "frontend" (the IR as built, before any stage),
/// the canonical stages, then the target's own.
std::vector<std::string> stage_names(Target target);

/// The C++ spelling of a dtype in generated code ("float", "::cu::tile::bf16", ...: the dtype
/// table's tile_type column); NotImplementedError for dtypes without tiles (complex).
std::string ctype(DType t);

}  // namespace cupric::tile
