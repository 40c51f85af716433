// cupric/backend.hpp — the one interface every device implements, and the iteration plans
// the array layer hands to it. The array layer never names a device API; a backend never
// does type promotion or broadcasting.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "cupric/array.hpp"
#include "cupric/random.hpp"
#include "cupric/ufunc.hpp"

namespace cupric {

struct PlannedMatmul;
class MatmulPlan;

/// How to walk several same-shaped operands together: dimensions already broadcast (stride 0),
/// reordered so the last one has the smallest strides, and merged where all operands are
/// contiguous across them. An empty `shape` means one element; a zero in it means none.
/// Operands of a plan kept inline (a ternary ufunc's inputs, its output and a where= mask).
inline constexpr std::size_t kInlineOperands = 5;
template <class T>
using OperandVector = SmallVector<T, kInlineOperands>;

struct ElementwisePlan {
  Shape shape;                          ///< collapsed iteration shape, innermost last
  OperandVector<Strides> byte_strides;  ///< [operand][dimension]
  OperandVector<char*> data;            ///< [operand] address of the first element
  OperandVector<Storage*> storages;     ///< [operand] the memory it views (backends note their writes)
  OperandVector<DType> dtypes;          ///< [operand]
  /// [operand] 1 when the operand lives in host memory. On a device backend only a 0-d weak
  /// Python scalar can (apply_ufunc keeps those on the host): the backend passes it by value.
  OperandVector<std::uint8_t> on_host;

  int ndim() const { return static_cast<int>(shape.size()); }
  int noperands() const { return static_cast<int>(data.size()); }
  std::int64_t size() const;
  /// True when the plan is one dimension and every operand is dense (stride = itemsize).
  bool contiguous() const;
};

/// Builds the plan for operands viewed with `shape` (each operand broadcasts to it). Nothing is
/// allocated for operands of up to 8 dimensions.
ElementwisePlan elementwise_plan(std::span<const Array* const> operands, const Shape& shape);
ElementwisePlan elementwise_plan(const std::vector<const Array*>& operands, const Shape& shape);

/// Reductions a backend provides: the rows of include/cupric/reduction_table.def, in its order (a
/// static_assert in reduction_table.hpp checks it). nan* variants are built from these by the
/// array layer (nanmin = fmin, nanmax = fmax, nansum = sum over where(isnan, 0, x)).
enum class ReduceOp : std::uint8_t { sum, prod, min, max, fmin, fmax, any, all };
enum class ArgReduceOp : std::uint8_t { argmin, argmax };
/// The scans of reduction_table.def, in its order.
enum class ScanOp : std::uint8_t { cumsum, cumprod };

/// The factorisations a backend provides (LAPACK on the CPU, cuSOLVER on GPUs), for
/// Backend::lapack. Every operand is C-contiguous with the same leading (batch) dimensions, the
/// matrices are row-major, and a is float32/float64/complex64/complex128; real-valued outputs (w,
/// s) have a's real dtype. Operands, in order:
///   cholesky [a]           a -> its lower factor L in the lower triangle (mode 'L')
///   lu       [a, piv]      a -> LU (getrf); piv int64 [..., n], 1-based rows as LAPACK's ipiv
///   solve    [a, b]        a [..., n, n] destroyed; b [..., n, k] -> the solution
///   eigh     [a, w]        w [..., n] ascending; mode 'V': a -> eigenvectors as columns, 'N': values only;
///                          the lower triangle of a is read
///   svd      [a, s, u, vt] a [..., m, n] destroyed; mode 'A' full u/vt, 'S' reduced, 'N' values only (u, vt undefined)
///   qr       [a, tau]      a -> R above the diagonal, Householder reflectors below (geqrf); tau [..., min(m, n)]
///   qr_q     [q, tau]      q [..., m, c] holding qr's reflectors in its first columns -> Q (orgqr/ungqr)
///   eig      [a, w, v]     w complex [..., n]; v complex [..., n, n] right eigenvectors, or undefined (values only)
///   lstsq    [a, b, s, rank] a [m, n] destroyed, b [max(m, n), k] -> solution in its first n rows,
///                          s [min(m, n)], rank int64 [] (gelsd with `rcond`)
/// `info` (int64, the batch shape, on the backend's device) gets LAPACK's info per matrix.
enum class LapackOp : std::uint8_t { cholesky, lu, solve, eigh, svd, qr, qr_q, eig, lstsq };
struct LapackCall {
  LapackOp op;
  std::vector<Array> operands;
  Array info;
  char mode = 'N';
  double rcond = -1;
};

/// A device's implementation. Methods marked (optional) have a generic fallback.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;

