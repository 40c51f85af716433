// cupric/hd.h — CUPRIC_HD: how a function shared by host code and device code is declared
// (device-only under NVRTC, host+device under nvcc, plain inline for the host compiler).
#pragma once

#ifndef CUPRIC_HD
#if defined(__CUDACC_RTC__)
#define CUPRIC_HD __device__ inline
#elif defined(__CUDACC__)
#define CUPRIC_HD __host__ __device__ inline
#else
#define CUPRIC_HD inline
#endif
#endif
