// ir.cpp — names and the text form of the tile IR (what `kernel.inspect()["ir"]` shows).
#include "cupric/tile_compiler/ir.hpp"

#include <sstream>

#include "cupric/errors.hpp"

namespace cupric::tile {

std::string Type::str() const {
  const char* ir_name = info(dtype).ir_name;
  if (is_array()) return cat("array<", ir_name, ", ", ndim, ">");
  std::string s = weak != WeakKind::none ? cat("weak ", ir_name) : std::string(ir_name);
  if (shape.empty()) return s;
  s += "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += cat(i ? ", " : "", shape[i]);
  s += "]";
  return layout.is_mma() ? cat(s, " ", layout.str()) : s;
}

std::string TileLayout::str() const {
  if (!is_mma()) return "";
  if (slice == rows_of) return cat("rows of mma(", rows, "x_, warps ", warps_m, "x", warps_n, ")");
  if (slice == cols_of) return cat("columns of mma(_x", cols, ", warps ", warps_m, "x", warps_n, ")");
  return cat("mma(", rows, "x", cols, ", warps ", warps_m, "x", warps_n, ")");
}

const char* op_name(OpKind k) {
  switch (k) {
    case OpKind::param: return "param";
    case OpKind::constant: return "constant";
    case OpKind::bid: return "bid";
    case OpKind::num_blocks: return "num_blocks";
    case OpKind::array_dim: return "array_dim";
    case OpKind::array_stride: return "array_stride";
    case OpKind::ufunc: return "ufunc";
    case OpKind::cast: return "cast";
    case OpKind::where: return "where";
    case OpKind::broadcast: return "broadcast";
    case OpKind::reshape: return "reshape";
    case OpKind::permute: return "permute";
    case OpKind::full: return "full";
    case OpKind::arange: return "arange";
    case OpKind::reduce: return "reduce";
    case OpKind::argreduce: return "argreduce";
    case OpKind::scan: return "scan";
    case OpKind::mma: return "mma";
    case OpKind::load: return "load";
    case OpKind::store: return "store";
    case OpKind::load_offset: return "load_offset";
    case OpKind::store_offset: return "store_offset";
    case OpKind::gather: return "gather";
    case OpKind::scatter: return "scatter";
    case OpKind::atomic: return "atomic";
    case OpKind::print: return "print";
    case OpKind::assert_: return "assert";
    case OpKind::for_: return "for";
    case OpKind::if_: return "if";
    case OpKind::yield: return "yield";
    case OpKind::convert_layout: return "convert_layout";
  }
  return "?";
}

namespace {

std::string ints_str(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += cat(i ? ", " : "", v[i]);
  return s + "]";
}

std::string values_str(const std::vector<int>& v, std::size_t from = 0) {
  std::string s;
  for (std::size_t i = from; i < v.size(); ++i) s += cat(i > from ? ", " : "", "%", v[i]);
  return s;
}

void print_region(std::ostringstream& os, const Function& f, const Region& r, int indent);

std::string attrs_str(const Op& op) {
  switch (op.kind) {
    case OpKind::param: return cat(" #", op.ints.at(0), " ", op.name);
    case OpKind::constant: return cat(" ", op.value.str());
    case OpKind::bid:
    case OpKind::num_blocks: return cat(" ", op.ints.at(0));
    case OpKind::array_dim:
    case OpKind::array_stride: return cat(" %", op.operands.at(0), ", ", op.ints.at(0));
    case OpKind::ufunc: return cat(" ", op.name, " ", values_str(op.operands));
    case OpKind::permute: return cat(" ", values_str(op.operands), " ", ints_str(op.ints));
    case OpKind::arange: return cat(" start ", op.ints.at(0));
    case OpKind::reduce:
    case OpKind::argreduce:
      return cat(" ", op.name, " ", values_str(op.operands), " axis ", op.ints.at(0), op.flag ? " keepdims" : "");
    case OpKind::scan: return cat(" ", op.name, " ", values_str(op.operands), " axis ", op.ints.at(0));
    case OpKind::mma:
      return cat(" ", values_str(op.operands), op.flag ? " tf32" : "", op.b_transposed ? " b_transposed" : "");
    case OpKind::load:
    case OpKind::load_offset:
      return cat(" %", op.operands.at(0), "[", values_str(op.operands, 1), "] pad ", op.value.str(),
                 op.staging == LoadStaging::ring       ? " staged(ring)"
                 : op.staging == LoadStaging::resident ? " staged(resident)"
                                                       : "");
    case OpKind::store:
    case OpKind::store_offset:
      return cat(" %", op.operands.at(0), "[", values_str({op.operands.begin() + 1, op.operands.end() - 1}), "] = %",
                 op.operands.back());
    case OpKind::gather: return cat(" ", values_str(op.operands), op.flag ? " masked" : "", " pad ", op.value.str());
    case OpKind::scatter: return cat(" ", values_str(op.operands), op.flag ? " masked" : "");
    case OpKind::atomic: return cat(" ", op.name, " ", values_str(op.operands), op.flag ? " masked" : "");
    case OpKind::print:
    case OpKind::assert_: return cat(" \"", op.name, "\" ", values_str(op.operands));
    case OpKind::for_:
      if (op.staged.stages == 0) return cat(" ", values_str(op.operands));
      return cat(" ", values_str(op.operands), " staged(", op.staged.stages, " stages, ", op.staged.in_flight,
                 " in flight, ", op.staged.min_blocks, " blocks per SM",
                 op.staged.turns > 0 ? cat(", ", op.staged.turns, " turns") : std::string(),
                 op.staged.defer ? ", the last product deferred" : "", ")");
    default: return op.operands.empty() ? std::string() : cat(" ", values_str(op.operands));
  }
}

void print_op(std::ostringstream& os, const Function& f, const Op& op, int indent) {
  os << std::string(static_cast<std::size_t>(indent) * 2, ' ');
  if (!op.results.empty()) os << values_str(op.results) << " = ";
  os << op_name(op.kind) << attrs_str(op);
  for (std::size_t i = 0; i < op.results.size(); ++i) os << (i ? ", " : " : ") << f.type(op.results[i]).str();
  if (op.loc.line) os << "   (" << op.loc.file.substr(op.loc.file.find_last_of('/') + 1) << ":" << op.loc.line << ")";
  os << "\n";
  for (std::size_t i = 0; i < op.regions.size(); ++i) {
    const Region& r = op.regions[i];
    os << std::string(static_cast<std::size_t>(indent) * 2, ' ')
       << (op.kind == OpKind::if_ ? (i ? "else" : "then") : "do");
    if (!r.args.empty()) os << " (" << values_str(r.args) << ")";
    os << ":\n";
    print_region(os, f, r, indent + 1);
  }
}

void print_region(std::ostringstream& os, const Function& f, const Region& r, int indent) {
  for (const Op& op : r.ops) print_op(os, f, op, indent);
}

}  // namespace

std::string to_text(const Function& f) {
  std::ostringstream os;
  os << "kernel " << f.name << "(";
  for (std::size_t i = 0; i < f.params.size(); ++i)
    os << (i ? ", " : "") << "%" << f.params[i] << ": " << f.type(f.params[i]).str();
  os << ")\n";
  print_region(os, f, f.body, 1);
  return os.str();
}

}  // namespace cupric::tile
