// tri.cpp — tri, tril and triu (cupric/creation.hpp): NumPy's compositions, a greater_equal of two
// aranges for the mask and where() to apply it, so they run on every device.
#include <algorithm>

#include "cupric/creation.hpp"
#include "cupric/errors.hpp"
#include "cupric/manipulation.hpp"
#include "cupric/ufunc.hpp"

namespace cupric {

namespace {
/// A diagonal offset k of an n x m matrix moved into [-n, m]: past either end the diagonal
/// misses every element just the same, and -k, m - k and k - 1 cannot overflow any more.
std::int64_t clamp_diagonal(std::int64_t k, std::int64_t n, std::int64_t m) { return std::clamp(k, -n, m); }
}  // namespace

Array tri(std::int64_t n, std::optional<std::int64_t> m_in, std::int64_t k_in, DType dtype, Device device) {
  const std::int64_t m = m_in.value_or(n);
  // the result first: its size is checked (negative extents too) and its memory had before any work
  UfuncOptions into_result;
  into_result.out = Array::empty({n, m}, dtype, device);
  if (into_result.out.size() == 0) return into_result.out;
  const std::int64_t k = clamp_diagonal(k_in, n, m);
  // NumPy: greater_equal.outer(arange(N), arange(-k, M - k))
  const Array rows = reshape(arange(Scalar::from_int(n), std::nullopt, std::nullopt, DType::int64, device), {n, 1});
  const Array cols = arange(Scalar::from_int(-k), Scalar::from_int(m - k), std::nullopt, DType::int64, device);
  return apply_ufunc("greater_equal", {rows, cols}, into_result);
}

namespace {
/// tri of the matrix shape of `a` (its last two axes; a 1-d array counts as square) at diagonal
/// k + shift, k clamped first so that the shift cannot overflow.
Array tri_mask(const Array& a, std::int64_t k, int shift, const char* what) {
  if (a.ndim() == 0) throw ValueError(cat(what, ": input must be at least 1-d, got a 0-d array"));
  const std::int64_t cols = a.shape().back();
  const std::int64_t rows = a.ndim() >= 2 ? a.shape()[a.ndim() - 2] : cols;
  return tri(rows, cols, clamp_diagonal(k, rows, cols) + shift, DType::bool_, a.device());
}
}  // namespace

Array tril(const Array& a, std::int64_t k) {
  return where(tri_mask(a, k, 0, "tril"), a, scalar_array(Scalar::from_int(0), a.dtype(), a.device()));
}

Array triu(const Array& a, std::int64_t k) {
  return where(tri_mask(a, k, -1, "triu"), scalar_array(Scalar::from_int(0), a.dtype(), a.device()), a);
}

}  // namespace cupric
