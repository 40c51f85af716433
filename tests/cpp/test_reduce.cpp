// test_reduce.cpp — reductions and scans from the C++ API (include/cupric/reduction.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cupric/cupric.hpp"

using namespace cupric;

namespace {
/// A 3x4 float32 array holding 0, 1, ..., 11.
Array iota_matrix() {
  Array x = Array::empty({3, 4}, DType::float32);
  auto* p = static_cast<float*>(x.data());
  for (int i = 0; i < 12; ++i) p[i] = static_cast<float>(i);
  return x;
}
template <class T>
T at(const Array& a, std::int64_t i) {
  return static_cast<const T*>(a.data())[i];
}
}  // namespace

TEST(Reduce, SumOverAxesAndKeepdims) {
  const Array x = iota_matrix();
  const Array total = sum(x);
  EXPECT_EQ(total.ndim(), 0);
  EXPECT_EQ(total.dtype(), DType::float32);
  EXPECT_EQ(at<float>(total, 0), 66.0f);

  ReduceOptions rows;
  rows.axis = std::vector<int>{-1};
  rows.keepdims = true;
  const Array r = sum(x, rows);
  EXPECT_EQ(r.shape(), (Shape{3, 1}));
  EXPECT_EQ(at<float>(r, 0), 6.0f);
  EXPECT_EQ(at<float>(r, 2), 38.0f);

  ReduceOptions cols;
  cols.axis = std::vector<int>{0};
  const Array c = sum(x, cols);
  EXPECT_EQ(c.shape(), (Shape{4}));
  EXPECT_EQ(at<float>(c, 3), 3.0f + 7.0f + 11.0f);
}

TEST(Reduce, AccumulationDtypesFollowNumPy) {
  EXPECT_EQ(sum_dtype(DType::int8), DType::int64);
  EXPECT_EQ(sum_dtype(DType::uint16), DType::uint64);
  EXPECT_EQ(sum_dtype(DType::bool_), DType::int64);
  EXPECT_EQ(sum_dtype(DType::float16), DType::float16);
  EXPECT_EQ(mean(iota_matrix().view_as(DType::int32)).dtype(), DType::float64);
}

TEST(Reduce, MeanVarArgmaxAndNan) {
  Array x = iota_matrix();
  EXPECT_FLOAT_EQ(at<float>(mean(x), 0), 5.5f);
  EXPECT_NEAR(at<float>(var(x, {}, 1.0), 0), 13.0f, 1e-5f);
  static_cast<float*>(x.data())[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(at<std::int64_t>(argmax(x), 0), 5);   // NaN is the extreme
  EXPECT_TRUE(std::isnan(at<float>(max(x), 0)));  // max propagates NaN
  EXPECT_EQ(at<float>(nanmax(x), 0), 11.0f);      // nanmax skips it
  EXPECT_EQ(at<float>(nansum(x), 0), 66.0f - 5.0f);
}

TEST(Reduce, ErrorsNameTheValues) {
  const Array x = iota_matrix();
  ReduceOptions bad;
  bad.axis = std::vector<int>{2};
  try {
    sum(x, bad);
    FAIL() << "expected AxisError";
  } catch (const AxisError& e) {
    EXPECT_STREQ(e.what(), "axis 2 is out of bounds for array of dimension 2");
  }
  bad.axis = std::vector<int>{0, -2};
  EXPECT_THROW(sum(x, bad), ValueError);
  const Array empty = Array::empty({0}, DType::float64);
  EXPECT_THROW(max(empty), ValueError);
  EXPECT_EQ(at<double>(sum(empty), 0), 0.0);
}

TEST(Scan, CumsumAndCumulativeSum) {
  const Array x = iota_matrix();
  ScanOptions along_rows;
  along_rows.axis = 1;
  const Array c = cumsum(x, along_rows);
  EXPECT_EQ(c.shape(), (Shape{3, 4}));
  EXPECT_EQ(at<float>(c, 3), 0.0f + 1 + 2 + 3);
  EXPECT_EQ(at<float>(c, 7), 4.0f + 5 + 6 + 7);
  along_rows.include_initial = true;
  const Array ci = cumulative_sum(x, along_rows);
  EXPECT_EQ(ci.shape(), (Shape{3, 5}));
  EXPECT_EQ(at<float>(ci, 5), 0.0f);
  EXPECT_EQ(at<float>(ci, 9), 4.0f + 5 + 6 + 7);
  const Array flat = cumprod(x.view_as(DType::int32));  // bit patterns of floats: only the dtype matters
  EXPECT_EQ(flat.dtype(), DType::int64);
  EXPECT_EQ(flat.shape(), (Shape{12}));
}
