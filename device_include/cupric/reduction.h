// cupric/reduction.h — the values reductions start from, for the host compiler and NVRTC: the
// columns `identity` and `nan` of src/ops/reduction_table.def as C++, so that the CPU loops, the
// CUDA kernels and tiles start their partial results alike. (Combining is the row's ufunc.)
#pragma once

#include "cupric/scalar_math.h"

namespace cu {

/// Column `identity` of the reduction table.
enum class Identity { zero, one, lowest, highest };
/// Column `nan` of the reduction table.
enum class NanRule { none, propagate, skip };

/// The lowest value of an element type: -inf for floats (both parts for complex), false for bool.
template <class T>
CUPRIC_HD T lowest() {
  if constexpr (is_complex_v<T>) {
    using R = typename T::value_type;
    return T(-std::numeric_limits<R>::infinity(), -std::numeric_limits<R>::infinity());
  } else if constexpr (is_float_v<T>) {
    return -std::numeric_limits<T>::infinity();
  } else if constexpr (std::is_same_v<T, bool> || !std::is_signed_v<T>) {
    return T(0);
  } else {  // the sign bit alone (computed: NVRTC's numeric_limits is not exact for 8/16-bit ints)
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(1) << (8 * sizeof(T) - 1));
  }
}
/// The highest value of an element type: +inf for floats (both parts for complex), true for bool.
template <class T>
CUPRIC_HD T highest() {
  if constexpr (is_complex_v<T>) {
    using R = typename T::value_type;
    return T(std::numeric_limits<R>::infinity(), std::numeric_limits<R>::infinity());
  } else if constexpr (is_float_v<T>) {
    return std::numeric_limits<T>::infinity();
  } else if constexpr (std::is_same_v<T, bool>) {
    return true;
  } else {
    return static_cast<T>(~lowest<T>());
  }
}
template <class T>
CUPRIC_HD T quiet_nan() {
  if constexpr (is_complex_v<T>) return T(std::numeric_limits<typename T::value_type>::quiet_NaN(), 0);
  else return std::numeric_limits<T>::quiet_NaN();
}

/// What every partial result of a reduction starts from. Floating zeros are -0.0, the exact
/// identity of addition (a sum of -0.0 stays -0.0, as NumPy's); a reduction whose NaN loses
/// starts floats from NaN, so that one of only NaNs is NaN.
template <class T, Identity I, NanRule N>
CUPRIC_HD T reduction_start() {
  if constexpr (N == NanRule::skip && (is_float_v<T> || is_complex_v<T>)) return quiet_nan<T>();
  else if constexpr (I == Identity::zero && is_float_v<T>) return T(-0.0);
  else if constexpr (I == Identity::zero && is_complex_v<T>) return T(-0.0, -0.0);
  else if constexpr (I == Identity::zero) return T(0);
  else if constexpr (I == Identity::one) return T(1);
  else if constexpr (I == Identity::lowest) return lowest<T>();
  else return highest<T>();
}

}  // namespace cu
