// reduce.cpp — reductions, arg-reductions and scans on the host (filled in by the reductions work).
#include "cpu_backend.hpp"
#include "cupric/errors.hpp"

namespace cupric::cpu {

void CpuBackend::reduce(ReduceOp, const Array&, const Array&, const std::vector<int>&) {
  throw NotImplementedError("reductions are not implemented yet");
}
void CpuBackend::arg_reduce(ArgReduceOp, const Array&, const Array&, int) {
  throw NotImplementedError("arg-reductions are not implemented yet");
}
void CpuBackend::scan(ScanOp, const Array&, const Array&, int) { throw NotImplementedError("scans are not implemented yet"); }

}  // namespace cupric::cpu
