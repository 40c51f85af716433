// blas.hpp — OpenBLAS (the scipy-openblas64 wheel: ILP64, symbols prefixed scipy_ and suffixed
// 64_) loaded with dlopen at first use; our own declarations of the few entry points cupric calls.
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

#include "cupric/scalar_math.h"

namespace cupric::cpu::blas {

using Int = std::int64_t;  // ILP64: every BLAS/LAPACK integer is 64 bits
template <class T>
using RealOf = cu::real_of_t<T>;
using cu::is_complex_v;

// CBLAS's enums, as the ABI passes them (C enums are ints)
inline constexpr int kRowMajor = 101;
inline constexpr int kNoTrans = 111;
inline constexpr int kTrans = 112;
inline constexpr int kConjTrans = 113;
inline constexpr int kLapackRowMajor = 101;

/// The LAPACKE functions of one scalar type T (real R): the name's type letter is filled in at load.
/// Complex-only or real-only entries are null for the other kind.
#define CUPRIC_LAPACKE_FUNCTIONS(X)                                                     \
  X(potrf, "potrf", "potrf", Int, (int, char, Int, T*, Int))                            \
  X(getrf, "getrf", "getrf", Int, (int, Int, Int, T*, Int, Int*))                       \
  X(gesv, "gesv", "gesv", Int, (int, Int, Int, T*, Int, Int*, T*, Int))                 \
  X(heevd, "syevd", "heevd", Int, (int, char, char, Int, T*, Int, R*))                  \
  X(gesdd, "gesdd", "gesdd", Int, (int, char, Int, Int, T*, Int, R*, T*, Int, T*, Int)) \
  X(geqrf, "geqrf", "geqrf", Int, (int, Int, Int, T*, Int, T*))                         \
  X(ungqr, "orgqr", "ungqr", Int, (int, Int, Int, Int, T*, Int, const T*))              \
  X(gelsd, "gelsd", "gelsd", Int, (int, Int, Int, Int, T*, Int, T*, Int, R*, R, Int*))

template <class T>
struct Lapack {
  using R = RealOf<T>;
#define CUPRIC_LAPACKE_MEMBER(member, real_name, complex_name, ret, params) ret(*member) params = nullptr;
  CUPRIC_LAPACKE_FUNCTIONS(CUPRIC_LAPACKE_MEMBER)
#undef CUPRIC_LAPACKE_MEMBER
  /// real: (layout, jobvl, jobvr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr)
  Int (*geev_real)(int, char, char, Int, T*, Int, T*, T*, T*, Int, T*, Int) = nullptr;
  /// complex: (layout, jobvl, jobvr, n, a, lda, w, vl, ldvl, vr, ldvr)
  Int (*geev_complex)(int, char, char, Int, T*, Int, T*, T*, Int, T*, Int) = nullptr;
  /// C = alpha op(A) op(B) + beta C (cblas_?gemm); alpha/beta point at one T
  void (*gemm)(int, int, int, Int, Int, Int, const T*, const T*, Int, const T*, Int, const T*, T*, Int) = nullptr;
};

/// The loaded library. Throws ImportError-like RuntimeError ("... pip install scipy-openblas64")
/// when it cannot be found; the first call decides, later calls return the same table.
struct Api {
  Lapack<float> s;
  Lapack<double> d;
  Lapack<std::complex<float>> c;
  Lapack<std::complex<double>> z;
  void (*set_num_threads)(int) = nullptr;
  int (*get_num_threads)() = nullptr;
  char* (*get_config)() = nullptr;
  std::string path;

  template <class T>
  const Lapack<T>& of() const {
    if constexpr (std::is_same_v<T, float>) return s;
    else if constexpr (std::is_same_v<T, double>) return d;
    else if constexpr (std::is_same_v<T, std::complex<float>>) return c;
    else return z;
  }
};

/// The library, loaded at first use, with OpenBLAS's thread count matched to cupric's pool
/// (checked on every call: cu.set_num_threads takes effect at the next BLAS call).
const Api& api();

/// Where it was found and its build string, or why it was not (never throws): show_config.
std::string describe();

}  // namespace cupric::cpu::blas
