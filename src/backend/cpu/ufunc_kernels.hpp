// ufunc_kernels.hpp — instantiates the CPU loops of the ufunc table. Each row of
// ufunc_table.def becomes a struct whose apply() is the row's expression; loop templates
// below turn it into contiguous (vectorisable), scalar-broadcast and strided loops.
// The rows are spread over several translation units (ufunc_kernels_part*.cpp) to keep
// builds parallel and incremental; each is compiled once per instruction-set variant
// (cpu_variant.hpp), so everything here lives in namespace cupric::cpu::<variant>.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <type_traits>

#include "cpu_dispatch.hpp"
#include "cpu_variant.hpp"
#include "cupric/scalar_math.h"
#include "vector_math.hpp"

CUPRIC_CPU_VARIANT_BEGIN
namespace kernels {

#define CUPRIC_UFUNC(NAME, NIN, TYPES, OUT, FLAGS, EXPR, DOC)                             \
  struct op_##NAME {                                                                      \
    static constexpr int nin = NIN;                                                       \
    static constexpr const char* types = TYPES;                                           \
    static constexpr OutRule out = OutRule::OUT;                                          \
    static constexpr UfuncFlags flags = UfuncFlags::FLAGS;                                \
    template <class A, class B, class C>                                                  \
    static auto apply([[maybe_unused]] A a, [[maybe_unused]] B b, [[maybe_unused]] C c) { \
      return EXPR;                                                                        \
    }                                                                                     \
  };
#include "cupric/ufunc_table.def"
#undef CUPRIC_UFUNC

template <class... Ts>
struct TypeList {};
struct EndOfList {};
#define CUPRIC_UFUNC(NAME, NIN, TYPES, OUT, FLAGS, EXPR, DOC) op_##NAME,
using AllOps = TypeList<
#include "cupric/ufunc_table.def"
    EndOfList>;
#undef CUPRIC_UFUNC

template <class Op, class T>
using out_t = std::conditional_t<Op::out == OutRule::boolean, bool,
                                 std::conditional_t<Op::out == OutRule::real, cu::real_of_t<T>, T>>;

/// Unary ops with a vectorisable implementation for float/double (vector_math.hpp): fast()
/// on its range, exact() (libm) elsewhere. Others have none.
template <class Op>
struct Vectorised {
  static constexpr bool enabled = false;
};
#define CUPRIC_VECTORISED(OP, FAST, RANGE, EXACT)              \
  template <>                                                  \
  struct Vectorised<op_##OP> {                                 \
    static constexpr bool enabled = true;                      \
    template <class T>                                         \
    static T fast(T x) {                                       \
      return vm::FAST(x);                                      \
    }                                                          \
    template <class T>                                         \
    static void fast_block(const T* x, T* y, std::int64_t n) { \
      vm::FAST##_block(x, y, n);                               \
    }                                                          \
    template <class T>                                         \
    static bool in_range(T x) {                                \
      return vm::RANGE(x);                                     \
    }                                                          \
    template <class T>                                         \
    static T exact(T x) {                                      \
      return std::EXACT(x);                                    \
    }                                                          \
  };
CUPRIC_VECTORISED(exp, exp, exp_fast_range, exp)
CUPRIC_VECTORISED(log, log, log_fast_range, log)
CUPRIC_VECTORISED(sin, sin, trig_fast_range, sin)
CUPRIC_VECTORISED(cos, cos, trig_fast_range, cos)
#undef CUPRIC_VECTORISED

/// Contiguous unary loop of a vectorised op, in blocks: a block whose inputs are all in the
/// fast range runs the vector code; any other block is done element by element.
template <class V, class T>
void vectorised_loop(const T* a, T* out, std::int64_t n) {
  constexpr std::int64_t kBlock = 256;
  for (std::int64_t b = 0; b < n; b += kBlock) {
    const std::int64_t m = std::min(kBlock, n - b);
    const T* x = a + b;
    T* y = out + b;
    int slow = 0;  // an int count (not a bool) so that the check vectorises
    for (std::int64_t i = 0; i < m; ++i) slow += V::in_range(x[i]) ? 0 : 1;
    if (slow == 0) {
      V::fast_block(x, y, m);
    } else {
      for (std::int64_t i = 0; i < m; ++i) y[i] = V::in_range(x[i]) ? V::fast(x[i]) : V::exact(x[i]);
    }
  }
}

