// reduce_ops.hpp — the reduction operators of the CPU backend, instantiated from the rows of
// the reduction table, and the loops built from them: contiguous reductions over independent
// lanes (pairwise for floating sums) and row-wise accumulation for reductions over outer axes.
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "cpu_variant.hpp"
#include "cupric/backend.hpp"
#include "cupric/reduction.h"
#include "cupric/reduction_table.hpp"
#include "cupric/ufunc_expressions.hpp"
#if defined(CUPRIC_CPU_VARIANT_AVX2) || defined(CUPRIC_CPU_VARIANT_AVX512)
#include <immintrin.h>
#endif

// In namespace cupric::cpu::<variant>: the reduction loops are compiled per instruction set
// (reduce_loops.cpp); reduce_ops:: names this unit's variant.
CUPRIC_CPU_VARIANT_BEGIN
namespace reduce_ops {

using cu::is_complex_v;
using cu::less;  // lexicographic for complex numbers (NumPy's order)
template <class T>
inline bool is_nan(T v) {
  return cu::isnan(v);
}

/// The reduction of row Op of the reduction table (include/cupric/reduction_table.def): identity() is
/// what every lane starts from (cupric/reduction.h), combine(acc, v) folds one value in with the
/// row's ufunc, whose expression (scalar_math.h) is written branch-free so that loops over it
/// vectorise; pairwise says whether partial results are summed in a tree.
template <ReduceOp Op>
struct Combining;
#define CUPRIC_REDUCTION(NAME, UFUNC, IDENTITY, SEED, ACC, NAN) \
  template <>                                                   \
  struct Combining<ReduceOp::NAME> : ufunc_expr::UFUNC {};
#include "cupric/reduction_table.def"

template <ReduceOp Op>
struct Reduction {
  static constexpr const ReductionRow& row = reduction_row(Op);
  static constexpr bool pairwise = row.acc == AccRule::sum;  // pairwise summation
  template <class T>
  static T identity() {
    return cu::reduction_start<T, row.identity, row.nan>();
  }
  template <class T>
  static T combine(T acc, T v) {
    return static_cast<T>(Combining<Op>::apply(acc, v, acc));
  }
};
using Sum = Reduction<ReduceOp::sum>;

/// Scratch storage of n elements (std::vector<bool> would have no data()).
template <class T>
std::unique_ptr<T[]> make_scratch(std::int64_t n) {
  return std::unique_ptr<T[]>(new T[static_cast<std::size_t>(std::max<std::int64_t>(n, 1))]);
}

/// Scratch memory for n elements of T. Up to kKeptScratchBytes it is a per-thread buffer kept
/// between calls (fresh large allocations cost page faults on every call); beyond, it is owned.
/// Slot 0 serves the calling thread's partial results, slot 1 the buffers of a task.
inline constexpr std::int64_t kKeptScratchBytes = std::int64_t{8} << 20;

template <class T>
class Scratch {
 public:
  Scratch(int slot, std::int64_t n) {
    const std::int64_t lines = (std::max<std::int64_t>(n, 1) * static_cast<std::int64_t>(sizeof(T)) + 63) / 64;
    thread_local std::unique_ptr<Line[]> kept[2];
    thread_local std::int64_t kept_lines[2] = {0, 0};
    Line* p;
    if (lines * 64 > kKeptScratchBytes) {
      owned_.reset(new Line[static_cast<std::size_t>(lines)]);
      p = owned_.get();
    } else {
      if (kept_lines[slot] < lines) {
        kept[slot].reset(new Line[static_cast<std::size_t>(lines)]);
        kept_lines[slot] = lines;
      }
      p = kept[slot].get();
    }
    data_ = reinterpret_cast<T*>(p);
  }
  T* get() const { return data_; }

