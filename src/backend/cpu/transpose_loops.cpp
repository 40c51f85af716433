// transpose_loops.cpp — copies of a block whose source walks one dimension densely and whose
// destination walks the other (a.T.copy(), Fortran <-> C order): V x V elements at a time are
// loaded as V vectors, transposed in the registers and stored as V vectors, instead of one
// strided element at a time. Compiled once per instruction-set variant (cpu_variant.hpp).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "cpu_dispatch.hpp"
#include "cpu_variant.hpp"

CUPRIC_CPU_VARIANT_BEGIN
namespace {

constexpr int lo_index(int k, int s, int v) { return (k & s) ? v + k - s : k; }
constexpr int hi_index(int k, int s, int v) { return (k & s) ? v + k : k + s; }

/// x[0..V) (V vectors of V elements, a V x V block) transposed in place: for s = V/2 .. 1 the
/// off-diagonal s x s blocks of every 2s x 2s block swap.
template <class Vec, int V, int S, std::size_t... K>
inline void transpose_stage(Vec* x, std::index_sequence<K...>) {
  for (int i = 0; i < V; ++i) {
    if (i & S) continue;
    const Vec a = x[i], b = x[i + S];
    x[i] = __builtin_shufflevector(a, b, lo_index(K, S, V)...);
    x[i + S] = __builtin_shufflevector(a, b, hi_index(K, S, V)...);
  }
}

template <class Vec, int V, int S = V / 2>
inline void transpose_block(Vec* x) {
  if constexpr (S >= 1) {
    transpose_stage<Vec, V, S>(x, std::make_index_sequence<V>{});
    transpose_block<Vec, V, S / 2>(x);
  }
}

/// Element (r, c) of a rows x cols block: source at src + r * size + c * src_stride, destination
/// at dst + r * dst_stride + c * size (strides in bytes).
template <class U>
void transpose_copy(const char* src, std::int64_t ss, char* dst, std::int64_t ds, std::int64_t rows,
                    std::int64_t cols) {
  constexpr int V = std::min<int>(CUPRIC_CPU_VECTOR_BYTES / static_cast<int>(sizeof(U)), 16);
  typedef U Vec __attribute__((vector_size(V * sizeof(U))));
  constexpr std::int64_t z = sizeof(U);
  auto one = [&](std::int64_t r, std::int64_t c) { std::memcpy(dst + r * ds + c * z, src + r * z + c * ss, z); };
  std::int64_t r0 = 0;
  for (; r0 + V <= rows; r0 += V) {
    std::int64_t c0 = 0;
    for (; c0 + V <= cols; c0 += V) {
      Vec x[V];  // x[k]: column c0 + k, rows r0 .. r0 + V; transposed: row r0 + k, columns c0 .. c0 + V
      for (int k = 0; k < V; ++k) std::memcpy(&x[k], src + r0 * z + (c0 + k) * ss, sizeof(Vec));
      transpose_block<Vec, V>(x);
      for (int k = 0; k < V; ++k) std::memcpy(dst + (r0 + k) * ds + c0 * z, &x[k], sizeof(Vec));
    }
    for (std::int64_t c = c0; c < cols; ++c)
      for (std::int64_t r = r0; r < r0 + V; ++r) one(r, c);
  }
  for (std::int64_t c = 0; c < cols; ++c)
    for (std::int64_t r = r0; r < rows; ++r) one(r, c);
}

}  // namespace

CUPRIC_CPU_VARIANT_ENTRY_POINTS

void fill_transpose_loops(TransposeFn* by_log2_size) {
  by_log2_size[0] = &transpose_copy<std::uint8_t>;
  by_log2_size[1] = &transpose_copy<std::uint16_t>;
  by_log2_size[2] = &transpose_copy<std::uint32_t>;
  by_log2_size[3] = &transpose_copy<std::uint64_t>;
}
CUPRIC_CPU_VARIANT_END
