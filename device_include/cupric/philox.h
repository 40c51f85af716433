// cupric/philox.h — the counter-based generator behind cupric.random (Philox4x32-10,
// Salmon et al., SC'11) and the conversions from its 32-bit words to numbers. Compiled by the
// host compiler and by NVRTC alike, so a seed gives the same stream on the CPU and the GPU:
// element i of a draw depends only on (key, counter + i / per_block), never on the thread.
#pragma once

#include "cupric/hd.h"

#if defined(__CUDACC_RTC__)
#include "cupric/cuda_prelude.h"
#else
#include <cstdint>
#endif

namespace cu {

struct Philox4 {
  std::uint32_t v[4];
};

/// Philox4x32 with 10 rounds: a bijection of the 128-bit counter under the 64-bit key.
CUPRIC_HD Philox4 philox4x32_10(std::uint64_t counter_lo, std::uint64_t counter_hi, std::uint64_t key) {
  std::uint32_t c0 = static_cast<std::uint32_t>(counter_lo), c1 = static_cast<std::uint32_t>(counter_lo >> 32);
  std::uint32_t c2 = static_cast<std::uint32_t>(counter_hi), c3 = static_cast<std::uint32_t>(counter_hi >> 32);
  std::uint32_t k0 = static_cast<std::uint32_t>(key), k1 = static_cast<std::uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = static_cast<std::uint64_t>(0xD2511F53u) * c0;
    const std::uint64_t p1 = static_cast<std::uint64_t>(0xCD9E8D57u) * c2;
    const std::uint32_t hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const std::uint32_t hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {{c0, c1, c2, c3}};
}

/// Uniform in [0, 1) from 24 random bits (every float32 value is a multiple of 2^-24).
CUPRIC_HD float uniform_float(std::uint32_t u) { return static_cast<float>(u >> 8) * 5.9604644775390625e-8f; }
/// Uniform in [0, 1) from 53 random bits of two words.
CUPRIC_HD double uniform_double(std::uint32_t a, std::uint32_t b) {
  return (static_cast<double>(a >> 5) * 67108864.0 + static_cast<double>(b >> 6)) * 1.1102230246251565e-16;
}
/// An integer in [0, range) from 64 random bits: floor(x * range / 2^64) (bias <= range / 2^64).
CUPRIC_HD std::uint64_t bounded(std::uint32_t a, std::uint32_t b, std::uint64_t range) {
  const std::uint64_t x = (static_cast<std::uint64_t>(a) << 32) | b;
#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
  return __umul64hi(x, range);
#else
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(x) * range) >> 64);
#endif
}

}  // namespace cu
