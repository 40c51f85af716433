// cast_loops.cpp — the conversion loop of every pair of dtypes, compiled once per
// instruction-set variant (cpu_variant.hpp); cast.cpp's cast_kernel() hands them out.
#include <complex>
#include <cstring>
#include <utility>

#include "cpu_dispatch.hpp"
#include "cpu_variant.hpp"
#include "cupric/convert.h"

CUPRIC_CPU_VARIANT_BEGIN
namespace {

template <class From, class To>
void cast_loop(const char* src, std::int64_t ss, char* dst, std::int64_t ds, std::int64_t n) {
  if (ss == sizeof(From) && ds == sizeof(To)) {
    const From* s = reinterpret_cast<const From*>(src);
    To* d = reinterpret_cast<To*>(dst);
    for (std::int64_t i = 0; i < n; ++i) d[i] = cu::convert<To>(s[i]);
  } else {
    for (std::int64_t i = 0; i < n; ++i, src += ss, dst += ds) {
      From v;
      std::memcpy(&v, src, sizeof(From));
      To r = cu::convert<To>(v);
      std::memcpy(dst, &r, sizeof(To));
    }
  }
}

template <std::size_t F, std::size_t... T>
CUPRIC_CPU_TABLE_FILL void fill_row(CastFn* row, std::index_sequence<T...>) {
  ((row[T] = &cast_loop<ctype<static_cast<DType>(F)>, ctype<static_cast<DType>(T)>>), ...);
}

template <std::size_t... F>
CUPRIC_CPU_TABLE_FILL void fill_rows(CastLoopRow* table, std::index_sequence<F...>) {
  (fill_row<F>(table[F], std::make_index_sequence<kNumDTypes>{}), ...);
}

}  // namespace

CUPRIC_CPU_VARIANT_ENTRY_POINTS

CUPRIC_CPU_TABLE_FILL void fill_cast_loops(CastLoopRow* table) {
  fill_rows(table, std::make_index_sequence<kNumDTypes>{});
}
CUPRIC_CPU_VARIANT_END