  // memory
  virtual void* allocate(std::size_t nbytes) = 0;
  /// Gives back memory of `allocate`; `last_writer` is the storage's (see current_queue).
  virtual void deallocate(void* ptr, std::size_t nbytes, std::uint64_t last_writer) = 0;
  /// (optional) The id of the queue this thread's work on the device goes to now (CUDA: the
  /// current stream's serial), which storages keep as their last writer; 0 for devices whose
  /// work is not queued. Backends set it on every storage they write.
  virtual std::uint64_t current_queue() { return 0; }
  /// (optional) Memory that already reads as zeros, or nullptr when the backend has no cheaper
  /// way than filling (the caller then fills).
  virtual void* allocate_zeroed(std::size_t) { return nullptr; }
  virtual void copy_from_host(void* dst, const void* src, std::size_t nbytes) = 0;
  virtual void copy_to_host(void* dst, const void* src, std::size_t nbytes) = 0;
  virtual void synchronize() {}

  /// Runs a ufunc loop over a plan whose operands are the inputs, then the output, then
  /// (when has_where) a bool mask. Operands may have other dtypes than the loop's compute
  /// types: the backend casts (the array layer has checked that the casts are allowed).
  virtual void elementwise(const Ufunc& uf, const UfuncLoop& loop, const ElementwisePlan& plan, bool has_where) = 0;
  /// Copies operand 0 into operand 1 of a two-operand plan, converting the dtype.
  virtual void cast(const ElementwisePlan& plan) = 0;
  /// Sets every element of dst to the value at `value` (one element of dst's dtype, host memory).
  virtual void fill(const Array& dst, const void* value) = 0;
  /// Reduces `in` over `axes` (sorted, distinct) into `out`, which has in's shape with those
  /// axes set to 1 (any strides; it must not overlap `in`) and the accumulation dtype chosen by
  /// the array layer. Elements of `in` are converted to out's dtype as they are read (any/all:
  /// read as bool, out is bool); float16/bfloat16 outs accumulate in float32 and are rounded
  /// once at the end. Sums are pairwise (or better). An empty reduction writes 0 (sum), 1 (prod),
  /// false (any), true (all); the array layer never asks for an empty min/max/fmin/fmax.
  virtual void reduce(ReduceOp op, const Array& in, const Array& out, const std::vector<int>& axes) = 0;
  /// Index (int64) of the first extreme along `axis` (in is non-empty along it); out has in's
  /// shape with that axis set to 1. NaN counts as the extreme: the first NaN's index wins.
  virtual void arg_reduce(ArgReduceOp op, const Array& in, const Array& out, int axis) = 0;
  /// Inclusive scan along `axis` into out (same shape; out may be the very same view as in,
  /// but must not overlap it otherwise). Elements are converted to out's dtype as they are read
  /// and the running value is kept in out's dtype (float16/bfloat16: computed in float32 and
  /// rounded after every step, as NumPy does).
  virtual void scan(ScanOp op, const Array& in, const Array& out, int axis) = 0;
  /// out[i] = start + i * step, computed in double then converted (out is contiguous 1-d,
  /// floating or bool).
  virtual void arange(const Array& out, double start, double step) = 0;
  /// out[i] = start + i * step for an integer `out` (contiguous 1-d): computed modulo 2^64 and
  /// truncated to the type, exact wherever the values fit it (NumPy's integer fill).
  virtual void arange_integer(const Array& out, std::uint64_t start, std::uint64_t step) = 0;
  /// Fills a C-contiguous `out` (float32/float64, or an integer type for integers) with the
  /// draw described by `request` (random.hpp), bit-for-bit the same stream on every backend.
  virtual void random(const RandomRequest& request, const Array& out) = 0;

