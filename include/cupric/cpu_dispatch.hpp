// cupric/cpu_dispatch.hpp — which instruction-set variant of the CPU kernels this process runs
// (baseline, avx2, avx512; chosen once by the CPU's features, capped by CUPRIC_CPU_TARGETS), for
// the tile compiler (host kernels are compiled for the same instruction set) and show_config().
// The variants themselves are private to src/backend/cpu (cpu_dispatch.hpp there).
#pragma once

#include <string>
#include <vector>

namespace cupric::cpu {

/// The variant in use: its name (a value of CUPRIC_CPU_TARGETS) and the -march value of its
/// instruction set ("" when the compiler's default). Throws ValueError when CUPRIC_CPU_TARGETS
/// names no variant.
struct CpuTarget {
  const char* name;
  const char* march;
};
CpuTarget cpu_target();

/// What show_config() prints: the build's flags, the variants compiled and supported, the
/// request and the choice, and the CPU's relevant features.
struct CpuDispatchReport {
  std::string chosen, requested, build_flags, cpu_features;
  std::vector<std::string> compiled, supported;
};
CpuDispatchReport cpu_dispatch_report();

}  // namespace cupric::cpu
