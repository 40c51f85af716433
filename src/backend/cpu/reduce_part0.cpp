// reduce_part0.cpp — CPU reduction loops for the rows of the reduction table whose index
// modulo kReduceParts is 0 (see reduce_engine.hpp).
#include "reduce_engine.hpp"

namespace cupric::cpu {
template bool reduce_part<0>(ReduceOp, const ReduceLayout&, const Array&, const Array&, DType);
}  // namespace cupric::cpu
