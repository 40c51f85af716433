// test_arg_packer.cpp — kernel argument packing without a GPU: widths from parameter sizes,
// alignment, range and size checks, argument counts, growth past the inline buffers.
#include <gtest/gtest.h>

#include <cstring>

#include "cupric/errors.hpp"
#include "cupric/runtime/kernel.hpp"
#include "cupric/runtime/memory.hpp"

using cupric::runtime::ArgPacker;
using cupric::runtime::MemoryPool;

namespace {
template <class T>
T read(const ArgPacker& p, std::size_t i) {
  T v;
  std::memcpy(&v, p.data() + p.offset(i), sizeof(T));
  return v;
}
}  // namespace

TEST(ArgPacker, UnknownSizesUseInt64AndDouble) {
  ArgPacker p(nullptr, "k");
  p.add_int(-5);
  p.add_float(2.5);
  p.add_bool(true);
  p.add_pointer(0xdeadbeef);
  p.finish();
  EXPECT_EQ(p.count(), 4u);
  EXPECT_EQ(read<std::int64_t>(p, 0), -5);
  EXPECT_EQ(read<double>(p, 1), 2.5);
  EXPECT_EQ(read<std::uint8_t>(p, 2), 1);
  EXPECT_EQ(p.offset(3), 24u);  // 8 + 8 + 1, aligned up to 8
  EXPECT_EQ(read<std::uint64_t>(p, 3), 0xdeadbeefu);
  void** params = p.params();
  EXPECT_EQ(params[1], static_cast<const void*>(p.data() + 8));
}

TEST(ArgPacker, KnownSizesNarrowIntsAndFloats) {
  std::vector<std::uint32_t> sizes{4, 4, 2, 1, 8, 8};
  ArgPacker p(&sizes, "k");
  p.add_int(-7);
  p.add_float(1.5);
  p.add_int(65535);
  p.add_int(-128);
  p.add_pointer(64);
  p.add_float(0.25);
  p.finish();
  EXPECT_EQ(read<std::int32_t>(p, 0), -7);
  EXPECT_EQ(read<float>(p, 1), 1.5f);
  EXPECT_EQ(read<std::uint16_t>(p, 2), 65535);
  EXPECT_EQ(read<std::int8_t>(p, 3), -128);
  EXPECT_EQ(p.offset(4), 16u);
  EXPECT_EQ(read<double>(p, 5), 0.25);
}

TEST(ArgPacker, ChecksRangesSizesAndCounts) {
  std::vector<std::uint32_t> sizes{4, 8};
  {
    ArgPacker p(&sizes, "k");
    EXPECT_THROW(p.add_int(std::int64_t{1} << 33), cupric::OverflowError);
  }
  {
    ArgPacker p(&sizes, "k");
    double d = 1;
    EXPECT_THROW(p.add_bytes(&d, 8, 8, "numpy.float64"), cupric::TypeError);  // 8 bytes for a 4-byte parameter
    EXPECT_THROW(p.add_pointer(1), cupric::TypeError);
  }
  {
    ArgPacker p(&sizes, "k");
    p.add_int(1);
    EXPECT_THROW(p.finish(), cupric::TypeError);  // too few
    p.add_int(2);
    p.finish();
    EXPECT_THROW(p.add_int(3), cupric::TypeError);  // too many
  }
  std::vector<std::uint32_t> half{2};
  ArgPacker p(&half, "k");
  EXPECT_THROW(p.add_float(1.0), cupric::TypeError);  // float16 or bfloat16? ambiguous
}

TEST(ArgPacker, TypedValuesKeepTheirAlignment) {
  ArgPacker p(nullptr, "k");
  std::uint8_t byte = 3;
  p.add_bytes(&byte, 1, 0, "uint8");
  double pair[2] = {1.0, 2.0};  // a 16-byte value (double2, complex128) aligns to 16
  p.add_bytes(pair, 16, 0, "complex128");
  float triple[3] = {1, 2, 3};  // 12 bytes align to 4
  p.add_bytes(triple, 12, 0, "float3");
  EXPECT_EQ(p.offset(1), 16u);
  EXPECT_EQ(p.offset(2), 32u);
  EXPECT_EQ(read<double>(p, 1), 1.0);
}

TEST(ArgPacker, GrowsPastTheInlineBuffers) {
  ArgPacker p(nullptr, "k");
  for (int i = 0; i < 300; ++i) p.add_int(i);
  p.finish();
  EXPECT_EQ(p.count(), 300u);
  for (int i = 0; i < 300; ++i) EXPECT_EQ(read<std::int64_t>(p, static_cast<std::size_t>(i)), i);
  void** params = p.params();
  EXPECT_EQ(*static_cast<std::int64_t*>(params[299]), 299);
}

TEST(MemoryPool, RoundSizeClasses) {
  EXPECT_EQ(MemoryPool::round_size(0), 512u);
  EXPECT_EQ(MemoryPool::round_size(512), 512u);
  EXPECT_EQ(MemoryPool::round_size(513), 640u);
  EXPECT_EQ(MemoryPool::round_size(1024), 1024u);
  EXPECT_EQ(MemoryPool::round_size(1025), 1280u);
  EXPECT_EQ(MemoryPool::round_size(3 << 20), 3u << 20);
  for (std::size_t n = 1; n < (1u << 22); n = n * 3 / 2 + 1) {
    std::size_t r = MemoryPool::round_size(n);
    EXPECT_GE(r, n);
    EXPECT_LE(r, std::max<std::size_t>(512, n + n / 4 + 1)) << n;
  }
}
