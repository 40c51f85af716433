// builder_ops.cpp — Builder: reductions, scans, matrix products, memory ops, debugging ops
// and structured control flow (for / if), with their shape and dtype rules.
#include <algorithm>

#include "cupric/errors.hpp"
#include "cupric/reduction_table.hpp"
#include "cupric/tile_compiler/builder.hpp"

namespace cupric::tile {

namespace {

bool is_index_type(DType t) { return is_integer(t) || is_bool(t); }

}  // namespace

// ---- reductions and scans ------------------------------------------------------------------

int Builder::reduce(const std::string& kind, int value, std::optional<int> axis, bool keepdims) {
  const ReductionRow* row = find_reduction(kind);
  if (!row) {
    std::string names;
    for (const ReductionRow& r : kReductionRows) names += cat(names.empty() ? "" : ", ", r.name);
    throw ValueError(cat("unknown reduction '", kind, "' (expected one of the reduction table's: ", names, ")"));
  }
  const Type t = tile_type(value, kind.c_str());
  const DType out = reduction_result_dtype(*row, t.dtype);
  if (t.is_scalar()) return to_dtype(value, out);
  const int nd = static_cast<int>(t.shape.size());
  if (!axis) {
    int flat = reshape(value, {t.size()});
    int r = reduce(kind, flat, 0, false);
    return keepdims ? reshape(r, Shape(static_cast<std::size_t>(nd), 1)) : r;
  }
  const int ax = normalize_axis(*axis, nd, kind.c_str());
  Shape s = t.shape;
  if (keepdims) s[static_cast<std::size_t>(ax)] = 1;
  else s.erase(s.begin() + ax);
  Op& op = emit(OpKind::reduce, {value}, {Type::tile(out, s)});
  op.name = kind;
  op.ints = {ax};
  op.flag = keepdims;
  return op.result();
}

int Builder::argreduce(const std::string& kind, int value, std::optional<int> axis, bool keepdims) {
  if (kind != "argmax" && kind != "argmin") throw ValueError(cat("unknown index reduction '", kind, "'"));
  const Type t = tile_type(value, kind.c_str());
  if (t.is_scalar()) return constant(Scalar::from_int(0), DType::int32);
  const int nd = static_cast<int>(t.shape.size());
  if (!axis) {
    int r = argreduce(kind, reshape(value, {t.size()}), 0, false);
    return keepdims ? reshape(r, Shape(static_cast<std::size_t>(nd), 1)) : r;
  }
  const int ax = normalize_axis(*axis, nd, kind.c_str());
  Shape s = t.shape;
  if (keepdims) s[static_cast<std::size_t>(ax)] = 1;
  else s.erase(s.begin() + ax);
  Op& op = emit(OpKind::argreduce, {value}, {Type::tile(DType::int32, s)});
  op.name = kind;
  op.ints = {ax};
  op.flag = keepdims;
  return op.result();
}

int Builder::scan(const std::string& kind, int value, int axis) {
  const ScanRow* scan = find_scan(kind);
  if (!scan) throw ValueError(cat("unknown scan '", kind, "'"));
  const Type t = tile_type(value, kind.c_str());
  if (t.is_scalar()) value = reshape(value, {1});
  const Type& tv = f_.type(value);
  const int ax = normalize_axis(axis, static_cast<int>(tv.shape.size()), kind.c_str());
  const DType out = reduction_result_dtype(reduction_row(scan->reduction), tv.dtype);
  Op& op = emit(OpKind::scan, {value}, {Type::tile(out, tv.shape)});
  op.name = kind;
  op.ints = {ax};
  return op.result();
}

// ---- matrix products -------------------------------------------------------------------------

namespace {
DType mma_acc_dtype(DType in) {
  switch (in) {
    case DType::float16:
    case DType::bfloat16:
    case DType::float8_e4m3fn:
    case DType::float8_e5m2:
    case DType::float32: return DType::float32;
    case DType::float64: return DType::float64;
    case DType::int8:
    case DType::uint8: return DType::int32;
    default:
      throw TypeError(
          cat("mma: inputs must be float8_e4m3fn, float8_e5m2, float16, bfloat16, float32, float64, int8 "
              "or uint8, got ",
              name(in)));
  }
}
}  // namespace

int Builder::mma(int a, int b, int acc, bool allow_tf32) {
  const Type ta = tile_type(a, "mma"), tb = tile_type(b, "mma"), tc = tile_type(acc, "mma");
  if (ta.shape.size() != 2 || tb.shape.size() != 2 || tc.shape.size() != 2)
    throw ValueError(
        cat("mma: expected 2-D tiles a (M, K), b (K, N), acc (M, N), got ", ta.str(), ", ", tb.str(), ", ", tc.str()));
  if (ta.shape[1] != tb.shape[0] || tc.shape[0] != ta.shape[0] || tc.shape[1] != tb.shape[1])
    throw ValueError(cat("mma: shapes do not match: a ", shape_str(ta.shape), " @ b ", shape_str(tb.shape), " + acc ",
                         shape_str(tc.shape), " (need a (M, K), b (K, N), acc (M, N))"));
  if (ta.dtype != tb.dtype)
    throw TypeError(cat("mma: a and b must have the same dtype, got ", name(ta.dtype), " and ", name(tb.dtype),
                        "; convert one with ct.astype"));
  const DType accd = mma_acc_dtype(ta.dtype);
  if (tc.dtype != accd)
    throw TypeError(
        cat("mma: the accumulator of ", name(ta.dtype), " inputs must be ", name(accd), ", got ", name(tc.dtype)));
  Op& op = emit(OpKind::mma, {a, b, acc}, {tc});
  op.flag = allow_tf32;
  return op.result();
}

int Builder::matmul(int a, int b, bool allow_tf32) {
  const Type ta = tile_type(a, "matmul"), tb = tile_type(b, "matmul");
  if (ta.shape.size() != 2 || tb.shape.size() != 2)
    throw ValueError(cat("matmul: expected 2-D tiles, got ", ta.str(), " and ", tb.str()));
  const DType accd = mma_acc_dtype(ta.dtype);
  int zero = full({ta.shape[0], tb.shape[1]}, constant(Scalar::from_int(0)), accd);
  return mma(a, b, zero, allow_tf32);
}

// ---- memory --------------------------------------------------------------------------------

namespace {
/// The padding as a value of the array's dtype: floats that are whole numbers fill integer
/// arrays; -inf, 0.5 and the like do not.
Scalar check_padding(Scalar p, DType t, const char* what) {
  if ((is_integer(t) || is_bool(t)) && p.kind == WeakKind::floating) {
    if (!(p.f == static_cast<double>(static_cast<long long>(p.f))))
      throw TypeError(cat(what, ": padding ", p.str(), " is not representable in an ", name(t), " array"));
    p = Scalar::from_int(static_cast<long long>(p.f));
  }
  alignas(16) unsigned char probe[16];
  p.store(t, probe);
  return p;
}
}  // namespace

int Builder::load(int array, std::vector<int> index, Shape shape, const Scalar& padding, bool offsets) {
  const char* what = offsets ? "load_offset" : "load";
  check_array(array, what);
  const Type ta = f_.type(array);
  if (static_cast<int>(index.size()) != ta.ndim || static_cast<int>(shape.size()) != ta.ndim)
    throw ValueError(cat(what, ": the array has ", ta.ndim, " dimension(s) but index has ", index.size(),
                         " entries and shape has ", shape.size(), " (give one per dimension)"));
  check_tile_shape(shape, what);
  const Scalar pad = check_padding(padding, ta.dtype, what);
  std::vector<int> ops{array};
  for (int v : index) ops.push_back(to_index(v, what));
  Op& op = emit(offsets ? OpKind::load_offset : OpKind::load, std::move(ops), {Type::tile(ta.dtype, shape)});
  op.value = pad;
  return op.result();
}

void Builder::store(int array, std::vector<int> index, int value, bool offsets) {
  const char* what = offsets ? "store_offset" : "store";
  check_array(array, what);
  const Type ta = f_.type(array);
  const Type tv = tile_type(value, what);
  if (static_cast<int>(index.size()) != ta.ndim)
    throw ValueError(cat(what, ": the array has ", ta.ndim, " dimension(s) but index has ", index.size(), " entries"));
  if (tv.is_scalar()) value = reshape(value, Shape(static_cast<std::size_t>(ta.ndim), 1));
  if (static_cast<int>(f_.type(value).shape.size()) != ta.ndim)
    throw ValueError(cat(what, ": a tile of shape ", shape_str(tv.shape), " cannot be stored into an array of ",
                         ta.ndim, " dimension(s); reshape it first"));
  std::vector<int> ops{array};
  for (int v : index) ops.push_back(to_index(v, what));
  ops.push_back(to_dtype(value, ta.dtype));
  emit(offsets ? OpKind::store_offset : OpKind::store, std::move(ops), {});
}

std::vector<int> Builder::address_operands(int array, std::vector<int> indices, int value, int mask, const char* what,
                                           Shape* shape) {
  check_array(array, what);
  const Type ta = f_.type(array);
  if (static_cast<int>(indices.size()) != ta.ndim)
    throw ValueError(
        cat(what, ": the array has ", ta.ndim, " dimension(s) but ", indices.size(), " index tile(s) were given"));
  std::vector<Shape> shapes;
  for (int v : indices) {
    const Type& t = tile_type(v, what);
    if (!is_index_type(t.dtype)) throw TypeError(cat(what, ": index tiles must be integers, got ", t.str()));
    shapes.push_back(t.shape);
  }
  if (value >= 0) shapes.push_back(tile_type(value, what).shape);
  if (mask >= 0) shapes.push_back(tile_type(mask, what).shape);
  *shape = broadcast_shapes(shapes);
  if (shape->empty()) *shape = {1};
  std::vector<int> ops{array};
  for (int v : indices) ops.push_back(broadcast_operand(v, *shape));
  if (value >= 0) ops.push_back(broadcast_operand(to_dtype(value, ta.dtype), *shape));
  if (mask >= 0) {
    if (!is_bool(f_.type(mask).dtype)) mask = ufunc("not_equal", {mask, constant(Scalar::from_int(0))});
    ops.push_back(broadcast_operand(mask, *shape));
  }
  return ops;
}

int Builder::gather(int array, std::vector<int> indices, int mask, const Scalar& padding) {
  Shape shape;
  const std::size_t n = indices.size();
  std::vector<int> ops = address_operands(array, std::move(indices), -1, mask, "gather", &shape);
  const Scalar pad = check_padding(padding, f_.type(array).dtype, "gather");
  Op& op = emit(OpKind::gather, std::move(ops), {Type::tile(f_.type(array).dtype, shape)});
  op.ints = {static_cast<std::int64_t>(n)};
  op.flag = mask >= 0;
  op.value = pad;
  return op.result();
}

void Builder::scatter(int array, std::vector<int> indices, int value, int mask) {
  Shape shape;
  const std::size_t n = indices.size();
  std::vector<int> ops = address_operands(array, std::move(indices), value, mask, "scatter", &shape);
  Op& op = emit(OpKind::scatter, std::move(ops), {});
  op.ints = {static_cast<std::int64_t>(n)};
  op.flag = mask >= 0;
}

void Builder::atomic(const std::string& kind, int array, std::vector<int> indices, int value, int mask) {
  if (kind != "add" && kind != "max" && kind != "min") throw ValueError(cat("unknown atomic '", kind, "'"));
  const std::string what = "atomic_" + kind;
  check_array(array, what.c_str());
  const DType t = f_.type(array).dtype;
  if (is_bool(t) || t == DType::int8 || t == DType::uint8 || t == DType::int16 || t == DType::uint16)
    throw TypeError(
        cat(what, ": atomics on ", name(t), " arrays are not supported (use 32/64-bit integers or floats)"));
  Shape shape;
  const std::size_t n = indices.size();
  std::vector<int> ops = address_operands(array, std::move(indices), value, mask, what.c_str(), &shape);
  Op& op = emit(OpKind::atomic, std::move(ops), {});
  op.name = kind;
  op.ints = {static_cast<std::int64_t>(n)};
  op.flag = mask >= 0;
}

void Builder::print(const std::string& prefix, std::vector<int> values) {
  for (int v : values) tile_type(v, "print");
  Op& op = emit(OpKind::print, std::move(values), {});
  op.name = prefix;
}

void Builder::assert_(int cond, const std::string& message) {
  const Type& t = tile_type(cond, "assert_");
  if (!is_bool(t.dtype)) cond = ufunc("not_equal", {cond, constant(Scalar::from_int(0))});
  Op& op = emit(OpKind::assert_, {cond}, {});
  op.name = message;
}

// ---- control flow ----------------------------------------------------------------------------

std::vector<int> Builder::begin_for(int lb, int ub, int step, std::vector<int> inits) {
  std::vector<int> ops{to_index(lb, "range"), to_index(ub, "range"), to_index(step, "range")};
  if (auto s = constant_value(step); s && s->kind == WeakKind::integer && s->i == 0)
    throw ValueError("range() arg 3 must not be zero");
  std::vector<Type> carried;
  for (int v : inits) {
    carried.push_back(tile_type(v, "loop-carried value"));
    ops.push_back(v);
  }
  Op& op = emit(OpKind::for_, std::move(ops), {});
  op.regions.emplace_back();
  Region& body = op.regions.back();
  body.args.push_back(f_.add_value(Type::scalar(DType::int64, WeakKind::integer)));
  for (Type& t : carried) body.args.push_back(f_.add_value(t));
  stack_.push_back(&body);
  return body.args;
}

namespace {
void check_yields(const Function& f, const std::vector<int>& expected, const std::vector<int>& got, const char* where) {
  if (expected.size() != got.size())
    throw ValueError(cat("internal: ", where, " yields ", got.size(), " values, expected ", expected.size()));
  for (std::size_t i = 0; i < got.size(); ++i) {
    const Type& a = f.type(expected[i]);
    const Type& b = f.type(got[i]);
    if (!a.same_as(b) || (a.weak == WeakKind::none) != (b.weak == WeakKind::none))
      throw TypeError(cat(where, ": value #", i, " changes type from ", a.str(), " to ", b.str(),
                          "; give it its final dtype and shape before the ", where,
                          " (e.g. with ct.astype / ct.full)"));
  }
}
}  // namespace

std::vector<int> Builder::end_for(std::vector<int> yields) {
  if (stack_.size() < 2) throw ValueError("internal: end_for without begin_for");
  Region& body = *stack_.back();
  std::vector<int> carried(body.args.begin() + 1, body.args.end());
  check_yields(f_, carried, yields, "loop");
  emit(OpKind::yield, std::move(yields), {});
  stack_.pop_back();
  Op& op = stack_.back()->ops.back();
  for (int v : carried) op.results.push_back(f_.add_value(f_.type(v)));
  return op.results;
}

void Builder::begin_if(int cond) {
  const Type& t = tile_type(cond, "if");
  if (!t.is_scalar())
    throw TypeError(cat("if: the condition must be a scalar, got a tile ", t.str(), "; use ct.where for tiles"));
  if (!is_bool(t.dtype)) cond = ufunc("not_equal", {cond, constant(Scalar::from_int(0))});
  Op& op = emit(OpKind::if_, {cond}, {});
  op.regions.resize(2);
  pending_then_yields_.emplace_back(depth(), std::vector<int>{});
  stack_.push_back(&op.regions[0]);
}

void Builder::begin_else(std::vector<int> then_yields) {
  if (pending_then_yields_.empty()) throw ValueError("internal: begin_else without begin_if");
  for (int v : then_yields) tile_type(v, "if");
  pending_then_yields_.back().second = then_yields;
  emit(OpKind::yield, std::move(then_yields), {});
  stack_.pop_back();
  stack_.push_back(&stack_.back()->ops.back().regions[1]);
}

std::vector<int> Builder::end_if(std::vector<int> else_yields) {
  if (pending_then_yields_.empty()) throw ValueError("internal: end_if without begin_if");
  std::vector<int> then_yields = std::move(pending_then_yields_.back().second);
  pending_then_yields_.pop_back();
  check_yields(f_, then_yields, else_yields, "if/else");
  emit(OpKind::yield, std::move(else_yields), {});
  stack_.pop_back();
  Op& op = stack_.back()->ops.back();
  for (int v : then_yields) op.results.push_back(f_.add_value(f_.type(v)));
  return op.results;
}

void Builder::rollback(int depth) {
  if (depth < 1 || depth >= static_cast<int>(stack_.size()) + 1)
    throw ValueError(cat("internal: bad rollback depth ", depth));
  while (static_cast<int>(stack_.size()) > depth) stack_.pop_back();
  Region& r = *stack_.back();
  if (r.ops.empty() || (r.ops.back().kind != OpKind::for_ && r.ops.back().kind != OpKind::if_))
    throw ValueError("internal: rollback target is not a for/if");
  r.ops.pop_back();
  while (!pending_then_yields_.empty() && pending_then_yields_.back().first >= depth) pending_then_yields_.pop_back();
}

}  // namespace cupric::tile
