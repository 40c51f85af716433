// cupric/gemm_view.hpp — how a row-major gemm reads one strided matrix in place (a transpose flag
// and a leading dimension): the one rule of OpenBLAS's products on the CPU and cuBLAS/cuBLASLt's.
#pragma once

#include <algorithm>
#include <cstdint>

namespace cupric {

/// A matrix as a row-major gemm reads it. `direct` is false when it cannot be read in place and
/// the backend copies it densely first (then it is not transposed, with ld = max(cols, 1)).
struct GemmView {
  bool direct = false;
  bool transposed = false;  ///< read as the transpose of a row-major matrix (column-major data)
  std::int64_t ld = 1;      ///< the leading dimension, in elements
};

/// A rows x cols matrix with element strides (rs, cs): rows of unit column stride are read as they
/// are with ld = rs, columns of unit row stride as a transpose with ld = cs (a stride along an
/// extent of 1 is free); negative, zero and overlapping strides are not direct.
constexpr GemmView gemm_view(std::int64_t rows, std::int64_t cols, std::int64_t rs, std::int64_t cs) {
  if ((cols == 1 || cs == 1) && (rows == 1 || rs >= std::max<std::int64_t>(cols, 1)))
    return {true, false, rows == 1 ? std::max<std::int64_t>(cols, 1) : rs};
  if ((rows == 1 || rs == 1) && (cols == 1 || cs >= std::max<std::int64_t>(rows, 1)))
    return {true, true, cols == 1 ? std::max<std::int64_t>(rows, 1) : cs};
  return {};
}

}  // namespace cupric
