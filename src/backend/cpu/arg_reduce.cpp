// arg_reduce.cpp — CpuBackend::arg_reduce (argmin / argmax along one axis). Along a contiguous
// axis each block is searched in two passes: a vectorised min/max (NaN-propagating), then the
// first position holding it when it beats the best so far. Along an outer axis a tile of
// (best, index) pairs is updated row by row with branch-free selects.
#include <algorithm>
#include <vector>

#include "cpu_backend.hpp"
#include "cupric/errors.hpp"
#include "cupric/thread_pool.hpp"
#include "kept_tiles.hpp"
#include "reduce_layout.hpp"
#include "reduce_ops.hpp"

namespace cupric::cpu {

namespace {
using namespace reduce_ops;

constexpr std::int64_t kBuffer = 2048;  ///< elements converted / searched at a time
constexpr std::int64_t kTile = 1024;    ///< kept elements per outer-axis task
constexpr std::int64_t kShortRun = 64;  ///< runs searched by a plain loop

template <bool IsMax, class T>
inline bool better(T v, T best) {
  if constexpr (is_complex_v<T>) {
    if (is_nan(best)) return false;
    if (is_nan(v)) return true;
    return IsMax ? less(best, v) : less(v, best);
  } else if constexpr (std::is_floating_point_v<T>) {
    return (IsMax ? v > best : v < best) || (v != v && best == best);
  } else {
    return IsMax ? v > best : v < best;
  }
}

template <bool IsMax, class T>
class ArgEngine {
 public:
  static constexpr std::int64_t tsz = sizeof(T);

  ArgEngine(const ReduceLayout& layout, DType in_dtype)
      : L_(layout), load_(cast_kernel(in_dtype, dtype_of<T>())), in_is_t_(in_dtype == dtype_of<T>()) {}

  void run() const {
    if (L_.single_axis_is_inner()) inner();
    else outer();
  }

 private:
  /// First index of the extreme of n elements at p (byte stride s).
  std::int64_t arg_run(const char* p, std::int64_t n, std::int64_t s, T* buf) const {
    if (in_is_t_ && n < kShortRun) {  // short: one scalar pass, no conversion
      T best = *reinterpret_cast<const T*>(p);
      std::int64_t best_index = 0;
      for (std::int64_t j = 1; j < n; ++j) {
        const T v = *reinterpret_cast<const T*>(p + j * s);
        if (better<IsMax>(v, best)) best = v, best_index = j;
      }
      return best_index;
    }
    T best{};
    std::int64_t best_index = 0;
    for (std::int64_t off = 0; off < n; off += kBuffer) {
      const std::int64_t m = std::min(kBuffer, n - off);
      const T* q = reinterpret_cast<const T*>(p + off * s);
      if (!(in_is_t_ && s == tsz)) {
        load_(p + off * s, s, reinterpret_cast<char*>(buf), tsz, m);
        q = buf;
      }
      if (off == 0) best = q[0];
      if constexpr (is_complex_v<T>) {
        for (std::int64_t j = 0; j < m; ++j)
          if (better<IsMax>(q[j], best)) best = q[j], best_index = off + j;
      } else {
        using Op = Reduction<IsMax ? ReduceOp::max : ReduceOp::min>;
        const T extreme = reduce_contiguous<Op>(q, m);
        if (better<IsMax>(extreme, best)) {  // equal values keep the earlier index
          std::int64_t j = 0;
          if (is_nan(extreme)) {
            while (!is_nan(q[j])) ++j;
          } else {
            while (q[j] != extreme) ++j;
          }
          best = extreme;
          best_index = off + j;
        }
      }
      if (is_nan(best)) break;  // nothing beats the first NaN
    }
    return best_index;
  }

  void inner() const {
    const LoopDim& axis = L_.reduced[0];
    const std::int64_t n_out = L_.kept_count();
    parallel_for(n_out, std::max<std::int64_t>(1, kGrain / axis.size), [&](std::int64_t b, std::int64_t e) {
      const auto buf = make_scratch<T>(kBuffer);
      Odometer o(L_.kept, b);
      for (std::int64_t i = b; i < e; ++i, o.next())
        *reinterpret_cast<std::int64_t*>(L_.out + o.out()) = arg_run(L_.in + o.in(), axis.size, axis.in, buf.get());
    });
  }

  void outer() const {
    const LoopDim& axis = L_.reduced[0];
    const LoopDim& v = L_.kept.back();
    const bool direct = in_is_t_ && v.in == tsz;
    struct Scratch {
      std::unique_ptr<T[]> best, row;
      std::unique_ptr<std::int64_t[]> index;
    };
    for_each_kept_tile(
        L_, kTile,
        [] { return Scratch{make_scratch<T>(kTile), make_scratch<T>(kTile), make_scratch<std::int64_t>(kTile)}; },
        [&](Scratch& s, const char* base, char* dst, std::int64_t tw) {
          load_(base, v.in, reinterpret_cast<char*>(s.best.get()), tsz, tw);
          std::fill(s.index.get(), s.index.get() + tw, 0);
          for (std::int64_t k = 1; k < axis.size; ++k) {
            const T* r = reinterpret_cast<const T*>(base + k * axis.in);
            if (!direct) {
              load_(base + k * axis.in, v.in, reinterpret_cast<char*>(s.row.get()), tsz, tw);
              r = s.row.get();
            }
            update(s.best.get(), s.index.get(), r, tw, k);
          }
          for (std::int64_t j = 0; j < tw; ++j) *reinterpret_cast<std::int64_t*>(dst + j * v.out) = s.index[j];
        });
  }

  static void update(T* __restrict best, std::int64_t* __restrict index, const T* __restrict row, std::int64_t n,
                     std::int64_t k) {
    for (std::int64_t j = 0; j < n; ++j) {
      const bool b = better<IsMax>(row[j], best[j]);
      best[j] = b ? row[j] : best[j];
      index[j] = b ? k : index[j];
    }
  }

  const ReduceLayout& L_;
  CastFn load_;
  bool in_is_t_;
};
}  // namespace

void CpuBackend::arg_reduce(ArgReduceOp op, const Array& in, const Array& out, int axis) {
  if (out.dtype() != DType::int64) throw NotImplementedError(cat("arg_reduce writes int64, got ", name(out.dtype())));
  if (out.size() == 0) return;
  if (in.shape()[axis] == 0) throw ValueError("attempt to get argmin/argmax of an empty sequence");
  const ReduceLayout layout = reduce_layout(in, out, {axis}, false);
  if (layout.reduced.empty()) {  // axis of length 1
    const std::int64_t zero = 0;
    fill(out, &zero);
    return;
  }
  DType compute = in.dtype();
  if (is_narrow_float(compute)) compute = DType::float32;
  visit_dtype(compute, [&]<class T>() {
    if constexpr (is_narrow_float_v<T>) {
      throw NotImplementedError("arg_reduce: half types are searched as float32");
    } else if (op == ArgReduceOp::argmax) {
      ArgEngine<true, T>(layout, in.dtype()).run();
    } else {
      ArgEngine<false, T>(layout, in.dtype()).run();
    }
  });
}

}  // namespace cupric::cpu
