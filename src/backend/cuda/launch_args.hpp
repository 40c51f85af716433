// launch_args.hpp — small helpers the CUDA launchers share: argument packing for a kernel,
// geometries of the kept dimensions, and a 2-d launch.
#pragma once

#include <algorithm>
#include <vector>

#include "cuda_backend.hpp"

namespace cupric::cuda_backend {

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

/// The packer of `k`'s arguments (checked against its parameter sizes when the driver knows them).
inline runtime::ArgPacker packer(const runtime::Kernel& k) {
  return runtime::ArgPacker(k.param_sizes_known() ? &k.param_sizes() : nullptr, k.interned_name());
}
inline void add_geo(runtime::ArgPacker& args, const std::vector<std::int64_t>& g) {
  args.add_bytes(g.data(), g.size() * sizeof(std::int64_t), 8, "geometry");
}
inline void add_i32(runtime::ArgPacker& args, std::int32_t v) { args.add_bytes(&v, 4, 4, "int"); }

/// Dimensions of `a` other than `skip` (sorted), with a's byte strides and b's.
inline Geometry other_dims(const Array& a, const Array& b, const std::vector<int>& skip) {
  Geometry g;
  g.strides.resize(2);
  for (int d = 0; d < a.ndim(); ++d) {
    if (std::find(skip.begin(), skip.end(), d) != skip.end()) continue;
    g.shape.push_back(a.shape()[d]);
    g.strides[0].push_back(a.strides()[d] * a.itemsize());
    g.strides[1].push_back(b.strides()[d] * b.itemsize());
  }
  g.simplify();
  return g;
}

inline void launch_2d(CudaBackend& be, const runtime::Kernel& k, std::int64_t gx, std::int64_t gy, unsigned bx,
                      unsigned by, runtime::ArgPacker& args) {
  runtime::LaunchConfig c;
  c.grid = {static_cast<unsigned>(std::clamp<std::int64_t>(gx, 1, 1 << 30)), static_cast<unsigned>(gy), 1};
  c.block = {bx, by, 1};
  be.launch(k, c, args);
}

}  // namespace cupric::cuda_backend
