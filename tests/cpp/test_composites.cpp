// test_composites.cpp — the composed elementwise functions of cupric/elementwise.hpp from C++
// (isclose's inf/nan rules, round half to even, clip bounds, nan_to_num, real/imag views).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cupric/cupric.hpp"

using namespace cupric;

namespace {
Array vec(std::initializer_list<double> values) {
  Array a = Array::empty({static_cast<std::int64_t>(values.size())}, DType::float64);
  auto* p = static_cast<double*>(a.data());
  for (double v : values) *p++ = v;
  return a;
}
template <class T>
T at(const Array& a, std::int64_t i) {  // element i of a 1-d array (strides in elements)
  return static_cast<const T*>(a.data())[i * (a.ndim() ? a.strides()[0] : 0)];
}
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
}  // namespace

TEST(Composites, IscloseInfAndNan) {
  Array a = vec({1.0, kInf, kInf, kNan, 1e10});
  Array b = vec({1.0 + 1e-9, kInf, -kInf, kNan, 1e10 + 1});
  Array r = isclose(a, b);
  EXPECT_EQ(r.dtype(), DType::bool_);
  const bool expected[] = {true, true, false, false, true};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(at<bool>(r, i), expected[i]) << i;
  EXPECT_TRUE(at<bool>(isclose(a, b, 1e-5, 1e-8, true), 3));
  EXPECT_FALSE(allclose(a, b, scalar_array(Scalar::from_float(1e-5)), scalar_array(Scalar::from_float(1e-8))));
  EXPECT_TRUE(array_equal(a, a, true));
  EXPECT_FALSE(array_equal(a, a, false));
  EXPECT_FALSE(array_equal(a, vec({1.0}), true));
}

TEST(Composites, RoundHalfToEven) {
  Array r = round(vec({0.5, 1.5, 2.5, -2.5, 1.25, 1234.5}), 0);
  const double expected[] = {0.0, 2.0, 2.0, -2.0, 1.0, 1234.0};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(at<double>(r, i), expected[i]);
  EXPECT_EQ(at<double>(round(vec({1234.5}), -2), 0), 1200.0);
  EXPECT_EQ(at<double>(round(vec({1.25}), 1), 0), 1.2);
}

TEST(Composites, ClipWithMissingBounds) {
  Array x = vec({-3.0, 0.5, 7.0});
  Array lo = scalar_array(Scalar::from_int(0));
  Array r = clip(x, lo, Array());
  EXPECT_EQ(at<double>(r, 0), 0.0);
  EXPECT_EQ(at<double>(r, 2), 7.0);
  Array copy = clip(x, Array(), Array());
  EXPECT_NE(copy.data(), x.data());
  EXPECT_EQ(at<double>(copy, 1), 0.5);
}

TEST(Composites, NanToNumAndComplexParts) {
  Array x = nan_to_num(vec({kNan, kInf, -kInf, 2.0}), true, -1.0);
  EXPECT_EQ(at<double>(x, 0), -1.0);
  EXPECT_EQ(at<double>(x, 1), std::numeric_limits<double>::max());
  EXPECT_EQ(at<double>(x, 2), -std::numeric_limits<double>::max());
  Array z = Array::empty({2}, DType::complex128);
  auto* pz = static_cast<std::complex<double>*>(z.data());
  pz[0] = {1.0, 2.0};
  pz[1] = {3.0, -4.0};
  Array im = imag(z);
  EXPECT_EQ(im.dtype(), DType::float64);
  EXPECT_EQ(at<double>(im, 1), -4.0);
  apply_ufunc("negative", {im}, UfuncOptions{im, {}, std::nullopt, Casting::same_kind});  // writes into z
  EXPECT_EQ(pz[1], std::complex<double>(3.0, 4.0));
  Array deg = angle(z, true);
  EXPECT_NEAR(at<double>(deg, 0), std::atan2(-2.0, 1.0) * 180 / 3.141592653589793, 1e-12);
}
