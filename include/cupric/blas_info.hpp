// cupric/blas_info.hpp — what the CPU backend's BLAS/LAPACK is (src/backend/cpu/blas.cpp), for
// show_config and tests.
#pragma once

#include <string>

namespace cupric::cpu {

/// "<path> (<OpenBLAS build string>)", or why the library could not be loaded (loads it; never throws).
std::string blas_description();
/// OpenBLAS's own thread count (kept equal to cupric's pool at every call); 0 when not loaded.
int blas_threads();

}  // namespace cupric::cpu
