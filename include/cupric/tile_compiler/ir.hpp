// ir.hpp — the tile IR: typed SSA values, ops with attributes, and structured regions (for/if).
// The Python frontend builds it through Builder (builder.hpp); passes and emitters read it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cupric/array.hpp"
#include "cupric/dtype.hpp"

namespace cupric::tile {

/// What a value is: a tile (rank 0 = a scalar) or an array parameter (an array in memory).
enum class Kind : std::uint8_t { tile, array };

/// How a tile's elements are spread over the threads of a CUDA block (chosen by assign_layouts;
/// the CPU target and the IR as built use only the blocked layout). blocked: runs of `vec`
/// elements dealt round-robin to the threads (Layout<N> in core.h). mma: the mma.sync m16n8
/// accumulator fragments of a (rows, cols) tile, warps in a warps_m x warps_n grid (MmaLayout).
struct TileLayout {
  int warps_m = 0, warps_n = 0;  ///< 0: blocked
  std::int64_t rows = 0, cols = 0;
  /// 0: the accumulator. Rows / cols: a vector of one value per row ((rows,) or (rows, 1)) / per
  /// column ((cols,) or (1, cols)) of that accumulator: each thread holds the rows (columns) its
  /// fragments cover (MmaRows / MmaCols in core.h) — row reductions, masks and their broadcasts
  /// back stay in registers.
  enum Slice : std::uint8_t { whole, rows_of, cols_of };
  Slice slice = whole;
  bool is_mma() const { return warps_m > 0; }  ///< an mma-derived layout (an accumulator's or a slice of it)
  bool is_accumulator() const { return warps_m > 0 && slice == whole; }
  bool operator==(const TileLayout& o) const {
    return warps_m == o.warps_m && warps_n == o.warps_n && rows == o.rows && cols == o.cols && slice == o.slice;
  }
  bool operator!=(const TileLayout& o) const { return !(*this == o); }
  /// "" (blocked) or "mma(128x128, warps 4x2)"
  std::string str() const;
};

/// The type of a value. Tile shapes are compile-time constants (any positive extents, not
/// only powers of two); array shapes and strides are run-time values.
struct Type {
  Kind kind = Kind::tile;
  DType dtype = DType::float32;
  Shape shape;                     ///< tiles: extents (empty for a scalar)
  int ndim = 0;                    ///< arrays: number of dimensions
  WeakKind weak = WeakKind::none;  ///< scalars that came from Python numbers (NEP 50 "weak")
  TileLayout layout;               ///< tiles on the GPU (after assign_layouts); not part of same_as

  static Type scalar(DType t, WeakKind w = WeakKind::none) { return {Kind::tile, t, {}, 0, w, {}}; }
  static Type tile(DType t, Shape s) { return {Kind::tile, t, std::move(s), 0, WeakKind::none, {}}; }
  static Type array(DType t, int ndim) { return {Kind::array, t, {}, ndim, WeakKind::none, {}}; }

