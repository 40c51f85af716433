// linalg.cpp — the CUDA backend's matrix products (cuBLAS gemm, views as transpose flags and
// leading dimensions) and factorisations (cuSOLVER's 64-bit generic API on column-major copies;
// eig and lstsq, which cuSOLVER lacks, run on the host). Handles per device and stream, cached.
#include <complex>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "cuda_backend.hpp"
#include "cupric/cuda/errors.hpp"
#include "cupric/cuda/loader.hpp"
#include "cupric/errors.hpp"
#include "cupric/gemm_view.hpp"
#include "cupric/linalg.hpp"
#include "cupric/runtime/device.hpp"
#include "gemm_layout.hpp"
#include "library_call.hpp"

namespace cupric::cuda_backend {
namespace {

using cuda::CUstream;

void check_blas(int status, const char* what) {
  if (status != cuda::CUBLAS_STATUS_SUCCESS) throw std::runtime_error(cat(what, " failed with cuBLAS status ", status));
}
void check_solver(int status, const char* what) {
  if (status != cuda::CUSOLVER_STATUS_SUCCESS)
    throw std::runtime_error(cat(what, " failed with cuSOLVER status ", status));
}

/// cuBLAS and cuSOLVER handles of one (device, stream), made at its first product and kept (as
/// the primary contexts are), with cuBLAS's workspace.
struct Handles {
  cuda::cublasHandle_t blas = nullptr;
  cuda::cublasLtHandle_t lt = nullptr;
  void* workspace = nullptr;  ///< cuBLAS's, lent to cuBLASLt too: both run in this stream's order
  cuda::cusolverDnHandle_t solver = nullptr;
  cuda::cusolverDnParams_t params = nullptr;
};

constexpr std::size_t kCublasWorkspace = 32u << 20;  // cuBLAS's advice for Hopper

Handles& handles(int device, CUstream stream, bool solver) {
  static std::mutex mutex;
  static std::map<std::pair<int, CUstream>, Handles> table;
  std::lock_guard lock(mutex);
  Handles& h = table[{device, stream}];
  if (!h.blas) {
    const auto& b = cuda::cublas();
    check_blas(b.Create(&h.blas), "cublasCreate");
    check_blas(b.SetStream(h.blas, stream), "cublasSetStream");
    cuda::CUdeviceptr ws = 0;
    cuda::check(cuda::driver().MemAlloc(&ws, kCublasWorkspace), "cuMemAlloc (cuBLAS workspace)");
    check_blas(b.SetWorkspace(h.blas, reinterpret_cast<void*>(ws), kCublasWorkspace), "cublasSetWorkspace");
    h.workspace = reinterpret_cast<void*>(ws);
  }
  if (solver && !h.solver) {
    const auto& s = cuda::cusolver();
    check_solver(s.Create(&h.solver), "cusolverDnCreate");
    check_solver(s.SetStream(h.solver, stream), "cusolverDnSetStream");
    check_solver(s.CreateParams(&h.params), "cusolverDnCreateParams");
  }
  return h;
}

}  // namespace

int cuda_data_type(DType t) {
  switch (t) {
    case DType::float16: return cuda::CUDA_R_16F;
    case DType::bfloat16: return cuda::CUDA_R_16BF;
    case DType::float32: return cuda::CUDA_R_32F;
    case DType::float64: return cuda::CUDA_R_64F;
    case DType::complex64: return cuda::CUDA_C_32F;
    case DType::complex128: return cuda::CUDA_C_64F;
    default: throw TypeError(cat("cuBLAS/cuSOLVER have no ", name(t), " type"));
  }
}

bool uniform_batch_stride(const Array& a, std::int64_t& stride) {
  stride = 0;
  std::int64_t covered = 0;  // matrices spanned by the dimensions seen so far (0: none yet)
  for (int d = a.ndim() - 3; d >= 0; --d) {
    const std::int64_t size = a.shape()[d];
    if (size == 1) continue;
    if (covered == 0) {
      stride = a.strides()[d];
      covered = size;
    } else if (a.strides()[d] == stride * covered) {
      covered *= size;
    } else {
      return false;
    }
  }
  return stride >= 0;
}

GemmSide gemm_side(CudaBackend& backend, const Array& a) {
  const std::int64_t rows = a.shape()[a.ndim() - 2], cols = a.shape()[a.ndim() - 1];
  const std::int64_t rs = a.strides()[a.ndim() - 2], cs = a.strides()[a.ndim() - 1];
  GemmSide s{a};
  const GemmView view = gemm_view(rows, cols, rs, cs);
  s.op = view.transposed ? cuda::CUBLAS_OP_T : cuda::CUBLAS_OP_N;
  s.ld = view.ld;
  if (!uniform_batch_stride(a, s.stride) || !view.direct) {  // a dense copy: negative, zero or irregular strides
    s.array = Array::empty(a.shape(), a.dtype(), a.device());
    backend.cast(elementwise_plan({&a, &s.array}, a.shape()));
    s.op = cuda::CUBLAS_OP_N;
    s.ld = std::max<std::int64_t>(cols, 1);
    uniform_batch_stride(s.array, s.stride);
  }
  s.first = s.array.offset();
  return s;
}

LtContext lt_context(int device, cuda::CUstream stream) {
  Handles& h = handles(device, stream, false);
  if (!h.lt) check_blas(cuda::cublaslt().Create(&h.lt), "cublasLtCreate");
  return {h.lt, h.workspace, kCublasWorkspace};
}

cuda::cusolverDnHandle_t solver_handle(int device, cuda::CUstream stream, cuda::cusolverDnParams_t* params) {
  Handles& h = handles(device, stream, true);
  *params = h.params;
  return h.solver;
}
void check_solver_status(int status, const char* what) { check_solver(status, what); }

void CudaBackend::matmul(const Array& a, const Array& b, const Array& out) {
  if (out.size() == 0) return;
  const DType t = out.dtype();
  note_write(out);
  const std::int64_t m = out.shape()[out.ndim() - 2], n = out.shape().back(), k = a.shape().back();
  if (k == 0) {
    const std::complex<double> zero{};
    fill(out, &zero);  // zero bytes are zero (false) in every dtype
    return;
  }
  if (!is_inexact(t))
    throw NotImplementedError("integer matrix products have no cuBLAS routine (the ops layer composes them)");
  runtime::activate_device(index_);
  if (gemm_library() == GemmLibrary::cublaslt && matmul_through_lt(*this, a, b, out)) return;
  const runtime::Stream current = runtime::Stream::current(index_);
  const CUstream stream = current.handle();
  Handles& h = handles(index_, stream, false);
  LibraryCall call("cuBLAS", "cublasGemmStridedBatchedEx", index_, current);
  const GemmSide A = gemm_side(*this, a), B = gemm_side(*this, b);
  const std::int64_t batch = out.size() / (m * n);
  const bool single = t == DType::float32 || t == DType::float16 || t == DType::bfloat16 || t == DType::complex64;
  const bool tf32 = t == DType::float32 && matmul_precision() == MatmulPrecision::tf32;
  const int compute = tf32     ? cuda::CUBLAS_COMPUTE_32F_FAST_TF32
                      : single ? cuda::CUBLAS_COMPUTE_32F
                               : cuda::CUBLAS_COMPUTE_64F;
  const std::complex<double> one_d{1, 0}, zero_d{0, 0};
  const std::complex<float> one_f{1, 0}, zero_f{0, 0};
  const void* alpha = single ? static_cast<const void*>(&one_f) : &one_d;
  const void* beta = single ? static_cast<const void*>(&zero_f) : &zero_d;
  const int type = cuda_data_type(t);
  // row-major C = A B is column-major C^T = B^T A^T: B's side goes first
  check_blas(cuda::cublas().GemmStridedBatchedEx(
                 h.blas, B.op, A.op, narrow(n, "n"), narrow(m, "m"), narrow(k, "k"), alpha, B.data(), type,
                 narrow(B.ld, "ldb"), B.stride, A.data(), type, narrow(A.ld, "lda"), A.stride, beta, out.data(), type,
                 narrow(n, "ldc"), m * n, narrow(batch, "batch"), compute, cuda::CUBLAS_GEMM_DEFAULT),
             "cublasGemmStridedBatchedEx");
  call.describe([&] { return cat(m, "x", n, "x", k, " batch ", batch, " ", name(t)); });
}

}  // namespace cupric::cuda_backend
