// builder.cpp — Builder basics: parameters, constants, indices, elementwise ops (ufunc table,
// NEP 50 promotion, broadcasting), and shape ops. Memory, reductions and control flow are in
// builder_ops.cpp.
#include "cupric/tile_compiler/builder.hpp"

#include <algorithm>
#include <numeric>

#include "cupric/errors.hpp"
#include "cupric/ufunc.hpp"

namespace cupric::tile {

Builder::Builder(std::string kernel_name) {
  f_.name = std::move(kernel_name);
  stack_.push_back(&f_.body);
}

void Builder::set_location(std::string file, int line, int col) { loc_ = {std::move(file), line, col}; }

Op& Builder::emit(OpKind kind, std::vector<int> operands, std::vector<Type> results) {
  Op op;
  op.kind = kind;
  op.operands = std::move(operands);
  for (Type& t : results) op.results.push_back(f_.add_value(std::move(t)));
  op.loc = loc_;
  stack_.back()->ops.push_back(std::move(op));
  return stack_.back()->ops.back();
}

Function Builder::finish() {
  if (stack_.size() != 1) throw ValueError("internal: unclosed for/if region at the end of the kernel");
  return std::move(f_);
}

const Type& Builder::tile_type(int v, const char* what) const {
  if (v < 0 || v >= static_cast<int>(f_.values.size())) throw ValueError(cat("internal: bad value id ", v));
  const Type& t = f_.type(v);
  if (t.is_array())
    throw TypeError(cat(what, ": expected a tile or a scalar, got an array (", t.str(),
                        "); load a tile from it first with ct.load"));
  if (is_complex(t.dtype)) throw TypeError(cat(what, ": complex tiles are not supported yet (", t.str(), ")"));
  return t;
}

void Builder::check_array(int v, const char* what) const {
  if (!f_.type(v).is_array()) throw TypeError(cat(what, ": expected an array argument, got a tile ", f_.type(v).str()));
}

int Builder::normalize_axis(int axis, int ndim, const char* what) const {
  if (axis < -ndim || axis >= ndim)
    throw ValueError(cat(what, ": axis ", axis, " is out of bounds for a tile of ", ndim, " dimension(s)"));
  return axis < 0 ? axis + ndim : axis;
}

std::optional<Scalar> Builder::constant_value(int v) const {
  auto it = constants_.find(v);
  if (it == constants_.end()) return std::nullopt;
  return it->second;
}

// ---- parameters, constants, indices --------------------------------------------------------

int Builder::param_array(const std::string& name, DType dtype, int ndim) {
  if (is_complex(dtype)) throw TypeError(cat("parameter '", name, "': complex arrays are not supported yet"));
  if (ndim < 1 || ndim > 8)
    throw ValueError(cat("parameter '", name, "': arrays of 1 to 8 dimensions are supported, got ", ndim));
  Op& op = emit(OpKind::param, {}, {Type::array(dtype, ndim)});
  op.name = name;
  op.ints = {static_cast<std::int64_t>(f_.params.size())};
  f_.params.push_back(op.result());
  return op.result();
}

int Builder::param_scalar(const std::string& name, DType dtype, WeakKind weak) {
  if (is_complex(dtype)) throw TypeError(cat("parameter '", name, "': complex scalars are not supported yet"));
  Op& op = emit(OpKind::param, {}, {Type::scalar(dtype, weak)});
  op.name = name;
  op.ints = {static_cast<std::int64_t>(f_.params.size())};
  f_.params.push_back(op.result());
  return op.result();
}

int Builder::constant(const Scalar& value) {
  if (value.kind == WeakKind::complex) throw TypeError("complex constants are not supported in tile kernels yet");
  const DType t = value.big_unsigned ? DType::uint64 : default_dtype(value.kind);
  Op& op = emit(OpKind::constant, {}, {Type::scalar(t, value.kind)});
  op.value = value;
  constants_[op.result()] = value;
  return op.result();
}

int Builder::constant(const Scalar& value, DType dtype) {
  if (value.kind == WeakKind::complex || is_complex(dtype))
    throw TypeError("complex constants are not supported in tile kernels yet");
  alignas(16) unsigned char probe[16];
  value.store(dtype, probe);  // OverflowError for integers that do not fit
  Op& op = emit(OpKind::constant, {}, {Type::scalar(dtype)});
  op.value = value;
  constants_[op.result()] = value;
  return op.result();
}

int Builder::bid(int axis) {
  if (axis < 0 || axis > 2) throw ValueError(cat("ct.bid: axis must be 0, 1 or 2, got ", axis));
  Op& op = emit(OpKind::bid, {}, {Type::scalar(DType::int32)});
  op.ints = {axis};
  return op.result();
}

int Builder::num_blocks(int axis) {
  if (axis < 0 || axis > 2) throw ValueError(cat("ct.num_blocks: axis must be 0, 1 or 2, got ", axis));
  Op& op = emit(OpKind::num_blocks, {}, {Type::scalar(DType::int32)});
  op.ints = {axis};
  return op.result();
}

int Builder::array_dim(int array, int axis) {
  check_array(array, "shape");
  const int ax = normalize_axis(axis, f_.type(array).ndim, "shape");
  Op& op = emit(OpKind::array_dim, {array}, {Type::scalar(DType::int64, WeakKind::integer)});
  op.ints = {ax};
  return op.result();
}

int Builder::array_stride(int array, int axis) {
  check_array(array, "stride");
  const int ax = normalize_axis(axis, f_.type(array).ndim, "stride");
  Op& op = emit(OpKind::array_stride, {array}, {Type::scalar(DType::int64, WeakKind::integer)});
  op.ints = {ax};
  return op.result();
}

// ---- elementwise ---------------------------------------------------------------------------

int Builder::to_dtype(int v, DType t) {
  const Type& ty = f_.type(v);
  if (ty.dtype == t && ty.weak == WeakKind::none) return v;
  if (ty.is_scalar()) {
    if (auto c = constant_value(v)) return constant(*c, t);
  }
  if (ty.dtype == t) {  // weak scalar of the right storage type: make it strong
    return emit1(OpKind::cast, {v}, Type::scalar(t));
  }
  return emit1(OpKind::cast, {v}, Type{Kind::tile, t, ty.shape, 0, WeakKind::none, {}});
}

int Builder::to_index(int v, const char* what) {
  const Type& t = tile_type(v, what);
  if (!t.is_scalar() && t.size() != 1)
    throw TypeError(cat(what, ": an index must be an integer scalar, got a tile ", t.str()));
  if (!is_integer(t.dtype) && !is_bool(t.dtype))
    throw TypeError(cat(what, ": an index must be an integer, got ", t.str()));
  if (!t.is_scalar()) v = reshape(v, {});
  return to_dtype(v, DType::int64);
}

int Builder::broadcast_operand(int v, const Shape& to) {
  const Type& t = f_.type(v);
  if (t.is_scalar() || t.shape == to || t.size() == 1) return v;
  return broadcast_to(v, to);
}

int Builder::ufunc(const std::string& name, std::vector<int> operands, bool flush_to_zero) {
  const Ufunc& uf = find_ufunc(name);
  if (flush_to_zero && uf.name != "exp2") throw TypeError(cat(uf.name, "(): flush_to_zero is an option of exp2 only"));
  if (static_cast<int>(operands.size()) != uf.nin)
    throw TypeError(cat(uf.name, "() takes ", uf.nin, " argument(s), got ", operands.size()));
  std::vector<TypeOperand> tys;
  std::vector<Shape> shapes;
  bool all_weak = true;
  for (int v : operands) {
    const Type& t = tile_type(v, uf.name.c_str());
    tys.push_back({t.dtype, t.weak});
    shapes.push_back(t.shape);
    all_weak = all_weak && t.weak != WeakKind::none;
  }
  const UfuncLoop& loop = resolve_loop(uf, tys);
  const Shape shape = broadcast_shapes(shapes);
  for (int i = 0; i < uf.nin; ++i) {
    int v = operands[static_cast<std::size_t>(i)];
    if (!(all_weak && f_.type(v).dtype == loop.types[static_cast<std::size_t>(i)]))
      v = to_dtype(v, loop.types[static_cast<std::size_t>(i)]);
    operands[static_cast<std::size_t>(i)] = broadcast_operand(v, shape);
  }
  Type result{Kind::tile, loop.types[static_cast<std::size_t>(uf.nin)], shape, 0, WeakKind::none, {}};
  if (all_weak && shape.empty()) {
    const DType out = result.dtype;
    result.weak = is_bool(out) ? WeakKind::boolean : is_integer(out) ? WeakKind::integer : WeakKind::floating;
  }
  Op& op = emit(OpKind::ufunc, std::move(operands), {result});
  op.name = uf.name;
  op.ints = {static_cast<std::int64_t>(&loop - uf.loops.data())};
  if (flush_to_zero) op.ints.push_back(1);
  return op.result();
}

int Builder::cast(int value, DType dtype) {
  tile_type(value, "astype");
  if (is_complex(dtype)) throw TypeError("astype: complex tiles are not supported yet");
  return to_dtype(value, dtype);
}

int Builder::where(int cond, int x, int y) {
  const Type& tc = tile_type(cond, "where");
  const Type& tx = tile_type(x, "where");
  const Type& ty = tile_type(y, "where");
  const DType out = result_type({{tx.dtype, tx.weak}, {ty.dtype, ty.weak}});
  const Shape shape = broadcast_shapes(std::vector<Shape>{tc.shape, tx.shape, ty.shape});
  const bool weak = tx.weak != WeakKind::none && ty.weak != WeakKind::none && shape.empty();
  if (!is_bool(tc.dtype)) cond = ufunc("not_equal", {cond, constant(Scalar::from_int(0))});
  cond = broadcast_operand(cond, shape);
  x = broadcast_operand(weak ? x : to_dtype(x, out), shape);
  y = broadcast_operand(weak ? y : to_dtype(y, out), shape);
  Type result{Kind::tile, out, shape, 0, weak ? f_.type(x).weak : WeakKind::none, {}};
  return emit1(OpKind::where, {cond, x, y}, result);
}

// ---- shapes and creation -------------------------------------------------------------------

void check_tile_shape(const Shape& s, const char* what) {
  for (auto d : s)
    if (d < 1) throw ValueError(cat(what, ": tile extents must be positive compile-time integers, got ", shape_str(s)));
  if (shape_size(s) > kMaxTileElements)
    throw ValueError(cat(what, ": a tile of shape ", shape_str(s), " has ", shape_size(s), " elements; the limit is ",
                         kMaxTileElements, " (tiles live in registers); use a smaller tile and a loop"));
}

int Builder::broadcast_to(int value, Shape shape) {
  const Type& t = tile_type(value, "broadcast_to");
  check_tile_shape(shape, "broadcast_to");
  const Shape got = broadcast_shapes(t.shape, shape);
  if (got != shape)
    throw ValueError(cat("cannot broadcast a tile of shape ", shape_str(t.shape), " to ", shape_str(shape)));
  if (t.shape == shape) return value;
  return emit1(OpKind::broadcast, {value}, Type::tile(t.dtype, std::move(shape)));
}

int Builder::reshape(int value, Shape shape) {
  const Type& t = tile_type(value, "reshape");
  const std::int64_t n = t.size();
  int infer = -1;
  std::int64_t known = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) throw ValueError("reshape: can only specify one unknown dimension");
      infer = static_cast<int>(i);
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0 && known > 0 && n % known == 0) shape[static_cast<std::size_t>(infer)] = n / known;
  if (shape_size(shape) != n || (infer >= 0 && shape[static_cast<std::size_t>(infer)] == -1))
    throw ValueError(
        cat("cannot reshape a tile of size ", n, " (shape ", shape_str(t.shape), ") into shape ", shape_str(shape)));
  if (shape == t.shape) return value;
  Type r = t;
  r.shape = std::move(shape);
  return emit1(OpKind::reshape, {value}, r);
}

