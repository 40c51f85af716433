// ufuncs.cpp — builds the ufunc registry from ufunc_table.def and resolves loops (NEP 50).
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
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
  const char* doc;
};

#define CUPRIC_UFUNC(NAME, NIN, TYPES, OUT, FLAGS, EXPR, DOC) \
  {#NAME, NIN, TYPES, OutRule::OUT, UfuncFlags::FLAGS, #EXPR, DOC},
const Row kRows[] = {
#include "cupric/ufunc_table.def"
};
#undef CUPRIC_UFUNC

constexpr char kCodes[kNumDTypes + 1] = "?bBhHiIlLeEfdFD45";

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
    uf.doc = row.doc;
    for (const char* c = row.types; *c; ++c) {
      const DType t = dtype_from_code(*c);
      const DType ct = is_narrow_float(t) && !has_flag(row.flags, UfuncFlags::half_native) ? DType::float32 : t;
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
      {"abs", "absolute"},
      {"acos", "arccos"},
      {"acosh", "arccosh"},
      {"asin", "arcsin"},
      {"asinh", "arcsinh"},
      {"atan", "arctan"},
      {"atanh", "arctanh"},
      {"atan2", "arctan2"},
      {"pow", "power"},
      {"true_divide", "divide"},
      {"mod", "remainder"},
      {"conj", "conjugate"},
      {"degrees", "rad2deg"},
      {"radians", "deg2rad"},
      {"bitwise_not", "invert"},
      {"bitwise_invert", "invert"},
      {"bitwise_left_shift", "left_shift"},
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

/// What each input counts as in the loop search: arrays their dtype; a Python scalar the dtype it
/// takes next to the arrays (NEP 50), or with no arrays the common default dtype.
/// The types the loop search checks: each strong input's own dtype, and for each weak scalar
/// the dtype it takes beside the strong inputs (all of them `common` when every input is weak).
namespace {
/// NEP 50 result_type over a few operands, without allocating.
DType common_type(const TypeOperand* ops, int n) {
  bool have_strong = false;
  DType common = DType::bool_;
  for (int i = 0; i < n; ++i) {
    if (ops[i].weak != WeakKind::none) continue;
    common = have_strong ? promote_types(common, ops[i].dtype) : ops[i].dtype;
    have_strong = true;
  }
  if (!have_strong) {
    common = ops[0].dtype;
    for (int i = 0; i < n; ++i) common = promote_types(common, ops[i].dtype);
  } else {
    for (int i = 0; i < n; ++i) common = promote_weak(common, ops[i].weak);
  }
  return common;
}

/// The types the loop search checks: each strong input's own dtype, and for each weak scalar
/// the dtype it takes beside the strong inputs (all of them `common` when every input is weak).
std::array<DType, kMaxUfuncArgs> search_types(const TypeOperand* ops, int n, DType common) {
  bool have_strong = false;
  DType strong_common = common;
  for (int i = 0; i < n; ++i) {
    if (ops[i].weak != WeakKind::none) continue;
    strong_common = have_strong ? promote_types(strong_common, ops[i].dtype) : ops[i].dtype;
    have_strong = true;
  }
  std::array<DType, kMaxUfuncArgs> types{};
  for (int i = 0; i < n && i < kMaxUfuncArgs; ++i) {
    if (!have_strong) types[i] = common;
    else types[i] = ops[i].weak == WeakKind::none ? ops[i].dtype : promote_weak(strong_common, ops[i].weak);
  }
  return types;
}

/// can_cast(from, to, safe) for every pair, as one bit per target: the loop search below asks
/// it for every loop before the one it takes (13 loops for float64), on every call.
const std::array<std::uint32_t, kNumDTypes>& safe_casts() {
  static const std::array<std::uint32_t, kNumDTypes> table = [] {
    std::array<std::uint32_t, kNumDTypes> t{};
    for (int f = 0; f < kNumDTypes; ++f)
      for (int to = 0; to < kNumDTypes; ++to)
        if (can_cast(static_cast<DType>(f), static_cast<DType>(to), Casting::safe)) t[f] |= 1u << to;
    return t;
  }();
  return table;
}

/// Resolutions already made, per ufunc: the inputs' (dtype, weak kind) packed into a key, and the
/// loop found for them, in one atomic word per slot (a lock-free direct-mapped cache). Only
/// successful resolutions are kept; the search is deterministic, so a hit returns what it would.
struct LoopCache {
  static constexpr int kSlots = 8;
  std::atomic<std::uint64_t> slots[kSlots] = {};
};

LoopCache& loop_cache(const Ufunc& uf) {
  static std::vector<LoopCache> caches(all_ufuncs().size());
  return caches[static_cast<std::size_t>(uf.id)];
}

/// 8 bits per input (5 of dtype, 3 of weak kind) and a marker bit: 0 means "cannot be cached".
std::uint64_t loop_key(const TypeOperand* ops, int n) {
  static_assert(kNumDTypes <= 32);
  if (n > 3) return 0;
  std::uint64_t key = 1;
  for (int i = 0; i < n; ++i)
    key = (key << 8) | (static_cast<std::uint64_t>(ops[i].dtype) << 3) | static_cast<std::uint64_t>(ops[i].weak);
  return key;
}

const UfuncLoop& search_loop(const Ufunc& uf, const TypeOperand* ops, int n);

const UfuncLoop& resolve(const Ufunc& uf, const TypeOperand* ops, int n) {
  if (n != uf.nin) throw TypeError(cat(uf.name, "() takes ", uf.nin, " input(s), got ", n));
  const std::uint64_t key = loop_key(ops, n);
  if (key == 0) return search_loop(uf, ops, n);
  std::atomic<std::uint64_t>& slot = loop_cache(uf).slots[(key * 0x9E3779B97F4A7C15ull) >> 61];
  const std::uint64_t seen = slot.load(std::memory_order_relaxed);
  if ((seen >> 8) == key) return uf.loops[(seen & 0xffu) - 1];
  const UfuncLoop& l = search_loop(uf, ops, n);
  slot.store((key << 8) | static_cast<std::uint64_t>(&l - uf.loops.data() + 1), std::memory_order_relaxed);
  return l;
}

const UfuncLoop& search_loop(const Ufunc& uf, const TypeOperand* ops, int n) {
  const DType common = common_type(ops, n);
  if (common == DType::bool_ && (uf.name == "subtract" || uf.name == "negative"))
    throw TypeError(cat("numpy boolean ", uf.name,
                        ", the `-` operator, is not supported, use the bitwise_xor, the `^` operator, or the "
                        "logical_xor function instead."));
  auto supported = [&] {
    std::string text;
    for (const auto& sig : uf.type_signatures()) text += (text.empty() ? "" : " ") + sig;
    return text;
  };
  auto listed = [&] { return dtype_list(std::vector<TypeOperand>(ops, ops + n)); };
  if (has_flag(uf.flags, UfuncFlags::no_bool) && common == DType::bool_)
    throw TypeError(cat("ufunc '", uf.name, "' not supported for the input types (", listed(),
                        "): it has no bool loop; its loops are: ", supported()));
  // NumPy's linear search: the first loop that every input casts to safely (so int8 and uint8
  // meet in float16 for a float-only ufunc, although they promote to int16)
  std::array<DType, kMaxUfuncArgs> types = search_types(ops, n, common);
  if (has_flag(uf.flags, UfuncFlags::int_to_float64) && !is_inexact(common)) types.fill(DType::float64);
  const auto& safe = safe_casts();
  auto fits = [&](const UfuncLoop& l) {
    bool ok = true;
    for (int i = 0; i < uf.nin && ok; ++i) ok = (safe[static_cast<int>(types[i])] >> static_cast<int>(l.types[i])) & 1u;
    return ok;
  };
  // NumPy tries the loops of user dtypes (ml_dtypes' bfloat16 and float8s) among the inputs first,
  // in input order: int8 + float8_e4m3fn finds the float8 loop before bfloat16's, which it also casts to
  for (int i = 0; i < uf.nin; ++i)
    if (is_ml_dtype(types[i]))
      for (const UfuncLoop& l : uf.loops)
        if (l.types[0] == types[i] && fits(l)) return l;
  for (const UfuncLoop& l : uf.loops)  // the built-in types' loops (NumPy's linear search)
    if (!is_ml_dtype(l.types[0]) && fits(l)) return l;
  throw TypeError(
      cat("ufunc '", uf.name, "' not supported for the input types (", listed(), "); its loops are: ", supported()));
}
}  // namespace

const UfuncLoop& resolve_loop(const Ufunc& uf, std::span<const Array* const> inputs, std::optional<DType> dtype) {
  if (static_cast<int>(inputs.size()) != uf.nin)
    throw TypeError(cat(uf.name, "() takes ", uf.nin, " input(s), got ", inputs.size()));
  if (dtype) {
    for (const UfuncLoop& l : uf.loops)
      if (l.types[uf.nin] == *dtype || (uf.out_rule != OutRule::same && l.types[0] == *dtype)) return l;
    throw TypeError(cat("ufunc '", uf.name, "' has no loop for dtype ", name(*dtype)));
  }
  std::array<TypeOperand, kMaxUfuncArgs> ops{};
  for (int i = 0; i < uf.nin; ++i) ops[i] = {inputs[i]->dtype(), inputs[i]->weak()};
  return resolve(uf, ops.data(), uf.nin);
}

const UfuncLoop& resolve_loop(const Ufunc& uf, const std::vector<TypeOperand>& inputs) {
  return resolve(uf, inputs.data(), static_cast<int>(inputs.size()));
}

}  // namespace cupric
