// test_errors.cpp — cat, the message and key builder: every piece reads as a stream would write it.
#include <gtest/gtest.h>

#include <cstdint>
#include <ios>
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>

#include "cupric/errors.hpp"

namespace {

template <class... Ts>
std::string streamed(const Ts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

enum class Colour { red };
std::ostream& operator<<(std::ostream& os, Colour) { return os << "red"; }

}  // namespace

TEST(Cat, PiecesReadAsAStreamWritesThem) {
  const std::string s = "key";
  const std::string_view v = "view";
  const char arr[] = "array";
  const std::int8_t i8 = 65;
  const std::uint8_t u8 = 66;
  EXPECT_EQ(cupric::cat(s, v, arr, "literal", 'c'), streamed(s, v, arr, "literal", 'c'));
  EXPECT_EQ(cupric::cat(-7, 0u, std::size_t{1} << 40, std::int64_t{-1} << 62, short{-3}),
            streamed(-7, 0u, std::size_t{1} << 40, std::int64_t{-1} << 62, short{-3}));
  EXPECT_EQ(cupric::cat(i8, u8, true, false), streamed(i8, u8, true, false));  // characters, 1 and 0
  EXPECT_EQ(cupric::cat(1.5, 0.1f, 1e300, -0.0), streamed(1.5, 0.1f, 1e300, -0.0));
  EXPECT_EQ(cupric::cat(std::filesystem::path("/tmp/x y")), streamed(std::filesystem::path("/tmp/x y")));  // quoted
  EXPECT_EQ(cupric::cat("a", Colour::red, "b"), "aredb");
  EXPECT_EQ(cupric::cat(), "");
  // a manipulator holds for the pieces after it, as on one stream
  EXPECT_EQ(cupric::cat("0x", std::hex, 255, std::dec, " ", 10), "0xff 10");
  EXPECT_EQ(cupric::cat("0x", std::hex, std::uintptr_t{0xabc}, " then ", 16), "0xabc then 10");
}

TEST(Cat, ANullCStringIsEmptyAndTheRestFollows) {
  const char* none = nullptr;
  EXPECT_EQ(cupric::cat("a", none, "b", 3), "ab3");  // (a stream would drop everything after it)
}
