// cupric/linalg.hpp — matrix products and linear algebra: NumPy's shape and dtype rules here, the
// arithmetic in each backend (Backend::matmul, Backend::lapack: OpenBLAS on the CPU, cuBLAS and
// cuSOLVER on GPUs). Composite functions (tensordot, einsum, norms, pinv, ...) are in cupric.linalg.
#pragma once

#include <memory>
#include <optional>
#include <string>
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

/// The epilogues a device may fuse into a planned product (cuBLASLt's, by the names of
/// cupric.linalg.advanced.MatmulEpilog; the others are composed from ufuncs in Python).
enum class MatmulEpilogue : std::uint8_t {
  none,
  relu,
  gelu,
  bias,
  relu_bias,
  gelu_bias,
  gelu_aux,
  gelu_aux_bias,
  dgelu,
  dgelu_bgrad,
  bgrada,
  bgradb
};

/// The operands of a planned product d = epilogue(alpha * a @ b + beta * d) (cupric.linalg.advanced).
/// a [..., m, k], b [..., k, n] and d [..., m, n] have one dtype and one batch shape (broadcast
/// views allowed in a and b); each matrix of d is row-major (strides n, 1: the product runs as
/// d^T = b^T a^T) or column-major (1, m: as d = a b, which the epilogues with a bias along d's rows
/// need). bias: [m] read (bias epilogues) or written (dgelu_bgrad: [m], bgrada: a's sums [m],
/// bgradb: b's sums [n]); aux: gelu's pre-activation [..., m, n] in d's orientation with a leading
/// dimension that is a multiple of 8, written by gelu_aux* and read by dgelu*.
struct PlannedMatmul {
  Array a, b, d, bias, aux;
  double alpha = 1, beta = 0;
  MatmulEpilogue epilogue = MatmulEpilogue::none;
};

/// A device library's plan for one problem (its shapes, dtypes, layouts and epilogue).
class MatmulPlan {
 public:
  virtual ~MatmulPlan() = default;
  /// The library's candidate algorithms, its best guess first (one line each).
  virtual std::vector<std::string> algorithms() const = 0;
  virtual void choose(int index) = 0;  ///< execute() runs candidate `index` from now on
  virtual int chosen() const = 0;
  /// Milliseconds per run of candidate `index` on `operands` (mean of `iterations`, after one).
  virtual double time(const PlannedMatmul& operands, int index, int iterations) = 0;
  /// Runs the chosen candidate; ValueError when the operands' layout is not the planned one.
  virtual void execute(const PlannedMatmul& operands) = 0;
  /// The library and its version ("cuBLASLt 130100"), for cache keys and messages.
  virtual std::string library() const = 0;
};

/// The device's plan for the problem of `operands`, or null where the device has no such library
/// (the CPU: cupric.linalg.advanced composes BLAS and ufuncs there) or the library has no
/// algorithm for it (the caller composes as well).
std::shared_ptr<MatmulPlan> plan_matmul(const PlannedMatmul& operands);

/// The library of plain float products on GPUs: cuBLAS's GemmStridedBatchedEx (the default) or
/// cuBLASLt with its heuristic's first algorithm, planned once per problem and kept. Set with
/// CUPRIC_GEMM_LIBRARY=cublas|cublaslt or cupric.linalg._set_gemm_library (benchmarks compare both).
enum class GemmLibrary : std::uint8_t { cublas, cublaslt };
void set_gemm_library(GemmLibrary library);
GemmLibrary gemm_library();

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
