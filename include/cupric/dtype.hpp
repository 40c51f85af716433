// cupric/dtype.hpp — the element types, their C++ types, NEP 50 promotion and casting rules.
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "cupric/half.hpp"

namespace cupric {

/// Element types. The order is NumPy's type-number order (bool, then integers by size with
/// signed before unsigned, then floats, then complex, then the float8s); ufunc loop tables are
/// searched in it.
enum class DType : std::uint8_t {
  bool_,
  int8,
  uint8,
  int16,
  uint16,
  int32,
  uint32,
  int64,
  uint64,
  float16,
  bfloat16,
  float32,
  float64,
  complex64,
  complex128,
  // ml_dtypes' float8 types come last (NumPy numbers them after its own types too), so that the
  // built-in types' order, and the loop search over it, is unchanged
  float8_e4m3fn,
  float8_e5m2,
};
inline constexpr int kNumDTypes = 17;

enum class DTypeKind : char { boolean = 'b', signed_int = 'i', unsigned_int = 'u', floating = 'f', complex = 'c' };

/// Static facts about one dtype, and every spelling of it that cupric writes (one row per dtype in
/// dtype.cpp: code that names a dtype reads a column here rather than switching on it).
struct DTypeInfo {
  DType dtype;
  const char* name;  ///< NumPy's name: "float32", "bool", ...
  int itemsize;      ///< bytes per element
  DTypeKind kind;
  const char* typestr_code;   ///< array-interface code without byte order: "f4", "b1", ...
  std::uint8_t dlpack_code;   ///< DLDataTypeCode: 0 int, 1 uint, 2 float, 5 complex, 4 bfloat, 6 bool, 10/12 float8
  const char* ir_name;        ///< the tile IR's and its messages' short name: "f32", "bf16", "b1"
  const char* kernel_suffix;  ///< CUDA array kernels' names and cache keys: kind + bytes, "f4", "bf2", "b1"
  const char* cpp_type;       ///< C++ type in cupric's headers (host and device): "std::int8_t", "cupric::float16"
  const char* tile_type;      ///< C++ type of the tile library (generated tile code): "::cu::tile::i8"; null: none
};

const DTypeInfo& info(DType t);
inline int itemsize(DType t) { return info(t).itemsize; }
inline const char* name(DType t) { return info(t).name; }
inline DTypeKind kind(DType t) { return info(t).kind; }
inline bool is_bool(DType t) { return t == DType::bool_; }
inline bool is_signed_integer(DType t) { return kind(t) == DTypeKind::signed_int; }
inline bool is_unsigned_integer(DType t) { return kind(t) == DTypeKind::unsigned_int; }
inline bool is_integer(DType t) { return is_signed_integer(t) || is_unsigned_integer(t); }
inline bool is_floating(DType t) { return kind(t) == DTypeKind::floating; }
inline bool is_complex(DType t) { return kind(t) == DTypeKind::complex; }
inline bool is_inexact(DType t) { return is_floating(t) || is_complex(t); }
inline constexpr bool is_float8(DType t) { return t == DType::float8_e4m3fn || t == DType::float8_e5m2; }
/// The storage-only float types (float16, bfloat16, the float8s): they compute in float32.
inline constexpr bool is_narrow_float(DType t) { return t == DType::float16 || t == DType::bfloat16 || is_float8(t); }
/// The dtypes NumPy has only through ml_dtypes (user dtypes to NumPy: bfloat16 and the float8s).
inline constexpr bool is_ml_dtype(DType t) { return t == DType::bfloat16 || is_float8(t); }

/// Parses "float32", "f4", "<f4", "float", "int", "complex", "bool", "bfloat16", ...
/// Throws TypeError naming the text when it is not a dtype.
DType dtype_from_name(std::string_view text);

/// The real type of a complex type (complex64 -> float32); other types map to themselves.
DType real_dtype(DType t);
/// The complex type holding a real type (float32 -> complex64, float64 -> complex128).
DType complex_dtype(DType t);

/// NumPy's promote_types: the smallest type both safely cast to (uint64 + int64 -> float64).
DType promote_types(DType a, DType b);

enum class Casting { no, equiv, safe, same_kind, unsafe };
Casting casting_from_name(std::string_view text);
const char* casting_name(Casting c);

/// NumPy's can_cast for dtypes.
bool can_cast(DType from, DType to, Casting casting = Casting::safe);

/// The kind of a Python scalar taking part in an operation (NEP 50 "weak" scalars).
enum class WeakKind : std::uint8_t { none, boolean, integer, floating, complex };

/// The dtype a weak Python scalar of this kind takes when no array decides it.
DType default_dtype(WeakKind k);

/// NEP 50: the result of combining an array dtype with a weak scalar of kind k.
DType promote_weak(DType strong, WeakKind k);

/// One participant of a type resolution: an array's dtype, or a weak Python scalar.
struct TypeOperand {
  DType dtype;
  WeakKind weak = WeakKind::none;
};
/// NumPy 2's result_type: strong dtypes promote together, then weak scalars join by kind.
DType result_type(const std::vector<TypeOperand>& operands);

// ---- C++ types of each dtype -------------------------------------------------------------

template <DType D>
struct ctype_of;
#define CUPRIC_CTYPE(D, T)    \
  template <>                 \
  struct ctype_of<DType::D> { \
    using type = T;           \
  };
CUPRIC_CTYPE(bool_, bool)
CUPRIC_CTYPE(int8, std::int8_t)
CUPRIC_CTYPE(uint8, std::uint8_t)
CUPRIC_CTYPE(int16, std::int16_t)
CUPRIC_CTYPE(uint16, std::uint16_t)
CUPRIC_CTYPE(int32, std::int32_t)
CUPRIC_CTYPE(uint32, std::uint32_t)
CUPRIC_CTYPE(int64, std::int64_t)
CUPRIC_CTYPE(uint64, std::uint64_t)
CUPRIC_CTYPE(float16, float16)
CUPRIC_CTYPE(bfloat16, bfloat16)
CUPRIC_CTYPE(float32, float)
CUPRIC_CTYPE(float64, double)
CUPRIC_CTYPE(complex64, std::complex<float>)
CUPRIC_CTYPE(complex128, std::complex<double>)
CUPRIC_CTYPE(float8_e4m3fn, float8_e4m3fn)
CUPRIC_CTYPE(float8_e5m2, float8_e5m2)
#undef CUPRIC_CTYPE

template <DType D>
using ctype = typename ctype_of<D>::type;

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, bool>) return DType::bool_;
  else if constexpr (std::is_same_v<T, std::int8_t>) return DType::int8;
  else if constexpr (std::is_same_v<T, std::uint8_t>) return DType::uint8;
  else if constexpr (std::is_same_v<T, std::int16_t>) return DType::int16;
  else if constexpr (std::is_same_v<T, std::uint16_t>) return DType::uint16;
  else if constexpr (std::is_same_v<T, std::int32_t>) return DType::int32;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return DType::uint32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return DType::int64;
  else if constexpr (std::is_same_v<T, std::uint64_t>) return DType::uint64;
  else if constexpr (std::is_same_v<T, float16>) return DType::float16;
  else if constexpr (std::is_same_v<T, bfloat16>) return DType::bfloat16;
  else if constexpr (std::is_same_v<T, float>) return DType::float32;
  else if constexpr (std::is_same_v<T, double>) return DType::float64;
  else if constexpr (std::is_same_v<T, std::complex<float>>) return DType::complex64;
  else if constexpr (std::is_same_v<T, std::complex<double>>) return DType::complex128;
  else if constexpr (std::is_same_v<T, float8_e4m3fn>) return DType::float8_e4m3fn;
  else if constexpr (std::is_same_v<T, float8_e5m2>) return DType::float8_e5m2;
  else static_assert(sizeof(T) == 0, "not a cupric element type");
}

