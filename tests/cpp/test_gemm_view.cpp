// test_gemm_view.cpp — the one rule by which both backends hand a strided matrix to gemm in place
// (cupric/gemm_view.hpp): which views are read directly, transposed or not, with which ld.
#include <gtest/gtest.h>

#include "cupric/gemm_view.hpp"

namespace cupric {
namespace {

void expect_view(GemmView v, bool direct, bool transposed, std::int64_t ld) {
  EXPECT_EQ(v.direct, direct);
  if (!direct) return;
  EXPECT_EQ(v.transposed, transposed);
  EXPECT_EQ(v.ld, ld);
}

TEST(GemmView, RowMajorViewsAreReadAsTheyAre) {
  expect_view(gemm_view(3, 4, 4, 1), true, false, 4);    // C-contiguous
  expect_view(gemm_view(3, 4, 10, 1), true, false, 10);  // rows of a wider matrix (x[:, :4])
  expect_view(gemm_view(1, 4, 0, 1), true, false, 4);    // one row: its row stride is never used
}

TEST(GemmView, ColumnMajorViewsAreReadTransposed) {
  expect_view(gemm_view(3, 4, 1, 3), true, true, 3);   // x.T of a C-contiguous (4, 3)
  expect_view(gemm_view(3, 4, 1, 8), true, true, 8);   // columns of a taller matrix
  expect_view(gemm_view(3, 1, 1, 0), true, false, 1);  // one column: read as rows of one element
}

TEST(GemmView, OtherStridesAreCopiedFirst) {
  expect_view(gemm_view(3, 4, -4, 1), false, false, 0);  // x[::-1]
  expect_view(gemm_view(3, 4, 0, 1), false, false, 0);   // a broadcast row
  expect_view(gemm_view(3, 4, 2, 1), false, false, 0);   // overlapping rows (ld < cols)
  expect_view(gemm_view(3, 4, 8, 2), false, false, 0);   // x[:, ::2]: no unit stride
  expect_view(gemm_view(3, 4, 1, 2), false, false, 0);   // overlapping columns (ld < rows)
}

static_assert(gemm_view(2, 2, 2, 1).direct && !gemm_view(2, 2, 2, 1).transposed, "usable in constant expressions");

}  // namespace
}  // namespace cupric
