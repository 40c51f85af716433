// ufuncs.cpp — builds the ufunc registry from ufunc_table.def and resolves loops (NEP 50).
#include <algorithm>
#include <mutex>

#include "cupric/errors.hpp"
#include "cupric/ufunc.hpp"

namespace cupric {

namespace {
struct Row {
  const char* name;
  int nin;
  const char* types;
  OutRule out;
  UfuncFlags flags;
  const char* expression;
};

#define CUPRIC_UFUNC(NAME, NIN, TYPES, OUT, FLAGS, EXPR) {#NAME, NIN, TYPES, OutRule::OUT, UfuncFlags::FLAGS, #EXPR},
const Row kRows[] = {
#include "ufunc_table.def"
};
#undef CUPRIC_UFUNC

constexpr char kCodes[kNumDTypes + 1] = "?bBhHiIlLeEfdFD";

DType out_type(OutRule rule, DType in) {
  switch (rule) {
    case OutRule::same: return in;
    case OutRule::boolean: return DType::bool_;
    case OutRule::real: return real_dtype(in);
  }
  return in;
}

std::vector<Ufunc> build_table() {
  std::vector<Ufunc> table;
  for (const Row& row : kRows) {
    Ufunc uf;
    uf.id = static_cast<int>(table.size());
    uf.name = row.name;
    uf.nin = row.nin;
    uf.out_rule = row.out;
    uf.flags = row.flags;
    uf.types = row.types;
    uf.expression = row.expression;
    for (const char* c = row.types; *c; ++c) {
      const DType t = dtype_from_code(*c);
      const DType ct = (t == DType::float16 || t == DType::bfloat16) ? DType::float32 : t;
      UfuncLoop loop;
      for (int i = 0; i < uf.nin; ++i) {
        loop.types[i] = t;
        loop.compute[i] = ct;
      }
      loop.types[uf.nin] = out_type(row.out, t);
      loop.compute[uf.nin] = out_type(row.out, ct);
      uf.loops.push_back(loop);
    }
    table.push_back(std::move(uf));
  }
  return table;
}

std::string dtype_list(const std::vector<TypeOperand>& inputs) {
  std::string s;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (i) s += ", ";
    s += inputs[i].weak != WeakKind::none ? cat("Python ", name(inputs[i].dtype)) : name(inputs[i].dtype);
  }
  return s;
}
}  // namespace

char dtype_code(DType t) { return kCodes[static_cast<int>(t)]; }

DType dtype_from_code(char c) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (kCodes[i] == c) return static_cast<DType>(i);
  throw ValueError(cat("unknown type code '", c, "'"));
}

std::vector<std::string> Ufunc::type_signatures() const {
  std::vector<std::string> out;
  for (const UfuncLoop& l : loops) {
    std::string s;
    for (int i = 0; i < nin; ++i) s += dtype_code(l.types[i]);
    s += "->";
    s += dtype_code(l.types[nin]);
    out.push_back(s);
  }
  return out;
}

const std::vector<Ufunc>& all_ufuncs() {
  static const std::vector<Ufunc> table = build_table();
  return table;
}

const std::vector<std::pair<std::string, std::string>>& ufunc_aliases() {
  static const std::vector<std::pair<std::string, std::string>> aliases = {
      {"abs", "absolute"},         {"acos", "arccos"},         {"acosh", "arccosh"},
      {"asin", "arcsin"},          {"asinh", "arcsinh"},       {"atan", "arctan"},
      {"atanh", "arctanh"},        {"atan2", "arctan2"},       {"pow", "power"},
      {"true_divide", "divide"},   {"mod", "remainder"},       {"conj", "conjugate"},
      {"degrees", "rad2deg"},      {"radians", "deg2rad"},     {"bitwise_not", "invert"},
      {"bitwise_invert", "invert"}, {"bitwise_left_shift", "left_shift"},
      {"bitwise_right_shift", "right_shift"},
  };
  return aliases;
}

const Ufunc& find_ufunc(std::string_view name) {
  for (const auto& [alias, target] : ufunc_aliases())
    if (alias == name) return find_ufunc(target);
  for (const Ufunc& uf : all_ufuncs())
    if (uf.name == name) return uf;
  throw ValueError(cat("no ufunc named '", name, "'"));
}

const UfuncLoop& resolve_loop(const Ufunc& uf, const std::vector<Array>& inputs, std::optional<DType> dtype) {
  if (static_cast<int>(inputs.size()) != uf.nin)
    throw TypeError(cat(uf.name, "() takes ", uf.nin, " input(s), got ", inputs.size()));
  if (dtype) {
    for (const UfuncLoop& l : uf.loops)
      if (l.types[uf.nin] == *dtype || (uf.out_rule != OutRule::same && l.types[0] == *dtype)) return l;
    throw TypeError(cat("ufunc '", uf.name, "' has no loop for dtype ", name(*dtype)));
  }
  std::vector<TypeOperand> ops;
  for (const Array& a : inputs) ops.push_back({a.dtype(), a.weak()});
  return resolve_loop(uf, ops);
}

const UfuncLoop& resolve_loop(const Ufunc& uf, const std::vector<TypeOperand>& inputs) {
  if (static_cast<int>(inputs.size()) != uf.nin)
    throw TypeError(cat(uf.name, "() takes ", uf.nin, " input(s), got ", inputs.size()));
  DType common = result_type(inputs);
  if ((uf.name == "subtract" || uf.name == "negative") && common == DType::bool_)
    throw TypeError(cat("numpy boolean ", uf.name,
                        ", the `-` operator, is not supported, use the bitwise_xor, the `^` operator, or the "
                        "logical_xor function instead."));
  if ((static_cast<int>(uf.flags) & static_cast<int>(UfuncFlags::int_to_float64)) && !is_inexact(common))
    common = DType::float64;
  for (const UfuncLoop& l : uf.loops)
    if (can_cast(common, l.types[0], Casting::safe)) return l;
  std::string supported;
  for (const auto& s : uf.type_signatures()) supported += (supported.empty() ? "" : " ") + s;
  throw TypeError(cat("ufunc '", uf.name, "' not supported for the input types (", dtype_list(inputs),
                      "); its loops are: ", supported));
}

}  // namespace cupric