int Builder::permute(int value, std::vector<std::int64_t> axes) {
  const Type& t = tile_type(value, "permute");
  const int nd = static_cast<int>(t.shape.size());
  if (static_cast<int>(axes.size()) != nd)
    throw ValueError(cat("permute: axes has ", axes.size(), " entries but the tile has ", nd, " dimensions"));
  std::vector<bool> seen(static_cast<std::size_t>(nd), false);
  Shape out;
  for (auto& a : axes) {
    a = normalize_axis(static_cast<int>(a), nd, "permute");
    if (seen[static_cast<std::size_t>(a)]) throw ValueError("permute: repeated axis in axes");
    seen[static_cast<std::size_t>(a)] = true;
    out.push_back(t.shape[static_cast<std::size_t>(a)]);
  }
  bool identity = true;
  for (int i = 0; i < nd; ++i) identity = identity && axes[static_cast<std::size_t>(i)] == i;
  if (identity) return value;
  Op& op = emit(OpKind::permute, {value}, {Type::tile(t.dtype, out)});
  op.ints = std::move(axes);
  return op.result();
}

int Builder::expand_dims(int value, int axis) {
  const Type& t = tile_type(value, "expand_dims");
  const int nd = static_cast<int>(t.shape.size()) + 1;
  const int ax = normalize_axis(axis, nd, "expand_dims");
  Shape s = t.shape;
  s.insert(s.begin() + ax, 1);
  return reshape(value, s);
}

int Builder::full(Shape shape, int value, DType dtype) {
  check_tile_shape(shape, "full");
  const Type& t = tile_type(value, "full");
  if (!t.is_scalar()) throw TypeError(cat("full: the fill value must be a scalar, got ", t.str()));
  if (is_complex(dtype)) throw TypeError("full: complex tiles are not supported yet");
  value = to_dtype(value, dtype);
  return emit1(OpKind::full, {value}, Type::tile(dtype, std::move(shape)));
}

int Builder::arange(std::int64_t start, std::int64_t stop, DType dtype) {
  if (stop <= start) throw ValueError(cat("arange: the tile would be empty (start ", start, ", stop ", stop, ")"));
  if (!is_integer(dtype) && !is_floating(dtype))
    throw TypeError(cat("arange: dtype must be integer or float, got ", name(dtype)));
  check_tile_shape({stop - start}, "arange");
  Op& op = emit(OpKind::arange, {}, {Type::tile(dtype, {stop - start})});
  op.ints = {start};
  return op.result();
}

}  // namespace cupric::tile
