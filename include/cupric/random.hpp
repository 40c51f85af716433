// cupric/random.hpp — counter-based random numbers (Philox4x32-10) that give the same stream
// on every device: a draw of n numbers takes the next blocks of the generator's counter, and
// element i depends only on (seed, counter, i).
#pragma once

#include <cstdint>
#include <vector>

#include "cupric/array.hpp"

namespace cupric {

enum class RandomDistribution : std::uint8_t { uniform, normal, exponential, integers };

/// One draw as a backend sees it. Element i of `out` (C-contiguous) comes from block
/// `counter + i / per_block` of the stream `key` (see blocks_for()).
struct RandomRequest {
  RandomDistribution dist = RandomDistribution::uniform;
  std::uint64_t key = 0;
  std::uint64_t counter = 0;
  double a = 0, b = 1;      ///< uniform: low, high; normal: loc, scale; exponential: scale
  std::int64_t low = 0;     ///< integers: low
  std::uint64_t range = 1;  ///< integers: high - low (> 0)
};

/// Philox blocks (4 words each) a draw of n values of dtype t uses.
std::uint64_t random_blocks(RandomDistribution dist, DType t, std::int64_t n);

/// A random generator with NumPy's Generator methods (the subset cupric has so far).
class Generator {
 public:
  explicit Generator(std::uint64_t seed) : key_(seed) {}
  std::uint64_t seed() const { return key_; }
  std::uint64_t counter() const { return counter_; }
  void set_counter(std::uint64_t c) { counter_ = c; }

  /// Uniform [0, 1).
  Array random(const Shape& shape, DType dtype = DType::float64, Device device = Device::cpu());
  Array uniform(double low, double high, const Shape& shape, DType dtype = DType::float64,
                Device device = Device::cpu());
  Array standard_normal(const Shape& shape, DType dtype = DType::float64, Device device = Device::cpu());
  Array normal(double loc, double scale, const Shape& shape, DType dtype = DType::float64,
               Device device = Device::cpu());
  Array exponential(double scale, const Shape& shape, DType dtype = DType::float64, Device device = Device::cpu());
  /// Integers in [low, high) (or [low, high] with endpoint).
  /// Integers in [low, high) ([low, high] with endpoint). The bounds are exact to the ends of
  /// int64 and uint64 (a Python int's range for these dtypes), hence 128-bit.
  Array integers(__int128 low, __int128 high, const Shape& shape, DType dtype = DType::int64,
                 Device device = Device::cpu(), bool endpoint = false);

  // Orderings and samples (random_sampling.cpp). The positions are drawn on the host from the
  // generator's stream (Fisher-Yates for orderings), so that they are the same for every device;
  // the data then moves on its own device.
  /// A random ordering of 0 .. n-1 (int64).
  Array permutation(std::int64_t n, Device device = Device::cpu());
  /// A copy of x with its elements reordered along axis 0.
  Array permutation(const Array& x);
  /// Reorders x along axis 0 in place.
  void shuffle(const Array& x);
  /// Elements of x along axis 0 (or of arange(n) when `population` is null and n is given),
  /// with or without replacement, uniformly or with probabilities p (1-d, length n, summing to 1).
  Array choice(const Array* population, std::int64_t n, const Shape& shape, bool replace, const Array* p,
               Device device);

 private:
  Array draw(RandomRequest request, const Shape& shape, DType dtype, Device device);
  std::vector<std::int64_t> host_ordering(std::int64_t n);
  std::uint64_t key_;
  std::uint64_t counter_ = 0;
};

}  // namespace cupric
