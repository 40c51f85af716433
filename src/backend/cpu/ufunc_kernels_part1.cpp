// ufunc_kernels_part1.cpp — CPU loops for one quarter of the ufunc table (see ufunc_kernels.hpp),
// compiled once per instruction-set variant.
#include "ufunc_kernels.hpp"

CUPRIC_CPU_VARIANT_BEGIN
CUPRIC_CPU_TABLE_FILL void fill_ufunc_loops_part1(UfuncLoopRow* table) { kernels::fill_part<1>(table); }
CUPRIC_CPU_VARIANT_END
