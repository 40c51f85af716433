// random.cpp — Generator: argument checks, output allocation and counter bookkeeping; the
// numbers themselves come from the backend (Backend::random).
#include "cupric/random.hpp"

#include <cmath>

#include "cupric/backend.hpp"
#include "cupric/errors.hpp"
#include "cupric/profiler.hpp"

namespace cupric {

std::uint64_t random_blocks(RandomDistribution dist, DType t, std::int64_t n) {
  const auto un = static_cast<std::uint64_t>(n);
  const bool wide = dist == RandomDistribution::integers || t == DType::float64;  // 2 words per value
  return wide ? (un + 1) / 2 : (un + 3) / 4;
}

Array Generator::draw(RandomRequest request, const Shape& shape, DType dtype, Device device) {
  profiler::OpScope profiled(profiler::OpModel::copy, "random", {});
  Array out = Array::empty(shape, dtype, device);
  if (out.size() == 0) return out;
  request.key = key_;
  request.counter = counter_;
  backend_for(device).random(request, out);
  counter_ += random_blocks(request.dist, dtype, out.size());
  profiled.output(out);
  return out;
}

namespace {
void check_float(const char* what, DType t) {
  if (t != DType::float32 && t != DType::float64)
    throw TypeError(cat(what, ": dtype must be float32 or float64, got ", name(t)));
}
}  // namespace

Array Generator::random(const Shape& shape, DType dtype, Device device) {
  return uniform(0.0, 1.0, shape, dtype, device);
}

Array Generator::uniform(double low, double high, const Shape& shape, DType dtype, Device device) {
  check_float("uniform", dtype);
  if (!std::isfinite(high - low)) throw OverflowError(cat("uniform: high - low = ", high - low, " is not finite"));
  RandomRequest r;
  r.dist = RandomDistribution::uniform;
  r.a = low;
  r.b = high;
  return draw(r, shape, dtype, device);
}

Array Generator::standard_normal(const Shape& shape, DType dtype, Device device) {
  return normal(0.0, 1.0, shape, dtype, device);
}

Array Generator::normal(double loc, double scale, const Shape& shape, DType dtype, Device device) {
  check_float("normal", dtype);
  if (scale < 0) throw ValueError(cat("normal: scale < 0 (got ", scale, ")"));
  RandomRequest r;
  r.dist = RandomDistribution::normal;
  r.a = loc;
  r.b = scale;
  return draw(r, shape, dtype, device);
}

Array Generator::exponential(double scale, const Shape& shape, DType dtype, Device device) {
  check_float("exponential", dtype);
  if (scale < 0) throw ValueError(cat("exponential: scale < 0 (got ", scale, ")"));
  RandomRequest r;
  r.dist = RandomDistribution::exponential;
  r.a = scale;
  return draw(r, shape, dtype, device);
}

Array Generator::integers(__int128 low, __int128 high, const Shape& shape, DType dtype, Device device, bool endpoint) {
  if (!is_integer(dtype)) throw TypeError(cat("integers: dtype must be an integer type, got ", name(dtype)));
  const __int128 top = endpoint ? high : high - 1;  // inclusive upper bound
  const IntInfo lim = iinfo(dtype);
  // NumPy's messages, in NumPy's order
  if (low < lim.min) throw ValueError(cat("low is out of bounds for ", name(dtype)));
  if (top > static_cast<__int128>(lim.max)) throw ValueError(cat("high is out of bounds for ", name(dtype)));
  if (top < low) throw ValueError(endpoint ? "low > high" : "low >= high");
  RandomRequest r;
  r.dist = RandomDistribution::integers;
  // both modulo 2^64: the kernels add the offset to low in 64-bit unsigned arithmetic
  r.low = static_cast<std::int64_t>(static_cast<std::uint64_t>(low));
  r.range = static_cast<std::uint64_t>(top - low + 1);  // 0 means 2^64
  return draw(r, shape, dtype, device);
}

}  // namespace cupric
