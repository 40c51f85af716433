// cupric/errors.hpp — the exception types of the C++ core. The bindings map each one to the
// Python exception of the same name, so that C++ errors read like NumPy's.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace cupric {

struct ValueError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};
struct TypeError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};
struct IndexError : std::out_of_range {
  using std::out_of_range::out_of_range;
};
struct OverflowError : std::overflow_error {
  using std::overflow_error::overflow_error;
};
struct NotImplementedError : std::logic_error {
  using std::logic_error::logic_error;
};
/// An axis argument outside [-ndim, ndim): Python sees numpy.exceptions.AxisError (a ValueError
/// and an IndexError), as NumPy raises.
struct AxisError : ValueError {
  using ValueError::ValueError;
};
/// Division by a zero step (arange(0, 5, 0)), as NumPy raises.
struct ZeroDivisionError : std::domain_error {
  using std::domain_error::domain_error;
};
/// Data cannot be exported or imported as asked (DLPack, buffer protocol): Python's BufferError.
struct BufferError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// Memory for an array could not be had (Python's MemoryError; the message names the size, shape and dtype).
struct MemoryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// Raised when a reduction meets an empty array and has no identity (NumPy raises ValueError).
struct ZeroSizeError : ValueError {
  using ValueError::ValueError;
};

/// A matrix that a factorisation or solver cannot take (singular, not positive definite, no
/// convergence): Python sees numpy.linalg.LinAlgError (a ValueError), as NumPy raises.
struct LinAlgError : ValueError {
  using ValueError::ValueError;
};

/// An op produced NaN or Inf while cupric.debug.check_finite is on: Python's FloatingPointError.
struct FloatingPointError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace detail {
template <class U>
constexpr bool wide_integer() {  // (bool and 1-byte integers print as digits / characters on a stream)
  if constexpr (std::is_integral_v<U>) return !std::is_same_v<U, bool> && sizeof(U) > 1;
  return false;
}

/// A piece cat appends itself: text, a char, an integer wider than a byte.
template <class T>
constexpr bool plain_piece() {
  using U = std::remove_cv_t<std::remove_reference_t<T>>;
  return std::is_convertible_v<const U&, std::string_view> || std::is_same_v<U, char> || wide_integer<U>();
}

template <class T>
void append_piece(std::string& out, const T& v) {
  using U = std::remove_cv_t<T>;  // (arrays stay arrays: a literal is never null)
  if constexpr (std::is_same_v<U, const char*> || std::is_same_v<U, char*>) {
    if (v != nullptr) out += v;
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    out += std::string_view(v);
  } else if constexpr (std::is_same_v<U, char>) {
    out += v;
  } else {
    out += std::to_string(v);
  }
}
}  // namespace detail

/// Builds a message from pieces: cat("cannot broadcast shapes ", a, " and ", b). Pieces that are
/// all text, chars and integers are appended (a stream's first use in a process
/// costs ~0.03-0.05 ms, on the path of a new process' first kernel launch: cache keys, file paths);
/// any other piece (a float, a path, a manipulator such as std::hex, a type with its own
/// operator<<) sends the whole message through one stream, as written.
template <class... Ts>
std::string cat(Ts&&... parts) {
  if constexpr ((detail::plain_piece<Ts>() && ...)) {
    std::string out;
    (detail::append_piece(out, parts), ...);
    return out;
  } else {
    std::ostringstream os;
    (os << ... << std::forward<Ts>(parts));
    return os.str();
  }
}

}  // namespace cupric
