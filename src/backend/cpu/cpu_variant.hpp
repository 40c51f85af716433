// cpu_variant.hpp — the instruction-set variant a dispatched translation unit is compiled for
// (cpu_dispatch.hpp picks one at run time). The build compiles each dispatched source once per
// variant with CUPRIC_CPU_VARIANT_<NAME> defined; the code between CUPRIC_CPU_VARIANT_BEGIN and
// CUPRIC_CPU_VARIANT_END then lives in namespace cupric::cpu::<name> (so variants never share a
// symbol) and is compiled for the variant's instruction set by a target pragma. Everything the
// unit includes before BEGIN (the C++ library, cupric's scalar headers) stays at the baseline, so
// an out-of-line copy of std::sort or of an inline helper that the linker keeps from a variant's
// object can never carry AVX instructions into baseline code. Without a define (every other
// translation unit, and builds that are not x86-64) the variant is `baseline`: no pragma.
// (The pragma does not define __AVX2__ and the like: code that needs the vector width reads
// CUPRIC_CPU_VECTOR_BYTES and CUPRIC_CPU_HAS_FMA.)
#pragma once

// clang-format off
#if defined(CUPRIC_CPU_VARIANT_AVX512)
#define CUPRIC_CPU_VARIANT avx512
#define CUPRIC_CPU_TARGET_FEATURES "avx2,fma,bmi,bmi2,lzcnt,movbe,f16c,popcnt,avx512f,avx512bw,avx512cd,avx512dq,avx512vl"
#define CUPRIC_CPU_VECTOR_BYTES 64
#define CUPRIC_CPU_HAS_FMA 1
#elif defined(CUPRIC_CPU_VARIANT_AVX2)
#define CUPRIC_CPU_VARIANT avx2
#define CUPRIC_CPU_TARGET_FEATURES "avx2,fma,bmi,bmi2,lzcnt,movbe,f16c,popcnt"
#define CUPRIC_CPU_VECTOR_BYTES 32
#define CUPRIC_CPU_HAS_FMA 1
#else
#define CUPRIC_CPU_VARIANT baseline
#define CUPRIC_CPU_VECTOR_BYTES 16  // SSE2 / NEON
#define CUPRIC_CPU_HAS_FMA 0
#endif
// clang-format on

// Two levels so that the features macro is expanded before it is put in the pragma's text.
#define CUPRIC_CPU_PRAGMA_TEXT(text) _Pragma(#text)
#define CUPRIC_CPU_PRAGMA(text) CUPRIC_CPU_PRAGMA_TEXT(text)
#if !defined(CUPRIC_CPU_TARGET_FEATURES)
#define CUPRIC_CPU_TARGET_PUSH
#define CUPRIC_CPU_TARGET_POP
#elif defined(__clang__)
#define CUPRIC_CPU_TARGET_PUSH \
  CUPRIC_CPU_PRAGMA(clang attribute push(__attribute__((target(CUPRIC_CPU_TARGET_FEATURES))), apply_to = function))
#define CUPRIC_CPU_TARGET_POP CUPRIC_CPU_PRAGMA(clang attribute pop)
#else
// A feature list, not arch=x86-64-v3: GCC inlines baseline helpers (std::min, cu::sqrt) only
// into functions of the same arch and tuning.
#define CUPRIC_CPU_TARGET_PUSH \
  CUPRIC_CPU_PRAGMA(GCC push_options) CUPRIC_CPU_PRAGMA(GCC target(CUPRIC_CPU_TARGET_FEATURES))
#define CUPRIC_CPU_TARGET_POP CUPRIC_CPU_PRAGMA(GCC pop_options)
#endif

/// On the functions that fill a variant's tables (ufunc, cast, reduce loops): no auto-vectorisation,
/// so that they hold no instruction of the variant's set. The tables of every variant are filled on
/// any CPU (tests/cpp/test_cpu_dispatch.cpp); GCC's SLP vectoriser had merged a row of 17 stored
/// addresses into AVX-512 stores in the avx512 variant (an illegal instruction on an AVX2 machine).
#if defined(__GNUC__) && !defined(__clang__)
#define CUPRIC_CPU_TABLE_FILL __attribute__((optimize("no-tree-vectorize", "no-tree-slp-vectorize")))
#else
#define CUPRIC_CPU_TABLE_FILL
#endif

/// Opens namespace cupric::cpu::<variant>, compiled for the variant's instruction set.
#define CUPRIC_CPU_VARIANT_BEGIN CUPRIC_CPU_TARGET_PUSH namespace cupric::cpu::CUPRIC_CPU_VARIANT {
/// Closes it.
#define CUPRIC_CPU_VARIANT_END \
  }                            \
  CUPRIC_CPU_TARGET_POP
/// Makes cupric::cpu::NAME name this unit's variant of the namespace (baseline code keeps
/// writing vm::exp, reduce_ops::Sum).
#define CUPRIC_CPU_VARIANT_ALIAS(NAME)       \
  namespace cupric::cpu {                    \
  namespace NAME = CUPRIC_CPU_VARIANT::NAME; \
  }