 private:
  struct alignas(64) Line {
    unsigned char bytes[64];
  };
  std::unique_ptr<Line[]> owned_;
  T* data_;
};

// ---- contiguous reductions -------------------------------------------------------------------

/// Scalar type of the lanes: complex sums run over the interleaved real and imaginary parts.
template <class Op, class T>
struct LaneType {
  using type = T;
};
template <ReduceOp Op, class R>  // sums add componentwise: over the interleaved parts
  requires(Reduction<Op>::pairwise)
struct LaneType<Reduction<Op>, std::complex<R>> {
  using type = R;
};

/// Lanes per loop: 256 bytes of independent accumulators (enough to hide the add latency of
/// the SIMD registers holding them); one for complex operators, which do not vectorise anyway.
template <class E>
inline constexpr int kLanes = is_complex_v<E> ? 1 : 256 / static_cast<int>(sizeof(E));

/// Elements summed per lane before partial sums are combined in a tree (pairwise summation).
inline constexpr std::int64_t kPairwiseBlock = 512;

/// Software prefetch distance in bytes: helps arrays beyond the L2 cache (the hardware
/// prefetcher alone leaves about 20% of the bandwidth unused on large sums).
inline constexpr std::int64_t kPrefetchBytes = 4096;

/// acc[j] = combine of p[i] over i = j (mod L), for i in [0, n).
template <class Op, class E, int L>
inline void fold_lanes(const E* __restrict p, std::int64_t n, E* __restrict out) {
  E acc[L];  // a local array stays in registers through the loop
  for (int j = 0; j < L; ++j) acc[j] = Op::template identity<E>();
  std::int64_t i = 0;
  for (; i + L <= n; i += L) {
    __builtin_prefetch(reinterpret_cast<const char*>(p + i) + kPrefetchBytes);
    for (int j = 0; j < L; ++j) acc[j] = Op::combine(acc[j], p[i + j]);
  }
  for (int j = 0; i + j < n; ++j) acc[j] = Op::combine(acc[j], p[i + j]);
  for (int j = 0; j < L; ++j) out[j] = acc[j];
}

/// Pairwise version of fold_lanes: halves (at multiples of L) are folded separately and added.
template <class Op, class E, int L>
inline void pairwise_lanes(const E* p, std::int64_t n, E* acc) {
  if (n <= kPairwiseBlock) {
    fold_lanes<Op, E, L>(p, n, acc);
    return;
  }
  const std::int64_t half = (n / 2 / L) * L;
  E right[L];
  pairwise_lanes<Op, E, L>(p, half, acc);
  pairwise_lanes<Op, E, L>(p + half, n - half, right);
  for (int j = 0; j < L; ++j) acc[j] = Op::combine(acc[j], right[j]);
}

/// Combines lanes first, first + step, ... (count of them) in a balanced tree.
template <class Op, class E>
inline E tree_lanes(E* lanes, int count, int step) {
  for (int width = 1; width < count; width *= 2)
    for (int j = 0; j + width < count; j += 2 * width)
      lanes[j * step] = Op::combine(lanes[j * step], lanes[(j + width) * step]);
  return lanes[0];
}

/// The type partial results of a reduction are kept in: float32 sums combine their partial
/// sums in float64 (the top levels of a summation tree carry most of its rounding error).
template <class Op, class T>
struct Partial {
  using type = T;
};
template <ReduceOp Op>
  requires(Reduction<Op>::pairwise)
struct Partial<Reduction<Op>, float> {
  using type = double;
};
template <ReduceOp Op>
  requires(Reduction<Op>::pairwise)
struct Partial<Reduction<Op>, std::complex<float>> {
  using type = std::complex<double>;
};
template <class Op, class T>
using partial_t = typename Partial<Op, T>::type;

/// Elements per block of a float32 sum: folded in float32 lanes, then added in float64.
inline constexpr std::int64_t kWideningBlock = 4096;

/// Sum of float32 lanes folded over blocks, each block's lanes added in float64. With `pairs`
/// the lanes alternate between two sums (real and imaginary parts of complex64).
template <int L>
inline void widening_sum(const float* p, std::int64_t n, double* re, double* im) {
  alignas(64) float lanes[L];
  double sums[2] = {-0.0, -0.0};
  for (std::int64_t b = 0; b < n; b += kWideningBlock) {
    fold_lanes<Sum, float, L>(p + b, std::min(kWideningBlock, n - b), lanes);
    // the lanes added in float64 by halves (vector adds; a running sum would be a chain of L
    // dependent adds, which dominated short row sums); halves of even width keep the parity
    alignas(64) double wide[L];
    for (int j = 0; j < L; ++j) wide[j] = static_cast<double>(lanes[j]);
    for (int w = L / 2; w >= 2; w /= 2)
      for (int j = 0; j < w; ++j) wide[j] += wide[j + w];
    sums[0] += wide[0];
    sums[1] += wide[1];
  }
  if (im) {
    *re = sums[0];
    *im = sums[1];
  } else {
    *re = sums[0] + sums[1];
  }
}

/// The min/max/fmin/fmax rows over floats fold their lanes with a looser combine, without the
/// signed-zero rule of cu::maximum (that rule made these reductions compute-bound, below NumPy's
/// speed); a lane that ends on a zero then takes the zero the rule prefers (+0.0 for max, -0.0 for
/// min) if the chunk holds one: the only case the rule decides.
template <class Op>
struct LooseExtreme {
  static constexpr bool enabled = false;
};
template <ReduceOp O>
  requires(O == ReduceOp::max || O == ReduceOp::min || O == ReduceOp::fmax || O == ReduceOp::fmin)
struct LooseExtreme<Reduction<O>> {
  static constexpr bool enabled = true;
  static constexpr bool max = O == ReduceOp::max || O == ReduceOp::fmax;
  static constexpr bool skip_nan = O == ReduceOp::fmax || O == ReduceOp::fmin;
  template <class T>
  static T identity() {
    return Reduction<O>::template identity<T>();
  }
  /// The x86 max/min instruction with the value first (v > acc ? v : acc): a NaN value leaves the
  /// accumulator as it was.
  template <class T>
  static T pick(T v, T acc) {
    return max ? (v > acc ? v : acc) : (v < acc ? v : acc);
  }
  /// fmax/fmin: pick under a mask that keeps a NaN accumulator (the identity is NaN) from
  /// sticking; two operations with AVX-512's masked max, three with AVX2's blend.
  template <class T>
  static T combine(T a, T b) {
    return b != b ? a : (max ? (a > b ? a : b) : (a < b ? a : b));
  }
};

#if defined(CUPRIC_CPU_VARIANT_AVX2) || defined(CUPRIC_CPU_VARIANT_AVX512)
/// The vector operations of the max/min pair fold below, in intrinsics: written as scalar code,
/// GCC loaded every value twice (once for the max, once for the compare), which made the loop
/// bound by the load ports. pick(v, acc) is the x86 max/min with the value first: a NaN value
/// leaves acc as it was (AVX-512: the masked forms, since GCC 12 warns on the plain ones'
/// undefined source). unord(a, b) marks the lanes where a or b is NaN.
template <class E>
struct PairSimd;
#if defined(CUPRIC_CPU_VARIANT_AVX512)
template <>
struct PairSimd<float> {
  using V = __m512;
  using M = __mmask16;
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V splat(float v) { return _mm512_set1_ps(v); }
  static V pick(bool max, V v, V acc) {
    return max ? _mm512_maskz_max_ps(0xFFFF, v, acc) : _mm512_maskz_min_ps(0xFFFF, v, acc);
  }
  static M unord(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q); }
  static M either(M a, M b) { return a | b; }
  static bool any(M m) { return m != 0; }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
};
template <>
struct PairSimd<double> {
  using V = __m512d;
  using M = __mmask8;
  static V load(const double* p) { return _mm512_loadu_pd(p); }
  static V splat(double v) { return _mm512_set1_pd(v); }
  static V pick(bool max, V v, V acc) {
    return max ? _mm512_maskz_max_pd(0xFF, v, acc) : _mm512_maskz_min_pd(0xFF, v, acc);
  }
  static M unord(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_UNORD_Q); }
  static M either(M a, M b) { return a | b; }
  static bool any(M m) { return m != 0; }
  static void store(double* p, V v) { _mm512_storeu_pd(p, v); }
};
#else
template <>
struct PairSimd<float> {
  using V = __m256;
  using M = __m256;
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V splat(float v) { return _mm256_set1_ps(v); }
  static V pick(bool max, V v, V acc) { return max ? _mm256_max_ps(v, acc) : _mm256_min_ps(v, acc); }
  static M unord(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_UNORD_Q); }
  static M either(M a, M b) { return _mm256_or_ps(a, b); }
  static bool any(M m) { return _mm256_movemask_ps(m) != 0; }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
};
template <>
struct PairSimd<double> {
  using V = __m256d;
  using M = __m256d;
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static V splat(double v) { return _mm256_set1_pd(v); }
  static V pick(bool max, V v, V acc) { return max ? _mm256_max_pd(v, acc) : _mm256_min_pd(v, acc); }
  static M unord(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_UNORD_Q); }
  static M either(M a, M b) { return _mm256_or_pd(a, b); }
  static bool any(M m) { return _mm256_movemask_pd(m) != 0; }
  static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
};
#endif
#endif

