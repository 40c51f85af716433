// test_small_vector.cpp — SmallVector (shapes, strides, plans) against std::vector: inline and heap
// storage, growth across the inline capacity, insert/erase, copies and moves, aliasing arguments.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "cupric/array.hpp"
#include "cupric/small_vector.hpp"

using cupric::SmallVector;

namespace {
template <class T, std::size_t N>
std::vector<T> as_vec(const SmallVector<T, N>& v) {
  return std::vector<T>(v.begin(), v.end());
}
}  // namespace

TEST(SmallVector, ConstructorsMatchVector) {
  EXPECT_EQ(as_vec(SmallVector<long, 4>(3)), std::vector<long>(3));
  EXPECT_EQ(as_vec(SmallVector<long, 4>(6, 7)), std::vector<long>(6, 7));
  EXPECT_EQ(as_vec(SmallVector<long, 4>{1, 2, 3, 4, 5}), (std::vector<long>{1, 2, 3, 4, 5}));
  std::vector<long> src{9, 8, 7};
  SmallVector<long, 2> from_vec = src;
  EXPECT_EQ(as_vec(from_vec), src);
  std::vector<long> back = from_vec;
  EXPECT_EQ(back, src);
  SmallVector<long, 2> from_range(src.begin() + 1, src.end());
  EXPECT_EQ(as_vec(from_range), (std::vector<long>{8, 7}));
}

TEST(SmallVector, RandomOperationsAgreeWithVector) {
  std::mt19937 rng(1);
  SmallVector<std::int64_t, 4> s;
  std::vector<std::int64_t> v;
  for (int step = 0; step < 4000; ++step) {
    const int op = static_cast<int>(rng() % 9);
    const auto x = static_cast<std::int64_t>(rng() % 1000);
    const std::size_t at = v.empty() ? 0 : rng() % (v.size() + 1);
    switch (op) {
      case 0:
      case 1:
        s.push_back(x);
        v.push_back(x);
        break;
      case 2:
        if (!v.empty()) {
          s.pop_back();
          v.pop_back();
        }
        break;
      case 3:
        s.insert(s.begin() + at, x);
        v.insert(v.begin() + static_cast<long>(at), x);
        break;
      case 4:
        if (at < v.size()) {
          s.erase(s.begin() + at);
          v.erase(v.begin() + static_cast<long>(at));
        }
        break;
      case 5: {
        const std::size_t n = rng() % 12;
        s.resize(n, x);
        v.resize(n, x);
        break;
      }
      case 6: {
        SmallVector<std::int64_t, 4> c = s;
        s = std::move(c);
        break;
      }
      case 7:
        if (!v.empty()) {
          s.push_back(s[0]);
          v.push_back(v[0]);
        }
        break;  // argument aliases the vector
      default: {
        const std::size_t n = rng() % 3;
        s.insert(s.begin() + at, n, x);
        v.insert(v.begin() + static_cast<long>(at), n, x);
      }
    }
    ASSERT_EQ(as_vec(s), v) << "step " << step;
  }
}

TEST(SmallVector, CopiesAndMovesInlineAndOnTheHeap) {
  for (int n : {0, 3, 8, 9, 40}) {
    SmallVector<std::int64_t, 8> a;
    for (int i = 0; i < n; ++i) a.push_back(i * 3 - 7);
    SmallVector<std::int64_t, 8> b = a;
    EXPECT_EQ(a, b);
    SmallVector<std::int64_t, 8> c = std::move(b);
    EXPECT_EQ(c, a);
    EXPECT_TRUE(b.empty());
    b = c;
    b.push_back(1);
    EXPECT_NE(b, a);
    EXPECT_TRUE(a < b);            // a is a prefix of b
    c.assign(c.begin(), c.end());  // self-assignment through a range
    EXPECT_EQ(c, a);
  }
}

TEST(SmallVector, NestedElementsAreCopiedDeeply) {
  SmallVector<cupric::Strides, 2> plan;
  for (int op = 0; op < 5; ++op) plan.push_back(cupric::Strides(static_cast<std::size_t>(op + 7), op));
  SmallVector<cupric::Strides, 2> copy = plan;
  plan[4][0] = 99;
  EXPECT_EQ(copy[4][0], 4);
  EXPECT_EQ(copy[3].size(), 10u);
  plan.insert(plan.begin(), cupric::Strides{1, 2});
  EXPECT_EQ(plan.size(), 6u);
  EXPECT_EQ(plan[1], copy[0]);
  plan.erase(plan.begin(), plan.begin() + 3);
  EXPECT_EQ(plan[0], copy[2]);
}

TEST(SmallVector, ShapesBehaveAsBefore) {
  cupric::Shape s{2, 3, 4};
  EXPECT_EQ(cupric::shape_str(s), "(2, 3, 4)");
  EXPECT_EQ(cupric::c_strides(s), (cupric::Strides{12, 4, 1}));
  EXPECT_EQ(cupric::broadcast_shapes(cupric::Shape{3, 1}, cupric::Shape{4}), (cupric::Shape{3, 4}));
  cupric::Shape big(20, 1);
  EXPECT_EQ(cupric::shape_size(big), 1);
  EXPECT_EQ(cupric::Array::empty(big, cupric::DType::int8).strides().size(), 20u);
}
