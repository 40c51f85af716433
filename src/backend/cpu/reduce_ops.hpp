// reduce_ops.hpp — the reduction operators of the CPU backend (identity and combine, written as
// branch-free selects so that loops over them vectorise) and the loops built from them:
// contiguous reductions over independent lanes (pairwise for floating sums) and row-wise
// accumulation for reductions over outer axes.
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "cpu_variant.hpp"
#include "cupric/backend.hpp"

// In namespace cupric::cpu::<variant>: the reduction loops are compiled per instruction set
// (reduce_loops.cpp); reduce_ops:: names this unit's variant.
CUPRIC_CPU_VARIANT_BEGIN
namespace reduce_ops {

template <class T>
inline constexpr bool is_complex_v = false;
template <class T>
inline constexpr bool is_complex_v<std::complex<T>> = true;

template <class T>
inline bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return v != v;
  else if constexpr (is_complex_v<T>)
    return v.real() != v.real() || v.imag() != v.imag();
  else
    return false;
}

/// Lexicographic order of complex numbers (NumPy's); the usual order otherwise.
template <class T>
inline bool less(T a, T b) {
  if constexpr (is_complex_v<T>)
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
  else
    return a < b;
}

template <class T>
inline T highest() {
  if constexpr (std::is_same_v<T, bool>)
    return true;
  else if constexpr (is_complex_v<T>)
    return T(std::numeric_limits<typename T::value_type>::infinity(),
             std::numeric_limits<typename T::value_type>::infinity());
  else if constexpr (std::is_floating_point_v<T>)
    return std::numeric_limits<T>::infinity();
  else
    return std::numeric_limits<T>::max();
}
template <class T>
inline T lowest() {
  if constexpr (std::is_same_v<T, bool>)
    return false;
  else if constexpr (is_complex_v<T>)
    return T(-std::numeric_limits<typename T::value_type>::infinity(),
             -std::numeric_limits<typename T::value_type>::infinity());
  else if constexpr (std::is_floating_point_v<T>)
    return -std::numeric_limits<T>::infinity();
  else
    return std::numeric_limits<T>::lowest();
}
template <class T>
inline T quiet_nan() {
  if constexpr (is_complex_v<T>)
    return T(std::numeric_limits<typename T::value_type>::quiet_NaN(), 0);
  else
    return std::numeric_limits<T>::quiet_NaN();
}

// Each operator: identity() starts every lane, combine(acc, v) folds one value in, empty()
// is what an empty reduction writes, pairwise says whether partial results are summed in a tree.

struct Sum {
  static constexpr bool pairwise = true;
  template <class T>
  static T identity() {  // -0.0 so that a sum of -0.0 stays -0.0, as NumPy's
    if constexpr (std::is_floating_point_v<T>)
      return T(-0.0);
    else if constexpr (is_complex_v<T>)
      return T(-0.0, -0.0);
    else
      return T(0);
  }
  template <class T>
  static T empty() {
    return T(0);
  }
  template <class T>
  static T combine(T acc, T v) {
    if constexpr (std::is_same_v<T, bool>)
      return acc | v;
    else
      return static_cast<T>(acc + v);
  }
};

struct Prod {
  static constexpr bool pairwise = false;
  template <class T>
  static T identity() {
    return T(1);
  }
  template <class T>
  static T empty() {
    return T(1);
  }
  template <class T>
  static T combine(T acc, T v) {
    if constexpr (std::is_same_v<T, bool>)
      return acc & v;
    else
      return static_cast<T>(acc * v);
  }
};

/// Of two equal floats, the one max / min keeps: +0.0 over -0.0 for max, -0.0 for min (the
/// AND / OR of their bits; equal nonzero floats have equal bits). The order of the operands
/// does not matter, so lanes, threads and splits cannot change a result (scalar_math.h's
/// maximum / minimum follow the same rule).
template <bool IsMax, class T>
inline T tie(T a, T b) {
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  U x, y;
  std::memcpy(&x, &a, sizeof(T));
  std::memcpy(&y, &b, sizeof(T));
  const U r = IsMax ? (x & y) : (x | y);
  T out;
  std::memcpy(&out, &r, sizeof(T));
  return out;
}

/// The greater (max) or smaller of two floats, tie() when they are equal; `take_nan` also takes
/// v when it is NaN (min/max) or when acc is (fmin/fmax). Both candidates are computed and one
/// is selected, so that loops over it stay branch-free (vectorised).
template <bool IsMax, class T>
inline T extreme_of(T acc, T v, bool take_nan = false) {
  const T pick = ((IsMax ? v > acc : v < acc) || take_nan) ? v : acc;
  const T equal = tie<IsMax>(acc, v);
  return v == acc ? equal : pick;
}

