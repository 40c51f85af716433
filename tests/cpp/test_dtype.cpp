// test_dtype.cpp — promotion and casting rules of the C++ core.
#include <gtest/gtest.h>

#include "cupric/cupric.hpp"

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
    // CUDA kernel names (and their cache keys): kind + bytes; bfloat16 apart from float16's "f2"
    EXPECT_EQ(std::string(d.kernel_suffix), t == DType::bfloat16 ? std::string("bf2") : cat(k, itemsize(t))) << d.name;
    // the IR's names: kind + bits, bool b1, bfloat16 bf16
    const std::string ir = t == DType::bool_ ? "b1" : t == DType::bfloat16 ? "bf16" : cat(k, 8 * itemsize(t));
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
