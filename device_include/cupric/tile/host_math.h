// cupric/tile/host_math.h — on the CPU, tells the compiler that glibc's vector math library
// (libmvec) has SIMD versions of the float and double functions the ufunc table calls, so that
// loops over tiles that call exp/log/sin/... vectorise. Nothing on the GPU.
#pragma once

#if !defined(CUPRIC_TILE_DEVICE) && defined(__x86_64__) && defined(__GLIBC__) && defined(CUPRIC_TILE_LIBMVEC)
#define CUPRIC_SIMD_DECL(NAME)                                        \
  __attribute__((simd("notinbranch"))) float NAME##f(float) noexcept; \
  __attribute__((simd("notinbranch"))) double NAME(double) noexcept;
extern "C" {
CUPRIC_SIMD_DECL(exp)
CUPRIC_SIMD_DECL(log)
CUPRIC_SIMD_DECL(sin)
CUPRIC_SIMD_DECL(cos)
#if __GLIBC_PREREQ(2, 35)
CUPRIC_SIMD_DECL(exp2)
CUPRIC_SIMD_DECL(expm1)
CUPRIC_SIMD_DECL(log2)
CUPRIC_SIMD_DECL(log10)
CUPRIC_SIMD_DECL(log1p)
CUPRIC_SIMD_DECL(tan)
CUPRIC_SIMD_DECL(tanh)
CUPRIC_SIMD_DECL(sinh)
CUPRIC_SIMD_DECL(cosh)
CUPRIC_SIMD_DECL(asin)
CUPRIC_SIMD_DECL(acos)
CUPRIC_SIMD_DECL(atan)
CUPRIC_SIMD_DECL(asinh)
CUPRIC_SIMD_DECL(acosh)
CUPRIC_SIMD_DECL(atanh)
CUPRIC_SIMD_DECL(cbrt)
#endif
}
#undef CUPRIC_SIMD_DECL
#endif
