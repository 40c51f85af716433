// scan.cpp — CpuBackend::scan: the scans of reduction_table.def (cumsum, cumprod) along one axis.
// Along a contiguous axis each line is scanned in converted blocks with a running carry; along
// an outer axis a tile of running values is updated row by row (vectorised over the kept dimension). Running values
// are kept in the output's dtype, as NumPy's accumulate does (float16/bfloat16: float32 math
// rounded after every step), so results match NumPy's sequential order exactly.
#include <algorithm>
#include <iterator>
#include <utility>
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

constexpr std::int64_t kBuffer = 1024;
constexpr std::int64_t kTile = 1024;

/// Op with T accumulators whose values are rounded to storage type S after each step.
template <class Op, class T, class S>
struct Step {
  static T apply(T acc, T v) {
    if constexpr (std::is_same_v<S, T>) return Op::combine(acc, v);
    else return static_cast<T>(S(Op::combine(acc, v)));
  }
};

template <class Op, class T, class S>
class ScanEngine {
 public:
  static constexpr std::int64_t tsz = sizeof(T);

  ScanEngine(const ReduceLayout& layout, DType in_dtype, DType out_dtype)
      : L_(layout),
        load_(cast_kernel(in_dtype, dtype_of<T>())),
        store_(cast_kernel(dtype_of<T>(), out_dtype)),
        in_is_t_(in_dtype == dtype_of<T>()),
        out_is_t_(out_dtype == dtype_of<T>()) {}

  void run() const {
    if (L_.single_axis_is_inner()) inner();
    else outer();
  }

 private:
  void scan_line(const char* src, char* dst, const LoopDim& axis, T* in_buf, T* out_buf) const {
    T carry = Op::template identity<T>();
    for (std::int64_t off = 0; off < axis.size; off += kBuffer) {
      const std::int64_t m = std::min(kBuffer, axis.size - off);
      const T* q = reinterpret_cast<const T*>(src + off * axis.in);
      if (!(in_is_t_ && axis.in == tsz)) {
        load_(src + off * axis.in, axis.in, reinterpret_cast<char*>(in_buf), tsz, m);
        q = in_buf;
      }
      const bool direct_out = out_is_t_ && axis.out == tsz;
      T* r = direct_out ? reinterpret_cast<T*>(dst + off * axis.out) : out_buf;
      for (std::int64_t j = 0; j < m; ++j) {
        carry = Step<Op, T, S>::apply(carry, q[j]);
        r[j] = carry;
      }
      if (!direct_out) store_(reinterpret_cast<const char*>(out_buf), tsz, dst + off * axis.out, axis.out, m);
    }
  }

  void inner() const {
    const LoopDim& axis = L_.reduced[0];
    parallel_for(L_.kept_count(), std::max<std::int64_t>(1, kGrain / axis.size), [&](std::int64_t b, std::int64_t e) {
      const auto buf = make_scratch<T>(2 * kBuffer);
      Odometer o(L_.kept, b);
      for (std::int64_t i = b; i < e; ++i, o.next())
        scan_line(L_.in + o.in(), L_.out + o.out(), axis, buf.get(), buf.get() + kBuffer);
    });
  }

  void outer() const {
    const LoopDim& axis = L_.reduced[0];
    const LoopDim& v = L_.kept.back();
    const bool direct = in_is_t_ && v.in == tsz;
    struct Scratch {
      std::unique_ptr<T[]> acc, row;
    };
    for_each_kept_tile(
        L_, kTile, [] { return Scratch{make_scratch<T>(kTile), make_scratch<T>(kTile)}; },
        [&](Scratch& s, const char* src, char* dst, std::int64_t tw) {
          std::fill(s.acc.get(), s.acc.get() + tw, Op::template identity<T>());
          for (std::int64_t k = 0; k < axis.size; ++k) {
            const T* q = reinterpret_cast<const T*>(src + k * axis.in);
            if (!direct) {
              load_(src + k * axis.in, v.in, reinterpret_cast<char*>(s.row.get()), tsz, tw);
              q = s.row.get();
            }
            step_row(s.acc.get(), q, tw);
            store_(reinterpret_cast<const char*>(s.acc.get()), tsz, dst + k * axis.out, v.out, tw);
          }
        });
  }

  static void step_row(T* __restrict acc, const T* __restrict row, std::int64_t n) {
    for (std::int64_t j = 0; j < n; ++j) acc[j] = Step<Op, T, S>::apply(acc[j], row[j]);
  }

  const ReduceLayout& L_;
  CastFn load_, store_;
  bool in_is_t_, out_is_t_;
};

template <class Op>
void scan_with(const ReduceLayout& layout, const Array& in, const Array& out) {
  visit_dtype(out.dtype(), [&]<class S>() {
    if constexpr (is_narrow_float_v<S>) {
      ScanEngine<Op, float, S>(layout, in.dtype(), out.dtype()).run();
    } else {
      ScanEngine<Op, S, S>(layout, in.dtype(), out.dtype()).run();
    }
  });
}
}  // namespace

void CpuBackend::scan(ScanOp op, const Array& in, const Array& out, int axis) {
  if (in.size() == 0) return;
  const ReduceLayout layout = reduce_layout(in, out, {axis}, false);
  if (layout.reduced.empty()) {  // axis of length 1: the scan is a converting copy
    cast(elementwise_plan({&in, &out}, in.shape()));
    return;
  }
  // the running combination of the scan's reduction row (reduction_table.def)
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (void)((op == static_cast<ScanOp>(I) ? (scan_with<Reduction<kScanRows[I].reduction>>(layout, in, out), true)
                                         : false) ||
           ...);
  }(std::make_index_sequence<std::size(kScanRows)>());
}

}  // namespace cupric::cpu