/// max/min (NaN propagates) over lanes: pick, plus a NaN mask ORed on the side from one unordered
/// compare of two vectors: two operations a vector (folding the NaN into every step cost a
/// compare and a blend, two or three micro-ops on Intel cores, on the accumulator's chain, and
/// with AVX-512's four accumulators the loop was bound by that chain's latency). Pairs of
/// adjacent vectors are picked first (a NaN of the pair may pass, the accumulator then drops it),
/// so a chain has one step for two vectors. Lanes past the four vectors of accumulators hold the
/// identity. A chunk holding a NaN ends in its first NaN.
template <class Op, class E, int L>
inline void fold_propagating_lanes(const E* __restrict p, std::int64_t n, E* __restrict out) {
  using Loose = LooseExtreme<Op>;
  constexpr int W = CUPRIC_CPU_VECTOR_BYTES / static_cast<int>(sizeof(E));  // lanes of a vector
  static_assert(L >= 4 * W);
  const E identity = Loose::template identity<E>();
  for (int j = 0; j < L; ++j) out[j] = identity;
  std::int64_t i = 0;
  bool nan = false;
#if defined(CUPRIC_CPU_VARIANT_AVX2) || defined(CUPRIC_CPU_VARIANT_AVX512)
  using S = PairSimd<E>;
  using V = typename S::V;
  V acc[4] = {S::splat(identity), S::splat(identity), S::splat(identity), S::splat(identity)};
  typename S::M mask[2] = {S::unord(acc[0], acc[0]), S::unord(acc[0], acc[0])};  // no lane set
  // eight pairs of adjacent vectors a step, then single vectors, then single values
  for (; i + 16 * W <= n; i += 16 * W) {
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      if (k % 2 == 0) __builtin_prefetch(reinterpret_cast<const char*>(p + i + 2 * k * W) + kPrefetchBytes);
      V a = S::load(p + i + 2 * k * W), b = S::load(p + i + (2 * k + 1) * W);
      asm("" : "+x"(a), "+x"(b));  // keeps them in registers: GCC loaded them again for the max
      acc[k % 4] = S::pick(Loose::max, S::pick(Loose::max, b, a), acc[k % 4]);
      mask[k % 2] = S::either(mask[k % 2], S::unord(a, b));
    }
  }
  for (; i + W <= n; i += W) {
    const V a = S::load(p + i);
    acc[0] = S::pick(Loose::max, a, acc[0]);
    mask[0] = S::either(mask[0], S::unord(a, a));
  }
  for (int k = 0; k < 4; ++k) S::store(out + k * W, acc[k]);
  nan = S::any(S::either(mask[0], mask[1]));
