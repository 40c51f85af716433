// matmul.cpp — the CPU backend's batched matrix product: float32/64 and complex through OpenBLAS's
// gemm (views as transpose flags and leading dimensions), float16/bfloat16 through float32, and
// integers and bool in an exact loop of our own.
#include <algorithm>
#include <complex>
#include <cstring>
#include <vector>

#include "blas.hpp"
#include "cpu_backend.hpp"
#include "cupric/errors.hpp"
#include "cupric/gemm_view.hpp"
#include "cupric/thread_pool.hpp"

namespace cupric::cpu {
namespace {

using blas::Int;

/// The batch offsets (in elements) of every matrix of `a`, whose leading dims are the batch.
std::vector<std::int64_t> batch_offsets(const Array& a) {
  const int nb = a.ndim() - 2;
  std::int64_t count = 1;
  for (int d = 0; d < nb; ++d) count *= a.shape()[d];
  std::vector<std::int64_t> out(static_cast<std::size_t>(count), a.offset());
  for (std::int64_t i = 0; i < count; ++i) {
    std::int64_t rest = i, off = a.offset();
    for (int d = nb - 1; d >= 0; --d) {
      off += rest % a.shape()[d] * a.strides()[d];
      rest /= a.shape()[d];
    }
    out[static_cast<std::size_t>(i)] = off;
  }
  return out;
}

/// One operand of the product: its matrices, read in place or copied into a dense scratch.
template <class T>
struct GemmOperand {
  const T* base;
  std::int64_t rows, cols, rs, cs;
  GemmView view;

  GemmOperand(const Array& a)
      : base(static_cast<const T*>(a.storage()->data())),
        rows(a.shape()[a.ndim() - 2]),
        cols(a.shape()[a.ndim() - 1]),
        rs(a.strides()[a.ndim() - 2]),
        cs(a.strides()[a.ndim() - 1]),
        view(gemm_view(rows, cols, rs, cs)) {}

  /// The matrix at `offset`, ready for gemm; `scratch` holds it when it is copied.
  const T* matrix(std::int64_t offset, std::vector<T>& scratch, int& trans, Int& ld) const {
    if (view.direct) {
      trans = view.transposed ? blas::kTrans : blas::kNoTrans;
      ld = view.ld;
      return base + offset;
    }
    scratch.resize(static_cast<std::size_t>(rows * cols));
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j)
        scratch[static_cast<std::size_t>(i * cols + j)] = base[offset + i * rs + j * cs];
    trans = blas::kNoTrans;
    ld = std::max<Int>(cols, 1);
    return scratch.data();
  }
};

template <class T>
void gemm_batches(const Array& a, const Array& b, const Array& out) {
  const auto& fn = blas::api().of<T>();
  const GemmOperand<T> A(a), B(b);
  const Int m = A.rows, k = A.cols, n = B.cols;
  const std::vector<std::int64_t> ao = batch_offsets(a), bo = batch_offsets(b);
  T* c = static_cast<T*>(out.data());
  const T one(1), zero(0);
  std::vector<T> sa, sb;
  for (std::size_t i = 0; i < ao.size(); ++i) {
    int ta, tb;
    Int lda, ldb;
    const T* pa = A.matrix(ao[i], sa, ta, lda);
    const T* pb = B.matrix(bo[i], sb, tb, ldb);
    fn.gemm(blas::kRowMajor, ta, tb, m, n, k, &one, pa, lda, pb, ldb, &zero, c + static_cast<std::int64_t>(i) * m * n,
            std::max<Int>(n, 1));
  }
}

/// Exact products of integers (wrapping as NumPy's do: the sum is taken modulo 2^64, which
/// truncates to the same value as wrapping in the narrower type) and of bools (or of ands).
template <class T>
void exact_batches(const Array& a, const Array& b, const Array& out) {
  const std::int64_t m = a.shape()[a.ndim() - 2], k = a.shape()[a.ndim() - 1], n = b.shape()[b.ndim() - 1];
  const std::int64_t ars = a.strides()[a.ndim() - 2], acs = a.strides()[a.ndim() - 1];
  const std::int64_t brs = b.strides()[b.ndim() - 2], bcs = b.strides()[b.ndim() - 1];
  const std::vector<std::int64_t> ao = batch_offsets(a), bo = batch_offsets(b);
  const T* pa = static_cast<const T*>(a.storage()->data());
  const T* pb = static_cast<const T*>(b.storage()->data());
  T* pc = static_cast<T*>(out.data());
  const std::int64_t rows = static_cast<std::int64_t>(ao.size()) * m;
  parallel_for(rows, std::max<std::int64_t>(1, 65536 / std::max<std::int64_t>(1, n * k)),
               [&](std::int64_t r0, std::int64_t r1) {
                 std::vector<std::uint64_t> acc(static_cast<std::size_t>(n));
                 for (std::int64_t r = r0; r < r1; ++r) {
                   const std::size_t batch = static_cast<std::size_t>(r / m);
                   const T* arow = pa + ao[batch] + (r % m) * ars;
                   std::fill(acc.begin(), acc.end(), 0);
                   for (std::int64_t p = 0; p < k; ++p) {
                     const std::uint64_t x = static_cast<std::uint64_t>(arow[p * acs]);
                     if (x == 0) continue;
                     const T* brow = pb + bo[batch] + p * brs;
                     for (std::int64_t j = 0; j < n; ++j) {
                       if constexpr (std::is_same_v<T, bool>)
                         acc[static_cast<std::size_t>(j)] |= static_cast<std::uint64_t>(brow[j * bcs]);
                       else acc[static_cast<std::size_t>(j)] += x * static_cast<std::uint64_t>(brow[j * bcs]);
                     }
                   }
                   T* crow = pc + r * n;
                   for (std::int64_t j = 0; j < n; ++j) crow[j] = static_cast<T>(acc[static_cast<std::size_t>(j)]);
                 }
               });
}

}  // namespace

void CpuBackend::matmul(const Array& a, const Array& b, const Array& out) {
  if (out.size() == 0) return;
  const DType t = out.dtype();
  if (a.shape()[a.ndim() - 1] == 0) {  // k == 0: a sum over nothing
    std::memset(out.data(), 0, static_cast<std::size_t>(out.nbytes()));
    return;
  }
  if (t == DType::float16 || t == DType::bfloat16) {
    // accumulate in float32 (as NumPy's float16 loops compute), round once at the end
    const auto as_float = [&](const Array& x) {
      Array y = Array::empty(x.shape(), DType::float32);
      cast(elementwise_plan({&x, &y}, x.shape()));
      return y;
    };
    const Array wide = Array::empty(out.shape(), DType::float32);
    matmul(as_float(a), as_float(b), wide);
    cast(elementwise_plan({&wide, &out}, out.shape()));
    return;
  }
  visit_dtype(t, [&]<class T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::complex<float>> ||
                  std::is_same_v<T, std::complex<double>>)
      gemm_batches<T>(a, b, out);
    else if constexpr (std::is_integral_v<T>) exact_batches<T>(a, b, out);
    else throw TypeError(cat("matmul: no loop for ", name(t)));
  });
}

}  // namespace cupric::cpu
