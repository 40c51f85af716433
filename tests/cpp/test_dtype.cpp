// test_dtype.cpp — promotion and casting rules of the C++ core.
#include <gtest/gtest.h>

#include <cmath>

#include "cupric/cupric.hpp"
#include "cupric/dlpack.hpp"

using namespace cupric;

TEST(DType, PromotionFollowsNumPy) {
  EXPECT_EQ(promote_types(DType::uint8, DType::int8), DType::int16);
  EXPECT_EQ(promote_types(DType::uint64, DType::int64), DType::float64);
  EXPECT_EQ(promote_types(DType::int16, DType::float16), DType::float32);
  EXPECT_EQ(promote_types(DType::float16, DType::bfloat16), DType::float32);
  EXPECT_EQ(promote_types(DType::int8, DType::bfloat16), DType::bfloat16);
  EXPECT_EQ(promote_types(DType::float32, DType::complex64), DType::complex64);
  EXPECT_EQ(promote_types(DType::float64, DType::complex64), DType::complex128);
}

TEST(DType, WeakScalarsFollowNep50) {
  EXPECT_EQ(result_type({{DType::float32}, {DType::float64, WeakKind::floating}}), DType::float32);
  EXPECT_EQ(result_type({{DType::int8}, {DType::int64, WeakKind::integer}}), DType::int8);
  EXPECT_EQ(result_type({{DType::int8}, {DType::float64, WeakKind::floating}}), DType::float64);
  EXPECT_EQ(result_type({{DType::bool_}, {DType::int64, WeakKind::integer}}), DType::int64);
  EXPECT_EQ(result_type({{DType::float32}, {DType::complex128, WeakKind::complex}}), DType::complex64);
}

TEST(DType, TableRowsAndSpellingsAgree) {
  for (int i = 0; i < kNumDTypes; ++i) {
    const DType t = static_cast<DType>(i);
    const DTypeInfo& d = info(t);
    EXPECT_EQ(d.dtype, t) << "row " << i;  // rows in enum order: info() indexes them
    const char k = static_cast<char>(kind(t));
    // the float8s are named by their layout in both (f8e4m3, f8e5m2): kind + bytes would not tell them apart
    const char* f8 = t == DType::float8_e4m3fn ? "f8e4m3" : t == DType::float8_e5m2 ? "f8e5m2" : nullptr;
    // CUDA kernel names (and their cache keys): kind + bytes; bfloat16 apart from float16's "f2"
    const std::string suffix = f8 ? f8 : t == DType::bfloat16 ? std::string("bf2") : cat(k, itemsize(t));
    EXPECT_EQ(std::string(d.kernel_suffix), suffix) << d.name;
    // the IR's names: kind + bits, bool b1, bfloat16 bf16
    const std::string ir = f8 ? f8 : t == DType::bool_ ? "b1" : t == DType::bfloat16 ? "bf16" : cat(k, 8 * itemsize(t));
    EXPECT_EQ(std::string(d.ir_name), ir) << d.name;
    EXPECT_NE(std::string(d.cpp_type), "");
    EXPECT_EQ(d.tile_type == nullptr, is_complex(t)) << d.name;  // the tile library has no complex tiles
    visit_dtype(t, [&]<class T>() { EXPECT_EQ(static_cast<int>(sizeof(T)), itemsize(t)) << d.name; });
  }
}

TEST(DType, HalfConversionsRoundToNearestEven) {
  EXPECT_EQ(float16(1.0f).bits, 0x3c00);
  EXPECT_EQ(float16(65504.0f).bits, 0x7bff);
  EXPECT_EQ(float16(65520.0f).bits, 0x7c00);  // rounds to inf
  EXPECT_EQ(static_cast<float>(float16::from_bits(0x0001)), 5.9604644775390625e-8f);
  EXPECT_EQ(bfloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(static_cast<float>(bfloat16(3.140625f)), 3.140625f);
}

TEST(DType, Float8ConversionsAreMlDtypes) {
  EXPECT_EQ(float8_e4m3fn(448.0f).bits, 0x7e);
  EXPECT_EQ(float8_e4m3fn(464.0f).bits, 0x7e);  // the tie rounds to even: 448
  EXPECT_EQ(float8_e4m3fn(465.0f).bits, 0x7f);  // overflow is NaN: e4m3fn has no inf
  EXPECT_EQ(float8_e4m3fn(-INFINITY).bits, 0xff);
  EXPECT_EQ(float8_e5m2(61440.0f).bits, 0x7c);  // overflow is inf
  EXPECT_EQ(float8_e5m2(NAN).bits, 0x7e);
  EXPECT_EQ(static_cast<float>(float8_e4m3fn::from_bits(0x01)), 0.001953125f);      // 2^-9
  EXPECT_EQ(static_cast<float>(float8_e5m2::from_bits(0x01)), 1.52587890625e-05f);  // 2^-16
  EXPECT_EQ(float8_e4m3fn(1.0 + 0x1p-4 + 0x1p-40).bits, 0x39);                      // from double: one rounding (1.125)
  EXPECT_EQ(promote_types(DType::float8_e4m3fn, DType::float8_e5m2), DType::float32);
  EXPECT_EQ(promote_types(DType::int8, DType::float8_e4m3fn), DType::float8_e4m3fn);
  EXPECT_EQ(promote_types(DType::float16, DType::float8_e5m2), DType::float32);
  EXPECT_EQ(promote_types(DType::bfloat16, DType::float8_e5m2), DType::bfloat16);
  EXPECT_EQ(info(DType::float8_e4m3fn).dlpack_code, dlpack::kDLFloat8_e4m3fn);
  EXPECT_EQ(info(DType::float8_e5m2).dlpack_code, dlpack::kDLFloat8_e5m2);
}