#else
  using U = std::conditional_t<sizeof(E) == 4, std::uint32_t, std::uint64_t>;
  U mask[4 * W] = {};
  for (; i + 8 * W <= n; i += 8 * W) {
    __builtin_prefetch(reinterpret_cast<const char*>(p + i) + kPrefetchBytes);
    for (int j = 0; j < 4 * W; ++j) {
      const E a = p[i + j], b = p[i + 4 * W + j];
      out[j] = Loose::pick(Loose::pick(b, a), out[j]);
      mask[j] |= __builtin_isunordered(a, b) ? ~U(0) : U(0);
    }
  }
  for (int j = 0; j < 4 * W; ++j) nan |= mask[j] != 0;
#endif
  for (; i < n; ++i) {
    out[0] = Loose::pick(p[i], out[0]);
    nan |= p[i] != p[i];
  }
  if (!nan) return;
  for (std::int64_t k = 0;; ++k) {
    if (p[k] != p[k]) {
      for (int j = 0; j < L; ++j) out[j] = p[k];
      return;
    }
  }
}

template <class Op, class E, int L>
inline void fold_extreme_lanes(const E* p, std::int64_t n, E* lanes) {
  using Loose = LooseExtreme<Op>;
  if constexpr (Loose::skip_nan) fold_lanes<Loose, E, L>(p, n, lanes);
  else fold_propagating_lanes<Op, E, L>(p, n, lanes);
  bool zero = false;
  for (int j = 0; j < L; ++j) zero |= lanes[j] == E(0);
  if (!zero) return;
  using U = std::conditional_t<sizeof(E) == 4, std::uint32_t, std::uint64_t>;
  const U preferred = Loose::max ? U(0) : U(1) << (8 * sizeof(E) - 1);  // +0.0 or -0.0
  for (std::int64_t i = 0; i < n; ++i) {
    if (__builtin_bit_cast(U, p[i]) == preferred) {
      for (int j = 0; j < L; ++j)
        if (lanes[j] == E(0)) lanes[j] = p[i];
      return;
    }
  }
}

