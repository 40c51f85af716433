// test_shape_rules.cpp — the rules every array's shape obeys (shape_rules.cpp): dimension counts,
// sizes and byte counts that fit int64, strides that reach no further, foreign layouts, and the
// errors that name them; the thread pool's bound and shrinking.
#include <gtest/gtest.h>

#include <dirent.h>

#include <cstdint>
#include <functional>
#include <string>

#include "cupric/creation.hpp"
#include "cupric/cupric.hpp"
#include "cupric/indexing.hpp"
#include "cupric/manipulation.hpp"
#include "cupric/thread_pool.hpp"

using namespace cupric;

namespace {
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
constexpr std::int64_t kMax = INT64_MAX;
}  // namespace

TEST(ShapeRules, SizesAndByteCountsFitInt64) {
  EXPECT_NO_THROW(check_shape({kMax}, 1));
  EXPECT_NO_THROW(check_shape({std::int64_t{1} << 31, std::int64_t{1} << 31}, 1));
  EXPECT_NO_THROW(check_shape({std::int64_t{1} << 31, std::int64_t{1} << 30}, 2));
  for (const Shape& s :
       {Shape{kMax}, Shape{std::int64_t{1} << 40, std::int64_t{1} << 40}, Shape{std::int64_t{1} << 62, 2},
        Shape{std::int64_t{1} << 40, std::int64_t{1} << 40, 0}})  // NumPy: a zero hides no overflow
    EXPECT_TRUE(has(message_of([&] { check_shape(s, 8); }), "array is too big")) << shape_str(s);
  EXPECT_TRUE(has(message_of([] { check_shape({3, -2}, 4); }), "negative dimensions are not allowed: (3, -2)"));
  EXPECT_THROW(Array::empty({std::int64_t{1} << 40, std::int64_t{1} << 40}, DType::float64), ValueError);
}

TEST(ShapeRules, SixtyFourDimensionsAtMost) {
  EXPECT_NO_THROW(check_shape(Shape(64, 1), 8));
  EXPECT_EQ(message_of([] { check_shape(Shape(65, 1), 8); }),
            "maximum supported dimension for an ndarray is currently 64, found 65");
  const Array a = Array::empty(Shape(64, 1), DType::int8);
  EXPECT_THROW(expand_dims(a, {0}), ValueError);
  EXPECT_THROW(reshape(a, Shape(65, 1)), ValueError);
  EXPECT_THROW(broadcast_shapes(Shape(65, 1), Shape{1}), ValueError);
  EXPECT_THROW(getitem(a, {IndexItem::newaxis()}), IndexError);
}

TEST(ShapeRules, ViewsWhoseAddressesWouldOverflowAreRefused) {
  const Array a = Array::empty({4}, DType::float64);
  EXPECT_NO_THROW(a.view({4}, {-1}, 3));
  EXPECT_NO_THROW(a.view({std::int64_t{1} << 59}, {0}, 0));           // a broadcast view reaches nothing
  EXPECT_THROW(a.view({3}, {std::int64_t{1} << 61}, 0), ValueError);  // 2 * 2^61 * 8 bytes
  EXPECT_THROW(a.view({2}, {std::int64_t{1} << 62}, 0), ValueError);  // 2^62 elements * 8 bytes
  EXPECT_THROW(a.view({4}, {1, 1}, 0), ValueError);                   // strides of another rank
  EXPECT_THROW(a.view({1}, {1}, std::int64_t{1} << 61), ValueError);  // offset * itemsize
  EXPECT_NO_THROW(a.view({1, 0}, {std::int64_t{1} << 62, kMax}, 0));  // no element: strides unused
}

TEST(ShapeRules, ReshapeNeverWrapsToTheSameSize) {
  const Array empty = Array::empty({0}, DType::float32);
  EXPECT_TRUE(has(message_of([&] { reshape(empty, {std::int64_t{1} << 32, std::int64_t{1} << 32, 0}); }),
                  "cannot reshape array of size 0"));
  EXPECT_THROW(reshape(empty, {std::int64_t{1} << 32, std::int64_t{1} << 32}), ValueError);
}

TEST(ShapeRules, ForeignLayoutsAreCheckedAsNumPyChecksThem) {
  const std::uintptr_t p = 0x10000;
  const Strides unit{8}, length_two{8, 8}, odd{6}, back{-8}, far{std::int64_t{1} << 62};
  EXPECT_EQ(foreign_array_problem("AI", p, {3}, &unit, 8), "");
  EXPECT_EQ(foreign_array_problem("AI", 0, {0}, nullptr, 8), "");  // NULL is fine when nothing is read
  EXPECT_TRUE(has(foreign_array_problem("AI", 0, {3}, nullptr, 8), "AI: data is NULL"));
  EXPECT_TRUE(has(foreign_array_problem("AI", p, {-3}, nullptr, 8), "negative dimensions"));
  EXPECT_TRUE(
      has(foreign_array_problem("AI", p, Shape(65, 1), nullptr, 8), "number of dimensions must be within [0, 64]"));
  EXPECT_TRUE(has(foreign_array_problem("AI", p, {3}, &length_two, 8), "mismatch in length of strides and shape"));
  EXPECT_TRUE(has(foreign_array_problem("AI", p, {3}, &odd, 8), "not multiples of the item size 8"));
  EXPECT_TRUE(has(foreign_array_problem("AI", 8, {3}, &back, 8), "reach outside memory"));  // below address 0
  EXPECT_TRUE(has(foreign_array_problem("AI", p, {3}, &far, 8), "reach outside memory"));
  EXPECT_TRUE(has(foreign_array_problem("AI", UINTPTR_MAX - 15, {3}, nullptr, 8), "reach outside memory"));
  EXPECT_THROW(check_foreign_array("AI", p, {std::int64_t{1} << 40, std::int64_t{1} << 40}, nullptr, 8), ValueError);
}

TEST(ShapeRules, MemoryErrorNamesSizeShapeAndDtype) {
  const std::string m = message_of([] { Array::empty({std::int64_t{1} << 40}, DType::float64); });
  EXPECT_EQ(m, "Unable to allocate 8.00 TiB for an array with shape (1099511627776,) and data type float64");
  EXPECT_THROW(zeros({std::int64_t{1} << 62}, DType::int8), MemoryError);
}

TEST(ShapeRules, TriChecksItsResultBeforeAnyWork) {
  EXPECT_THROW(tri(std::int64_t{1} << 31, std::int64_t{1} << 31), ValueError);  // 2^62 float64 elements
  EXPECT_THROW(tri(std::int64_t{1} << 31, std::int64_t{1} << 30, 0, DType::bool_), MemoryError);
}

namespace {
int threads_of_process() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}
void busy() {
  cpu::parallel_for(1 << 16, 1, [](std::int64_t, std::int64_t) {});
}
}  // namespace

TEST(ThreadPoolBound, TooManyThreadsIsAnErrorAndFewerEndWorkers) {
  const int old = cpu::num_threads();
  EXPECT_TRUE(has(message_of([] { cpu::set_num_threads(100000); }), "at most"));
  EXPECT_EQ(cpu::num_threads(), old);  // unchanged by the refused call
  cpu::set_num_threads(12);
  busy();
  const int with_twelve = threads_of_process();
  cpu::set_num_threads(2);
  busy();
  EXPECT_LE(threads_of_process(), with_twelve - 10);  // the ten workers it no longer needs are gone
  cpu::set_num_threads(old);
}
