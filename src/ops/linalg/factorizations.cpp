// factorizations.cpp — NumPy's linalg rules (dtypes, shapes, LinAlgError) around Backend::lapack:
// inputs become C-contiguous copies in the LAPACK dtype, outputs are allocated here, and each
// matrix's info is judged after the backend ran.
#include <algorithm>
#include <vector>

#include "cupric/backend.hpp"
#include "cupric/creation.hpp"
#include "cupric/errors.hpp"
#include "cupric/indexing.hpp"
#include "cupric/linalg.hpp"
#include "cupric/manipulation.hpp"

namespace cupric {
namespace {

std::int64_t rows(const Array& a) { return a.shape()[a.ndim() - 2]; }
std::int64_t cols(const Array& a) { return a.shape().back(); }

Shape batch_of(const Array& a) { return Shape(a.shape().begin(), a.shape().end() - 2); }

Shape with(Shape s, std::initializer_list<std::int64_t> tail) {
  s.insert(s.end(), tail);
  return s;
}

void check_matrix(const Array& a, const char* fn, bool square) {
  if (a.ndim() < 2)
    throw LinAlgError(cat(a.ndim(), "-dimensional array given. Array must be at least two-dimensional (", fn, ")"));
  if (square && rows(a) != cols(a))
    throw LinAlgError(
        cat("Last 2 dimensions of the array must be square (", fn, " got shape ", shape_str(a.shape()), ")"));
}

/// A fresh C-contiguous copy of a in the LAPACK dtype (LAPACK overwrites its input).
Array working_copy(const Array& a, const char* fn, bool square) {
  check_matrix(a, fn, square);
  Array out = Array::empty(a.shape(), lapack_dtype(a.dtype(), fn), a.device());
  copy_into(out, a);
  return out;
}

/// Runs the call and returns LAPACK's info of every matrix (copied to the host).
std::vector<std::int64_t> run(LapackOp op, std::vector<Array> operands, char mode = 'N', double rcond = -1) {
  const Array& a = operands.front();
  LapackCall call{op, std::move(operands), Array::empty(batch_of(a), DType::int64, a.device()), mode, rcond};
  Backend& backend = backend_for(a.device());
  backend.lapack(call);
  std::vector<std::int64_t> info(static_cast<std::size_t>(call.info.size()));
  if (!info.empty()) backend.copy_to_host(info.data(), call.info.data(), info.size() * sizeof(std::int64_t));
  return info;
}

void raise_if(const std::vector<std::int64_t>& info, bool positive_only, const char* message) {
  for (std::int64_t i : info)
    if (i > 0 || (!positive_only && i != 0)) throw LinAlgError(message);
}

}  // namespace

DType lapack_dtype(DType t, const char* fn) {
  if (is_narrow_float(t))
    throw TypeError(cat("array type ", name(t), " is unsupported in linalg (", fn, "); convert it to float32 first"));
  return is_inexact(t) ? t : DType::float64;
}

Array cholesky(const Array& a) {
  Array l = working_copy(a, "cholesky", true);
  raise_if(run(LapackOp::cholesky, {l}), true, "Matrix is not positive definite");
  return tril(l);  // LAPACK leaves the upper triangle as it was
}

std::pair<Array, Array> lu_factor(const Array& a) {
  Array lu = working_copy(a, "det", true);
  Array piv = Array::empty(with(batch_of(lu), {rows(lu)}), DType::int64, a.device());
  run(LapackOp::lu, {lu, piv});  // info > 0 is a zero pivot, which det reads as 0
  return {lu, piv};
}

Array solve(const Array& a, const Array& b) {
  check_matrix(a, "solve", true);
  check_matrix(b, "solve", false);
  const std::int64_t n = rows(a);
  if (rows(b) != n)
    throw ValueError(cat("solve: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature ",
                         "(m,m),(m,n)->(m,n) (size ", rows(b), " is different from ", n, ")"));
  const Shape batch = broadcast_shapes(batch_of(a), batch_of(b));
  const DType t = promote_types(lapack_dtype(a.dtype(), "solve"), lapack_dtype(b.dtype(), "solve"));
  Array lu = Array::empty(with(batch, {n, n}), t, a.device()),
        x = Array::empty(with(batch, {n, cols(b)}), t, a.device());
  copy_into(lu, a);
  copy_into(x, b);
  if (x.size() == 0) return x;
  raise_if(run(LapackOp::solve, {lu, x}), true, "Singular matrix");
  return x;
}

std::pair<Array, Array> eigh(const Array& a, bool vectors) {
  Array v = working_copy(a, vectors ? "eigh" : "eigvalsh", true);
  Array w = Array::empty(with(batch_of(v), {rows(v)}), real_dtype(v.dtype()), a.device());
  raise_if(run(LapackOp::eigh, {v, w}, vectors ? 'V' : 'N'), false, "Eigenvalues did not converge");
  return {w, vectors ? v : Array()};
}

std::tuple<Array, Array, Array> svd(const Array& a, bool full_matrices, bool compute_uv) {
  Array w = working_copy(a, compute_uv ? "svd" : "svdvals", false);
  const std::int64_t m = rows(w), n = cols(w), k = std::min(m, n);
  const Shape batch = batch_of(w);
  Array s = Array::empty(with(batch, {k}), real_dtype(w.dtype()), a.device());
  Array u, vh;
  if (compute_uv) {
    const std::int64_t uc = full_matrices ? m : k, vr = full_matrices ? n : k;
    u = Array::empty(with(batch, {m, uc}), w.dtype(), a.device());
    vh = Array::empty(with(batch, {vr, n}), w.dtype(), a.device());
    if (k == 0) {  // no singular values: u and vh are identities (full) or empty
      copy_into(u, eye(m, uc, 0, w.dtype(), a.device()));
      copy_into(vh, eye(vr, n, 0, w.dtype(), a.device()));
      return {u, s, vh};
    }
  }
  if (s.size() == 0) return {u, s, vh};
  const char mode = !compute_uv ? 'N' : full_matrices ? 'A' : 'S';
  raise_if(run(LapackOp::svd, {w, s, u, vh}, mode), false, "SVD did not converge");
  return {u, s, vh};
}

std::pair<Array, Array> qr_factor(const Array& a) {
  Array h = working_copy(a, "qr", false);
  Array tau = Array::empty(with(batch_of(h), {std::min(rows(h), cols(h))}), h.dtype(), a.device());
  if (h.size() > 0) run(LapackOp::qr, {h, tau});
  return {h, tau};
}

Array qr_q(const Array& h, const Array& tau, std::int64_t columns) {
  const std::int64_t m = rows(h), k = tau.shape().back();
  Array q = zeros(with(batch_of(h), {m, columns}), h.dtype(), h.device());
  const std::int64_t copied = std::min(columns, cols(h));
  Strides st = h.strides();
  Shape part = h.shape();
  part.back() = copied;
  Array head = h.view(part, st, h.offset());
  Array into = q.view(part, q.strides(), q.offset());
  copy_into(into, head);
  if (q.size() > 0 && k > 0) run(LapackOp::qr_q, {q, tau});
  else if (q.size() > 0) copy_into(q, eye(m, columns, 0, h.dtype(), h.device()));
  return q;
}

std::pair<Array, Array> eig(const Array& a, bool vectors) {
  Array w0 = working_copy(a, vectors ? "eig" : "eigvals", true);
  const DType c = complex_dtype(w0.dtype());
  Array w = Array::empty(with(batch_of(w0), {rows(w0)}), c, a.device());
  Array v = vectors ? Array::empty(w0.shape(), c, a.device()) : Array();
  raise_if(run(LapackOp::eig, {w0, w, v}, vectors ? 'V' : 'N'), false, "Eigenvalues did not converge");
  return {w, v};
}

std::tuple<Array, Array, std::int64_t> lstsq(const Array& a, const Array& b, double rcond) {
  if (a.ndim() != 2 || b.ndim() != 2)
    throw LinAlgError(cat("lstsq: a must be 2-dimensional and b 1- or 2-dimensional, got shapes ", shape_str(a.shape()),
                          " and ", shape_str(b.shape())));
  const std::int64_t m = rows(a), n = cols(a), k = cols(b);
  if (rows(b) != m)
    throw LinAlgError(
        cat("Incompatible dimensions: a has shape ", shape_str(a.shape()), " and b has shape ", shape_str(b.shape())));
  const DType t = promote_types(lapack_dtype(a.dtype(), "lstsq"), lapack_dtype(b.dtype(), "lstsq"));
  Array A = Array::empty(a.shape(), t, a.device());
  copy_into(A, a);
  Array x = zeros({std::max(m, n), k}, t, a.device());
  copy_into(x.view({m, k}, x.strides(), 0), b);
  Array s = Array::empty({std::min(m, n)}, real_dtype(t), a.device());
  Array rank = zeros({}, DType::int64, a.device());
  if (A.size() > 0 && k > 0)
    raise_if(run(LapackOp::lstsq, {A, x, s, rank}, 'N', rcond), false, "SVD did not converge in Linear Least Squares");
  std::int64_t r = 0;
  backend_for(a.device()).copy_to_host(&r, rank.data(), sizeof r);
  return {x, s, r};
}

}  // namespace cupric