  bool is_array() const { return kind == Kind::array; }
  bool is_scalar() const { return kind == Kind::tile && shape.empty(); }
  bool is_tile() const { return kind == Kind::tile && !shape.empty(); }
  std::int64_t size() const { return shape_size(shape); }  ///< elements of a tile (1 for scalars)
  bool same_as(const Type& o) const { return kind == o.kind && dtype == o.dtype && shape == o.shape && ndim == o.ndim; }
  /// "f32[64, 128]", "i32", "weak f64", "array<bf16, 2>", "f32[64, 128] mma(64x128, warps 4x1)"
  std::string str() const;
};

/// Where an op came from in the kernel's Python source.
struct Location {
  std::string file;
  int line = 0;
  int col = 0;
};

enum class OpKind : std::uint8_t {
  param,           ///< kernel parameter `ints[0]` (array or scalar); name = parameter name
  constant,        ///< value = the constant
  bid,             ///< block index along ints[0]
  num_blocks,      ///< grid extent along ints[0]
  array_dim,       ///< shape[ints[0]] of operand 0 (an array)
  array_stride,    ///< stride (elements) ints[0] of operand 0
  ufunc,           ///< name = ufunc; operands are scalars, size-1 tiles, or tiles of the result shape
  cast,            ///< operand 0 converted to the result dtype
  where,           ///< operands: cond (bool), x, y (same broadcasting rule as ufunc)
  broadcast,       ///< operand 0 broadcast to the result shape
  reshape,         ///< same elements in C order, new shape
  permute,         ///< ints = the axis order
  full,            ///< operand 0 (a scalar) repeated over the result shape
  arange,          ///< ints[0] + 0, 1, ..., n-1 in the result dtype
  reduce,          ///< name = sum|prod|max|min; ints[0] = axis; flag = keepdims
  argreduce,       ///< name = argmax|argmin; ints[0] = axis; flag = keepdims
  scan,            ///< name = cumsum|cumprod; ints[0] = axis
  mma,             ///< operands a (M,K), b (K,N), acc (M,N); flag = allow tf32 (b_transposed: b given as (N,K))
  load,            ///< operand 0 array, then one tile index per dim; value = padding
  store,           ///< operand 0 array, then one tile index per dim, then the tile
  load_offset,     ///< like load, but the indices are element offsets of the window's corner
  store_offset,    ///< like store, at element offsets
  gather,          ///< operand 0 array, ints[0] index tiles, then (flag) a mask; value = padding
  scatter,         ///< operand 0 array, ints[0] index tiles, the value, then (flag) a mask
  atomic,          ///< name = add|max|min; operands as scatter
  print,           ///< name = prefix text; operands printed
  assert_,         ///< operand 0 must be true everywhere; name = message
  for_,            ///< operands: lb, ub, step, inits...; regions[0] args: iv, carried...
  if_,             ///< operand 0 scalar bool; regions[0] then, regions[1] else; both end in yield
  yield,           ///< region terminator: its operands flow out of the region
  convert_layout,  ///< operand 0 in the result's layout (GPU; inserted by assign_layouts)
};
const char* op_name(OpKind k);

/// Where a load's tile lives in a K loop of staged products (decided by stage_products).
enum class LoadStaging : std::uint8_t {
  registers,  ///< a register tile, as loaded (the default)
  ring,       ///< copied ahead into the loop's ring of shared-memory stages, read there by the products
  resident,   ///< a loop-invariant a operand, copied once before the loop into shared-memory panels
};

/// How a staged K loop keeps its products' operands: `stages` buffers of a and b in shared memory
/// (0: not staged), `in_flight` products left running by each iteration (wgmma), `min_blocks`
/// blocks per SM the kernel is built for; `turns`: how many of an iteration's products (the first
/// ones) the warpgroups take turns to issue (ping-pong: one's softmax runs under the other's products).
struct StagedShape {
  int stages = 0, in_flight = 0, min_blocks = 1, turns = 0;
  /// The loop's last product is issued in the next iteration, right after its first (their
  /// operands kept until then): FlashAttention-3's overlap of one iteration's softmax with the
  /// previous iteration's product (stage_products' `deferrable`).
  bool defer = false;
  bool operator==(const StagedShape&) const = default;
};

struct Op;

/// A straight-line block of ops with arguments (loop variables, carried values).
struct Region {
  std::vector<int> args;
  std::vector<Op> ops;
};

struct Op {
  OpKind kind = OpKind::constant;
  std::vector<int> operands;
  std::vector<int> results;
  std::string name;                ///< ufunc / reduction / atomic kind, print text, parameter name
  std::vector<std::int64_t> ints;  ///< axes, permutations, counts, parameter index
  Scalar value;                    ///< constants and padding values
  bool flag = false;
  std::vector<Region> regions;
  Location loc;
  // What the GPU passes decide for the emitter (passes.hpp); the IR as built decides none of it.
  bool b_transposed = false;                     ///< mma: b is given as (N, K) (fold_transposes)
  LoadStaging staging = LoadStaging::registers;  ///< load: where its tile lives (stage_products)
  StagedShape staged;                            ///< for: its ring of stages (stage_products); stages 0: none

  int result() const { return results.at(0); }
};

/// A kernel: its values (indexed by id), its parameters and its body.
struct Function {
  std::string name;
  std::vector<Type> values;
  std::vector<int> params;  ///< value ids of the parameters, in order
  Region body;

  const Type& type(int v) const { return values.at(static_cast<std::size_t>(v)); }
  int add_value(Type t) {
    values.push_back(std::move(t));
    return static_cast<int>(values.size()) - 1;
  }
};

/// The IR as text, one op per line, regions indented:
///   %3 = load %0[%2, 0] : f32[1, 1024]  pad -inf   (softmax.py:7)
std::string to_text(const Function& f);

/// Calls fn(op) for every op of a region and of its nested regions, parents first.
template <class F>
void walk(Region& r, F&& fn) {
  for (Op& op : r.ops) {
    fn(op);
    for (Region& sub : op.regions) walk(sub, fn);
  }
}
template <class F>
void walk(const Region& r, F&& fn) {
  for (const Op& op : r.ops) {
    fn(op);
    for (const Region& sub : op.regions) walk(sub, fn);
  }
}

}  // namespace cupric::tile
