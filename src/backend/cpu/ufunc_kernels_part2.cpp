// ufunc_kernels_part2.cpp — CPU loops for one quarter of the ufunc table (see ufunc_kernels.hpp).
#include "ufunc_kernels.hpp"

namespace cupric::cpu::kernels {
void fill_part2(LoopFn (*table)[kNumDTypes]) { fill_part<2>(table); }
}  // namespace cupric::cpu::kernels
