// ufunc_kernels_part3.cpp — CPU loops for one quarter of the ufunc table (see ufunc_kernels.hpp).
#include "ufunc_kernels.hpp"

namespace cupric::cpu::kernels {
void fill_part3(LoopFn (*table)[kNumDTypes]) { fill_part<3>(table); }
}  // namespace cupric::cpu::kernels
