// test_philox.cpp — Philox4x32-10 against the known-answer vectors of its authors (Random123).
#include <gtest/gtest.h>

#include "cupric/philox.h"

TEST(Philox, KnownAnswers) {
  // counter {0,0,0,0}, key {0,0}
  cu::Philox4 a = cu::philox4x32_10(0, 0, 0);
  EXPECT_EQ(a.v[0], 0x6627e8d5u);
  EXPECT_EQ(a.v[1], 0xe169c58du);
  EXPECT_EQ(a.v[2], 0xbc57ac4cu);
  EXPECT_EQ(a.v[3], 0x9b00dbd8u);
  // counter and key all ones
  cu::Philox4 b = cu::philox4x32_10(~0ull, ~0ull, ~0ull);
  EXPECT_EQ(b.v[0], 0x408f276du);
  EXPECT_EQ(b.v[1], 0x41c83b0eu);
  EXPECT_EQ(b.v[2], 0xa20bc7c6u);
  EXPECT_EQ(b.v[3], 0x6d5451fdu);
  // digits of pi: counter {243f6a88, 85a308d3, 13198a2e, 03707344}, key {a4093822, 299f31d0}
  cu::Philox4 c = cu::philox4x32_10(0x85a308d3243f6a88ull, 0x0370734413198a2eull, 0x299f31d0a4093822ull);
  EXPECT_EQ(c.v[0], 0xd16cfe09u);
  EXPECT_EQ(c.v[1], 0x94fdccebu);
  EXPECT_EQ(c.v[2], 0x5001e420u);
  EXPECT_EQ(c.v[3], 0x24126ea1u);
}

TEST(Philox, UniformConversionsStayInRange) {
  EXPECT_EQ(cu::uniform_float(0), 0.0f);
  EXPECT_LT(cu::uniform_float(0xffffffffu), 1.0f);
  EXPECT_LT(cu::uniform_double(0xffffffffu, 0xffffffffu), 1.0);
  EXPECT_EQ(cu::bounded(0xffffffffu, 0xffffffffu, 10), 9u);
  EXPECT_EQ(cu::bounded(0, 0, 10), 0u);
}
