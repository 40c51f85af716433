// matmul.cpp — NumPy's matmul rules (1-D promotion, broadcast batches, dtype, out=) in front of
// Backend::matmul, which only ever sees same-dtype operands of one rank and a fresh output.
#include <atomic>
#include <cstdlib>

#include "cupric/backend.hpp"
#include "cupric/errors.hpp"
#include "cupric/profiler.hpp"
#include "cupric/indexing.hpp"
#include "cupric/linalg.hpp"
#include "cupric/reduction.hpp"
#include "cupric/ufunc.hpp"

namespace cupric {
namespace {

constexpr const char* kSignature = "(n?,k),(k,m?)->(n?,m?)";

Array converted(const Array& a, DType t) {
  if (a.dtype() == t) return a;
  Array out = Array::empty(a.shape(), t, a.device());
  copy_into(out, a);
  return out;
}

/// a viewed with one more axis of length 1 at `axis` (0: before, -1: after the last).
Array with_unit_axis(const Array& a, bool before) {
  Shape shape = a.shape();
  Strides strides = a.strides();
  shape.insert(before ? shape.begin() : shape.end(), 1);
  strides.insert(before ? strides.begin() : strides.end(), 0);
  return a.view(shape, strides, a.offset());
}

/// a viewed with a length-1 axis inserted `from_end` places before its end.
Array with_axis_from_end(const Array& a, int from_end) {
  Shape shape = a.shape();
  Strides strides = a.strides();
  shape.insert(shape.end() - from_end, 1);
  strides.insert(strides.end() - from_end, 0);
  return a.view(shape, strides, a.offset());
}

std::atomic<MatmulPrecision> precision{MatmulPrecision::highest};

GemmLibrary gemm_library_from_environment() {
  const char* v = std::getenv("CUPRIC_GEMM_LIBRARY");
  return v && std::string_view(v) == "cublaslt" ? GemmLibrary::cublaslt : GemmLibrary::cublas;
}
std::atomic<GemmLibrary> gemm_choice{gemm_library_from_environment()};

}  // namespace

void set_matmul_precision(MatmulPrecision p) { precision.store(p, std::memory_order_relaxed); }
MatmulPrecision matmul_precision() { return precision.load(std::memory_order_relaxed); }
void set_gemm_library(GemmLibrary library) { gemm_choice.store(library, std::memory_order_relaxed); }
GemmLibrary gemm_library() { return gemm_choice.load(std::memory_order_relaxed); }

std::shared_ptr<MatmulPlan> plan_matmul(const PlannedMatmul& p) {
  if (!p.a.defined() || !p.b.defined() || !p.d.defined() || p.a.ndim() < 2 || p.b.ndim() != p.a.ndim() ||
      p.d.ndim() != p.a.ndim())
    throw ValueError("plan_matmul: a, b and d must be stacks of matrices of one ndim (>= 2)");
  const Shape& d = p.d.shape();
  const std::int64_t m = d[d.size() - 2], n = d.back(), k = p.a.shape().back();
  Shape want_a(d.begin(), d.end() - 2), want_b = want_a;
  want_a.insert(want_a.end(), {m, k});
  want_b.insert(want_b.end(), {k, n});
  if (p.a.shape() != want_a || p.b.shape() != want_b)
    throw ValueError(cat("plan_matmul: shapes ", shape_str(p.a.shape()), " @ ", shape_str(p.b.shape()), " do not make ",
                         shape_str(d)));
  if (!(p.a.device() == p.d.device()) || !(p.b.device() == p.d.device()))
    throw ValueError("plan_matmul: the operands are on different devices");
  p.d.check_writeable();
  return backend_for(p.d.device()).plan_matmul(p);
}

/// One broadcast multiply [..., m, k, n] summed over k in the result dtype, so that sums wrap as
/// NumPy's do (bool: or of ands).
Array matmul_by_ufuncs(const Array& a, const Array& b, DType t) {
  UfuncOptions options;
  options.dtype = t;
  const bool logical = t == DType::bool_;
  const Array terms =
      apply_ufunc(logical ? "logical_and" : "multiply", {with_axis_from_end(a, 0), with_axis_from_end(b, 2)}, options);
  ReduceOptions sum_k;
  sum_k.axis = std::vector<int>{-2};
  if (!logical) sum_k.dtype = t;
  return logical ? any(terms, sum_k) : sum(terms, sum_k);
}

namespace {

void check_out(const Array& out, const Shape& shape, DType dtype, Device device) {
  if (!(out.device() == device))
    throw ValueError(cat("matmul: out= is on ", out.device().str(), " but the operands are on ", device.str()));
  if (out.shape() != shape)
    throw ValueError(cat("matmul: Output operand 0 has shape ", shape_str(out.shape()), " but the result has shape ",
                         shape_str(shape)));
  out.check_writeable();
  if (!can_cast(dtype, out.dtype(), Casting::same_kind))
    throw TypeError(cat("Cannot cast ufunc 'matmul' output from ", name(dtype), " to ", name(out.dtype()),
                        " with casting rule 'same_kind'"));
}

}  // namespace

Array matmul(const Array& a, const Array& b, const Array& out, std::optional<DType> dtype) {
  profiler::OpScope profiled(profiler::OpModel::matmul, "matmul", {&a, &b});
  for (int i = 0; i < 2; ++i)
    if ((i == 0 ? a : b).ndim() == 0)
      throw ValueError(cat("matmul: Input operand ", i, " does not have enough dimensions (has 0, gufunc core with ",
                           "signature ", kSignature, " requires 1)"));
  if (!(a.device() == b.device()))
    throw ValueError(cat("matmul: operands are on different devices (", a.device().str(), " and ", b.device().str(),
                         "); move one with x.to_device(\"", a.device().str(), "\")"));
  const Array A = a.ndim() == 1 ? with_unit_axis(a, true) : a;
  const Array B = b.ndim() == 1 ? with_unit_axis(b, false) : b;
  const std::int64_t k = A.shape().back(), kb = B.shape()[B.ndim() - 2];
  if (k != kb)
    throw ValueError(cat("matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature ",
                         kSignature, " (size ", kb, " is different from ", k, ")"));
  const Shape batch_a(A.shape().begin(), A.shape().end() - 2), batch_b(B.shape().begin(), B.shape().end() - 2);
  Shape batch;
  try {
    batch = broadcast_shapes(batch_a, batch_b);
  } catch (const ValueError&) {
    throw ValueError(cat("matmul: the batch dimensions of operands with shapes ", shape_str(a.shape()), " and ",
                         shape_str(b.shape()), " do not broadcast (", shape_str(batch_a), " and ", shape_str(batch_b),
                         ")"));
  }
  const std::int64_t m = A.shape()[A.ndim() - 2], n = B.shape().back();
  Shape full = batch, result = batch;
  full.push_back(m);
  full.push_back(n);
  if (a.ndim() > 1) result.push_back(m);
  if (b.ndim() > 1) result.push_back(n);
  const DType t = dtype.value_or(promote_types(a.dtype(), b.dtype()));
  // no BLAS (nor cuBLAS here) multiplies float8; ml_dtypes' own matmul answers in float32, and an
  // implicit widening would hide the cost, so ask for it
  if (is_float8(t))
    throw TypeError(cat("matmul: ", name(t), " operands are not supported; convert them first, e.g. ",
                        "a.astype(cupric.float32) @ b.astype(cupric.float32)"));
  if (dtype && !(can_cast(a.dtype(), t, Casting::same_kind) && can_cast(b.dtype(), t, Casting::same_kind)))
    throw TypeError(cat("Cannot cast ufunc 'matmul' input from ", name(promote_types(a.dtype(), b.dtype())), " to ",
                        name(t), " with casting rule 'same_kind'"));
  if (out.defined()) check_out(out, result, t, a.device());
  Shape a_full = batch, b_full = batch;
  a_full.insert(a_full.end(), {m, k});
  b_full.insert(b_full.end(), {k, n});
  const Array a_in = broadcast_to(converted(A, t), a_full), b_in = broadcast_to(converted(B, t), b_full);
  Array product;
  if (!is_inexact(t) && !a.device().is_cpu() && k > 0) {
    product = matmul_by_ufuncs(a_in, b_in, t);
  } else {
    product = Array::empty(full, t, a.device());
    const Array a_rows = converted(A, t);
    if (B.ndim() == 2 && A.ndim() > 2 && a_rows.is_c_contiguous()) {
      // a stack of matrices times one matrix (x @ W): the stack's rows are one tall matrix, so
      // the backend runs one large product instead of a batch of small ones
      std::int64_t rows = 1;
      for (int d = 0; d + 1 < a_rows.ndim(); ++d) rows *= a_rows.shape()[d];
      backend_for(a.device())
          .matmul(a_rows.view({rows, k}, {k, 1}, a_rows.offset()), converted(B, t),
                  product.view({rows, n}, {n, 1}, product.offset()));
    } else {
      backend_for(a.device()).matmul(a_in, b_in, product);
    }
  }
  const Array shaped = product.view(result, c_strides(result), product.offset());
  if (!out.defined()) {
    profiled.output(shaped);
    return shaped;
  }
  copy_into(out, shaped);
  profiled.output(out);
  return out;
}

}  // namespace cupric
