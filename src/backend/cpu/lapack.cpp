// lapack.cpp — the CPU backend's factorisations and solvers: LAPACKE (row-major) from OpenBLAS,
// one call per matrix of the batch, LAPACK's info stored per matrix for the ops layer to judge.
#include <algorithm>
#include <complex>
#include <vector>

#include "blas.hpp"
#include "cpu_backend.hpp"
#include "cupric/errors.hpp"

namespace cupric::cpu {
namespace {

using blas::Int;
using blas::kLapackRowMajor;

std::int64_t inner(const Array& a, int dims) {
  std::int64_t n = 1;
  for (int d = std::max(0, a.ndim() - dims); d < a.ndim(); ++d) n *= a.shape()[d];
  return n;
}

std::int64_t dim(const Array& a, int from_end) { return a.shape()[a.ndim() - from_end]; }

/// geev of one matrix into complex w (and v when given). A real matrix's complex pairs come
/// back from LAPACK as (re, im) columns j, j+1: they are assembled here.
template <class T, class R = blas::RealOf<T>>
Int eig_one(const blas::Lapack<T>& f, Int n, T* a, std::complex<R>* w, std::complex<R>* v) {
  const char jobv = v ? 'V' : 'N';
  const Int ld = std::max<Int>(n, 1);
  if constexpr (blas::is_complex_v<T>) {
    T dummy{};
    return f.geev_complex(kLapackRowMajor, 'N', jobv, n, a, ld, w, &dummy, 1, v ? v : &dummy, ld);
  } else {
    std::vector<T> wr(static_cast<std::size_t>(n)), wi(static_cast<std::size_t>(n));
    std::vector<T> vr(v ? static_cast<std::size_t>(n * n) : 1);
    T dummy{};
    const Int info = f.geev_real(kLapackRowMajor, 'N', jobv, n, a, ld, wr.data(), wi.data(), &dummy, 1, vr.data(), ld);
    for (Int j = 0; j < n; ++j) w[j] = {wr[static_cast<std::size_t>(j)], wi[static_cast<std::size_t>(j)]};
    if (!v || info != 0) return info;
    for (Int j = 0; j < n; ++j) {
      const bool pair = wi[static_cast<std::size_t>(j)] != 0 && j + 1 < n;
      for (Int r = 0; r < n; ++r) {
        const T re = vr[static_cast<std::size_t>(r * n + j)];
        const T im = pair ? vr[static_cast<std::size_t>(r * n + j + 1)] : T(0);
        v[r * n + j] = {re, im};
        if (pair) v[r * n + j + 1] = {re, -im};
      }
      if (pair) ++j;
    }
    return info;
  }
}

template <class T>
Int run_one(const LapackCall& c, const blas::Lapack<T>& f, std::int64_t i) {
  using R = blas::RealOf<T>;
  const auto& ops = c.operands;
  const auto at = [&](std::size_t k, int dims) -> void* {
    const Array& x = ops[k];
    if (!x.defined()) return nullptr;
    return static_cast<char*>(x.data()) + i * inner(x, dims) * x.itemsize();
  };
  T* a = static_cast<T*>(at(0, 2));
  const Int m = dim(ops[0], 2), n = dim(ops[0], 1);
  const Int lda = std::max<Int>(n, 1);
  switch (c.op) {
    case LapackOp::cholesky: return f.potrf(kLapackRowMajor, 'L', n, a, lda);
    case LapackOp::lu: return f.getrf(kLapackRowMajor, m, n, a, lda, static_cast<Int*>(at(1, 1)));
    case LapackOp::solve: {
      std::vector<Int> piv(static_cast<std::size_t>(std::max<Int>(n, 1)));
      const Int k = dim(ops[1], 1);
      return f.gesv(kLapackRowMajor, n, k, a, lda, piv.data(), static_cast<T*>(at(1, 2)), std::max<Int>(k, 1));
    }
    case LapackOp::eigh: return f.heevd(kLapackRowMajor, c.mode, 'L', n, a, lda, static_cast<R*>(at(1, 1)));
    case LapackOp::svd: {
      const Int ucols = ops[2].defined() ? dim(ops[2], 1) : 1, vcols = ops[3].defined() ? dim(ops[3], 1) : 1;
      return f.gesdd(kLapackRowMajor, c.mode, m, n, a, lda, static_cast<R*>(at(1, 1)), static_cast<T*>(at(2, 2)),
                     std::max<Int>(ucols, 1), static_cast<T*>(at(3, 2)), std::max<Int>(vcols, 1));
    }
    case LapackOp::qr: return f.geqrf(kLapackRowMajor, m, n, a, lda, static_cast<T*>(at(1, 1)));
    case LapackOp::qr_q: return f.ungqr(kLapackRowMajor, m, n, dim(ops[1], 1), a, lda, static_cast<const T*>(at(1, 1)));
    case LapackOp::eig:
      return eig_one<T>(f, n, a, static_cast<std::complex<R>*>(at(1, 1)), static_cast<std::complex<R>*>(at(2, 2)));
    case LapackOp::lstsq: {
      const Int k = dim(ops[1], 1);
      return f.gelsd(kLapackRowMajor, m, n, k, a, lda, static_cast<T*>(at(1, 2)), std::max<Int>(k, 1),
                     static_cast<R*>(at(2, 1)), static_cast<R>(c.rcond), static_cast<Int*>(at(3, 0)));
    }
  }
  return 0;
}

}  // namespace

void CpuBackend::lapack(const LapackCall& call) {
  const Array& a = call.operands.at(0);
  std::int64_t batch = 1;
  for (int d = 0; d + 2 < a.ndim(); ++d) batch *= a.shape()[d];
  std::int64_t* info = static_cast<std::int64_t*>(call.info.data());
  if (inner(a, 2) == 0) {  // the ops layer answers empty matrices itself
    std::fill(info, info + batch, 0);
    return;
  }
  visit_dtype(a.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::complex<float>> ||
                  std::is_same_v<T, std::complex<double>>) {
      const auto& f = blas::api().of<T>();
      for (std::int64_t i = 0; i < batch; ++i) info[i] = run_one<T>(call, f, i);
    } else {
      throw TypeError(cat("linalg: no LAPACK routine for ", name(a.dtype())));
    }
  });
}

}  // namespace cupric::cpu
