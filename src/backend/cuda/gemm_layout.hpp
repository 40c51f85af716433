// gemm_layout.hpp — how a row-major cupric matrix view goes to cuBLAS / cuBLASLt as it is: a
// transpose flag, a leading dimension and one batch stride (or a dense copy when it cannot).
// Shared by linalg.cpp (cuBLAS products) and matmul_lt.cpp (cuBLASLt plans).
#pragma once

#include <cstdint>

#include "cuda_backend.hpp"
#include "cupric/cuda/math_api.hpp"
#include "cupric/errors.hpp"

namespace cupric::cuda_backend {

/// cuBLAS's cudaDataType of a float or complex dtype (TypeError for others).
int cuda_data_type(DType t);

/// The memory of element `offset` of a's storage.
inline char* element(const Array& a, std::int64_t offset) {
  return static_cast<char*>(a.storage()->data()) + offset * a.itemsize();
}

/// The element distance between consecutive matrices of a's batch (the dimensions before the last
/// two) when it is one arithmetic progression, as C-ordered, sliced and broadcast batches are;
/// false otherwise. O(ndim): a batch of 4096 matrices costs no per-matrix host work.
bool uniform_batch_stride(const Array& a, std::int64_t& stride);

/// One operand as cuBLAS reads it: the row-major matrix (rows x cols) is cuBLAS's column-major
/// transpose, so a row-major view is OP_N and a column-major one OP_T (with its leading dimension).
struct GemmSide {
  Array array;  ///< the view itself, or a C-contiguous copy when cuBLAS cannot read the view
  int op = cuda::CUBLAS_OP_N;
  std::int64_t ld = 1, first = 0, stride = 0;
  const char* data() const { return element(array, first); }
};

/// The side of `a` (copied densely first when its strides are negative, zero or irregular).
GemmSide gemm_side(CudaBackend& backend, const Array& a);

/// The cuBLASLt handle of a device and the workspace of one of its streams (made at first use, kept).
struct LtContext {
  cuda::cublasLtHandle_t handle;
  void* workspace;
  std::size_t workspace_bytes;
};
LtContext lt_context(int device, cuda::CUstream stream);

/// A plain product through cuBLASLt (matmul_lt.cpp), its plan kept per problem; false when
/// cuBLASLt does not serve the dtype or has no algorithm for the problem.
bool matmul_through_lt(CudaBackend& backend, const Array& a, const Array& b, const Array& out);

/// v as cuBLAS's 32-bit int, or ValueError naming `what`.
inline int narrow(std::int64_t v, const char* what) {
  if (v > 0x7fffffff) throw ValueError(cat("matmul on the GPU: ", what, " = ", v, " exceeds cuBLAS's 32-bit sizes"));
  return static_cast<int>(v);
}

}  // namespace cupric::cuda_backend
