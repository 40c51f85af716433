// unique_reference.hpp — the oracle of the CUDA unique kernels' host tests: the CPU backend's sort
// of the values and its unique_runs, and one comparison of a kernel's outputs against them.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "cupric/cupric.hpp"

/// `data` sorted by the CPU backend (values and the permutation) and CpuBackend::unique_runs of it:
/// each run's value, first index and end, and every element's run (the inverse).
struct UniqueReference {
  cupric::Array sorted, perm, values, index, ends, inverse;
  std::int64_t runs = 0;
};

template <class T>
UniqueReference unique_reference(const T* data, std::int64_t n, bool equal_nan) {
  using cupric::Array, cupric::DType;
  const DType t = cupric::dtype_of<T>();
  cupric::Backend& cpu = cupric::backend_for(cupric::Device::cpu());
  Array in = Array::empty({n}, t);
  std::memcpy(in.data(), data, static_cast<std::size_t>(n) * sizeof(T));
  UniqueReference r{Array::empty({n}, t),
                    Array::empty({n}, DType::int64),
                    Array::empty({n}, t),
                    Array::empty({n}, DType::int64),
                    Array::empty({n + 1}, DType::int64),
                    Array::empty({n}, DType::int64)};
  cpu.sort(in, r.sorted, r.perm, false);
  r.runs = cpu.unique_runs(r.sorted, r.perm, r.values, r.index, r.ends, r.inverse, equal_nan);
  return r;
}

/// A unique kernel's outputs (index, ends and inverse: 8-byte integers) against the reference; null
/// index / inverse: not asked for.
template <class T>
void expect_unique_equal(const UniqueReference& want, std::int64_t runs, const T* values, const void* index,
                         const void* ends, const void* inverse) {
  const std::int64_t n = want.sorted.size();
  ASSERT_EQ(runs, want.runs) << "n=" << n;
  const auto count = static_cast<std::size_t>(runs);
  EXPECT_EQ(0, std::memcmp(values, want.values.data(), count * sizeof(T))) << "n=" << n;
  EXPECT_EQ(0, std::memcmp(ends, want.ends.data(), (count + 1) * 8)) << "n=" << n;
  if (index) EXPECT_EQ(0, std::memcmp(index, want.index.data(), count * 8)) << "n=" << n;
  if (inverse) EXPECT_EQ(0, std::memcmp(inverse, want.inverse.data(), static_cast<std::size_t>(n) * 8)) << "n=" << n;
}
