// cupric/cuda/math_api.hpp — our own declarations of the cuBLAS, cuBLASLt, cuSOLVER (dense, 64-bit
// generic API) and cuFFT entry points cupric calls, from NVIDIA's documented C APIs; the loader
// fills the tables at first use (loader.hpp: cublas(), cublaslt(), cusolver(), cufft()).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cupric/cuda/driver_api.hpp"

namespace cupric::cuda {

using cublasHandle_t = struct cublasContext*;
using cusolverDnHandle_t = struct cusolverDnContext*;
using cusolverDnParams_t = struct cusolverDnParams*;
using gesvdjInfo_t = struct gesvdjInfo*;
using syevjInfo_t = struct syevjInfo*;
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
    (cusolverDnHandle_t, int, int, int, void*, int, const void*, void*, int, int*))                                    \
  CUPRIC_CUSOLVER_REAL_FUNCTIONS(X, S)                                                                                 \
  CUPRIC_CUSOLVER_REAL_FUNCTIONS(X, D)                                                                                 \
  X(CreateGesvdjInfo, cusolverDnCreateGesvdjInfo, false, cusolverStatus_t, (gesvdjInfo_t*))                            \
  X(CreateSyevjInfo, cusolverDnCreateSyevjInfo, false, cusolverStatus_t, (syevjInfo_t*))

// The float (S) and double (D) forms of the Jacobi SVD (gesvdj, gesvdjBatched for <= 32 x 32),
// the batched Jacobi eigensolver (syevjBatched, <= 32 x 32) and the batched Cholesky; optional
// (cupric falls back to the generic loops when one is missing). Members are named T_routine.
#define CUPRIC_CUSOLVER_REAL_FUNCTIONS(X, T)                                                                          \
  X(T##_gesvdj_bufferSize, cusolverDn##T##gesvdj_bufferSize, false, cusolverStatus_t,                                 \
    (cusolverDnHandle_t, int, int, int, int, const void*, int, const void*, const void*, int, const void*, int, int*, \
     gesvdjInfo_t))                                                                                                   \
  X(T##_gesvdj, cusolverDn##T##gesvdj, false, cusolverStatus_t,                                                       \
    (cusolverDnHandle_t, int, int, int, int, void*, int, void*, void*, int, void*, int, void*, int, int*,             \
     gesvdjInfo_t))                                                                                                   \
  X(T##_gesvdjBatched_bufferSize, cusolverDn##T##gesvdjBatched_bufferSize, false, cusolverStatus_t,                   \
    (cusolverDnHandle_t, int, int, int, const void*, int, const void*, const void*, int, const void*, int, int*,      \
     gesvdjInfo_t, int))                                                                                              \
  X(T##_gesvdjBatched, cusolverDn##T##gesvdjBatched, false, cusolverStatus_t,                                         \
    (cusolverDnHandle_t, int, int, int, void*, int, void*, void*, int, void*, int, void*, int, int*, gesvdjInfo_t,    \
     int))                                                                                                            \
  X(T##_syevjBatched_bufferSize, cusolverDn##T##syevjBatched_bufferSize, false, cusolverStatus_t,                     \
    (cusolverDnHandle_t, int, int, int, const void*, int, const void*, int*, syevjInfo_t, int))                       \
  X(T##_syevjBatched, cusolverDn##T##syevjBatched, false, cusolverStatus_t,                                           \
    (cusolverDnHandle_t, int, int, int, void*, int, void*, void*, int, int*, syevjInfo_t, int))                       \
  X(T##_potrfBatched, cusolverDn##T##potrfBatched, false, cusolverStatus_t,                                           \
    (cusolverDnHandle_t, int, int, void**, int, int*, int))

