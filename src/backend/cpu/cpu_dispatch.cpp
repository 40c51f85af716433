// cpu_dispatch.cpp — picks the instruction-set variant of the CPU kernels once per process: the
// best one compiled into this build that the CPU supports, capped by CUPRIC_CPU_TARGETS.
// The build says which variants exist (CUPRIC_CPU_HAVE_AVX2, CUPRIC_CPU_HAVE_AVX512) and what
// the rest of the library is compiled for (CUPRIC_CPU_BASELINE_MARCH).
#include "cpu_dispatch.hpp"

#include <cstdlib>
#include <string_view>

#include "cupric/errors.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#ifndef CUPRIC_CPU_BASELINE_MARCH
#define CUPRIC_CPU_BASELINE_MARCH ""
#endif

namespace cupric::cpu {
namespace baseline {
CUPRIC_CPU_VARIANT_ENTRY_POINTS
}
#if defined(CUPRIC_CPU_HAVE_AVX2)
namespace avx2 {
CUPRIC_CPU_VARIANT_ENTRY_POINTS
}
#endif
#if defined(CUPRIC_CPU_HAVE_AVX512)
namespace avx512 {
CUPRIC_CPU_VARIANT_ENTRY_POINTS
}
#endif

namespace {

#if defined(__x86_64__) && defined(__GNUC__)
// F16C from CPUID leaf 1 (ECX bit 29): clang before 16 has no "f16c" for __builtin_cpu_supports
[[maybe_unused]] bool has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}
// The features of each x86-64 level that the compiler's code may use (x86-64-v3: AVX2, FMA,
// BMI1/2, F16C, LZCNT, MOVBE; v4 adds AVX-512 F/BW/CD/DQ/VL). __builtin_cpu_supports also
// checks that the OS saves the vector registers.
[[maybe_unused]] bool has_x86_64_v3() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
         __builtin_cpu_supports("bmi2") && has_f16c() && __builtin_cpu_supports("popcnt");
}
[[maybe_unused]] bool has_x86_64_v4() {
  return has_x86_64_v3() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}
#endif
bool always() { return true; }

#define CUPRIC_CPU_VARIANT_ROW(NS, MARCH, SUPPORTED)                                         \
  CpuVariant {                                                                               \
    #NS, MARCH, SUPPORTED,                                                                   \
        {NS::fill_ufunc_loops_part0, NS::fill_ufunc_loops_part1, NS::fill_ufunc_loops_part2, \
         NS::fill_ufunc_loops_part3},                                                        \
        NS::fill_cast_loops, NS::fill_reduce_loops, NS::fill_transpose_loops                 \
  }

}  // namespace

const std::vector<CpuVariant>& compiled_cpu_variants() {
  static const std::vector<CpuVariant> variants = {
#if defined(CUPRIC_CPU_HAVE_AVX512)
      CUPRIC_CPU_VARIANT_ROW(avx512, "x86-64-v4", has_x86_64_v4),
#endif
#if defined(CUPRIC_CPU_HAVE_AVX2)
      CUPRIC_CPU_VARIANT_ROW(avx2, "x86-64-v3", has_x86_64_v3),
#endif
      CUPRIC_CPU_VARIANT_ROW(baseline, CUPRIC_CPU_BASELINE_MARCH, always),
  };
  return variants;
}

namespace {

constexpr std::string_view kTargetNames[] = {"baseline", "avx2", "avx512"};  // lowest first

int target_rank(std::string_view name) {
  for (int i = 0; i < 3; ++i)
    if (kTargetNames[i] == name) return i;
  return -1;
}

std::string requested_target() {
  const char* env = std::getenv("CUPRIC_CPU_TARGETS");
  return env ? env : "";
}

const CpuVariant& choose() {
  const std::string req = requested_target();
  const int cap = req.empty() ? 2 : target_rank(req);
  if (cap < 0)
    throw ValueError(cat("CUPRIC_CPU_TARGETS='", req, "' is not a CPU target: use baseline, avx2 or avx512 ",
                         "(the highest instruction set the CPU kernels may use), or leave it unset"));
  const auto& variants = compiled_cpu_variants();
  for (const auto& v : variants)
    if (target_rank(v.name) <= cap && v.supported()) return v;
  return variants.back();
}

std::string x86_features() {
  std::string out;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
#define CUPRIC_CPU_FEATURE(NAME) \
  if (__builtin_cpu_supports(NAME)) out += (out.empty() ? "" : " ") + std::string(NAME);
  CUPRIC_CPU_FEATURE("sse4.2")
  CUPRIC_CPU_FEATURE("avx")
  CUPRIC_CPU_FEATURE("avx2")
  CUPRIC_CPU_FEATURE("fma")
  CUPRIC_CPU_FEATURE("avx512f")
  CUPRIC_CPU_FEATURE("avx512bw")
  CUPRIC_CPU_FEATURE("avx512dq")
  CUPRIC_CPU_FEATURE("avx512vl")
#undef CUPRIC_CPU_FEATURE
#endif
  return out;
}

}  // namespace

const CpuVariant& cpu_variant() {
  static const CpuVariant& chosen = choose();
  return chosen;
}

CpuTarget cpu_target() {
  const CpuVariant& v = cpu_variant();
  return {v.name, v.march};
}

CpuDispatchReport cpu_dispatch_report() {
  CpuDispatchReport r;
  r.chosen = cpu_variant().name;
  r.requested = requested_target();
  const std::string march = CUPRIC_CPU_BASELINE_MARCH;
  r.build_flags = march.empty() ? "(compiler default)" : "-march=" + march;
  for (const auto& v : compiled_cpu_variants()) {
    r.compiled.push_back(v.name);
    if (v.supported()) r.supported.push_back(v.name);
  }
  r.cpu_features = x86_features();
  return r;
}

}  // namespace cupric::cpu
