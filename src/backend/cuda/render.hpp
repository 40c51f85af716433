// render.hpp — the renderers of the CUDA backend's kernel families. A rendered source is small:
// the family's header (device_include/cupric/kernels/*.cuh, which holds the kernel bodies as
// templates), the types and expressions of one op (from the ufunc and reduction tables), and
// extern "C" entry points named after the op that call the templates. Pure string work: no
// CUDA is needed to render, so every kernel can be compiled with NVRTC without a GPU. Each
// family's renderer lives beside its launcher (elementwise.cpp, reduce.cpp, scan.cpp, ...).
#pragma once

#include <string>
#include <vector>

#include "cupric/backend.hpp"
#include "cupric/ufunc.hpp"
#include "cupric/cuda/kernel_catalogue.hpp"  // all_sources, batched_sources

namespace cupric::cuda_backend {

inline constexpr int kMaxDims = 16;  ///< dimensions of the strided kernels (after plan collapsing)

/// How one input of a map kernel arrives.
enum class InputMode : std::uint8_t { array, broadcast, value };  ///< pointer, pointer read once, by value

/// An elementwise map: out = convert<out_store>(static_cast<out_compute>(expr(a, b, c))).
/// Kernels: <name>_vec (contiguous, vector loads), <name>_one (contiguous, scalar), <name>_nd (strided).
struct MapSpec {
  std::string name;        ///< C identifier for the kernels (the op's name: "add", "cast_f4_i1")
  std::string expression;  ///< in a, b, c
  std::vector<DType> in_store, in_compute;
  std::vector<InputMode> in_mode;
  DType out_store = DType::float32, out_compute = DType::float32;
  bool where = false;
  bool transpose = false;  ///< also <name>_t2: a 2-d copy through 32x32 shared-memory tiles (casts)
  /// The one kernel to render ('v' _vec, 'o' _one, 'n' _nd, 't' _t2): a launch compiles only the
  /// path it takes (ptxas time grows with the code); 0 renders every path in one source.
  char path = 0;
  int vector_width() const;  ///< elements per vector load of the _vec kernel
  std::string key() const;
};

/// The device type name of a dtype ("float", "cupric::float16", "std::complex<double>").
const char* device_type(DType t);
/// A C identifier fragment for a dtype ("f4", "c8", "b1").
std::string short_name(DType t);
/// The start of a source: `#include "cupric/kernels/<family>.cuh"`.
std::string include_family(const char* family);

std::string render_map(const MapSpec& spec);  // elementwise.cpp (maps, casts, fills)
/// The map of one ufunc loop over operands stored as `stored` (nin inputs, then the output),
/// every input an array: launches set the modes and path from their plan (elementwise.cpp).
MapSpec ufunc_map_spec(const Ufunc& uf, const UfuncLoop& loop, const DType* stored, bool where);
/// arange_<t>: out[i] = convert<T>(start + i * step) in double for floating and bool t; for
/// integer t, (T)(start + i * step) in unsigned 64-bit arithmetic (exact to the ends of the type).
std::string render_arange(DType t);  // arange.cpp
/// random_<t>: one Philox block per thread (kernels/random.cuh); integers for integer t.
std::string render_random(DType t);  // random.cpp
/// reduce_<op>_<in>_<out>: _rows (threads along the reduced elements, 16-byte loads where they are
/// contiguous), _cols (threads along contiguous outputs) and _colsv (as _cols, 16 bytes of adjacent
/// outputs per thread), writing either the final value or per-split partials in the acc type.
/// `partials`: the input is a second pass over per-split partials (already in the acc type).
std::string render_reduce(ReduceOp op, DType in, DType out, bool partials);  // reduce.cpp
/// The accumulation type a reduction of `op` into `out` uses on the GPU.
DType reduce_acc(ReduceOp op, DType out);
const char* reduce_name(ReduceOp op);
std::string render_arg_reduce(ArgReduceOp op, DType in);  // arg_reduce.cpp
std::string render_scan(ScanOp op, DType in, DType out);  // scan.cpp
/// gather/scatter of elements of `itemsize` bytes (typed by size).
std::string render_gather(int itemsize);  // gather.cpp
/// The radix sort's kernels for dtype t (keys, digit passes, finishing) and its binary search.
std::string render_sort(DType t);  // sort.cpp

}  // namespace cupric::cuda_backend
