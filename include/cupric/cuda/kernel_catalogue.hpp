// cupric/cuda/kernel_catalogue.hpp — the CUDA array backend's kernels as data, for tools and
// tests: every source it can render and how it compiles them (NVRTC checks and cache warming
// need no GPU). The backend itself is private to src/backend/cuda.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "cupric/dtype.hpp"
#include "cupric/runtime/program.hpp"

namespace cupric::cuda_backend {

/// Every family for every dtype: (label, source). `common_only`: what cache warming compiles
/// (bool/int32/int64/float32/float64, the paths launches take most, each as a launch renders it).
std::vector<std::pair<std::string, std::string>> all_sources(bool common_only);
/// all_sources() packed `per_batch` to a translation unit: the family headers once at the top,
/// each source's own text in a namespace of its own (a test of the renderers, not what launches use).
std::vector<std::string> batched_sources(bool common_only, std::size_t per_batch);

/// An op as the profiler records it (cupric/profiler.hpp): its name, its inputs' dtypes (weak: a
/// Python scalar, passed by value), its outputs' dtypes, and whether its arrays are dense.
struct OpSignature {
  std::string name;
  std::vector<DType> inputs;
  std::vector<bool> weak;
  std::vector<DType> outputs;
  bool contiguous = true;
};
/// The sources the backend renders for such an op, as (label, source): what `cu.inspect` compiles
/// to show an op's kernels. Empty when the op launches none of cupric's own kernels (matmul calls
/// cuBLAS) or is not one the backend renders.
std::vector<std::pair<std::string, std::string>> op_sources(const OpSignature& op);

/// The include directory holding cupric/convert.h etc. for NVRTC.
const std::string& device_include_dir();
/// NVRTC options an array kernel's `source` is compiled with, for `arch` ("sm_90a").
runtime::ProgramOptions kernel_options(const std::string& arch, const std::string& source);
/// The NVRTC program of an array kernel: the source (stamped with the hash of the device headers
/// it includes, so that the compile cache never serves a kernel built from other headers) and
/// kernel_options (plus `extra`). Launches, `python -m cupric.cache warm` and the tests all
/// compile through it.
runtime::Program kernel_program(const std::string& source, const std::string& arch,
                                const std::vector<std::string>& extra = {});
/// The arch a device's kernels are compiled for ("sm_90a" on Hopper).
std::string kernel_arch(int device);

}  // namespace cupric::cuda_backend
