// solver.cpp — the CUDA backend's factorisations (Backend::lapack) through cuSOLVER's 64-bit
// generic API. cuSOLVER is column-major: matrices go in as transposing copies and come back the
// same way (O(n^2) next to the O(n^3) factorisation); eig and lstsq, which cuSOLVER lacks, run
// in the CPU backend's LAPACK on host copies.
#include <cstdlib>
#include <vector>

#include "cuda_backend.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/errors.hpp"
#include "cupric/runtime/device.hpp"
#include "library_call.hpp"

namespace cupric::cuda_backend {

// (linalg.cpp) the handles of this device and stream, and the cuBLAS/cuSOLVER type of a dtype
cuda::cusolverDnHandle_t solver_handle(int device, cuda::CUstream stream, cuda::cusolverDnParams_t* params);
int cuda_data_type(DType t);
void check_solver_status(int status, const char* what);

namespace {

Shape swapped(const Shape& s) {
  Shape out = s;
  std::swap(out[out.size() - 1], out[out.size() - 2]);
  return out;
}

Array last_two_swapped(const Array& a) {
  Strides st = a.strides();
  std::swap(st[st.size() - 1], st[st.size() - 2]);
  return a.view(swapped(a.shape()), st, a.offset());
}

std::int64_t batch_count(const Array& a, int core) {
  std::int64_t n = 1;
  for (int d = 0; d + core < a.ndim(); ++d) n *= a.shape()[d];
  return n;
}

std::int64_t per(const Array& a, int core) {
  std::int64_t n = 1;
  for (int d = std::max(0, a.ndim() - core); d < a.ndim(); ++d) n *= a.shape()[d];
  return n;
}

char* at(const Array& a, std::int64_t i, int core) {
  return static_cast<char*>(a.data()) + i * per(a, core) * a.itemsize();
}

/// One call's state: the handle, the column-major working copies, the per-matrix info words.
class SolverRun {
 public:
  SolverRun(CudaBackend& backend, const LapackCall& call) : b_(backend), call_(call) {
    runtime::activate_device(backend.index());
    const cuda::CUstream stream = runtime::Stream::current(backend.index()).handle();
    h_ = solver_handle(backend.index(), stream, &params_);
    batch_ = batch_count(call.operands[0], 2);
    infos_ = Array::empty({std::max<std::int64_t>(batch_, 1) + 1}, DType::int32, backend.device());
    for (const Array& x : call.operands)
      if (x.defined()) b_.note_write(x);
  }

  /// A column-major copy of a row-major batch of matrices (a C-contiguous [..., cols, rows]).
  Array column_major(const Array& a) {
    Array out = Array::empty(swapped(a.shape()), a.dtype(), a.device());
    const Array src = last_two_swapped(a);
    b_.cast(elementwise_plan({&src, &out}, out.shape()));
    return out;
  }
  /// Writes a column-major copy back into the row-major operand.
  void back(const Array& column_major, const Array& dst) {
    const Array src = last_two_swapped(column_major);
    b_.cast(elementwise_plan({&src, &dst}, dst.shape()));
  }
  int* info(std::int64_t i) { return static_cast<int*>(infos_.data()) + i; }
  int* scratch_info() { return info(batch_); }
  /// Device and host workspaces of at least these sizes (kept for the call).
  void workspace(std::size_t device_bytes, std::size_t host_bytes) {
    if (device_bytes > static_cast<std::size_t>(work_.defined() ? work_.nbytes() : 0))
      work_ =
          Array::empty({static_cast<std::int64_t>(std::max<std::size_t>(device_bytes, 1))}, DType::uint8, b_.device());
    host_.resize(std::max<std::size_t>(host_bytes, 1));
  }
  void* dwork() { return work_.data(); }
  std::size_t dbytes() const { return static_cast<std::size_t>(work_.nbytes()); }
  void* hwork() { return host_.data(); }
  std::size_t hbytes() const { return host_.size(); }
  /// LAPACK-style info per matrix into call.info (int64), after the loop.
  void finish() {
    if (batch_ == 0) return;
    const Array words = infos_.view(call_.info.shape(), c_strides(call_.info.shape()), 0);
    b_.cast(elementwise_plan({&words, &call_.info}, call_.info.shape()));
  }

