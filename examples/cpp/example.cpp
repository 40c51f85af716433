// example.cpp — cupric from C++: make arrays, apply ufuncs, check the result.
#include <cmath>
#include <cstdio>

#include "cupric/cupric.hpp"

int main() {
  using namespace cupric;
  Array x = Array::empty({4, 3}, DType::float32);
  auto* px = static_cast<float*>(x.data());
  for (int i = 0; i < 12; ++i) px[i] = static_cast<float>(i);
  Array y = apply_ufunc("multiply", {x, x});                                 // y = x * x
  Array z = apply_ufunc("add", {y, scalar_array(Scalar::from_float(1.0))});  // z = y + 1 (weak scalar)
  const auto* pz = static_cast<const float*>(z.data());
  for (int i = 0; i < 12; ++i) {
    if (pz[i] != static_cast<float>(i * i + 1)) {
      std::printf("wrong value at %d: %g\n", i, static_cast<double>(pz[i]));
      return 1;
    }
  }
  std::printf("z = x*x + 1: %s, dtype %s, z[11] = %g\n", shape_str(z.shape()).c_str(), name(z.dtype()),
              static_cast<double>(pz[11]));
  return 0;
}
