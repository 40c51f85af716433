// cast.cpp — dtype conversion loops for every pair of dtypes (astype, copies, and the
// buffering that feeds ufunc loops inputs of another type).
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "cpu_backend.hpp"
#include "thread_pool.hpp"

namespace cupric::cpu {

namespace {
template <class T>
inline constexpr bool is_cplx = false;
template <class T>
inline constexpr bool is_cplx<std::complex<T>> = true;
template <class T>
inline constexpr bool is_half = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

/// Converts one value as NumPy's astype does (complex -> real drops the imaginary part;
/// NaN and out-of-range floats become the integer type's minimum, like x86 does for int64).
template <class To, class From>
inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_half<From>) {
    return convert<To>(static_cast<float>(v));
  } else if constexpr (is_cplx<From>) {
    if constexpr (std::is_same_v<To, bool>) return v.real() != 0 || v.imag() != 0;
    else if constexpr (is_cplx<To>) return To(static_cast<typename To::value_type>(v.real()), static_cast<typename To::value_type>(v.imag()));
    else return convert<To>(v.real());
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (is_cplx<To>) {
    return To(static_cast<typename To::value_type>(v), 0);
  } else if constexpr (is_half<To>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    // in range (and not NaN) -> truncate; otherwise the minimum, as the hardware does for 64 bits
    constexpr From lo = static_cast<From>(std::numeric_limits<To>::min());
    constexpr From hi = static_cast<From>(std::numeric_limits<To>::max());
    if (v >= lo && v < hi) return static_cast<To>(v);
    if constexpr (sizeof(To) < 4) {  // smaller types: through int64 as NumPy does, wrapping
      if (v >= From(-9.2e18) && v <= From(9.2e18)) return static_cast<To>(static_cast<std::int64_t>(v));
    }
    return std::numeric_limits<To>::min();
  } else {
    return static_cast<To>(v);
  }
}

template <class From, class To>
void cast_loop(const char* src, std::int64_t ss, char* dst, std::int64_t ds, std::int64_t n) {
  if (ss == sizeof(From) && ds == sizeof(To)) {
    const From* s = reinterpret_cast<const From*>(src);
    To* d = reinterpret_cast<To*>(dst);
    for (std::int64_t i = 0; i < n; ++i) d[i] = convert<To>(s[i]);
  } else {
    for (std::int64_t i = 0; i < n; ++i, src += ss, dst += ds) {
      From v;
      std::memcpy(&v, src, sizeof(From));
      To r = convert<To>(v);
      std::memcpy(dst, &r, sizeof(To));
    }
  }
}

struct CastTable {
  CastFn fn[kNumDTypes][kNumDTypes];
  CastTable() {
    fill(std::make_index_sequence<kNumDTypes>{});
  }
  template <std::size_t... F>
  void fill(std::index_sequence<F...>) {
    (fill_row<F>(std::make_index_sequence<kNumDTypes>{}), ...);
  }
  template <std::size_t F, std::size_t... T>
  void fill_row(std::index_sequence<T...>) {
    ((fn[F][T] = &cast_loop<ctype<static_cast<DType>(F)>, ctype<static_cast<DType>(T)>>), ...);
  }
};
}  // namespace

CastFn cast_kernel(DType from, DType to) {
  static const CastTable table;
  return table.fn[static_cast<int>(from)][static_cast<int>(to)];
}

void CpuBackend::cast(const ElementwisePlan& plan) {
  const int nd = plan.ndim();
  const std::int64_t s0 = plan.byte_strides[0][nd - 1], s1 = plan.byte_strides[1][nd - 1];
  const DType from = plan.dtypes[0], to = plan.dtypes[1];
  const std::int64_t isz = itemsize(from);
  const bool memcpy_ok = from == to && s0 == isz && s1 == isz;
  const CastFn fn = cast_kernel(from, to);
  parallel_for(plan.size(), kGrain * 4, [&](std::int64_t b, std::int64_t e) {
    for_each_run(plan, b, e, [&](char** p, std::int64_t n) {
      if (memcpy_ok) std::memmove(p[1], p[0], static_cast<std::size_t>(n * isz));
      else fn(p[0], s0, p[1], s1, n);
    });
  });
}

}  // namespace cupric::cpu
