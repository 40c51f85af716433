// emit.hpp — renders a tile Function as C++ over the header library device_include/cupric/tile:
// host C++ (a shared object run block by block on the thread pool) or CUDA C++ (one kernel
// for NVRTC / nvcc). Both targets share one body emitter; they differ in the wrapper.
#pragma once

#include <string>
#include <vector>

#include "tile/ir.hpp"

namespace cupric::tile {

enum class Target : std::uint8_t { host, cuda };

struct EmitOptions {
  Target target = Target::host;
  int threads = 0;     ///< CUDA threads per block (0: chosen from the tile sizes)
  bool debug = false;  ///< emit ct.print / ct.assert_ (dropped otherwise)
};

/// One parameter of a generated CUDA kernel, in order: an array is its data pointer, then one
/// extent and one stride (long long, in elements) per dimension; a scalar is passed as its dtype.
enum class ParamRole : std::uint8_t { data, extent, stride, scalar };
struct KernelParam {
  ParamRole role;
  DType dtype;  ///< data: the element type; extent and stride: int64; scalar: its type
  bool operator==(const KernelParam&) const = default;
};
const char* role_name(ParamRole r);
/// The C type the kernel declares a parameter with ("float*", "long long", "::cu::tile::bf16"),
/// for reading the generated source; launches go by the role and dtype.
std::string param_ctype(const KernelParam& p);

/// What the runtime needs besides the source.
struct EmitResult {
  std::string source;
  std::string entry;                      ///< symbol to look up (host) or kernel name (CUDA)
  int threads = 1;                        ///< threads per block
  int vec = 1;                            ///< elements per thread and access
  int smem_bytes = 0;                     ///< dynamic shared memory per block (CUDA)
  std::vector<KernelParam> params;        ///< CUDA: each kernel parameter, in order
  std::string ir_layout;                  ///< CUDA: the IR after assign_layouts, as text
};

EmitResult emit(const Function& f, const EmitOptions& options);

/// The C++ spelling of a dtype in generated code ("float", "::cu::tile::bf16", ...).
std::string ctype(DType t);

}  // namespace cupric::tile
