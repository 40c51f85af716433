// emit.hpp — renders a tile Function as C++ over the header library device_include/cupric/tile:
// host C++ (a shared object run block by block on the thread pool) or CUDA C++ (one kernel
// for NVRTC / nvcc). Both targets share one body emitter; they differ in the wrapper.
#pragma once

#include <string>
#include <vector>

#include "cupric/tile_compiler/ir.hpp"

namespace cupric::tile {

enum class Target : std::uint8_t { host, cuda };

struct EmitOptions {
  Target target = Target::host;
  int threads = 0;     ///< CUDA threads per block (0: chosen from the tile sizes)
  bool debug = false;  ///< emit ct.print / ct.assert_ (dropped otherwise)
};

/// What the runtime needs besides the source.
struct EmitResult {
  std::string source;
  std::string entry;                      ///< symbol to look up (host) or kernel name (CUDA)
  int threads = 1;                        ///< threads per block
  int vec = 1;                            ///< elements per thread and access
  int smem_bytes = 0;                     ///< dynamic shared memory per block (CUDA)
  std::vector<std::string> param_types;   ///< CUDA: C type of each kernel parameter, in order
  std::string ir_layout;                  ///< CUDA: the IR after assign_layouts, as text
};

EmitResult emit(const Function& f, const EmitOptions& options);

/// The C++ spelling of a dtype in generated code ("float", "::cu::tile::bf16", ...).
std::string ctype(DType t);

}  // namespace cupric::tile
