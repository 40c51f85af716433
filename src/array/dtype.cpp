// dtype.cpp — the dtype table, NumPy's casting lattice and NEP 50 promotion.
#include "cupric/dtype.hpp"

#include <cfloat>
#include <cmath>
#include <limits>

#include "cupric/errors.hpp"

namespace cupric {

namespace {
// One row per dtype, one column per fact:
// dtype, name, itemsize, kind, typestr, DLPack code, IR name, CUDA kernel suffix, C++ type, tile type
// clang-format off
constexpr DTypeInfo kInfo[kNumDTypes] = {
    {DType::bool_,      "bool",       1,  DTypeKind::boolean,      "b1",  6, "b1",   "b1",  "bool",                 "bool"},
    {DType::int8,       "int8",       1,  DTypeKind::signed_int,   "i1",  0, "i8",   "i1",  "std::int8_t",          "::cu::tile::i8"},
    {DType::uint8,      "uint8",      1,  DTypeKind::unsigned_int, "u1",  1, "u8",   "u1",  "std::uint8_t",         "::cu::tile::u8"},
    {DType::int16,      "int16",      2,  DTypeKind::signed_int,   "i2",  0, "i16",  "i2",  "std::int16_t",         "::cu::tile::i16"},
    {DType::uint16,     "uint16",     2,  DTypeKind::unsigned_int, "u2",  1, "u16",  "u2",  "std::uint16_t",        "::cu::tile::u16"},
    {DType::int32,      "int32",      4,  DTypeKind::signed_int,   "i4",  0, "i32",  "i4",  "std::int32_t",         "::cu::tile::i32"},
    {DType::uint32,     "uint32",     4,  DTypeKind::unsigned_int, "u4",  1, "u32",  "u4",  "std::uint32_t",        "::cu::tile::u32"},
    {DType::int64,      "int64",      8,  DTypeKind::signed_int,   "i8",  0, "i64",  "i8",  "std::int64_t",         "::cu::tile::i64"},
    {DType::uint64,     "uint64",     8,  DTypeKind::unsigned_int, "u8",  1, "u64",  "u8",  "std::uint64_t",        "::cu::tile::u64"},
    {DType::float16,    "float16",    2,  DTypeKind::floating,     "f2",  2, "f16",  "f2",  "cupric::float16",      "::cu::tile::f16"},
    {DType::bfloat16,   "bfloat16",   2,  DTypeKind::floating,     "V2",  4, "bf16", "bf2", "cupric::bfloat16",     "::cu::tile::bf16"},
    {DType::float32,    "float32",    4,  DTypeKind::floating,     "f4",  2, "f32",  "f4",  "float",                "float"},
    {DType::float64,    "float64",    8,  DTypeKind::floating,     "f8",  2, "f64",  "f8",  "double",               "double"},
    {DType::complex64,  "complex64",  8,  DTypeKind::complex,      "c8",  5, "c64",  "c8",  "std::complex<float>",  nullptr},
    {DType::complex128, "complex128", 16, DTypeKind::complex,      "c16", 5, "c128", "c16", "std::complex<double>", nullptr},
    {DType::float8_e4m3fn, "float8_e4m3fn", 1, DTypeKind::floating, "V1", 10, "f8e4m3", "f8e4m3", "cupric::float8_e4m3fn", "::cu::tile::f8e4m3"},
    {DType::float8_e5m2, "float8_e5m2", 1,    DTypeKind::floating,  "f1", 12, "f8e5m2", "f8e5m2", "cupric::float8_e5m2",   "::cu::tile::f8e5m2"},
};
// clang-format on

struct Alias {
  const char* text;
  DType dtype;
};
// (not formatted: a table in columns)
// clang-format off
constexpr Alias kAliases[] = {
    {"bool", DType::bool_},       {"?", DType::bool_},           {"b1", DType::bool_},
    {"bool_", DType::bool_},      {"int8", DType::int8},         {"i1", DType::int8},
    {"b", DType::int8},           {"uint8", DType::uint8},       {"u1", DType::uint8},
    {"B", DType::uint8},          {"int16", DType::int16},       {"i2", DType::int16},
    {"h", DType::int16},          {"uint16", DType::uint16},     {"u2", DType::uint16},
    {"H", DType::uint16},         {"int32", DType::int32},       {"i4", DType::int32},
    {"i", DType::int32},          {"uint32", DType::uint32},     {"u4", DType::uint32},
    {"I", DType::uint32},         {"int64", DType::int64},       {"i8", DType::int64},
    {"l", DType::int64},          {"q", DType::int64},           {"int", DType::int64},
    {"intp", DType::int64},       {"uint64", DType::uint64},     {"u8", DType::uint64},
    {"L", DType::uint64},         {"Q", DType::uint64},          {"uint", DType::uint64},
    {"uintp", DType::uint64},     {"float16", DType::float16},   {"f2", DType::float16},
    {"e", DType::float16},        {"half", DType::float16},      {"bfloat16", DType::bfloat16},
    {"float32", DType::float32},  {"f4", DType::float32},        {"f", DType::float32},
    {"single", DType::float32},   {"float64", DType::float64},   {"f8", DType::float64},
    {"d", DType::float64},        {"float", DType::float64},     {"double", DType::float64},
    {"complex64", DType::complex64}, {"c8", DType::complex64},   {"F", DType::complex64},
    {"csingle", DType::complex64}, {"complex128", DType::complex128}, {"c16", DType::complex128},
    {"D", DType::complex128},     {"complex", DType::complex128}, {"cdouble", DType::complex128},
    {"float8_e4m3fn", DType::float8_e4m3fn}, {"float8_e5m2", DType::float8_e5m2},
};
// clang-format on

int kind_rank(DType t) {
  switch (kind(t)) {
    case DTypeKind::boolean: return 0;
    case DTypeKind::unsigned_int: return 1;
    case DTypeKind::signed_int: return 2;
    case DTypeKind::floating: return 3;
    case DTypeKind::complex: return 4;
  }
  return 0;
}

/// Bits of significand a float type holds exactly (integers up to 2^bits are exact).
int significand_bits(DType t) {
  switch (t) {
    case DType::float16: return 11;
    case DType::bfloat16: return 8;
    case DType::float8_e4m3fn: return 4;
    case DType::float8_e5m2: return 3;
    case DType::float32:
    case DType::complex64: return 24;
    default: return 53;
  }
}

bool compute_safe_cast(DType from, DType to) {
  if (from == to || from == DType::bool_) return true;
  // ml_dtypes' float8s: bool, int8 and uint8 cast to them safely (as ml_dtypes registers), and they
  // safely to bfloat16 and the wider types (but not float16, nor to each other)
  if (is_float8(to)) return from == DType::int8 || from == DType::uint8;
  if (is_float8(from)) return to == DType::bfloat16 || (is_inexact(to) && itemsize(real_dtype(to)) >= 4);
  const int fs = itemsize(from), ts = itemsize(to);
  switch (kind(from)) {
    case DTypeKind::boolean: return true;
    case DTypeKind::unsigned_int:
      if (is_unsigned_integer(to)) return ts >= fs;
      if (is_signed_integer(to)) return ts > fs;
      if (is_inexact(to)) return to == DType::float64 || to == DType::complex128 || fs * 8 <= significand_bits(to);
      return false;
    case DTypeKind::signed_int:
      if (is_signed_integer(to)) return ts >= fs;
      if (is_inexact(to)) return to == DType::float64 || to == DType::complex128 || fs * 8 <= significand_bits(to);
      return false;
    case DTypeKind::floating:
      if (from == DType::float16 && to == DType::bfloat16) return false;
      if (from == DType::bfloat16 && to == DType::float16) return false;
      if (is_floating(to)) return ts >= fs;
      if (is_complex(to)) return ts >= 2 * fs;
      return false;
    case DTypeKind::complex: return is_complex(to) && ts >= fs;
  }
  return false;
}
/// Both lattices as tables, computed once: type resolution runs on every op.
struct CastTables {
  bool safe[kNumDTypes][kNumDTypes];
  DType promote[kNumDTypes][kNumDTypes];
  CastTables() {
    for (int i = 0; i < kNumDTypes; ++i)
      for (int j = 0; j < kNumDTypes; ++j) safe[i][j] = compute_safe_cast(static_cast<DType>(i), static_cast<DType>(j));
    for (int i = 0; i < kNumDTypes; ++i)
      for (int j = 0; j < kNumDTypes; ++j) promote[i][j] = compute_promotion(i, j);
  }
  DType compute_promotion(int a, int b) const {
    if (safe[a][b]) return static_cast<DType>(b);
    if (safe[b][a]) return static_cast<DType>(a);
    // NumPy searches its own types only: ml_dtypes' are a result only when an operand is one
    // (float8_e4m3fn with float8_e5m2 gives float32, not bfloat16)
    for (int c = 0; c < kNumDTypes; ++c)
      if (safe[a][c] && safe[b][c] && !is_ml_dtype(static_cast<DType>(c))) return static_cast<DType>(c);
    return DType::complex128;  // unreachable: everything safely casts to complex128
  }
};
const CastTables& tables() {
  static const CastTables t;
  return t;
}
bool safe_cast(DType from, DType to) { return tables().safe[static_cast<int>(from)][static_cast<int>(to)]; }
}  // namespace

const DTypeInfo& info(DType t) { return kInfo[static_cast<int>(t)]; }

DType dtype_from_name(std::string_view text) {
  std::string_view s = text;
  if (!s.empty() && (s[0] == '<' || s[0] == '=' || s[0] == '|')) s.remove_prefix(1);
  for (const Alias& a : kAliases)
    if (s == a.text) return a.dtype;
  throw TypeError(cat("data type '", text, "' not understood"));
}

DType real_dtype(DType t) {
  if (t == DType::complex64) return DType::float32;
  if (t == DType::complex128) return DType::float64;
  return t;
}

DType complex_dtype(DType t) {
  if (is_complex(t)) return t;
  if (t == DType::float64 || is_integer(t)) return DType::complex128;
  return DType::complex64;
}

DType promote_types(DType a, DType b) { return tables().promote[static_cast<int>(a)][static_cast<int>(b)]; }

Casting casting_from_name(std::string_view text) {
  if (text == "no") return Casting::no;
  if (text == "equiv") return Casting::equiv;
  if (text == "safe") return Casting::safe;
  if (text == "same_kind") return Casting::same_kind;
  if (text == "unsafe") return Casting::unsafe;
  throw ValueError(cat("casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe', got '", text, "'"));
}

const char* casting_name(Casting c) {
  switch (c) {
    case Casting::no: return "no";
    case Casting::equiv: return "equiv";
    case Casting::safe: return "safe";
    case Casting::same_kind: return "same_kind";
    case Casting::unsafe: return "unsafe";
  }
  return "?";
}

bool can_cast(DType from, DType to, Casting casting) {
  switch (casting) {
    case Casting::no:
    case Casting::equiv: return from == to;
    case Casting::safe: return safe_cast(from, to);
    case Casting::same_kind: return safe_cast(from, to) || kind_rank(from) <= kind_rank(to);
    case Casting::unsafe: return true;
  }
  return false;
}

DType default_dtype(WeakKind k) {
  switch (k) {
    case WeakKind::boolean: return DType::bool_;
    case WeakKind::integer: return DType::int64;
    case WeakKind::floating: return DType::float64;
    case WeakKind::complex: return DType::complex128;
    case WeakKind::none: break;
  }
  return DType::float64;
}

DType promote_weak(DType strong, WeakKind k) {
  switch (k) {
    case WeakKind::none:
    case WeakKind::boolean: return strong;
    case WeakKind::integer: return is_bool(strong) ? DType::int64 : strong;
    case WeakKind::floating: return is_inexact(strong) ? strong : DType::float64;
    case WeakKind::complex:
      if (is_complex(strong)) return strong;
      if (is_floating(strong)) return strong == DType::float64 ? DType::complex128 : DType::complex64;
      return DType::complex128;
  }
  return strong;
}

DType result_type(const std::vector<TypeOperand>& operands) {
  if (operands.empty()) throw ValueError("at least one array or dtype is required");
  // Promotion is not associative (int8 with uint8 is int16, which with float16 is float32; but
  // float16 holds both). As NumPy, start from the first operand of the highest kind (bool, integer,
  // floating, complex) and promote the others into it in order.
  auto rank = [](DType t) { return is_complex(t) ? 3 : is_floating(t) ? 2 : is_bool(t) ? 0 : 1; };
  int first = -1;
  for (std::size_t k = 0; k < operands.size(); ++k)
    if (operands[k].weak == WeakKind::none && (first < 0 || rank(operands[k].dtype) > rank(operands[first].dtype)))
      first = static_cast<int>(k);
  const bool have_strong = first >= 0;
  DType strong = have_strong ? operands[first].dtype : DType::bool_;
  for (std::size_t k = 0; k < operands.size(); ++k)
    if (operands[k].weak == WeakKind::none && static_cast<int>(k) != first)
      strong = promote_types(strong, operands[k].dtype);
  if (!have_strong) {  // only Python scalars: their default dtypes promote
    DType t = operands[0].dtype;
    for (const auto& o : operands) t = promote_types(t, o.dtype);
    return t;
  }
  for (const auto& o : operands) strong = promote_weak(strong, o.weak);
  return strong;
}

FloatInfo finfo(DType t) {
  switch (real_dtype(t)) {
    case DType::float16:
      return {
          16, std::ldexp(1.0, -10), 65504.0, -65504.0, std::ldexp(1.0, -14), std::ldexp(1.0, -24), 1e-3, 3, 10, 5, -14,
          16, DType::float16};
    case DType::bfloat16:
      return {16,
              std::ldexp(1.0, -7),
              3.3895313892515355e38,
              -3.3895313892515355e38,
              std::ldexp(1.0, -126),
              std::ldexp(1.0, -133),
              1e-2,
              2,
              7,
              8,
              -126,
              128,
              DType::bfloat16};
    case DType::float8_e4m3fn:
      return {8, 0.125, 448.0, -448.0, 0.015625, std::ldexp(1.0, -9), 0.1015625, 1, 3, 4, -6, 9, DType::float8_e4m3fn};
    case DType::float8_e5m2:
      return {8, 0.25, 57344.0, -57344.0, std::ldexp(1.0, -14), std::ldexp(1.0, -16), 0.09375, 1,
              2, 5,    -14,     16,       DType::float8_e5m2};
    case DType::float32:
      return {32, FLT_EPSILON, FLT_MAX, -FLT_MAX, FLT_MIN, std::ldexp(1.0, -149), 1e-6,
              6,  23,          8,       -126,     128,     DType::float32};
    case DType::float64:
      return {64, DBL_EPSILON, DBL_MAX, -DBL_MAX, DBL_MIN, std::ldexp(1.0, -1074), 1e-15,
              15, 52,          11,      -1022,    1024,    DType::float64};
    default: break;
  }
  throw ValueError(cat("data type ", name(t), " not inexact"));
}

IntInfo iinfo(DType t) {
  if (!is_integer(t)) throw ValueError(cat("Invalid integer data type '", name(t), "'."));
  const int bits = itemsize(t) * 8;
  if (is_unsigned_integer(t)) {
    std::uint64_t max = bits == 64 ? std::numeric_limits<std::uint64_t>::max() : ((std::uint64_t{1} << bits) - 1);
    return {bits, 0, max, t};
  }
  std::int64_t max = bits == 64 ? std::numeric_limits<std::int64_t>::max() : ((std::int64_t{1} << (bits - 1)) - 1);
  return {bits, -max - 1, static_cast<std::uint64_t>(max), t};
}

}  // namespace cupric