template <class Op, class T>
void loop(char** args, const std::int64_t* s, std::int64_t n) {
  using O = out_t<Op, T>;
  constexpr int nin = Op::nin;
  O* out = reinterpret_cast<O*>(args[nin]);
  const T* a = reinterpret_cast<const T*>(args[0]);
  const std::int64_t so = s[nin];
  if constexpr (nin == 1) {
    if constexpr (Vectorised<Op>::enabled && std::is_floating_point_v<T>) {
      if (s[0] == sizeof(T) && so == sizeof(O)) return vectorised_loop<Vectorised<Op>>(a, out, n);
    }
    if (s[0] == sizeof(T) && so == sizeof(O)) {
      for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<O>(Op::apply(a[i], a[i], a[i]));
    } else {
      const char* pa = args[0];
      char* po = args[1];
      for (std::int64_t i = 0; i < n; ++i, pa += s[0], po += so) {
        T va;
        std::memcpy(&va, pa, sizeof(T));
        *reinterpret_cast<O*>(po) = static_cast<O>(Op::apply(va, va, va));
      }
    }
  } else if constexpr (nin == 2) {
    const T* b = reinterpret_cast<const T*>(args[1]);
    if (so == sizeof(O) && s[0] == sizeof(T) && s[1] == sizeof(T)) {
      for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<O>(Op::apply(a[i], b[i], b[i]));
    } else if (so == sizeof(O) && s[0] == sizeof(T) && s[1] == 0) {
      const T vb = *b;
      for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<O>(Op::apply(a[i], vb, vb));
    } else if (so == sizeof(O) && s[0] == 0 && s[1] == sizeof(T)) {
      const T va = *a;
      for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<O>(Op::apply(va, b[i], b[i]));
    } else {
      const char* pa = args[0];
      const char* pb = args[1];
      char* po = args[2];
      for (std::int64_t i = 0; i < n; ++i, pa += s[0], pb += s[1], po += so)
        *reinterpret_cast<O*>(po) = static_cast<O>(Op::apply(
            *reinterpret_cast<const T*>(pa), *reinterpret_cast<const T*>(pb), *reinterpret_cast<const T*>(pb)));
    }
  } else {
    const char* pa = args[0];
    const char* pb = args[1];
    const char* pc = args[2];
    char* po = args[3];
    for (std::int64_t i = 0; i < n; ++i, pa += s[0], pb += s[1], pc += s[2], po += so)
      *reinterpret_cast<O*>(po) = static_cast<O>(
          Op::apply(*reinterpret_cast<const T*>(pa), *reinterpret_cast<const T*>(pb), *reinterpret_cast<const T*>(pc)));
  }
}

constexpr bool has_code(const char* types, char c) {
  for (; *types; ++types)
    if (*types == c) return true;
  return false;
}

/// Fills table[id][dtype] for the ops with ids in [Begin, End) of the list.
template <int Begin, int End, int I = 0, class Op, class... Rest>
CUPRIC_CPU_TABLE_FILL void fill_kernels(LoopFn (*table)[kNumDTypes], TypeList<Op, Rest...>) {
  if constexpr (!std::is_same_v<Op, EndOfList>) {
    if constexpr (I >= Begin && I < End) {
      constexpr const char* codes = "?bBhHiIlLeEfdFD45";
      [&]<std::size_t... D>(std::index_sequence<D...>) {
        (([&] {
           constexpr DType dt = static_cast<DType>(D);
           constexpr bool half = is_narrow_float(dt);
           if constexpr (has_code(Op::types, codes[D]) &&
                         (!half || (static_cast<int>(Op::flags) & static_cast<int>(UfuncFlags::half_native))))
             table[I][D] = &loop<Op, ctype<dt>>;
         }()),
         ...);
      }(std::make_index_sequence<kNumDTypes>{});
    }
    if constexpr (I + 1 < End) fill_kernels<Begin, End, I + 1>(table, TypeList<Rest...>{});
  }
}

template <class L>
struct list_size;
template <class... Ts>
struct list_size<TypeList<Ts...>> {
  static constexpr int value = sizeof...(Ts) - 1;  // without EndOfList
};

inline constexpr int kParts = 4;
template <int Part>
CUPRIC_CPU_TABLE_FILL void fill_part(LoopFn (*table)[kNumDTypes]) {
  constexpr int per = (list_size<AllOps>::value + kParts - 1) / kParts;
  fill_kernels<Part * per, (Part + 1) * per>(table, AllOps{});
}

}  // namespace kernels
CUPRIC_CPU_VARIANT_ENTRY_POINTS
CUPRIC_CPU_VARIANT_END
