// render.cpp — what every renderer of the CUDA backend shares: dtype names for the device and
// for kernel names, the family include, and the identity of a map (its cache key).
#include "render.hpp"

#include <algorithm>

#include "cupric/errors.hpp"

namespace cupric::cuda_backend {

const char* device_type(DType t) {
  switch (t) {
    case DType::bool_:
      return "bool";
    case DType::int8:
      return "std::int8_t";
    case DType::uint8:
      return "std::uint8_t";
    case DType::int16:
      return "std::int16_t";
    case DType::uint16:
      return "std::uint16_t";
    case DType::int32:
      return "std::int32_t";
    case DType::uint32:
      return "std::uint32_t";
    case DType::int64:
      return "std::int64_t";
    case DType::uint64:
      return "std::uint64_t";
    case DType::float16:
      return "cupric::float16";
    case DType::bfloat16:
      return "cupric::bfloat16";
    case DType::float32:
      return "float";
    case DType::float64:
      return "double";
    case DType::complex64:
      return "std::complex<float>";
    case DType::complex128:
      return "std::complex<double>";
  }
  return "void";
}

std::string short_name(DType t) {
  // kind + size names every dtype but one: bfloat16 shares float16's ("f2")
  return t == DType::bfloat16 ? std::string("bf2") : cat(static_cast<char>(kind(t)), itemsize(t));
}

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
