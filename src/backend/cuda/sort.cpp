// sort.cpp — sorting and searching on the GPU: the renderer of kernels/sort.cuh's radix sort and
// binary search, and their launchers.
#include "cuda_backend.hpp"
#include "cupric/errors.hpp"

namespace cupric::cuda_backend {

void CudaBackend::sort(const Array&, const Array&, const Array&, bool) {
  throw NotImplementedError("sort is not implemented on CUDA devices yet");
}

void CudaBackend::search_sorted(const Array&, const Array&, const Array&, bool) {
  throw NotImplementedError("searchsorted is not implemented on CUDA devices yet");
}

}  // namespace cupric::cuda_backend