  /// Sorts `in` along its last axis, stably, in NumPy's order (sort_keys.h: NaN last, -0.0 equal
  /// to 0.0; complex by real part, then imaginary part), or in the reverse order for `descending`
  /// (equal elements still keep their order, NaN first). `values` (in's dtype) and `indices`
  /// (int64, the permutation: argsort) are C-contiguous arrays of in's shape, not overlapping
  /// `in`; either may be undefined. `in` may be any view.
  virtual void sort(const Array& in, const Array& values, const Array& indices, bool descending) = 0;
  /// For each element of `needles` (any view, the dtype of `sorted`), the index in the 1-d
  /// `sorted` (ascending in sort()'s order) at which it would be inserted to keep the order:
  /// before equal elements, or after them with `right`. `out` is int64, C-contiguous, of
  /// needles' shape.
  virtual void search_sorted(const Array& sorted, const Array& needles, const Array& out, bool right) = 0;
  /// unique's runs of equal elements (NumPy's `!=`; NaNs one run with equal_nan) of the 1-d
  /// C-contiguous `sorted` (sort()'s ascending order, a real dtype), which `perm` (int64, needed
  /// for index and inverse) took there from the input: at run r's first element values[r] = the
  /// element and index[r] = perm there, ends[r + 1] = one past its last (ends[0] = 0), and
  /// inverse[perm[i]] = i's run. values and index have room for n elements, ends for n + 1;
  /// any output may be undefined. Returns the number of runs (waiting for the device).
  virtual std::int64_t unique_runs(const Array& sorted, const Array& perm, const Array& values, const Array& index,
                                   const Array& ends, const Array& inverse, bool equal_nan) = 0;

  /// (optional) The elements sort() would put at each of `ranks` (each in [0, n); repeats allowed)
  /// of the 1-d C-contiguous `in` (a real dtype) into out[i] (C-contiguous, in's dtype, ranks.size()
  /// elements), without sorting: a radix select, one read of `in` a key byte. Sort keys do not
  /// tell -0.0 from 0.0 nor one NaN from another: a zero comes out as +0.0, a NaN as the canonical
  /// one. Default: NotImplementedError naming the device.
  virtual void select_ranks(const Array& in, const std::vector<std::int64_t>& ranks, const Array& out);
  /// (optional) Indexed copy over one leading dimension: out[i, r...] = the element of `src`
  /// at r... moved by offsets[i] elements. `offsets` is a 1-d int64 array on this device, `out`
  /// has shape [n] + src.shape and src's dtype. The array layer has checked the bounds.
  /// Default: NotImplementedError naming the device.
  virtual void gather(const Array& src, const Array& offsets, const Array& out);
  /// (optional) The reverse of gather: dst[r...] moved by offsets[i] elements = values[i, r...],
  /// in the order of i (the last write wins for repeated offsets); values has dst's dtype.
  virtual void scatter(const Array& dst, const Array& offsets, const Array& values);

  /// (optional) Batched matrix product out[..., m, n] = a[..., m, k] @ b[..., k, n]. The three have
  /// one ndim >= 2 and one dtype (any numeric or bool: float16/bfloat16 accumulate in float32,
  /// integers wrap as NumPy's do, bool is or-of-ands); a and b are broadcast to out's batch shape
  /// (zero strides) and may be any views, out is C-contiguous and overlaps neither. k may be 0.
  /// Default: NotImplementedError naming the device.
  virtual void matmul(const Array& a, const Array& b, const Array& out);
  /// (optional) A factorisation or solver over a batch of matrices (LapackOp above).
  virtual void lapack(const LapackCall& call);
  /// (optional) A library plan for a product with a fused epilogue (cupric/linalg.hpp's
  /// PlannedMatmul), or null. Default: null (the caller composes the product and the epilogue).
  virtual std::shared_ptr<MatmulPlan> plan_matmul(const PlannedMatmul&) { return nullptr; }
};

/// The backend serving a device (the CPU backend always exists; others register themselves).
Backend& backend_for(Device device);
using BackendFactory = std::unique_ptr<Backend> (*)(int index);
void register_backend(Device::Type type, BackendFactory factory);

}  // namespace cupric