// cuBLASLt (libcublasLt, in the same wheels as cuBLAS): the matmul with descriptors, heuristics
// and fused epilogues. Attribute and enum values are cuBLASLt's documented ones.
using cublasLtHandle_t = struct cublasLtContext*;
using cublasLtMatmulDesc_t = struct cublasLtMatmulDescOpaque*;
using cublasLtMatrixLayout_t = struct cublasLtMatrixLayoutOpaque*;
using cublasLtMatmulPreference_t = struct cublasLtMatmulPreferenceOpaque*;
struct cublasLtMatmulAlgo_t {
  std::uint64_t data[8];
};
struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  std::size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};
constexpr int CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5;
constexpr int CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6;
constexpr int CUBLASLT_MATMUL_DESC_TRANSA = 3;
constexpr int CUBLASLT_MATMUL_DESC_TRANSB = 4;
constexpr int CUBLASLT_MATMUL_DESC_EPILOGUE = 7;
constexpr int CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8;
constexpr int CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER = 11;
constexpr int CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD = 12;
constexpr int CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE = 13;
constexpr int CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1;
// cublasLtEpilogue_t
constexpr int CUBLASLT_EPILOGUE_DEFAULT = 1;
constexpr int CUBLASLT_EPILOGUE_RELU = 2;
constexpr int CUBLASLT_EPILOGUE_BIAS = 4;
constexpr int CUBLASLT_EPILOGUE_GELU = 32;
constexpr int CUBLASLT_EPILOGUE_AUX = 128;  // the flag that adds the auxiliary output
constexpr int CUBLASLT_EPILOGUE_DGELU = 64 | 128;
constexpr int CUBLASLT_EPILOGUE_BGRAD = 16;  // the flag on DRELU/DGELU that adds the bias gradient
constexpr int CUBLASLT_EPILOGUE_BGRADA = 256;
constexpr int CUBLASLT_EPILOGUE_BGRADB = 512;

#define CUPRIC_CUBLASLT_FUNCTIONS(X)                                                                                 \
  X(Create, cublasLtCreate, true, cublasStatus_t, (cublasLtHandle_t*))                                               \
  X(GetVersion, cublasLtGetVersion, true, std::size_t, ())                                                           \
  X(MatmulDescCreate, cublasLtMatmulDescCreate, true, cublasStatus_t, (cublasLtMatmulDesc_t*, int, int))             \
  X(MatmulDescDestroy, cublasLtMatmulDescDestroy, true, cublasStatus_t, (cublasLtMatmulDesc_t))                      \
  X(MatmulDescSetAttribute, cublasLtMatmulDescSetAttribute, true, cublasStatus_t,                                    \
    (cublasLtMatmulDesc_t, int, const void*, std::size_t))                                                           \
  X(MatrixLayoutCreate, cublasLtMatrixLayoutCreate, true, cublasStatus_t,                                            \
    (cublasLtMatrixLayout_t*, int, std::uint64_t, std::uint64_t, std::int64_t))                                      \
  X(MatrixLayoutDestroy, cublasLtMatrixLayoutDestroy, true, cublasStatus_t, (cublasLtMatrixLayout_t))                \
  X(MatrixLayoutSetAttribute, cublasLtMatrixLayoutSetAttribute, true, cublasStatus_t,                                \
    (cublasLtMatrixLayout_t, int, const void*, std::size_t))                                                         \
  X(MatmulPreferenceCreate, cublasLtMatmulPreferenceCreate, true, cublasStatus_t, (cublasLtMatmulPreference_t*))     \
  X(MatmulPreferenceDestroy, cublasLtMatmulPreferenceDestroy, true, cublasStatus_t, (cublasLtMatmulPreference_t))    \
  X(MatmulPreferenceSetAttribute, cublasLtMatmulPreferenceSetAttribute, true, cublasStatus_t,                        \
    (cublasLtMatmulPreference_t, int, const void*, std::size_t))                                                     \
  X(MatmulAlgoGetHeuristic, cublasLtMatmulAlgoGetHeuristic, true, cublasStatus_t,                                    \
    (cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, \
     cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int, cublasLtMatmulHeuristicResult_t*, int*))               \
  X(Matmul, cublasLtMatmul, true, cublasStatus_t,                                                                    \
    (cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*, cublasLtMatrixLayout_t, const void*,          \
     cublasLtMatrixLayout_t, const void*, const void*, cublasLtMatrixLayout_t, void*, cublasLtMatrixLayout_t,        \
     const cublasLtMatmulAlgo_t*, void*, std::size_t, CUstream))

struct CublasLtApi {
#define CUPRIC_DECLARE_ENTRY(member, symbol, required, ret, params) ret(*member) params = nullptr;
  CUPRIC_CUBLASLT_FUNCTIONS(CUPRIC_DECLARE_ENTRY)
#undef CUPRIC_DECLARE_ENTRY
  std::size_t version = 0;
};

