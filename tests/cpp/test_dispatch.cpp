// test_dispatch.cpp — the allocation-free pieces of the small-op path: InlineScalar, apply_ufunc over
// borrowed inputs, one-block small host storage, the loop-resolution cache and CUDA map keys.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <stdexcept>
#include <vector>

#include "backend/cuda/cuda_backend.hpp"
#include "cupric/backend.hpp"
#include "cupric/errors.hpp"
#include "cupric/ufunc.hpp"

using namespace cupric;

namespace {
Array iota(std::int64_t n, DType t) {
  Array a = Array::empty({n}, DType::float64);
  for (std::int64_t i = 0; i < n; ++i) static_cast<double*>(a.data())[i] = static_cast<double>(i) - 2.0;
  Array out = Array::empty({n}, t);
  backend_for(Device::cpu()).cast(elementwise_plan({&a, &out}, a.shape()));
  return out;
}
}  // namespace

TEST(InlineScalar, HoldsTheValueWeakOrTyped) {
  const InlineScalar weak(Scalar::from_int(300));
  EXPECT_EQ(weak.array().weak(), WeakKind::integer);
  EXPECT_EQ(weak.array().dtype(), DType::int64);
  EXPECT_EQ(weak.array().ndim(), 0);
  EXPECT_EQ(scalar_of_weak(weak.array()).i, 300);
  const InlineScalar typed(Scalar::from_float(2.5), DType::float32);
  EXPECT_EQ(typed.array().weak(), WeakKind::none);
  float v = 0;
  std::memcpy(&v, typed.array().data(), sizeof v);
  EXPECT_EQ(v, 2.5f);
  EXPECT_EQ(typed.array().storage().use_count(), 0);  // aliases nothing: no control block
  EXPECT_THROW(InlineScalar(Scalar::from_int(300), DType::int8), OverflowError);
}

TEST(ApplyUfunc, BorrowedInputsGiveWhatTheVectorOverloadGives) {
  const Ufunc& add = find_ufunc("add");
  for (DType t : {DType::int8, DType::int32, DType::float32, DType::float64}) {
    const Array x = iota(7, t);
    const InlineScalar one(Scalar::from_int(1));
    const Array* ops[2] = {&x, &one.array()};
    const Array a = apply_ufunc(add, std::span<const Array* const>(ops, 2));
    const Array b = apply_ufunc(add, std::vector<Array>{x, scalar_array(Scalar::from_int(1))});
    ASSERT_EQ(a.dtype(), t);
    ASSERT_EQ(b.dtype(), t);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.nbytes())), 0) << name(t);
  }
  const Array i8 = iota(3, DType::int8);
  const InlineScalar big(Scalar::from_int(300));
  const Array* ops[2] = {&i8, &big.array()};
  EXPECT_THROW(apply_ufunc(add, std::span<const Array* const>(ops, 2)), OverflowError);
}

TEST(Storage, SmallHostBlocksAreAlignedAndSized) {
  for (std::size_t n : {0u, 1u, 63u, 64u, 65u, 1000u, 4097u, 8192u, 8193u, 1u << 20}) {
    auto s = Storage::allocate(Device::cpu(), n);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(s->data()) % 64, 0u) << n;
    EXPECT_EQ(s->nbytes(), n);
    std::memset(s->data(), 0xab, n);  // the whole block is writable
  }
}

TEST(ResolveLoop, CachedResolutionsMatchTheSearch) {
  // every pair twice, across all the cache's slots: the second answer must be the first
  for (const char* uf_name : {"add", "arctan2", "less", "divide"}) {
    const Ufunc& uf = find_ufunc(uf_name);
    std::vector<const UfuncLoop*> first;
    for (int pass = 0; pass < 2; ++pass) {
      int k = 0;
      for (int a = 0; a < kNumDTypes; ++a)
        for (int w = 0; w < 3; ++w) {
          const std::vector<TypeOperand> ops = {
              {static_cast<DType>(a)},
              {w == 0 ? DType::int64 : DType::float64, w == 0 ? WeakKind::integer : WeakKind::none}};
          const UfuncLoop* l = nullptr;
          try {
            l = &resolve_loop(uf, ops);
          } catch (const TypeError&) {
          }
          if (pass == 0) first.push_back(l);
          else EXPECT_EQ(l, first[static_cast<std::size_t>(k)]) << uf_name << " " << a << " " << w;
          ++k;
        }
    }
  }
}

TEST(MapKey, DistinctBytesGiveDistinctKeys) {
  using cuda_backend::MapKey;
  std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
  for (unsigned a = 0; a < 16; ++a)
    for (unsigned b = 0; b < 16; ++b) {
      MapKey k;
      k.add('U').add(a).add(b);
      for (int i = 0; i < 12; ++i) k.add(static_cast<unsigned>(i) * a);
      EXPECT_EQ(k.length, 15);
      seen.insert({k.words[0], k.words[1]});
    }
  EXPECT_EQ(seen.size(), 256u);
  MapKey shorter, longer;
  shorter.add('F');
  longer.add('F').add(0);
  EXPECT_FALSE(shorter == longer);  // equal words, different lengths
  MapKey full;
  for (int i = 0; i < 16; ++i) full.add(1);
  EXPECT_THROW(full.add(1), std::logic_error);
}