/// The reduction of n contiguous elements (n may be 0: the identity), as a partial result.
template <class Op, class T>
inline partial_t<Op, T> reduce_contiguous(const T* p, std::int64_t n) {
  using E = typename LaneType<Op, T>::type;
  using P = partial_t<Op, T>;
  constexpr int L = kLanes<E>;
  if (n < L) {  // too short for the lanes to pay
    P acc = Op::template identity<P>();
    for (std::int64_t i = 0; i < n; ++i) acc = Op::combine(acc, static_cast<P>(p[i]));
    return acc;
  }
  if constexpr (std::is_same_v<T, float> && std::is_same_v<partial_t<Op, T>, double>) {
    double r;
    widening_sum<L>(p, n, &r, nullptr);
    return r;
  } else if constexpr (std::is_same_v<T, std::complex<float>> &&
                       std::is_same_v<partial_t<Op, T>, std::complex<double>>) {
    double re, im;  // L is even: even lanes hold real parts, odd lanes imaginary parts
    widening_sum<L>(reinterpret_cast<const float*>(p), 2 * n, &re, &im);
    return {re, im};
  } else if constexpr (!std::is_same_v<E, T>) {
    alignas(64) E lanes[L];  // complex128 sum over interleaved parts, as above
    pairwise_lanes<Op, E, L>(reinterpret_cast<const E*>(p), 2 * n, lanes);
    const E re = tree_lanes<Op>(lanes, L / 2, 2);
    const E im = tree_lanes<Op>(lanes + 1, L / 2, 2);
    return T(re, im);
  } else {
    alignas(64) E lanes[L];
    if constexpr (Op::pairwise && std::is_floating_point_v<E>) pairwise_lanes<Op, E, L>(p, n, lanes);
    else if constexpr (LooseExtreme<Op>::enabled && (std::is_same_v<E, float> || std::is_same_v<E, double>))
      fold_extreme_lanes<Op, E, L>(p, n, lanes);
    else fold_lanes<Op, E, L>(p, n, lanes);
    return tree_lanes<Op>(lanes, L, 1);
  }
}

/// acc[j] = combine(acc[j], row[j]) for j < n: one row of a reduction over an outer axis.
template <class Op, class T>
inline void accumulate_row(T* __restrict acc, const T* __restrict row, std::int64_t n) {
  for (std::int64_t j = 0; j < n; ++j) acc[j] = Op::combine(acc[j], row[j]);
}

/// acc[j] = the combination of four rows (pairwise): starts a block of rows without a copy.
template <class Op, class T>
inline void combine_rows4(T* __restrict acc, const T* __restrict r0, const T* __restrict r1, const T* __restrict r2,
                          const T* __restrict r3, std::int64_t n) {
  for (std::int64_t j = 0; j < n; ++j) acc[j] = Op::combine(Op::combine(r0[j], r1[j]), Op::combine(r2[j], r3[j]));
}

/// Four rows at once (pairwise among themselves): a quarter of the accumulator traffic.
template <class Op, class T>
inline void accumulate_rows4(T* __restrict acc, const T* __restrict r0, const T* __restrict r1, const T* __restrict r2,
                             const T* __restrict r3, std::int64_t n) {
  for (std::int64_t j = 0; j < n; ++j)
    acc[j] = Op::combine(acc[j], Op::combine(Op::combine(r0[j], r1[j]), Op::combine(r2[j], r3[j])));
}

}  // namespace reduce_ops
CUPRIC_CPU_VARIANT_END
CUPRIC_CPU_VARIANT_ALIAS(reduce_ops)
