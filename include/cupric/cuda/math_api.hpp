// cupric/cuda/math_api.hpp — our own declarations of the cuBLAS and cuSOLVER (dense, 64-bit
// generic API) entry points cupric calls, from NVIDIA's documented C APIs; the loader fills the
// tables at first use (loader.hpp: cublas(), cusolver()).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cupric/cuda/driver_api.hpp"

namespace cupric::cuda {

using cublasHandle_t = struct cublasContext*;
using cusolverDnHandle_t = struct cusolverDnContext*;
using cusolverDnParams_t = struct cusolverDnParams*;
using cublasStatus_t = int;
using cusolverStatus_t = int;
constexpr int CUBLAS_STATUS_SUCCESS = 0;
constexpr int CUSOLVER_STATUS_SUCCESS = 0;

// cudaDataType_t
enum cudaDataType : int {
  CUDA_R_32F = 0,
  CUDA_R_64F = 1,
  CUDA_R_16F = 2,
  CUDA_C_32F = 4,
  CUDA_C_64F = 5,
  CUDA_R_16BF = 14,
};
// cublasOperation_t, cublasFillMode_t, cusolverEigMode_t, cublasComputeType_t, cublasGemmAlgo_t
constexpr int CUBLAS_OP_N = 0;
constexpr int CUBLAS_OP_T = 1;
constexpr int CUBLAS_FILL_MODE_LOWER = 0;
constexpr int CUBLAS_FILL_MODE_UPPER = 1;
constexpr int CUSOLVER_EIG_MODE_NOVECTOR = 0;
constexpr int CUSOLVER_EIG_MODE_VECTOR = 1;
constexpr int CUBLAS_COMPUTE_32F = 68;
constexpr int CUBLAS_COMPUTE_32F_FAST_TF32 = 77;
constexpr int CUBLAS_COMPUTE_64F = 70;
constexpr int CUBLAS_GEMM_DEFAULT = -1;

// X(member, symbol, required, return type, parameter list)
#define CUPRIC_CUBLAS_FUNCTIONS(X)                                                                                  \
  X(Create, cublasCreate_v2, true, cublasStatus_t, (cublasHandle_t*))                                               \
  X(Destroy, cublasDestroy_v2, true, cublasStatus_t, (cublasHandle_t))                                              \
  X(SetStream, cublasSetStream_v2, true, cublasStatus_t, (cublasHandle_t, CUstream))                                \
  X(SetWorkspace, cublasSetWorkspace_v2, true, cublasStatus_t, (cublasHandle_t, void*, std::size_t))                \
  X(GetProperty, cublasGetProperty, true, cublasStatus_t, (int, int*))                                              \
  X(GemmStridedBatchedEx, cublasGemmStridedBatchedEx, true, cublasStatus_t,                                         \
    (cublasHandle_t, int, int, int, int, int, const void*, const void*, int, int, long long, const void*, int, int, \
     long long, const void*, void*, int, int, long long, int, int, int))

// cuSOLVER's 64-bit generic API (CUDA 11.1+), and orgqr/ungqr (no generic form) per type.
#define CUPRIC_CUSOLVER_FUNCTIONS(X)                                                                                   \
  X(Create, cusolverDnCreate, true, cusolverStatus_t, (cusolverDnHandle_t*))                                           \
  X(Destroy, cusolverDnDestroy, true, cusolverStatus_t, (cusolverDnHandle_t))                                          \
  X(SetStream, cusolverDnSetStream, true, cusolverStatus_t, (cusolverDnHandle_t, CUstream))                            \
  X(CreateParams, cusolverDnCreateParams, true, cusolverStatus_t, (cusolverDnParams_t*))                               \
  X(GetProperty, cusolverGetProperty, true, cusolverStatus_t, (int, int*))                                             \
  X(PotrfBufferSize, cusolverDnXpotrf_bufferSize, true, cusolverStatus_t,                                              \
    (cusolverDnHandle_t, cusolverDnParams_t, int, std::int64_t, int, const void*, std::int64_t, int, std::size_t*,     \
     std::size_t*))                                                                                                    \
  X(Potrf, cusolverDnXpotrf, true, cusolverStatus_t,                                                                   \
    (cusolverDnHandle_t, cusolverDnParams_t, int, std::int64_t, int, void*, std::int64_t, int, void*, std::size_t,     \
     void*, std::size_t, int*))                                                                                        \
  X(GetrfBufferSize, cusolverDnXgetrf_bufferSize, true, cusolverStatus_t,                                              \
    (cusolverDnHandle_t, cusolverDnParams_t, std::int64_t, std::int64_t, int, const void*, std::int64_t, int,          \
     std::size_t*, std::size_t*))                                                                                      \
  X(Getrf, cusolverDnXgetrf, true, cusolverStatus_t,                                                                   \
    (cusolverDnHandle_t, cusolverDnParams_t, std::int64_t, std::int64_t, int, void*, std::int64_t, std::int64_t*, int, \
     void*, std::size_t, void*, std::size_t, int*))                                                                    \
  X(Getrs, cusolverDnXgetrs, true, cusolverStatus_t,                                                                   \
    (cusolverDnHandle_t, cusolverDnParams_t, int, std::int64_t, std::int64_t, int, const void*, std::int64_t,          \
     const std::int64_t*, int, void*, std::int64_t, int*))                                                             \
  X(SyevdBufferSize, cusolverDnXsyevd_bufferSize, true, cusolverStatus_t,                                              \
    (cusolverDnHandle_t, cusolverDnParams_t, int, int, std::int64_t, int, const void*, std::int64_t, int, const void*, \
     int, std::size_t*, std::size_t*))                                                                                 \
  X(Syevd, cusolverDnXsyevd, true, cusolverStatus_t,                                                                   \
    (cusolverDnHandle_t, cusolverDnParams_t, int, int, std::int64_t, int, void*, std::int64_t, int, void*, int, void*, \
     std::size_t, void*, std::size_t, int*))                                                                           \
  X(GesvdBufferSize, cusolverDnXgesvd_bufferSize, true, cusolverStatus_t,                                              \
    (cusolverDnHandle_t, cusolverDnParams_t, signed char, signed char, std::int64_t, std::int64_t, int, const void*,   \
     std::int64_t, int, const void*, int, const void*, std::int64_t, int, const void*, std::int64_t, int,              \
     std::size_t*, std::size_t*))                                                                                      \
  X(Gesvd, cusolverDnXgesvd, true, cusolverStatus_t,                                                                   \
    (cusolverDnHandle_t, cusolverDnParams_t, signed char, signed char, std::int64_t, std::int64_t, int, void*,         \
     std::int64_t, int, void*, int, void*, std::int64_t, int, void*, std::int64_t, int, void*, std::size_t, void*,     \
     std::size_t, int*))                                                                                               \
  X(GeqrfBufferSize, cusolverDnXgeqrf_bufferSize, true, cusolverStatus_t,                                              \
    (cusolverDnHandle_t, cusolverDnParams_t, std::int64_t, std::int64_t, int, const void*, std::int64_t, int,          \
     const void*, int, std::size_t*, std::size_t*))                                                                    \
  X(Geqrf, cusolverDnXgeqrf, true, cusolverStatus_t,                                                                   \
    (cusolverDnHandle_t, cusolverDnParams_t, std::int64_t, std::int64_t, int, void*, std::int64_t, int, void*, int,    \
     void*, std::size_t, void*, std::size_t, int*))                                                                    \
  X(SorgqrBufferSize, cusolverDnSorgqr_bufferSize, true, cusolverStatus_t,                                             \
    (cusolverDnHandle_t, int, int, int, const void*, int, const void*, int*))                                          \
  X(DorgqrBufferSize, cusolverDnDorgqr_bufferSize, true, cusolverStatus_t,                                             \
    (cusolverDnHandle_t, int, int, int, const void*, int, const void*, int*))                                          \
  X(CungqrBufferSize, cusolverDnCungqr_bufferSize, true, cusolverStatus_t,                                             \
    (cusolverDnHandle_t, int, int, int, const void*, int, const void*, int*))                                          \
  X(ZungqrBufferSize, cusolverDnZungqr_bufferSize, true, cusolverStatus_t,                                             \
    (cusolverDnHandle_t, int, int, int, const void*, int, const void*, int*))                                          \
  X(Sorgqr, cusolverDnSorgqr, true, cusolverStatus_t,                                                                  \
    (cusolverDnHandle_t, int, int, int, void*, int, const void*, void*, int, int*))                                    \
  X(Dorgqr, cusolverDnDorgqr, true, cusolverStatus_t,                                                                  \
    (cusolverDnHandle_t, int, int, int, void*, int, const void*, void*, int, int*))                                    \
  X(Cungqr, cusolverDnCungqr, true, cusolverStatus_t,                                                                  \
    (cusolverDnHandle_t, int, int, int, void*, int, const void*, void*, int, int*))                                    \
  X(Zungqr, cusolverDnZungqr, true, cusolverStatus_t,                                                                  \
    (cusolverDnHandle_t, int, int, int, void*, int, const void*, void*, int, int*))

struct CublasApi {
#define CUPRIC_DECLARE_ENTRY(member, symbol, required, ret, params) ret(*member) params = nullptr;
  CUPRIC_CUBLAS_FUNCTIONS(CUPRIC_DECLARE_ENTRY)
#undef CUPRIC_DECLARE_ENTRY
  int major = 0, minor = 0;
};

struct CusolverApi {
#define CUPRIC_DECLARE_ENTRY(member, symbol, required, ret, params) ret(*member) params = nullptr;
  CUPRIC_CUSOLVER_FUNCTIONS(CUPRIC_DECLARE_ENTRY)
#undef CUPRIC_DECLARE_ENTRY
  int major = 0, minor = 0;
};

}  // namespace cupric::cuda