  cuda::cusolverDnHandle_t h_ = nullptr;
  cuda::cusolverDnParams_t params_ = nullptr;
  std::int64_t batch_ = 0;

 private:
  CudaBackend& b_;
  const LapackCall& call_;
  Array infos_, work_;
  std::vector<char> host_;
};

/// The float (S) or double (D) form of a real-typed cuSOLVER routine; null for other dtypes or
/// when this cuSOLVER lacks it (the caller then takes the generic path).
template <class F>
F real_form(DType t, F single, F wide) {
  return t == DType::float32 ? single : t == DType::float64 ? wide : nullptr;
}

bool fits_int(std::int64_t v) { return v <= 0x7fffffff; }

/// Jacobi parameters (cuSOLVER's defaults: machine-precision tolerance, 100 sweeps), made once.
cuda::gesvdjInfo_t gesvdj_params() {
  static const cuda::gesvdjInfo_t params = [] {
    cuda::gesvdjInfo_t p = nullptr;
    check_solver_status(cuda::cusolver().CreateGesvdjInfo(&p), "cusolverDnCreateGesvdjInfo");
    return p;
  }();
  return params;
}
cuda::syevjInfo_t syevj_params() {
  static const cuda::syevjInfo_t params = [] {
    cuda::syevjInfo_t p = nullptr;
    check_solver_status(cuda::cusolver().CreateSyevjInfo(&p), "cusolverDnCreateSyevjInfo");
    return p;
  }();
  return params;
}

/// A batch of small Cholesky factorisations in one potrfBatched call (as PyTorch does for
/// batches); false when it does not apply.
bool cholesky_batched(SolverRun& r, CudaBackend& backend, const Array& cm) {
  const auto& s = cuda::cusolver();
  const auto run = real_form(cm.dtype(), s.S_potrfBatched, s.D_potrfBatched);
  const std::int64_t n = cm.shape().back();
  if (!run || r.batch_ < 2 || !fits_int(n) || !fits_int(r.batch_)) return false;
  std::vector<std::uint64_t> pointers(static_cast<std::size_t>(r.batch_));
  for (std::int64_t i = 0; i < r.batch_; ++i)
    pointers[static_cast<std::size_t>(i)] = reinterpret_cast<std::uintptr_t>(at(cm, i, 2));
  Array table = Array::empty({r.batch_}, DType::uint64, backend.device());
  backend.copy_from_host(table.data(), pointers.data(), pointers.size() * sizeof(std::uint64_t));
  check_solver_status(run(r.h_, cuda::CUBLAS_FILL_MODE_LOWER, static_cast<int>(n), static_cast<void**>(table.data()),
                          static_cast<int>(n), r.info(0), static_cast<int>(r.batch_)),
                      "cusolverDn?potrfBatched");
  return true;
}

void cholesky(SolverRun& r, CudaBackend& backend, const Array& a) {
  const auto& s = cuda::cusolver();
  const std::int64_t n = a.shape().back();
  const int t = cuda_data_type(a.dtype());
  Array cm = r.column_major(a);
  if (cholesky_batched(r, backend, cm)) return r.back(cm, a);
  std::size_t dev = 0, host = 0;
  check_solver_status(
      s.PotrfBufferSize(r.h_, r.params_, cuda::CUBLAS_FILL_MODE_LOWER, n, t, cm.data(), n, t, &dev, &host),
      "cusolverDnXpotrf_bufferSize");
  r.workspace(dev, host);
  for (std::int64_t i = 0; i < r.batch_; ++i)
    check_solver_status(s.Potrf(r.h_, r.params_, cuda::CUBLAS_FILL_MODE_LOWER, n, t, at(cm, i, 2), n, t, r.dwork(),
                                r.dbytes(), r.hwork(), r.hbytes(), r.info(i)),
                        "cusolverDnXpotrf");
  r.back(cm, a);
}

/// getrf of every matrix of the column-major copy; pivots into `piv` (int64 [..., n]).
void lu_in_place(SolverRun& r, const Array& cm, const Array& piv) {
  const auto& s = cuda::cusolver();
  const std::int64_t n = cm.shape().back();
  const int t = cuda_data_type(cm.dtype());
  std::size_t dev = 0, host = 0;
  check_solver_status(s.GetrfBufferSize(r.h_, r.params_, n, n, t, cm.data(), n, t, &dev, &host),
                      "cusolverDnXgetrf_bufferSize");
  r.workspace(dev, host);
  for (std::int64_t i = 0; i < r.batch_; ++i)
    check_solver_status(
        s.Getrf(r.h_, r.params_, n, n, t, at(cm, i, 2), n, reinterpret_cast<std::int64_t*>(at(piv, i, 1)), t, r.dwork(),
                r.dbytes(), r.hwork(), r.hbytes(), r.info(i)),
        "cusolverDnXgetrf");
}

void solve(SolverRun& r, const Array& a, const Array& b, CudaBackend& backend) {
  const std::int64_t n = a.shape().back(), k = b.shape().back();
  Array cm = r.column_major(a), rhs = r.column_major(b);
  Shape piv_shape(a.shape().begin(), a.shape().end() - 1);
  Array piv = Array::empty(piv_shape, DType::int64, backend.device());
  lu_in_place(r, cm, piv);
  const int t = cuda_data_type(a.dtype());
  for (std::int64_t i = 0; i < r.batch_; ++i)
    check_solver_status(cuda::cusolver().Getrs(r.h_, r.params_, cuda::CUBLAS_OP_N, n, k, t, at(cm, i, 2), n,
                                               reinterpret_cast<const std::int64_t*>(at(piv, i, 1)), t, at(rhs, i, 2),
                                               n, r.scratch_info()),
                        "cusolverDnXgetrs");
  r.back(rhs, b);
}

/// A batch of matrices of at most 32 x 32 in one syevjBatched call (Jacobi, as PyTorch does);
/// false when it does not apply.
bool eigh_batched(SolverRun& r, const Array& cm, const Array& w, int job) {
  const auto& s = cuda::cusolver();
  const DType t = cm.dtype();
  const auto size = real_form(t, s.S_syevjBatched_bufferSize, s.D_syevjBatched_bufferSize);
  const auto run = real_form(t, s.S_syevjBatched, s.D_syevjBatched);
  const std::int64_t n = cm.shape().back();
  if (!size || !run || !s.CreateSyevjInfo || r.batch_ < 2 || n > 32 || !fits_int(r.batch_)) return false;
  const int ni = static_cast<int>(n), batch = static_cast<int>(r.batch_);
  int lwork = 0;
  check_solver_status(
      size(r.h_, job, cuda::CUBLAS_FILL_MODE_LOWER, ni, cm.data(), ni, w.data(), &lwork, syevj_params(), batch),
      "cusolverDn?syevjBatched_bufferSize");
  r.workspace(static_cast<std::size_t>(lwork) * static_cast<std::size_t>(cm.itemsize()), 0);
  check_solver_status(run(r.h_, job, cuda::CUBLAS_FILL_MODE_LOWER, ni, cm.data(), ni, w.data(), r.dwork(), lwork,
                          r.info(0), syevj_params(), batch),
                      "cusolverDn?syevjBatched");
  return true;
}

void eigh(SolverRun& r, const Array& a, const Array& w, char mode) {
  const auto& s = cuda::cusolver();
  const std::int64_t n = a.shape().back();
  const int t = cuda_data_type(a.dtype()), tw = cuda_data_type(w.dtype());
  const int job = mode == 'V' ? cuda::CUSOLVER_EIG_MODE_VECTOR : cuda::CUSOLVER_EIG_MODE_NOVECTOR;
  Array cm = r.column_major(a);
  if (eigh_batched(r, cm, w, job)) {
    if (mode == 'V') r.back(cm, a);
    return;
  }
  std::size_t dev = 0, host = 0;
  check_solver_status(s.SyevdBufferSize(r.h_, r.params_, job, cuda::CUBLAS_FILL_MODE_LOWER, n, t, cm.data(), n, tw,
                                        w.data(), t, &dev, &host),
                      "cusolverDnXsyevd_bufferSize");
  r.workspace(dev, host);
  for (std::int64_t i = 0; i < r.batch_; ++i)
    check_solver_status(s.Syevd(r.h_, r.params_, job, cuda::CUBLAS_FILL_MODE_LOWER, n, t, at(cm, i, 2), n, tw,
                                at(w, i, 1), t, r.dwork(), r.dbytes(), r.hwork(), r.hbytes(), r.info(i)),
                        "cusolverDnXsyevd");
  if (mode == 'V') r.back(cm, a);
}

/// The Jacobi SVD of real matrices (PyTorch's default driver on CUDA, which ran 2.4-2.6x faster
/// than cupric's gesvd at 512^2 on an H200): gesvdjBatched for batches of matrices up to 32 x 32 whose u and vh are
/// square, else gesvdj per matrix. The row-major a [m, n] is the column-major a^T [n, m] and is
/// factorised as it is: a^T = U2 S V2^T gives vh = U2^T (U2 column-major read row-major, written
/// in place) and u = V2 (a transposing copy). False when it does not apply (complex: gesvd).
bool svd_jacobi(SolverRun& r, const LapackCall& call) {
  const auto& s = cuda::cusolver();
  const Array &a = call.operands[0], &sv = call.operands[1], &u = call.operands[2], &vt = call.operands[3];
  const DType t = a.dtype();
  const std::int64_t m = a.shape()[a.ndim() - 2], n = a.shape().back();
  if (!s.CreateGesvdjInfo || !real_form(t, s.S_gesvdj, s.D_gesvdj) || !fits_int(m) || !fits_int(n) ||
      !fits_int(r.batch_))
    return false;
  const bool vectors = call.mode != 'N';
  const int job = vectors ? cuda::CUSOLVER_EIG_MODE_VECTOR : cuda::CUSOLVER_EIG_MODE_NOVECTOR;
  const int R = static_cast<int>(n), C = static_cast<int>(m), batch = static_cast<int>(r.batch_);
  Array vc = vectors ? Array::empty(swapped(u.shape()), u.dtype(), u.device()) : Array();
  void* u0 = vectors ? vt.data() : nullptr;
  void* v0 = vectors ? vc.data() : nullptr;
  int lwork = 0;
  const bool batched = batch > 1 && m <= 32 && n <= 32 && (call.mode != 'S' || m == n) &&
                       real_form(t, s.S_gesvdjBatched, s.D_gesvdjBatched);
  if (batched) {
    check_solver_status(real_form(t, s.S_gesvdjBatched_bufferSize, s.D_gesvdjBatched_bufferSize)(
                            r.h_, job, R, C, a.data(), R, sv.data(), u0, R, v0, C, &lwork, gesvdj_params(), batch),
                        "cusolverDn?gesvdjBatched_bufferSize");
    r.workspace(static_cast<std::size_t>(lwork) * static_cast<std::size_t>(a.itemsize()), 0);
    check_solver_status(
        real_form(t, s.S_gesvdjBatched, s.D_gesvdjBatched)(r.h_, job, R, C, a.data(), R, sv.data(), u0, R, v0, C,
                                                           r.dwork(), lwork, r.info(0), gesvdj_params(), batch),
        "cusolverDn?gesvdjBatched");
  } else {
    const int econ = call.mode == 'A' ? 0 : 1;
    check_solver_status(real_form(t, s.S_gesvdj_bufferSize, s.D_gesvdj_bufferSize)(
                            r.h_, job, econ, R, C, a.data(), R, sv.data(), u0, R, v0, C, &lwork, gesvdj_params()),
                        "cusolverDn?gesvdj_bufferSize");
    r.workspace(static_cast<std::size_t>(lwork) * static_cast<std::size_t>(a.itemsize()), 0);
    const auto run = real_form(t, s.S_gesvdj, s.D_gesvdj);
    for (std::int64_t i = 0; i < r.batch_; ++i)
      check_solver_status(run(r.h_, job, econ, R, C, at(a, i, 2), R, at(sv, i, 1), vectors ? at(vt, i, 2) : nullptr, R,
                              vectors ? at(vc, i, 2) : nullptr, C, r.dwork(), lwork, r.info(i), gesvdj_params()),
                          "cusolverDn?gesvdj");
  }
  if (vectors) r.back(vc, u);
  return true;
}

/// gesvd needs rows >= columns. The row-major a [m, n] is the column-major a^T [n, m]: when
/// n >= m that is factorised as it is (a^T = U2 S V2^H gives u = V2^H and vh = U2 read row-major);
/// otherwise a column-major copy of a is.
void svd(SolverRun& r, const LapackCall& call) {
  // the Jacobi path faulted (CUDA_ERROR_ILLEGAL_ADDRESS) in its first H200 run, 2026-12-01: off
  // until it is found; CUPRIC_SVD_JACOBI=1 turns it on for that work
  static const bool jacobi = std::getenv("CUPRIC_SVD_JACOBI") != nullptr;
  if (jacobi && svd_jacobi(r, call)) return;
  const auto& s = cuda::cusolver();
  const Array &a = call.operands[0], &sv = call.operands[1], &u = call.operands[2], &vt = call.operands[3];
  const std::int64_t m = a.shape()[a.ndim() - 2], n = a.shape().back();
  const bool direct = n >= m;
  Array work = direct ? a : r.column_major(a);
  Array uc, vc;  // column-major U (rows x cu) and VT (cv x cols) of the factorised matrix
  const std::int64_t rows = direct ? n : m, cols = direct ? m : n;
  const signed char job = static_cast<signed char>(call.mode);
  if (call.mode != 'N') {
    if (direct) {
      uc = vt;  // U2 column-major [n, cu] read row-major is [cu, n] = vh
      vc = u;   // V2^H column-major [m, m] read row-major = u
    } else {
      uc = Array::empty(swapped(u.shape()), u.dtype(), u.device());
      vc = Array::empty(swapped(vt.shape()), vt.dtype(), vt.device());
    }
  }
  const int t = cuda_data_type(a.dtype()), ts = cuda_data_type(sv.dtype());
  const std::int64_t ldv = std::max<std::int64_t>(call.mode == 'A' ? cols : std::min(rows, cols), 1);
  void* u0 = uc.defined() ? uc.data() : nullptr;
  void* v0 = vc.defined() ? vc.data() : nullptr;
  std::size_t dev = 0, host = 0;
  check_solver_status(s.GesvdBufferSize(r.h_, r.params_, job, job, rows, cols, t, work.data(), rows, ts, sv.data(), t,
                                        u0, rows, t, v0, ldv, t, &dev, &host),
                      "cusolverDnXgesvd_bufferSize");
  r.workspace(dev, host);
  for (std::int64_t i = 0; i < r.batch_; ++i)
    check_solver_status(s.Gesvd(r.h_, r.params_, job, job, rows, cols, t, at(work, i, 2), rows, ts, at(sv, i, 1), t,
                                uc.defined() ? at(uc, i, 2) : nullptr, rows, t, vc.defined() ? at(vc, i, 2) : nullptr,
                                ldv, t, r.dwork(), r.dbytes(), r.hwork(), r.hbytes(), r.info(i)),
                        "cusolverDnXgesvd");
  if (!direct && call.mode != 'N') {
    r.back(uc, u);
    r.back(vc, vt);
  }
}

void qr(SolverRun& r, const Array& a, const Array& tau) {
  const auto& s = cuda::cusolver();
  const std::int64_t m = a.shape()[a.ndim() - 2], n = a.shape().back();
  const int t = cuda_data_type(a.dtype());
  Array cm = r.column_major(a);
  std::size_t dev = 0, host = 0;
  check_solver_status(s.GeqrfBufferSize(r.h_, r.params_, m, n, t, cm.data(), m, t, tau.data(), t, &dev, &host),
                      "cusolverDnXgeqrf_bufferSize");
  r.workspace(dev, host);
  for (std::int64_t i = 0; i < r.batch_; ++i)
    check_solver_status(s.Geqrf(r.h_, r.params_, m, n, t, at(cm, i, 2), m, t, at(tau, i, 1), t, r.dwork(), r.dbytes(),
                                r.hwork(), r.hbytes(), r.info(i)),
                        "cusolverDnXgeqrf");
  r.back(cm, a);
}

void qr_q(SolverRun& r, const Array& q, const Array& tau) {
  const auto& s = cuda::cusolver();
  const std::int64_t m = q.shape()[q.ndim() - 2], c = q.shape().back(), k = tau.shape().back();
  if (m > 0x7fffffff || c > 0x7fffffff) throw ValueError("qr on the GPU: orgqr takes 32-bit sizes");
  const int mi = static_cast<int>(m), ci = static_cast<int>(c), ki = static_cast<int>(k);
  Array cm = r.column_major(q);
  using Size = cuda::cusolverStatus_t (*)(cuda::cusolverDnHandle_t, int, int, int, const void*, int, const void*, int*);
  using Run =
      cuda::cusolverStatus_t (*)(cuda::cusolverDnHandle_t, int, int, int, void*, int, const void*, void*, int, int*);
  const DType t = q.dtype();
  const Size size = t == DType::float32     ? s.SorgqrBufferSize
                    : t == DType::float64   ? s.DorgqrBufferSize
                    : t == DType::complex64 ? s.CungqrBufferSize
                                            : s.ZungqrBufferSize;
  const Run run = t == DType::float32     ? s.Sorgqr
                  : t == DType::float64   ? s.Dorgqr
                  : t == DType::complex64 ? s.Cungqr
                                          : s.Zungqr;
  int lwork = 0;
  check_solver_status(size(r.h_, mi, ci, ki, cm.data(), mi, tau.data(), &lwork), "cusolverDn?orgqr_bufferSize");
  r.workspace(static_cast<std::size_t>(lwork) * static_cast<std::size_t>(q.itemsize()), 0);
  for (std::int64_t i = 0; i < r.batch_; ++i)
    check_solver_status(run(r.h_, mi, ci, ki, at(cm, i, 2), mi, at(tau, i, 1), r.dwork(), lwork, r.info(i)),
                        "cusolverDn?orgqr");
  r.back(cm, q);
}

/// eig and lstsq: the CPU backend's LAPACK on host copies, results copied back.
void on_host(CudaBackend& backend, const LapackCall& call) {
  LapackCall host{call.op, {}, Array::empty(call.info.shape(), DType::int64), call.mode, call.rcond};
  for (const Array& x : call.operands) {
    if (!x.defined()) {
      host.operands.emplace_back();
      continue;
    }
    Array h = Array::empty(x.shape(), x.dtype());
    backend.copy_to_host(h.data(), x.data(), static_cast<std::size_t>(x.nbytes()));
    host.operands.push_back(h);
  }
  backend_for(Device::cpu()).lapack(host);
  for (std::size_t i = 0; i < call.operands.size(); ++i)
    if (call.operands[i].defined()) {
      backend.note_write(call.operands[i]);
      backend.copy_from_host(call.operands[i].data(), host.operands[i].data(),
                             static_cast<std::size_t>(host.operands[i].nbytes()));
    }
  backend.copy_from_host(call.info.data(), host.info.data(), static_cast<std::size_t>(host.info.nbytes()));
}

}  // namespace

/// The cuSOLVER routine family a factorisation runs, for the profiler's record.
static const char* solver_routine(LapackOp op) {
  switch (op) {
    case LapackOp::cholesky: return "cusolverDn potrf";
    case LapackOp::lu: return "cusolverDn getrf";
    case LapackOp::solve: return "cusolverDn getrf+getrs";
    case LapackOp::eigh: return "cusolverDn syevd";
    case LapackOp::svd: return "cusolverDn gesvd";
    case LapackOp::qr: return "cusolverDn geqrf";
    case LapackOp::qr_q: return "cusolverDn orgqr";
    default: return "cusolverDn";
  }
}

void CudaBackend::lapack(const LapackCall& call) {
  if (call.op == LapackOp::eig || call.op == LapackOp::lstsq) return on_host(*this, call);
  SolverRun run(*this, call);
  LibraryCall record("cuSOLVER", solver_routine(call.op), index_, runtime::Stream::current(index_));
  record.describe([&] { return cat(shape_str(call.operands[0].shape()), " ", name(call.operands[0].dtype())); });
  const auto& ops = call.operands;
  if (ops[0].size() > 0) {
    switch (call.op) {
      case LapackOp::cholesky: cholesky(run, *this, ops[0]); break;
      case LapackOp::lu: {
        Array cm = run.column_major(ops[0]);
        lu_in_place(run, cm, ops[1]);
        run.back(cm, ops[0]);
        break;
      }
      case LapackOp::solve: solve(run, ops[0], ops[1], *this); break;
      case LapackOp::eigh: eigh(run, ops[0], ops[1], call.mode); break;
      case LapackOp::svd: svd(run, call); break;
      case LapackOp::qr: qr(run, ops[0], ops[1]); break;
      case LapackOp::qr_q: qr_q(run, ops[0], ops[1]); break;
      default: break;
    }
  } else {
    const std::int64_t zero = 0;
    fill(call.info, &zero);
    return;
  }
  run.finish();
}

}  // namespace cupric::cuda_backend
