// reduce_layout.hpp — the loop nest of a reduction or scan on the host: kept and reduced
// dimensions separated, size-1 dimensions dropped, ordered by memory and merged where
// contiguous; plus small index walkers over such nests. Shared by reduce, arg_reduce and scan.
#pragma once

#include <cstdint>
#include <vector>

#include "cupric/array.hpp"

namespace cupric::cpu {

/// One loop of the nest; strides are in bytes.
struct LoopDim {
  std::int64_t size;
  std::int64_t in;   ///< stride through the input
  std::int64_t out;  ///< stride through the output (0 along reduced dimensions of a reduction)
};

/// The loop nest of `in` -> `out`. Kept dims walk both, reduced dims walk the input only (for a
/// scan the one "reduced" dim is the scan axis and walks the output too).
struct ReduceLayout {
  char* in = nullptr;
  char* out = nullptr;
  std::vector<LoopDim> kept;     ///< outer -> inner (innermost has the smallest input stride)
  std::vector<LoopDim> reduced;  ///< outer -> inner
  bool empty = false;            ///< some dimension has length 0 (nothing to read)
  bool reduced_empty = false;    ///< some reduced dimension has length 0

  std::int64_t kept_count() const;
  std::int64_t reduced_count() const;
  /// For a single reduced axis (arg-reductions, scans): true when it is walked innermost (its
  /// input stride is the smallest), so each line is one strided run; false when the kept
  /// dimensions are denser and the line is better walked a row of lines at a time.
  bool single_axis_is_inner() const;
};

/// Builds the nest. `axes` are the reduced dimensions of `in`; `out` has in's ndim. With
/// `may_reorder_reduced` false (arg-reductions, scans) the reduced dims keep their direction
/// and are not merged, so that "first" and "running" keep their meaning.
ReduceLayout reduce_layout(const Array& in, const Array& out, const std::vector<int>& axes, bool may_reorder_reduced);

/// Walks flat indices of a nest (outer -> inner), keeping the byte offsets into in and out.
class Odometer {
 public:
  static constexpr int kMaxDims = 64;
  Odometer(const LoopDim* dims, int ndims, std::int64_t start);
  Odometer(const std::vector<LoopDim>& dims, std::int64_t start)
      : Odometer(dims.data(), static_cast<int>(dims.size()), start) {}
  std::int64_t in() const { return in_; }
  std::int64_t out() const { return out_; }
  void next();

 private:
  const LoopDim* dims_;
  int ndims_;
  std::int64_t index_[kMaxDims];
  std::int64_t in_ = 0, out_ = 0;
};

/// Calls fn(in_offset, n, in_stride) for each run along the innermost dim that covers the flat
/// indices [begin, end) of `dims` (an empty nest is one element at offset 0).
template <class F>
void for_each_reduced_run(const std::vector<LoopDim>& dims, std::int64_t begin, std::int64_t end, F&& fn) {
  if (dims.empty()) {
    if (begin < end) fn(std::int64_t{0}, std::int64_t{1}, std::int64_t{0});
    return;
  }
  const LoopDim& inner = dims.back();
  std::int64_t pos = begin;
  Odometer rows(dims.data(), static_cast<int>(dims.size()) - 1, begin / inner.size);
  std::int64_t col = begin % inner.size;
  while (pos < end) {
    const std::int64_t n = std::min(inner.size - col, end - pos);
    fn(rows.in() + col * inner.in, n, inner.in);
    pos += n;
    col = 0;
    rows.next();
  }
}

}  // namespace cupric::cpu
