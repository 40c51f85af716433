// bind_extensions.cpp — calls the binders of areas that add functions to the module and
// methods to ndarray. Each area lives in its own bind_<area>.cpp and is listed here once.
#include "convert.hpp"

namespace cupric::py {

void bind_random(nb::module_& m);         // bind_random.cpp
void bind_indexing(nb::module_& m);       // bind_indexing.cpp
void bind_manipulation(nb::module_& m);   // bind_manipulation.cpp
void bind_creation(nb::module_& m);       // bind_creation.cpp
void bind_dlpack(nb::module_& m);         // bind_dlpack.cpp
void bind_foreign_array(nb::module_& m);  // foreign_array.cpp: the one importer of other libraries' arrays
void bind_composites(nb::module_& m);     // bind_composites.cpp
void bind_compile_cache(nb::module_& m);  // bind_compile_cache.cpp: the cache every JIT shares
void bind_cuda(nb::module_& m);           // bind_cuda.cpp: the cupric.cuda runtime
void bind_reduce(nb::module_& m);         // bind_reduce.cpp: reductions and scans
void bind_sort(nb::module_& m);           // bind_sort.cpp: sort, argsort, searchsorted
void bind_tile(nb::module_& m);           // bind_tile.cpp: the cupric.tile compiler
void bind_cuda_backend(nb::module_& m);   // bind_cuda_backend.cpp: CUDA array kernels (tests, cache warm)
void bind_linalg(nb::module_& m);         // bind_linalg.cpp: matmul, @, the factorisations
void bind_profiler(nb::module_& m);       // bind_profiler.cpp: the profiler's recording core
void bind_fft(nb::module_& m);            // bind_fft.cpp: cuFFT transforms and plan caches
void bind_fft_callbacks(nb::module_& m);  // bind_fft_callbacks.cpp: cuFFT callbacks from tile functions
void bind_inspect(nb::module_& m);        // bind_inspect.cpp: cubin resources, occupancy, op kernels

void bind_extensions(nb::module_& m) {
  bind_random(m);
  bind_indexing(m);
  bind_manipulation(m);
  bind_creation(m);
  bind_dlpack(m);
  bind_foreign_array(m);
  bind_composites(m);
  bind_compile_cache(m);
  bind_cuda(m);
  bind_reduce(m);
  bind_sort(m);
  bind_tile(m);
  bind_cuda_backend(m);
  bind_linalg(m);
  bind_profiler(m);
  bind_fft(m);
  bind_fft_callbacks(m);
  bind_inspect(m);
}

}  // namespace cupric::py
