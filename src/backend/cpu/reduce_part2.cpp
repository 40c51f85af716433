// reduce_part2.cpp — CPU reduction loops for the rows of the reduction table whose index
// modulo kReduceParts is 2 (see reduce_engine.hpp).
#include "reduce_engine.hpp"

namespace cupric::cpu {
template bool reduce_part<2>(ReduceOp, const ReduceLayout&, const Array&, const Array&, DType);
}  // namespace cupric::cpu