/// minimum / maximum: NaN wins (once a lane holds NaN it keeps it).
template <bool IsMax>
struct Extreme {
  static constexpr bool pairwise = false;
  template <class T>
  static T identity() {
    return IsMax ? lowest<T>() : highest<T>();
  }
  template <class T>
  static T empty() {
    return identity<T>();
  }
  template <class T>
  static T combine(T acc, T v) {
    if constexpr (is_complex_v<T>) {
      if (is_nan(acc)) return acc;
      if (is_nan(v)) return v;
      return (IsMax ? less(acc, v) : less(v, acc)) ? v : acc;
    } else if constexpr (std::is_floating_point_v<T>) {
      return extreme_of<IsMax>(acc, v, v != v);  // (a NaN acc stays: every compare is false)
    } else {
      return (IsMax ? v > acc : v < acc) ? v : acc;
    }
  }
};
using Min = Extreme<false>;
using Max = Extreme<true>;

/// fmin / fmax: NaN loses (lanes start as NaN and take the first number they see).
template <bool IsMax>
struct FExtreme {
  static constexpr bool pairwise = false;
  template <class T>
  static T identity() {
    if constexpr (std::is_floating_point_v<T> || is_complex_v<T>)
      return quiet_nan<T>();
    else
      return Extreme<IsMax>::template identity<T>();
  }
  template <class T>
  static T empty() {
    return identity<T>();
  }
  template <class T>
  static T combine(T acc, T v) {
    if constexpr (is_complex_v<T>) {
      if (is_nan(v)) return acc;
      if (is_nan(acc)) return v;
      return (IsMax ? less(acc, v) : less(v, acc)) ? v : acc;
    } else if constexpr (std::is_floating_point_v<T>) {
      return extreme_of<IsMax>(acc, v, acc != acc);  // (a NaN v loses: every compare is false)
    } else {
      return Extreme<IsMax>::combine(acc, v);
    }
  }
};
using FMin = FExtreme<false>;
using FMax = FExtreme<true>;

struct Any {
  static constexpr bool pairwise = false;
  template <class T>
  static T identity() {
    return false;
  }
  template <class T>
  static T empty() {
    return false;
  }
  template <class T>
  static T combine(T acc, T v) {
    return acc | v;
  }
};

struct All {
  static constexpr bool pairwise = false;
  template <class T>
  static T identity() {
    return true;
  }
  template <class T>
  static T empty() {
    return true;
  }
  template <class T>
  static T combine(T acc, T v) {
    return acc & v;
  }
};

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
template <class R>
struct LaneType<Sum, std::complex<R>> {
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
template <>
struct Partial<Sum, float> {
  using type = double;
};
template <>
struct Partial<Sum, std::complex<float>> {
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

/// Which operators are min/max-like, and how they treat NaN.
template <class Op>
struct ExtremeKind {
  static constexpr bool is = false;
};
template <bool IsMax>
struct ExtremeKind<Extreme<IsMax>> {
  static constexpr bool is = true, is_max = IsMax, skips_nan = false;
};
template <bool IsMax>
struct ExtremeKind<FExtreme<IsMax>> {
  static constexpr bool is = true, is_max = IsMax, skips_nan = true;
};

/// min/max (or fmin/fmax) of n floats: plain compares in the lanes and NaN tracked apart, in
/// integer flags (cheaper than a NaN-aware select per element).
template <class Op, class E, int L>
inline E fold_extreme(const E* __restrict p, std::int64_t n) {
  using K = ExtremeKind<Op>;
  using Flag = std::conditional_t<sizeof(E) == 4, std::uint32_t, std::uint64_t>;
  alignas(64) E acc[L];
  alignas(64) Flag flag[L];  // min/max: saw a NaN; fmin/fmax: saw a number
  for (int j = 0; j < L; ++j) {
    acc[j] = K::is_max ? lowest<E>() : highest<E>();
    flag[j] = 0;
  }
  auto step = [&](int j, E v) {
    acc[j] = extreme_of<K::is_max>(acc[j], v);
    flag[j] |= K::skips_nan ? (v == v) : (v != v);
  };
  std::int64_t i = 0;
  for (; i + L <= n; i += L) {
    __builtin_prefetch(reinterpret_cast<const char*>(p + i) + kPrefetchBytes);
    for (int j = 0; j < L; ++j) step(j, p[i + j]);
  }
  for (int j = 0; i + j < n; ++j) step(j, p[i + j]);
  Flag any = 0;
  for (int j = 0; j < L; ++j) any |= flag[j];
  if (K::skips_nan ? !any : any) return quiet_nan<E>();
  E r = acc[0];
  for (int j = 1; j < L; ++j) r = extreme_of<K::is_max>(r, acc[j]);
  return r;
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
  if constexpr (ExtremeKind<Op>::is && std::is_floating_point_v<T>) {
    return fold_extreme<Op, T, L>(p, n);
  } else if constexpr (std::is_same_v<T, float> && std::is_same_v<partial_t<Op, T>, double>) {
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
    if constexpr (Op::pairwise && std::is_floating_point_v<E>)
      pairwise_lanes<Op, E, L>(p, n, lanes);
    else
      fold_lanes<Op, E, L>(p, n, lanes);
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
