// tile_launch_args.hpp — the arguments of cupric.tile launch plans: each parameter's kind, checking
// and reading new arguments of that kind (arrays of several libraries through the importer,
// scalars, constants), grids.
#pragma once

#include <nanobind/nanobind.h>

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "cupric/array.hpp"
#include "cupric/runtime/kernel.hpp"
#include "cupric/tile/abi.h"
#include "cupric/tile_compiler/host_compiler.hpp"
#include "foreign_array.hpp"

namespace nb = nanobind;

namespace cupric::py {

/// constant: passed by the caller, checked by type and value; fixed: a constant the plan supplies
/// (a parameter @ct.autotune sets), not passed.
enum class ArgKind : std::uint8_t { constant, fixed, array, weak_bool, weak_int, weak_float, typed };

inline bool is_array_kind(ArgKind k) { return k == ArgKind::array; }

/// One kernel parameter of a plan: what a new argument must be to take the plan's path.
struct PlanParam {
  ArgKind kind = ArgKind::constant;
  ForeignKind source = ForeignKind::cupric;  ///< arrays: how the importer reads them
  DType dtype = DType::float64;              ///< arrays: the element type; scalars: the type they are stored as
  int ndim = 0;
  bool written = false;  ///< an array the kernel writes: must not be read-only
  bool keyed = false;    ///< an @ct.autotune key: the same shape (arrays) or value (scalars) too
  std::vector<long long> key_shape;
  /// constant, fixed: the value; typed: the NumPy scalar type; numpy arrays: the array's exact type.
  nb::object token;
  nb::object key;  ///< keyed scalars: the value
};

/// An argument as read for one launch: the object; for arrays what the importer read (its owner
/// is held through the launch: the memory, the producer's stream, a cupric array's storage) and
/// what the kernel gets (address of element 0, extents, strides in elements).
struct ReadArg {
  PyObject* value = nullptr;  // borrowed from the launch's argument tuple
  ForeignArray array;
  cupric_tile_array view{};
  int ndim = 0;
};
using ReadArgs = std::vector<ReadArg>;

/// The plan parameter for `value` as the Python path specialised it: `fact` is None for a
/// ct.Constant, "fixed" for one the plan supplies, else (kind, dtype, ndim, written, keyed) with
/// kind "array", "weak" or "typed".
/// nullopt when plans do not handle such an argument. `device`: -1 for the CPU, else CUDA's.
std::optional<PlanParam> classify(nb::handle value, nb::handle fact, int device);

/// The 128 bytes of a TMA tensor map over a 16-bit CUDA array (bind_tile.cpp: zeros where TMA
/// cannot describe the view or no driver makes maps), kept per address, extents, strides and box.
std::array<std::uint64_t, 16> tile_tensor_map_bytes(std::uint64_t data, const std::vector<std::int64_t>& shape,
                                                    const std::vector<std::int64_t>& strides, int box_rows,
                                                    int box_cols);

/// True when `value` fits `p` on `device`; it is read into `out`. Never raises.
bool match_param(const PlanParam& p, PyObject* value, int device, ReadArg& out);

/// A scalar argument stored as the plan's type in `dst` (8 bytes): NumPy 2's overflow errors.
void store_scalar(const PlanParam& p, PyObject* value, void* dst);

/// An array as a CUDA kernel's (pointer, shape..., strides...) parameters.
void pack_array(runtime::ArgPacker& packer, const ReadArg& a);

/// An int or a tuple of 1 to 3 ints (>= 0, at most 2^63 - 1 blocks) as 3 extents; false for
/// anything else (the fast path of launch plans; grid_from_py says what is wrong).
bool grid_from_ints(PyObject* grid, long long g[3]);
/// A grid as Python gives it (an integer or a sequence of 1 to 3 integers: ints, NumPy integers)
/// as 3 extents: TypeError for anything else (floats), ValueError for negative extents or more
/// than 2^63 - 1 blocks. Every launch's grid passes here or through grid_from_ints.
void grid_from_py(nb::handle grid, long long g[3]);
/// CUDA's limits on the grid (ValueError naming the grid).
void check_cuda_grid(const long long g[3]);

/// Runs a CPU kernel's grid without the GIL; a failed ct.assert_ raises AssertionError.
void run_host_kernel(const tile::HostKernel& k, const std::int64_t grid[3], const std::vector<void*>& args);
/// Raises the failure a launch recorded in its status word (IndexError for a bounds check,
/// AssertionError for ct.assert_, naming the block); nothing when it holds none.
void raise_failure(const cupric_tile_status& status);

/// CUPRIC_TILE_INTERPRET asks every launch to run in the interpreter.
bool interpreting();

}  // namespace cupric::py
