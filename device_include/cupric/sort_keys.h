// cupric/sort_keys.h — NumPy's sort order as unsigned integer keys: sorting the keys as integers
// sorts the values as NumPy does (NaN last, -0.0 equal to 0.0). Shared by the CPU sort and search
// and the CUDA radix sort, so both devices order alike.
#pragma once

#include "cupric/hd.h"

#if defined(__CUDACC_RTC__)
#include "cupric/cuda_prelude.h"
#else
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cupric/half.hpp"
#endif

#if defined(__CUDACC_RTC__)
#define CUPRIC_MEMCPY memcpy  // a device builtin under NVRTC
#else
#define CUPRIC_MEMCPY __builtin_memcpy
#endif

namespace cu {

template <int Bytes>
struct UnsignedOfSize;
template <>
struct UnsignedOfSize<1> {
  using type = std::uint8_t;
};
template <>
struct UnsignedOfSize<2> {
  using type = std::uint16_t;
};
template <>
struct UnsignedOfSize<4> {
  using type = std::uint32_t;
};
template <>
struct UnsignedOfSize<8> {
  using type = std::uint64_t;
};

/// The bits of a trivially copyable value as the unsigned type of its size (and back).
template <class U, class T>
CUPRIC_HD U bits_of(T v) {
  static_assert(sizeof(U) == sizeof(T));
  U u;
  CUPRIC_MEMCPY(&u, static_cast<const void*>(&v), sizeof(U));
  return u;
}
template <class T, class U>
CUPRIC_HD T from_bits(U u) {
  static_assert(sizeof(U) == sizeof(T));
  T v;
  CUPRIC_MEMCPY(static_cast<void*>(&v), &u, sizeof(U));
  return v;
}

/// Key type and conversions of a real element type T. `key` is monotone in NumPy's order and
/// maps values NumPy sorts as equal to one key (every NaN to the largest key, -0.0 to 0.0), so
/// a stable sort of the keys is NumPy's stable sort; `value` inverts it (to the canonical NaN
/// and +0.0 for those).
template <class T>
struct SortKey {
  using Key = typename UnsignedOfSize<sizeof(T)>::type;
  static constexpr Key kSign = Key(Key(1) << (8 * sizeof(T) - 1));
  static constexpr bool kFloating = !std::is_integral_v<T>;  // float, double, float16, bfloat16, float8s
  /// The bits of +inf: exponent all ones, mantissa zero (float8_e4m3fn, which has no inf: its
  /// largest finite value, so that its NaN 0x7f is the one magnitude above).
  static constexpr Key kInf = sizeof(T) == 8                             ? Key(0x7ff0000000000000ull)
                              : sizeof(T) == 4                           ? Key(0x7f800000u)
                              : std::is_same_v<T, cupric::bfloat16>      ? Key(0x7f80u)
                              : std::is_same_v<T, cupric::float8_e4m3fn> ? Key(0x7eu)
                              : std::is_same_v<T, cupric::float8_e5m2>   ? Key(0x7cu)
                                                                         : Key(0x7c00u);

  CUPRIC_HD static Key key(T v) {
    const Key u = bits_of<Key>(v);
    if constexpr (std::is_same_v<T, bool>) {
      return u != 0;
    } else if constexpr (kFloating) {
      const Key magnitude = Key(u & Key(~kSign));
      if (magnitude > kInf) return Key(~Key(0));  // NaN, any sign or payload
      if (magnitude == 0) return kSign;           // -0.0 sorts as 0.0
      return (u & kSign) ? Key(~u) : Key(u | kSign);
    } else if constexpr (std::is_signed_v<T>) {
      return Key(u ^ kSign);
    } else {
      return u;
    }
  }
  CUPRIC_HD static T value(Key k) {
    if constexpr (std::is_same_v<T, bool>) {
      return k != 0;
    } else if constexpr (kFloating) {
      return from_bits<T>((k & kSign) ? Key(k ^ kSign) : Key(~k));
    } else if constexpr (std::is_signed_v<T>) {
      return from_bits<T>(Key(k ^ kSign));
    } else {
      return from_bits<T>(k);
    }
  }
};

/// NumPy's complex order as three keys, most significant first: the class (0 both parts
/// numbers, 1 only the imaginary part NaN, 2 only the real part NaN, 3 both NaN), then the
/// real part (classes 0, 1) or the imaginary part (class 2), then the imaginary part (class 0).
template <class R>
struct ComplexSortKey {
  using Key = typename SortKey<R>::Key;
  Key cls, primary, secondary;
  CUPRIC_HD static ComplexSortKey of(R re, R im) {
    const bool re_nan = !(re == re), im_nan = !(im == im);
    const Key cls = Key((re_nan ? 2 : 0) + (im_nan ? 1 : 0));
    const Key primary = cls <= 1 ? SortKey<R>::key(re) : cls == 2 ? SortKey<R>::key(im) : Key(0);
    return {cls, primary, cls == 0 ? SortKey<R>::key(im) : Key(0)};
  }
  CUPRIC_HD bool operator<(const ComplexSortKey& o) const {
    if (cls != o.cls) return cls < o.cls;
    if (primary != o.primary) return primary < o.primary;
    return secondary < o.secondary;
  }
};

/// Whether `v`, following `prev` in sort()'s order, begins a new run of equal elements as
/// NumPy's unique compares them (`!=`: -0.0 equals 0.0; NaN equals nothing unless equal_nan).
template <class T>
CUPRIC_HD bool starts_run(T prev, T v, bool equal_nan) {
  using Key = typename SortKey<T>::Key;
  const Key k = SortKey<T>::key(v);
  if (k != SortKey<T>::key(prev)) return true;
  if constexpr (SortKey<T>::kFloating) return !equal_nan && k == Key(~Key(0));  // both NaN
  return false;
}

/// The key of v in the requested direction: a descending sort is an ascending sort of the
/// complemented keys (so it stays stable, and NaN comes first, as the Array API's flip-based
/// descending order has it).
template <class T>
CUPRIC_HD typename SortKey<T>::Key directed_key(T v, bool descending) {
  const auto k = SortKey<T>::key(v);
  return descending ? decltype(k)(~k) : k;
}
template <class T>
CUPRIC_HD T directed_value(typename SortKey<T>::Key k, bool descending) {
  return SortKey<T>::value(descending ? decltype(k)(~k) : k);
}

}  // namespace cu
