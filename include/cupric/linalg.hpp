// cupric/linalg.hpp — matrix products and linear algebra: NumPy's shape and dtype rules here, the
// arithmetic in each backend (Backend::matmul, Backend::lapack: OpenBLAS on the CPU, cuBLAS and
// cuSOLVER on GPUs). Composite functions (tensordot, einsum, norms, pinv, ...) are in cupric.linalg.
#pragma once

#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include "cupric/array.hpp"

namespace cupric {

/// NumPy's matmul: 1-D operands promoted (and the added axis removed), batch dimensions
/// broadcast, the result dtype promoted from both (or `dtype`), written into `out` when given
/// (same_kind casting; nothing is written when a check fails). Errors name the shapes as NumPy's.
Array matmul(const Array& a, const Array& b, const Array& out = Array(), std::optional<DType> dtype = std::nullopt);

/// Integer and bool products the way GPUs run them (cuBLAS has no wrapping integer gemm): one
/// broadcast multiply summed over k in t. a [..., m, k] and b [..., k, n] broadcast batches alike.
/// (matmul calls it for non-CPU devices; exposed so that the CPU tests can check it.)
Array matmul_by_ufuncs(const Array& a, const Array& b, DType t);

/// float32 products on GPUs: `highest` (float32 arithmetic, the default) or `tf32` (tensor
/// cores with TF32 inputs, only when asked: cu.linalg.set_matmul_precision("tf32")). The CPU
/// has no TF32 and ignores it.
enum class MatmulPrecision : std::uint8_t { highest, tf32 };
void set_matmul_precision(MatmulPrecision p);
MatmulPrecision matmul_precision();

/// NumPy's diagonal: a read-only view of the diagonals of the (axis1, axis2) planes, as the
/// last axis. Errors as NumPy's (AxisError, "axis1 and axis2 cannot be the same").
Array diagonal(const Array& a, std::int64_t offset = 0, std::int64_t axis1 = 0, std::int64_t axis2 = 1);

/// The dtype LAPACK works in for an input of dtype t (NumPy's linalg rules: integers and bool
/// in float64, float32/float64/complex as they are); float16 and bfloat16 raise TypeError naming `fn`.
DType lapack_dtype(DType t, const char* fn);

/// The factorisations; `a` is [..., m, n] (square where the routine needs it), batched over the
/// leading dimensions; results are new arrays in lapack_dtype(a). LinAlgError as NumPy raises it.
/// The modes NumPy's functions have (upper Cholesky, qr's modes, 'U' for eigh, residuals) are
/// taken from these by cupric.linalg.
Array cholesky(const Array& a);                              ///< the lower factor L
std::pair<Array, Array> lu_factor(const Array& a);           ///< (LU, int64 pivots, 1-based)
Array solve(const Array& a, const Array& b);                 ///< b: [..., n, k] (batches broadcast)
std::pair<Array, Array> eigh(const Array& a, bool vectors);  ///< (w, v) from a's lower triangle
/// (u, s, vh); u and vh undefined when !compute_uv
std::tuple<Array, Array, Array> svd(const Array& a, bool full_matrices, bool compute_uv);
/// LAPACK's geqrf: (h, tau) with R in h's upper triangle and the reflectors below it (row-major)
std::pair<Array, Array> qr_factor(const Array& a);
/// Q's first `columns` columns (min(m, n) <= columns <= m) from qr_factor's (h, tau)
Array qr_q(const Array& h, const Array& tau, std::int64_t columns);
std::pair<Array, Array> eig(const Array& a, bool vectors);  ///< complex (w, v); v undefined when !vectors
/// LAPACK's gelsd for a 2-D a [m, n] and a 2-D b [m, k]: (its b, [max(m, n), k], the solution in
/// the first n rows; singular values; rank). cupric.linalg.lstsq makes NumPy's answer of it.
std::tuple<Array, Array, std::int64_t> lstsq(const Array& a, const Array& b, double rcond);

}  // namespace cupric
