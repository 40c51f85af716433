// test_tile_gpu_memory.cpp — the GPU branch of the tile headers' loads and stores, run on the host:
// a block of 128 threads with 4-element vectors, each thread in turn (loads and stores do not
// synchronise), against a plain loop over the window. Covers the vector path and its element
// fallback (ragged edges, misaligned and strided rows, windows starting outside the array) and
// the element path, so that the GPU's address arithmetic is checked on machines without a GPU.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cupric/scalar_math.h"

// What NVRTC would provide, for the few device intrinsics the included headers name.
inline unsigned __float_as_uint(float f) { return std::bit_cast<unsigned>(f); }
inline float __uint_as_float(unsigned u) { return std::bit_cast<float>(u); }
inline double __longlong_as_double(long long u) { return std::bit_cast<double>(u); }
unsigned long long atomicAdd(unsigned long long* p, unsigned long long v);  // named, never called here
#define __builtin_assume(cond) ((void)0)
#define CUPRIC_TILE_SYNC() ((void)0)  // (store_staged: not run here, its barriers need the whole block)

#define CUPRIC_TILE_THREADS 128
#define CUPRIC_TILE_VEC 4
#define CUPRIC_TILE_SMEM 0
#define CUPRIC_TILE_DEVICE 1
#define CUPRIC_TD inline
#define CUPRIC_TC constexpr
#define CUPRIC_TILE_UNROLL
#define CUPRIC_TILE_NO_UNROLL
#define CUPRIC_TILE_ALIGN
// Its own namespace: test_tile.cpp includes the same headers built for the CPU (one thread).
#define tile tile_gpu_sim
// The order matters (tile.h's):
// clang-format off
#include "cupric/tile/abi.h"
#include "cupric/tile/types.h"
#include "cupric/tile/core.h"
#include "cupric/tile/memory.h"
// clang-format on
#undef tile

namespace {

namespace t = cu::tile_gpu_sim;

constexpr int kR = 3, kC = 40;  // the window: 3 x 40 = 120 elements, 1 slot vector per thread
using Sh = t::Dims<kR, kC>;
using L = t::Layout<Sh::size>;

/// A rows x cols array of floats inside a larger buffer: `shift` elements past a 16-byte
/// boundary, rows `pitch` elements apart, `step` elements between columns.
struct Host {
  std::vector<float> buf;
  t::ArrayRef<float, 2> ref;
  Host(long long rows, long long cols, long long pitch, long long step, int shift)
      : buf(static_cast<std::size_t>(rows * pitch + 8), -7.0f) {
    float* base = buf.data() + ((4 - reinterpret_cast<std::uintptr_t>(buf.data()) / 4 % 4) % 4) + shift;
    ref = {base, {rows, cols}, {pitch, step}};
    for (long long r = 0; r < rows; ++r)
      for (long long c = 0; c < cols; ++c) at(r, c) = static_cast<float>(r * 1000 + c);
  }
  float& at(long long r, long long c) { return ref.data[r * ref.stride[0] + c * ref.stride[1]]; }
};

/// Element e of the window, as thread `tid`'s slot s holds it.
float expected(Host& h, const long long (&start)[2], int e, float pad) {
  const long long r = start[0] + e / kC, c = start[1] + e % kC;
  const bool in = r >= 0 && r < h.ref.shape[0] && c >= 0 && c < h.ref.shape[1];
  return in ? h.at(r, c) : pad;
}

void check_window(Host& h, const long long (&start)[2]) {
  const float pad = -1.5f;
  t::Block b{{0, 0, 0}, {1, 1, 1}, 0, nullptr, nullptr};
  for (int tid = 0; tid < t::kThreads; ++tid) {  // load: every slot holds its element or the padding
    b.tid = tid;
    t::Tile<float, Sh::size> tile;
    t::load<Sh>(b, tile, h.ref, start, pad);
    for (int s = 0; s < L::kSlots; ++s)
      if (L::valid(tid, s))
        ASSERT_EQ(tile.v[s], expected(h, start, L::elem(tid, s), pad)) << "tid " << tid << " slot " << s;
  }
  std::vector<float> before = h.buf;
  for (int tid = 0; tid < t::kThreads; ++tid) {  // store: writes -(element index) inside, nothing outside
    b.tid = tid;
    t::Tile<float, Sh::size> tile;
    for (int s = 0; s < L::kSlots; ++s) tile.v[s] = -static_cast<float>(L::elem(tid, s)) - 100.0f;
    t::store<Sh>(b, tile, h.ref, start);
  }
  std::vector<bool> written(h.buf.size(), false);
  for (int e = 0; e < Sh::size; ++e) {
    const long long r = start[0] + e / kC, c = start[1] + e % kC;
    if (r < 0 || r >= h.ref.shape[0] || c < 0 || c >= h.ref.shape[1]) continue;
    ASSERT_EQ(h.at(r, c), -static_cast<float>(e) - 100.0f) << "element " << e;
    written[static_cast<std::size_t>(&h.at(r, c) - h.buf.data())] = true;
  }
  for (std::size_t i = 0; i < h.buf.size(); ++i)
    if (!written[i]) ASSERT_EQ(std::memcmp(&h.buf[i], &before[i], sizeof(float)), 0) << "stray write at " << i;
}

}  // namespace

TEST(TileGpuMemory, VectorPathAlignedRaggedAndOutside) {
  static_assert(Sh::dim(1) % t::kVec == 0, "the window takes the vector path");
  for (int shift : {0, 1, 2}) {  // aligned rows, then rows that are never 16-byte aligned
    for (long long cols : {40LL, 43LL, 97LL}) {
      for (const auto& start : {std::array<long long, 2>{0, 0}, {1, 40}, {2, 41}, {-1, -3}, {1, 60}, {4, 0}}) {
        Host h(5, cols, cols + (shift ? 3 : 0), 1, shift);
        const long long s[2] = {start[0], start[1]};
        check_window(h, s);
      }
    }
  }
}

TEST(TileGpuMemory, StridedRowsTakeTheElementFallback) {
  for (long long step : {2LL, -1LL}) {
    Host h(4, 50, 120, step < 0 ? 1 : step, 0);
    if (step < 0) {  // negative stride: a reversed view of the rows
      h.ref.data += 49;
      h.ref.stride[1] = -1;
    }
    for (const auto& start : {std::array<long long, 2>{0, 0}, {1, 20}, {-2, -5}}) {
      const long long s[2] = {start[0], start[1]};
      check_window(h, s);
    }
  }
}

TEST(TileGpuMemory, ElementPathForOddWidths) {
  using Odd = t::Dims<2, 37>;  // not a multiple of the vector width: one element per access
  Host h(3, 50, 50, 1, 1);
  t::Block b{{0, 0, 0}, {1, 1, 1}, 0, nullptr, nullptr};
  const long long start[2] = {2, 30};
  for (int tid = 0; tid < t::kThreads; ++tid) {
    b.tid = tid;
    t::Tile<float, Odd::size> tile;
    t::load<Odd>(b, tile, h.ref, start, 0.5f);
    using LO = t::Layout<Odd::size>;
    for (int s = 0; s < LO::kSlots; ++s) {
      if (!LO::valid(tid, s)) continue;
      const int e = LO::elem(tid, s);
      const long long r = start[0] + e / 37, c = start[1] + e % 37;
      ASSERT_EQ(tile.v[s], r < 3 && c < 50 ? h.at(r, c) : 0.5f);
    }
  }
}
