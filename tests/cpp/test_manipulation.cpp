// test_manipulation.cpp — the C++ API of indexing, manipulation and creation: views share
// storage, copies do not, and values come out where NumPy puts them.
#include <gtest/gtest.h>

#include <vector>

#include "cupric/creation.hpp"
#include "cupric/cupric.hpp"
#include "cupric/indexing.hpp"
#include "cupric/manipulation.hpp"

using namespace cupric;

namespace {
std::vector<std::int64_t> values(const Array& a) {
  const Array c = ascontiguous(a);
  const auto* p = static_cast<const std::int64_t*>(c.data());
  return {p, p + c.size()};
}

Slice slice(std::optional<std::int64_t> start, std::optional<std::int64_t> stop, std::optional<std::int64_t> step) {
  return Slice{start, stop, step};
}
}  // namespace

TEST(Manipulation, ReshapeIsAViewWhenStridesAllowAndACopyOtherwise) {
  const Array a = arange(Scalar::from_int(12));
  const Array m = reshape(a, {3, -1});
  EXPECT_EQ(m.shape(), (Shape{3, 4}));
  EXPECT_EQ(m.storage(), a.storage());
  const Array t = transpose(m);               // (4, 3) with strides (1, 4)
  const Array split = reshape(t, {2, 2, 3});  // splits the outer dim only: still a view
  EXPECT_EQ(split.storage(), a.storage());
  EXPECT_EQ(split.strides(), (Strides{2, 1, 4}));
  const Array flat = reshape(t, {12});  // needs a copy
  EXPECT_NE(flat.storage(), a.storage());
  EXPECT_EQ(values(flat), (std::vector<std::int64_t>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  EXPECT_FALSE(reshape_strides(t, {12}).has_value());
  EXPECT_THROW(reshape(a, {5, -1}), ValueError);
  EXPECT_THROW(reshape(t, {12}, 'C', false), ValueError);
}

TEST(Manipulation, BasicIndexingGivesViewsWithNumPysShapes) {
  const Array a = reshape(arange(Scalar::from_int(24)), {2, 3, 4});
  const Array v = getitem(a, {IndexItem::from_int(-1), IndexItem::from_slice(slice(std::nullopt, std::nullopt, -2)),
                              IndexItem::newaxis(), IndexItem::from_slice(slice(1, 3, std::nullopt))});
  EXPECT_EQ(v.shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(v.storage(), a.storage());
  EXPECT_EQ(values(v), (std::vector<std::int64_t>{21, 22, 13, 14}));
  EXPECT_THROW(getitem(a, {IndexItem::from_int(2)}), IndexError);
  const Array zero_d = getitem(a, {IndexItem::from_int(1), IndexItem::from_int(2), IndexItem::from_int(3)});
  EXPECT_EQ(zero_d.ndim(), 0);
  EXPECT_EQ(values(zero_d), (std::vector<std::int64_t>{23}));
}

TEST(Manipulation, SetitemBroadcastsAndIndexArraysGather) {
  const Array a = reshape(arange(Scalar::from_int(6)), {2, 3});
  setitem(a, {IndexItem::ellipsis(), IndexItem::from_int(0)}, scalar_array(Scalar::from_int(-1)));
  EXPECT_EQ(values(a), (std::vector<std::int64_t>{-1, 1, 2, -1, 4, 5}));
  EXPECT_THROW(setitem(a, {IndexItem::from_int(0)}, scalar_array(Scalar::from_int(1), DType::int64).view({2}, {0}, 0)),
               ValueError);
  Array idx = arange(Scalar::from_int(2), Scalar::from_int(-1), Scalar::from_int(-2));  // [2, 0]
  const Array g = getitem(a, {IndexItem::from_slice(Slice{}), IndexItem::from_array(idx)});
  EXPECT_EQ(g.shape(), (Shape{2, 2}));
  EXPECT_EQ(values(g), (std::vector<std::int64_t>{2, -1, 5, -1}));
  EXPECT_NE(g.storage(), a.storage());
}

TEST(Manipulation, ConcatenateStackAndWhere) {
  const Array a = reshape(arange(Scalar::from_int(4)), {2, 2});
  EXPECT_EQ(values(concatenate({a, a}, 1)), (std::vector<std::int64_t>{0, 1, 0, 1, 2, 3, 2, 3}));
  EXPECT_EQ(stack({a, a}, -1).shape(), (Shape{2, 2, 2}));
  const Array c = apply_ufunc("greater", {a, scalar_array(Scalar::from_int(1))});
  EXPECT_EQ(values(where(c, a, scalar_array(Scalar::from_int(9)))), (std::vector<std::int64_t>{9, 9, 2, 3}));
  EXPECT_THROW(swapaxes(a, 0, 2), AxisError);
  EXPECT_EQ(values(tril(reshape(arange(Scalar::from_int(9)), {3, 3}), -1)),
            (std::vector<std::int64_t>{0, 0, 0, 3, 0, 0, 6, 7, 0}));
}