// cuFFT: plans are int handles; cufftType and the direction, cufftXtCallbackType (the JIT LTO
// callbacks' kinds), libraryPropertyType for the version.
using cufftHandle = int;
using cufftResult = int;
constexpr int CUFFT_SUCCESS = 0;
enum cufftType : int {
  CUFFT_R2C = 0x2a,
  CUFFT_C2R = 0x2c,
  CUFFT_C2C = 0x29,
  CUFFT_D2Z = 0x6a,
  CUFFT_Z2D = 0x6c,
  CUFFT_Z2Z = 0x69,
};
constexpr int CUFFT_FORWARD = -1;
constexpr int CUFFT_INVERSE = 1;
enum cufftXtCallbackType : int {
  CUFFT_CB_LD_COMPLEX = 0x0,
  CUFFT_CB_LD_COMPLEX_DOUBLE = 0x1,
  CUFFT_CB_LD_REAL = 0x2,
  CUFFT_CB_LD_REAL_DOUBLE = 0x3,
  CUFFT_CB_ST_COMPLEX = 0x4,
  CUFFT_CB_ST_COMPLEX_DOUBLE = 0x5,
  CUFFT_CB_ST_REAL = 0x6,
  CUFFT_CB_ST_REAL_DOUBLE = 0x7,
};

// The exec functions take cufftComplex*/cufftReal* (and the double forms); void* here. The JIT LTO
// callback setter (cuFFT 11.5+) changed signature with CUDA 13: cuFFT 12 (CUDA 13) exports the
// form with a symbol name as cufftXtSetJITCallback, cuFFT 11 (CUDA 12.8+) as
// __cufftXtSetJITCallback_12_7 (its plain symbol is the older form without the name).
#define CUPRIC_CUFFT_FUNCTIONS(X)                                                                                      \
  X(Create, cufftCreate, true, cufftResult, (cufftHandle*))                                                            \
  X(Destroy, cufftDestroy, true, cufftResult, (cufftHandle))                                                           \
  X(SetStream, cufftSetStream, true, cufftResult, (cufftHandle, CUstream))                                             \
  X(SetAutoAllocation, cufftSetAutoAllocation, true, cufftResult, (cufftHandle, int))                                  \
  X(SetWorkArea, cufftSetWorkArea, true, cufftResult, (cufftHandle, void*))                                            \
  X(MakePlanMany64, cufftMakePlanMany64, true, cufftResult,                                                            \
    (cufftHandle, int, long long*, long long*, long long, long long, long long*, long long, long long, int, long long, \
     std::size_t*))                                                                                                    \
  X(ExecC2C, cufftExecC2C, true, cufftResult, (cufftHandle, void*, void*, int))                                        \
  X(ExecZ2Z, cufftExecZ2Z, true, cufftResult, (cufftHandle, void*, void*, int))                                        \
  X(ExecR2C, cufftExecR2C, true, cufftResult, (cufftHandle, void*, void*))                                             \
  X(ExecD2Z, cufftExecD2Z, true, cufftResult, (cufftHandle, void*, void*))                                             \
  X(ExecC2R, cufftExecC2R, true, cufftResult, (cufftHandle, void*, void*))                                             \
  X(ExecZ2D, cufftExecZ2D, true, cufftResult, (cufftHandle, void*, void*))                                             \
  X(GetProperty, cufftGetProperty, true, cufftResult, (int, int*))                                                     \
  X(XtSetJITCallback, cufftXtSetJITCallback, false, cufftResult,                                                       \
    (cufftHandle, const char*, const void*, std::size_t, int, void**))                                                 \
  X(XtSetJITCallback12, __cufftXtSetJITCallback_12_7, false, cufftResult,                                              \
    (cufftHandle, const char*, const void*, std::size_t, int, void**))

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

struct CufftApi {
#define CUPRIC_DECLARE_ENTRY(member, symbol, required, ret, params) ret(*member) params = nullptr;
  CUPRIC_CUFFT_FUNCTIONS(CUPRIC_DECLARE_ENTRY)
#undef CUPRIC_DECLARE_ENTRY
  int major = 0, minor = 0;
  /// The JIT LTO callback setter with a symbol name (either export above), or null.
  cufftResult (*set_jit_callback)(cufftHandle, const char*, const void*, std::size_t, int, void**) = nullptr;
};

}  // namespace cupric::cuda
