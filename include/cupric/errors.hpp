// cupric/errors.hpp — the exception types of the C++ core. The bindings map each one to the
// Python exception of the same name, so that C++ errors read like NumPy's.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
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

/// Builds a message from pieces: cat("cannot broadcast shapes ", a, " and ", b).
template <class... Ts>
std::string cat(Ts&&... parts) {
  std::ostringstream os;
  (os << ... << std::forward<Ts>(parts));
  return os.str();
}

}  // namespace cupric
