// catalogue.hpp — every kernel source the CUDA backend can render, for the NVRTC tests and for
// `python -m cupric.cache warm`: each family for each dtype (and each operand mode of the maps).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cupric::cuda_backend {

/// Every family for every dtype: (label, source). `common_only`: what cache warming compiles
/// (bool/int32/int64/float32/float64, the paths launches take most, each as a launch renders it).
std::vector<std::pair<std::string, std::string>> all_sources(bool common_only);
/// all_sources() packed `per_batch` to a translation unit: the family headers once at the top,
/// each source's own text in a namespace of its own (a test of the renderers, not what launches use).
std::vector<std::string> batched_sources(bool common_only, std::size_t per_batch);

}  // namespace cupric::cuda_backend
