// cupric/runtime/kernel_analysis.hpp — what a compiled kernel costs the GPU before it runs: its
// resources read from the cubin's ELF (registers, stack, shared and constant memory), and the
// occupancy they give on an architecture, by NVIDIA's occupancy rules over a table of SM limits.
// Neither needs a GPU: NVRTC makes the cubin, and the limits are data.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cupric::runtime {

/// One kernel's resources as ptxas recorded them in the cubin (-1 / 0 where the cubin says nothing).
struct KernelResources {
  std::string name;                              ///< the entry's symbol
  int registers = -1;                            ///< per thread (EIATTR_REGCOUNT)
  int max_registers = 0;                         ///< the cap ptxas had (EIATTR_MAXREG_COUNT; 0: none recorded)
  std::int64_t frame_bytes = 0;                  ///< per-thread local memory of the frame: spills and local arrays
  std::int64_t max_stack_bytes = 0;              ///< per-thread stack including calls (EIATTR_MAX_STACK_SIZE)
  std::int64_t static_shared_bytes = 0;          ///< `.nv.shared.<name>`: __shared__ variables
  std::int64_t constant_bytes = 0;               ///< `.nv.constant0.<name>`: parameters and the driver's bank
  std::int64_t param_bytes = 0;                  ///< the parameters (EIATTR_CBANK_PARAM_SIZE)
  std::int64_t code_bytes = 0;                   ///< `.text.<name>`: the SASS
  std::array<int, 3> max_threads{0, 0, 0};       ///< __launch_bounds__' threads (EIATTR_MAX_THREADS)
  std::array<int, 3> required_threads{0, 0, 0};  ///< __launch_bounds__' exact block (EIATTR_REQNTID)
};

/// The kernels of a cubin (an ELF image, as NVRTC or nvJitLink return it), in symbol order.
/// Throws ValueError when `image` is no 64-bit ELF or its tables run outside it.
std::vector<KernelResources> read_cubin(std::string_view image);

/// The limits of one SM generation that decide occupancy (CUDA programming guide, "Technical
/// Specifications per Compute Capability"; the allocation rules of the CUDA occupancy calculator).
struct ArchLimits {
  int sm = 0;                ///< 80 for sm_80
  const char* example = "";  ///< a GPU of it, for reports
  int max_warps_per_sm = 0;
  int max_blocks_per_sm = 0;
  int max_threads_per_block = 1024;
  int registers_per_sm = 65536;
  int max_registers_per_block = 65536;
  int max_registers_per_thread = 255;
  int register_unit = 256;                        ///< registers are given to warps in multiples of this
  int warp_schedulers = 4;                        ///< the register file is split between them
  std::int64_t shared_per_sm = 0;                 ///< the largest shared memory carve-out
  std::int64_t max_shared_per_block = 0;          ///< with the opt-in attribute
  std::int64_t reserved_shared_per_block = 1024;  ///< taken by the system in every block
  int shared_unit = 128;                          ///< shared memory is given to blocks in multiples of this
};

/// The limits of sm_<sm> ("sm_90a" and 90 both name Hopper's); ValueError naming the known ones.
const ArchLimits& arch_limits(int sm);
const std::vector<ArchLimits>& known_arch_limits();

/// Resident blocks and warps per SM for a kernel launched with `threads` per block, using
/// `registers` per thread and `shared_bytes` of shared memory per block (static + dynamic),
/// and which resource stops the next block.
struct Occupancy {
  int blocks_per_sm = 0;
  int warps_per_sm = 0;
  double fraction = 0;     ///< warps_per_sm / the SM's maximum
  std::string limited_by;  ///< "warps", "blocks", "registers", "shared memory", or why none fits
  int by_warps = 0, by_blocks = 0, by_registers = 0, by_shared = 0;  ///< each resource's own limit
};
Occupancy occupancy(const ArchLimits& arch, int threads, int registers, std::int64_t shared_bytes);

}  // namespace cupric::runtime
