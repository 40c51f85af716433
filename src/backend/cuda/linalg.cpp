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
#include "cupric/linalg.hpp"
#include "cupric/runtime/device.hpp"
#include "cupric/runtime/device_timer.hpp"

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
  }
  if (solver && !h.solver) {
    const auto& s = cuda::cusolver();
    check_solver(s.Create(&h.solver), "cusolverDnCreate");
    check_solver(s.SetStream(h.solver, stream), "cusolverDnSetStream");
    check_solver(s.CreateParams(&h.params), "cusolverDnCreateParams");
  }
  return h;
}

int data_type(DType t) {
  switch (t) {
    case DType::float16:
      return cuda::CUDA_R_16F;
    case DType::bfloat16:
      return cuda::CUDA_R_16BF;
    case DType::float32:
      return cuda::CUDA_R_32F;
    case DType::float64:
      return cuda::CUDA_R_64F;
    case DType::complex64:
      return cuda::CUDA_C_32F;
    case DType::complex128:
      return cuda::CUDA_C_64F;
    default:
      throw TypeError(cat("cuBLAS/cuSOLVER have no ", name(t), " type"));
  }
}

/// The memory of element `offset` of a (in bytes from the storage).
char* element(const Array& a, std::int64_t offset) {
  return static_cast<char*>(a.storage()->data()) + offset * a.itemsize();
}

/// Offsets of every matrix of a batched operand (leading dims the batch), in elements.
std::vector<std::int64_t> batch_offsets(const Array& a) {
  const int nb = a.ndim() - 2;
  std::int64_t count = 1;
  for (int d = 0; d < nb; ++d) count *= a.shape()[d];
  std::vector<std::int64_t> out(static_cast<std::size_t>(count));
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

/// One gemm operand as cuBLAS reads it: the row-major matrix (rows x cols) is cuBLAS's
/// column-major transpose, so a row-major view is OP_N and a column-major one OP_T.
struct GemmSide {
  Array array;  ///< the view itself, or a C-contiguous copy when cuBLAS cannot read the view
  int op = cuda::CUBLAS_OP_N;
  std::int64_t ld = 1, first = 0, stride = 0;
};

bool uniform(const std::vector<std::int64_t>& offsets, std::int64_t& stride) {
  stride = offsets.size() > 1 ? offsets[1] - offsets[0] : 0;
  for (std::size_t i = 1; i < offsets.size(); ++i)
    if (offsets[i] - offsets[i - 1] != stride) return false;
  return stride >= 0;
}

GemmSide gemm_side(CudaBackend& backend, const Array& a) {
  const std::int64_t rows = a.shape()[a.ndim() - 2], cols = a.shape()[a.ndim() - 1];
  const std::int64_t rs = a.strides()[a.ndim() - 2], cs = a.strides()[a.ndim() - 1];
  GemmSide s{a};
  std::vector<std::int64_t> offsets = batch_offsets(a);
  bool ok = uniform(offsets, s.stride);
  if ((cols == 1 || cs == 1) && (rows == 1 || rs >= std::max<std::int64_t>(cols, 1))) {
    s.op = cuda::CUBLAS_OP_N;
    s.ld = rows == 1 ? std::max<std::int64_t>(cols, 1) : rs;
  } else if ((rows == 1 || rs == 1) && (cols == 1 || cs >= std::max<std::int64_t>(rows, 1))) {
    s.op = cuda::CUBLAS_OP_T;
    s.ld = cols == 1 ? std::max<std::int64_t>(rows, 1) : cs;
  } else {
    ok = false;
  }
  if (!ok) {  // a dense copy: negative, zero or irregular strides
    s.array = Array::empty(a.shape(), a.dtype(), a.device());
    backend.cast(elementwise_plan({&a, &s.array}, a.shape()));
    s.op = cuda::CUBLAS_OP_N;
    s.ld = std::max<std::int64_t>(cols, 1);
    offsets = batch_offsets(s.array);
    uniform(offsets, s.stride);
  }
  s.first = offsets.empty() ? 0 : offsets[0];
  return s;
}

int narrow(std::int64_t v, const char* what) {
  if (v > 0x7fffffff) throw ValueError(cat("matmul on the GPU: ", what, " = ", v, " exceeds cuBLAS's 32-bit sizes"));
  return static_cast<int>(v);
}

}  // namespace

cuda::cusolverDnHandle_t solver_handle(int device, cuda::CUstream stream, cuda::cusolverDnParams_t* params) {
  Handles& h = handles(device, stream, true);
  *params = h.params;
  return h.solver;
}
int cuda_data_type(DType t) { return data_type(t); }
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
  const runtime::Stream current = runtime::Stream::current(index_);
  const CUstream stream = current.handle();
  Handles& h = handles(index_, stream, false);
  runtime::DeviceTimer timer;  // the profiler's library-call record: nothing unless it records
  timer.begin(stream, index_, current.is_capturing(), false);  // cuBLAS launches several kernels: events
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
  const int type = data_type(t);
  // row-major C = A B is column-major C^T = B^T A^T: B's side goes first
  check_blas(cuda::cublas().GemmStridedBatchedEx(h.blas, B.op, A.op, narrow(n, "n"), narrow(m, "m"), narrow(k, "k"),
                                                 alpha, element(B.array, B.first), type, narrow(B.ld, "ldb"), B.stride,
                                                 element(A.array, A.first), type, narrow(A.ld, "lda"), A.stride, beta,
                                                 out.data(), type, narrow(n, "ldc"), m * n, narrow(batch, "batch"),
                                                 compute, cuda::CUBLAS_GEMM_DEFAULT),
             "cublasGemmStridedBatchedEx");
  timer.end(profiler::EventKind::library, "cublasGemmStridedBatchedEx", cat(m, "x", n, "x", k, " batch ", batch), 0,
            current.serial());
}

}  // namespace cupric::cuda_backend
