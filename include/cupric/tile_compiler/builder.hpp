// builder.hpp — builds a tile Function op by op, inferring every result's shape and dtype
// (NumPy broadcasting, NEP 50 promotion through the ufunc table) and rejecting what does not
// type-check with a message that names the shapes and dtypes. The Python frontend drives it.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cupric/tile_compiler/ir.hpp"

namespace cupric::tile {

/// Largest tile (elements) the compiler accepts; tiles live in registers / on the stack.
inline constexpr std::int64_t kMaxTileElements = std::int64_t{1} << 20;

/// ValueError unless every extent is positive and the tile is at most kMaxTileElements.
void check_tile_shape(const Shape& s, const char* what);

class Builder {
 public:
  explicit Builder(std::string kernel_name);

  /// Location attached to the ops built from now on (the frontend sets it per statement).
  void set_location(std::string file, int line, int col);

  // ---- parameters, constants, indices --------------------------------------------------
  int param_array(const std::string& name, DType dtype, int ndim);
  int param_scalar(const std::string& name, DType dtype, WeakKind weak);
  /// A Python number: weak (NEP 50), typed by its kind until it meets a typed operand.
  int constant(const Scalar& value);
  /// A constant of a given dtype; OverflowError when an integer does not fit.
  int constant(const Scalar& value, DType dtype);
  int bid(int axis);
  int num_blocks(int axis);
  int array_dim(int array, int axis);
  int array_stride(int array, int axis);

  // ---- elementwise ------------------------------------------------------------------------
  /// A ufunc of the table (by name or alias) with broadcasting and type resolution.
  /// flush_to_zero (exp2 only): results below the smallest normal float are 0 — on the GPU one
  /// ex2.approx.ftz instead of four instructions that keep subnormal results (cuTile's option too)
  int ufunc(const std::string& name, std::vector<int> operands, bool flush_to_zero = false);
  int cast(int value, DType dtype);
  int where(int cond, int x, int y);

  // ---- shapes and creation ----------------------------------------------------------------
  int broadcast_to(int value, Shape shape);
  int reshape(int value, Shape shape);  ///< one extent may be -1
  int permute(int value, std::vector<std::int64_t> axes);
  int expand_dims(int value, int axis);
  int full(Shape shape, int value, DType dtype);
  int arange(std::int64_t start, std::int64_t stop, DType dtype);

  // ---- reductions, scans, matrix products -------------------------------------------------
  /// sum | prod | max | min over `axis` (all axes when nullopt).
  int reduce(const std::string& kind, int value, std::optional<int> axis, bool keepdims);
  /// argmax | argmin over `axis` (the flattened tile when nullopt); int32 indices.
  int argreduce(const std::string& kind, int value, std::optional<int> axis, bool keepdims);
  /// cumsum | cumprod along `axis`.
  int scan(const std::string& kind, int value, int axis);
  /// acc + a @ b with a (M, K), b (K, N), acc (M, N): float16/bfloat16/float32 inputs
  /// accumulate in float32, float64 in float64, int8/uint8 in int32.
  int mma(int a, int b, int acc, bool allow_tf32);
  /// a @ b, accumulated and returned as mma's accumulator type.
  int matmul(int a, int b, bool allow_tf32);

  // ---- memory -----------------------------------------------------------------------------
  /// The tile of `shape` at tile index `index` (element offset index*shape per dimension),
  /// or at element offsets `index` when `offsets`. Out-of-bounds elements read `padding`.
  int load(int array, std::vector<int> index, Shape shape, const Scalar& padding, bool offsets);
  /// Writes `value` (converted to the array's dtype) at a tile index or element offsets;
  /// out-of-bounds elements are not written.
  void store(int array, std::vector<int> index, int value, bool offsets);
  /// array[indices...] for index tiles broadcast together; masked-off and out-of-bounds
  /// elements read `padding`. mask < 0: no mask.
  int gather(int array, std::vector<int> indices, int mask, const Scalar& padding);
  void scatter(int array, std::vector<int> indices, int value, int mask);
  /// add | max | min, atomically, at array[indices...].
  void atomic(const std::string& kind, int array, std::vector<int> indices, int value, int mask);
  void print(const std::string& prefix, std::vector<int> values);
  void assert_(int cond, const std::string& message);

  // ---- control flow -------------------------------------------------------------------------
  /// Opens `for iv in range(lb, ub, step)` carrying `inits`; returns {iv, carried...}.
  std::vector<int> begin_for(int lb, int ub, int step, std::vector<int> inits);
  /// Closes the innermost loop; the yields must have the carried values' types. Returns
  /// the values after the loop.
  std::vector<int> end_for(std::vector<int> yields);
  void begin_if(int cond);
  void begin_else(std::vector<int> then_yields);
  std::vector<int> end_if(std::vector<int> else_yields);

  /// Abandons the for/if opened when depth() was `depth`, with everything built inside it
  /// (the frontend re-builds a loop whose carried values change type in the body).
  void rollback(int depth);

  const Type& type(int value) const { return f_.type(value); }
  /// The constant behind a value, if it is one.
  std::optional<Scalar> constant_value(int value) const;
  int depth() const { return static_cast<int>(stack_.size()); }
  const Function& function() const { return f_; }
  Function finish();

 private:
  Op& emit(OpKind kind, std::vector<int> operands, std::vector<Type> results);
  int emit1(OpKind kind, std::vector<int> operands, Type result) {
    return emit(kind, std::move(operands), {std::move(result)}).result();
  }
  const Type& tile_type(int v, const char* what) const;
  int to_dtype(int v, DType t);                   ///< cast unless already t (constants fold)
  int to_index(int v, const char* what);          ///< integer scalar -> int64
  int broadcast_operand(int v, const Shape& to);  ///< elementwise operand rule (size-1 stays)
  int normalize_axis(int axis, int ndim, const char* what) const;
  void check_array(int v, const char* what) const;
  std::vector<int> address_operands(int array, std::vector<int> indices, int value, int mask, const char* what,
                                    Shape* shape);

  Function f_;
  std::vector<Region*> stack_;
  std::vector<std::pair<int, std::vector<int>>> pending_then_yields_;  ///< (depth of the if, then yields)
  std::unordered_map<int, Scalar> constants_;
  Location loc_;
};

}  // namespace cupric::tile
