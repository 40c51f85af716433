// passes.cpp — canonicalisation of the tile IR: constant folding, common subexpressions, dead code.
#include "cupric/tile_compiler/passes.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "cupric/errors.hpp"
#include "cupric/ufunc.hpp"

namespace cupric::tile {

namespace {

Scalar scalar_from_array(const Array& a) {
  return visit_dtype(a.dtype(), [&]<class T>() -> Scalar {
    T v;
    std::memcpy(&v, a.data(), sizeof(T));
    if constexpr (std::is_same_v<T, bool>) return Scalar::from_bool(v);
    else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) return Scalar::from_int(v);
    else if constexpr (std::is_integral_v<T>) return Scalar::from_uint(v);
    else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
      return Scalar::from_complex(std::complex<double>(v.real(), v.imag()));
    else return Scalar::from_float(static_cast<double>(v));
  });
}

bool fold(Function& f, Op& op, const std::unordered_map<int, const Scalar*>& constants) {
  // (an exp2 that flushes subnormal results is left to run time, where its rule is)
  if (op.kind != OpKind::ufunc || !f.type(op.result()).is_scalar() || op.ints.size() > 1) return false;
  std::vector<Array> inputs;
  for (int v : op.operands) {
    auto it = constants.find(v);
    if (it == constants.end()) return false;
    inputs.push_back(scalar_array(*it->second, f.type(v).dtype));
  }
  UfuncOptions options;
  options.dtype = f.type(op.result()).dtype;
  Array r;
  try {
    r = apply_ufunc(op.name, inputs, options);
  } catch (const std::exception&) {
    return false;  // leave it to run time
  }
  if (r.dtype() != f.type(op.result()).dtype) return false;
  op.kind = OpKind::constant;
  op.value = scalar_from_array(r);
  op.operands.clear();
  op.name.clear();
  op.ints.clear();
  return true;
}

bool has_side_effects(const Op& op) {
  switch (op.kind) {
    case OpKind::param:
    case OpKind::store:
    case OpKind::store_offset:
    case OpKind::scatter:
    case OpKind::atomic:
    case OpKind::print:
    case OpKind::assert_:
    case OpKind::for_:
    case OpKind::if_:
    case OpKind::yield: return true;
    default: return false;
  }
}

int fold_region(Function& f, Region& r, std::unordered_map<int, const Scalar*>& constants) {
  int changed = 0;
  for (Op& op : r.ops) {
    if (fold(f, op, constants)) ++changed;
    if (op.kind == OpKind::constant) constants[op.result()] = &op.value;
    for (Region& sub : op.regions) changed += fold_region(f, sub, constants);
  }
  return changed;
}

std::string op_key(const Function& f, const Op& op) {
  std::string k = cat(static_cast<int>(op.kind), "|", op.name, "|", op.flag, "|", f.type(op.result()).str(), "|");
  for (int v : op.operands) k += cat(v, ",");
  k += "|";
  for (auto i : op.ints) k += cat(i, ",");
  k += cat("|", op.b_transposed, static_cast<int>(op.staging), op.staged.stages, op.staged.in_flight,
           op.staged.min_blocks, op.staged.turns, op.staged.defer);
  if (op.kind == OpKind::constant) k += cat("|", static_cast<int>(op.value.kind), ":", op.value.str());
  return k;
}

/// Common subexpressions: a pure op equal to one before it (in its region or an enclosing one)
/// is replaced by it. Uses are renamed as the walk goes (definitions precede uses).
int cse_region(const Function& f, Region& r, std::unordered_map<std::string, int> known,
               std::unordered_map<int, int>& rename) {
  int changed = 0;
  for (Op& op : r.ops) {
    for (int& v : op.operands)
      if (auto it = rename.find(v); it != rename.end()) v = it->second;
    for (Region& sub : op.regions) changed += cse_region(f, sub, known, rename);
    if (!is_pure(op) || op.results.size() != 1) continue;
    const std::string key = op_key(f, op);
    auto [it, inserted] = known.emplace(key, op.result());
    if (!inserted) {
      rename[op.result()] = it->second;
      ++changed;
    }
  }
  return changed;
}

void count_uses(const Region& r, std::unordered_map<int, int>& uses) {
  for (const Op& op : r.ops) {
    for (int v : op.operands) ++uses[v];
    for (const Region& sub : op.regions) count_uses(sub, uses);
  }
}

int remove_dead(Region& r, const std::unordered_map<int, int>& uses) {
  int removed = 0;
  std::vector<Op> kept;
  kept.reserve(r.ops.size());
  for (Op& op : r.ops) {
    for (Region& sub : op.regions) removed += remove_dead(sub, uses);
    bool used = has_side_effects(op);
    for (int v : op.results) used = used || (uses.count(v) && uses.at(v) > 0);
    if (used) kept.push_back(std::move(op));
    else ++removed;
  }
  r.ops = std::move(kept);
  return removed;
}

}  // namespace

bool writes_memory(const Op& op) {
  return op.kind == OpKind::store || op.kind == OpKind::store_offset || op.kind == OpKind::scatter ||
         op.kind == OpKind::atomic;
}

bool reads_value(const Op& op, int v) {
  bool found = std::find(op.operands.begin(), op.operands.end(), v) != op.operands.end();
  for (const Region& sub : op.regions)
    walk(sub,
         [&](const Op& o) { found = found || std::find(o.operands.begin(), o.operands.end(), v) != o.operands.end(); });
  return found;
}

bool is_pure(const Op& op) {
  switch (op.kind) {
    case OpKind::constant:
    case OpKind::bid:
    case OpKind::num_blocks:
    case OpKind::array_dim:
    case OpKind::array_stride:
    case OpKind::ufunc:
    case OpKind::cast:
    case OpKind::where:
    case OpKind::broadcast:
    case OpKind::reshape:
    case OpKind::permute:
    case OpKind::full:
    case OpKind::arange:
    case OpKind::reduce:
    case OpKind::argreduce:
    case OpKind::scan:
    case OpKind::mma:
    case OpKind::convert_layout: return true;
    default: return false;  // memory reads may see stores; control flow and side effects stay
  }
}

int fold_constants(Function& f) {
  std::unordered_map<int, const Scalar*> constants;
  return fold_region(f, f.body, constants);
}

int merge_common_subexpressions(Function& f) {
  std::unordered_map<int, int> rename;
  return cse_region(f, f.body, {}, rename);
}

int remove_dead_code(Function& f) {
  int removed = 0;
  for (;;) {  // removing an op can leave its operands unused
    std::unordered_map<int, int> uses;
    count_uses(f.body, uses);
    const int now = remove_dead(f.body, uses);
    removed += now;
    if (!now) return removed;
  }
}

int canonicalize(Function& f) { return fold_constants(f) + merge_common_subexpressions(f) + remove_dead_code(f); }

}  // namespace cupric::tile