/// Calls f.template operator()<T>() with T the C++ type of dtype t:
///   visit_dtype(t, [&]<class T>() { ... });
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::bool_: return f.template operator()<bool>();
    case DType::int8: return f.template operator()<std::int8_t>();
    case DType::uint8: return f.template operator()<std::uint8_t>();
    case DType::int16: return f.template operator()<std::int16_t>();
    case DType::uint16: return f.template operator()<std::uint16_t>();
    case DType::int32: return f.template operator()<std::int32_t>();
    case DType::uint32: return f.template operator()<std::uint32_t>();
    case DType::int64: return f.template operator()<std::int64_t>();
    case DType::uint64: return f.template operator()<std::uint64_t>();
    case DType::float16: return f.template operator()<float16>();
    case DType::bfloat16: return f.template operator()<bfloat16>();
    case DType::float32: return f.template operator()<float>();
    case DType::float64: return f.template operator()<double>();
    case DType::complex64: return f.template operator()<std::complex<float>>();
    case DType::complex128: return f.template operator()<std::complex<double>>();
    case DType::float8_e4m3fn: return f.template operator()<float8_e4m3fn>();
    case DType::float8_e5m2: return f.template operator()<float8_e5m2>();
  }
  return f.template operator()<bool>();  // unreachable
}

/// Limits of a floating type, as NumPy's finfo reports them.
struct FloatInfo {
  int bits;
  double eps, max, min, tiny, smallest_subnormal, resolution;
  int precision, nmant, nexp, minexp, maxexp;
  DType dtype;
};
FloatInfo finfo(DType t);  ///< t floating or complex (complex reports its real part)

/// Limits of an integer type.
struct IntInfo {
  int bits;
  std::int64_t min;
  std::uint64_t max;
  DType dtype;
};
IntInfo iinfo(DType t);

}  // namespace cupric
