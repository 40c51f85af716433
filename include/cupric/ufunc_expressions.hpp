// ufunc_expressions.hpp — one struct per row of ufunc_table.def whose apply(a, b, c) is the row's
// scalar expression, for host code that calls a ufunc's function at compile time (the CPU
// reductions combine partial results with their row's ufunc, reduction_table.def).
#pragma once

#include "cupric/scalar_math.h"

namespace cupric::ufunc_expr {

// clang-format off
#define CUPRIC_UFUNC(NAME, NIN, TYPES, OUT, FLAGS, EXPR, DOC)                                        \
  struct NAME {                                                                                 \
    template <class A, class B, class C>                                                        \
    static auto apply([[maybe_unused]] A a, [[maybe_unused]] B b, [[maybe_unused]] C c) {       \
      return EXPR;                                                                              \
    }                                                                                           \
  };
#include "cupric/ufunc_table.def"
#undef CUPRIC_UFUNC
// clang-format on

}  // namespace cupric::ufunc_expr
