// render.cpp — what every renderer of the CUDA backend shares: dtype names for the device and
// for kernel names, the family include, and the identity of a map (its cache key).
#include "render.hpp"

#include <algorithm>

#include "cupric/errors.hpp"

namespace cupric::cuda_backend {

// both names are columns of the dtype table (src/array/dtype.cpp)
const char* device_type(DType t) { return info(t).cpp_type; }

std::string short_name(DType t) { return info(t).kernel_suffix; }

std::string include_family(const char* family) { return cat("#include \"cupric/kernels/", family, ".cuh\"\n"); }

int MapSpec::vector_width() const {
  int widest = itemsize(out_store);
  for (std::size_t k = 0; k < in_store.size(); ++k)
    if (in_mode[k] == InputMode::array) widest = std::max(widest, itemsize(in_store[k]));
  return std::max(1, 16 / widest);
}

std::string MapSpec::key() const {
  std::string k = cat(name, "|", expression, "|", short_name(out_store), short_name(out_compute), where ? "w" : "",
                      transpose ? "t" : "", path ? std::string("|") + path : std::string());
  for (std::size_t i = 0; i < in_store.size(); ++i)
    k += cat("|", short_name(in_store[i]), short_name(in_compute[i]), static_cast<int>(in_mode[i]));
  return k;
}

}  // namespace cupric::cuda_backend
