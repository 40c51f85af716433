// sort.cpp — CpuBackend::sort and ::search_sorted: elements become the unsigned keys of
// cupric/sort_keys.h (NumPy's order as integers), rows are radix-sorted (radix_sort.hpp) spread
// over the thread pool, or one long row at a time split over it; complex rows sort three
// times (ComplexSortKey's keys, least significant first, carrying the permutation).
#include <algorithm>
#include <complex>
#include <cstring>
#include <utility>

#include "cpu_backend.hpp"
#include "cupric/errors.hpp"
#include "cupric/scalar_math.h"
#include "cupric/sort_keys.h"
#include "cupric/thread_pool.hpp"
#include "radix_sort.hpp"

namespace cupric::cpu {

namespace {

template <class T>
using KeyOf = typename cu::SortKey<T>::Key;

template <class T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

/// Rows of `in` along its last axis: row r starts at row(r), its elements `stride` bytes apart.
class Rows {
 public:
  explicit Rows(const Array& a)
      : base_(static_cast<const char*>(a.data())),
        isz_(a.itemsize()),
        n_(a.shape().back()),
        stride_(a.strides().back() * a.itemsize()),
        outer_(a.shape().begin(), a.shape().end() - 1),
        outer_strides_(a.strides().begin(), a.strides().end() - 1) {
    count_ = n_ ? a.size() / n_ : 0;
  }
  std::int64_t count() const { return count_; }
  std::int64_t length() const { return n_; }
  std::int64_t stride() const { return stride_; }
  const char* row(std::int64_t r) const {
    std::int64_t offset = 0;
    for (int d = static_cast<int>(outer_.size()) - 1; d >= 0; --d) {
      offset += (r % outer_[d]) * outer_strides_[d];
      r /= outer_[d];
    }
    return base_ + offset * isz_;
  }

 private:
  const char* base_;
  std::int64_t isz_, n_, stride_, count_ = 0;
  Shape outer_;
  Strides outer_strides_;
};

/// Uninitialised scratch of n elements of an unsigned type, from the backend's allocator (its
/// cache of large blocks spares the page faults of fresh memory).
template <class U>
struct Scratch {
  Array array;
  U* data = nullptr;
  explicit Scratch(std::int64_t n) {
    constexpr DType kind = sizeof(U) == 1   ? DType::uint8
                           : sizeof(U) == 2 ? DType::uint16
                           : sizeof(U) == 4 ? DType::uint32
                                            : DType::uint64;
    array = Array::empty({n}, kind, Device::cpu());
    data = static_cast<U*>(array.data());
  }
};

/// Runs fn(begin, end) over [0, n): split over the pool when `parallel`.
template <class F>
void over(std::int64_t n, bool parallel, F&& fn) {
  if (parallel) parallel_for(n, kGrain, fn);
  else fn(0, n);
}

/// Buffers for rows of up to n elements: two of keys, two of indices when indices are wanted.
template <class U, class I>
struct RowBuffers {
  Scratch<U> k0, k1;
  Scratch<I> i0, i1;
  RowBuffers(std::int64_t n, bool with_indices) : k0(n), k1(n), i0(with_indices ? n : 0), i1(with_indices ? n : 0) {}
  /// Radix-sorts k0/i0 (chunks > 1: split over the pool) and returns where the result lies.
  std::pair<U*, I*> sort(std::int64_t n, bool with_indices, int chunks) {
    I* a = with_indices ? i0.data : nullptr;
    I* b = with_indices ? i1.data : nullptr;
    const bool swapped = chunks > 1 ? radix::sort_row_parallel(k0.data, k1.data, a, b, n, chunks)
                                    : radix::sort_row(k0.data, k1.data, a, b, n);
    return swapped ? std::pair{k1.data, b} : std::pair{k0.data, a};
  }
};

/// Sorts one row of a real dtype: keys in, radix sort, values (and indices) out.
template <class T, class I>
void sort_real_row(const char* src, std::int64_t stride, std::int64_t n, bool desc, RowBuffers<KeyOf<T>, I>& buf,
                   T* values, std::int64_t* indices, int chunks) {
  const bool with_indices = indices != nullptr;
  over(n, chunks > 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t j = b; j < e; ++j) buf.k0.data[j] = cu::directed_key(load<T>(src + j * stride), desc);
    if (with_indices)
      for (std::int64_t j = b; j < e; ++j) buf.i0.data[j] = static_cast<I>(j);
  });
  auto [keys, idx] = buf.sort(n, with_indices, chunks);
  over(n, chunks > 1, [&, keys = keys, idx = idx](std::int64_t b, std::int64_t e) {
    if (values)
      for (std::int64_t j = b; j < e; ++j) values[j] = cu::directed_value<T>(keys[j], desc);
    if (with_indices)
      for (std::int64_t j = b; j < e; ++j) indices[j] = static_cast<std::int64_t>(idx[j]);
  });
}

/// Sorts one complex row: three stable passes over ComplexSortKey's keys, least significant
/// first, each carrying the permutation of the one before.
template <class C, class I>
void sort_complex_row(const char* src, std::int64_t stride, std::int64_t n, bool desc,
                      RowBuffers<KeyOf<typename C::value_type>, I>& buf, C* values, std::int64_t* indices, int chunks) {
  using R = typename C::value_type;
  using U = KeyOf<R>;
  const bool par = chunks > 1;
  auto keys_of = [&](std::int64_t from) {
    const C v = load<C>(src + from * stride);
    return cu::ComplexSortKey<R>::of(v.real(), v.imag());
  };
  auto directed = [desc](U k) { return desc ? U(~k) : k; };
  using Part = U (*)(const cu::ComplexSortKey<R>&);
  const Part parts[3] = {[](const cu::ComplexSortKey<R>& k) { return k.secondary; },
                         [](const cu::ComplexSortKey<R>& k) { return k.primary; },
                         [](const cu::ComplexSortKey<R>& k) { return k.cls; }};
  I* order = nullptr;
  for (int pass = 0; pass < 3; ++pass) {
    const Part part = parts[pass];
    over(n, par, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t j = b; j < e; ++j) {
        const std::int64_t from = pass == 0 ? j : static_cast<std::int64_t>(buf.i0.data[j]);
        buf.k0.data[j] = directed(part(keys_of(from)));
        if (pass == 0) buf.i0.data[j] = static_cast<I>(j);
      }
    });
    order = buf.sort(n, true, chunks).second;
    if (pass < 2 && order != buf.i0.data) std::copy(order, order + n, buf.i0.data);
  }
  over(n, par, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t j = b; j < e; ++j) {
      const auto from = static_cast<std::int64_t>(order[j]);
      if (values) values[j] = load<C>(src + from * stride);
      if (indices) indices[j] = from;
    }
  });
}

template <class T, class I>
void sort_typed(const Array& in, const Array& values, const Array& indices, bool desc) {
  constexpr bool kComplex = cu::is_complex_v<T>;
  using Real = cu::real_of_t<T>;
  using U = KeyOf<Real>;
  const Rows rows(in);
  const std::int64_t n = rows.length();
  const bool with_indices = kComplex || indices.defined();
  T* vout = values.defined() ? static_cast<T*>(values.data()) : nullptr;
  auto* iout = indices.defined() ? static_cast<std::int64_t*>(indices.data()) : nullptr;
  auto one_row = [&](std::int64_t r, RowBuffers<U, I>& buf, int chunks) {
    T* v = vout ? vout + r * n : nullptr;
    std::int64_t* ix = iout ? iout + r * n : nullptr;
    if constexpr (kComplex) sort_complex_row<T, I>(rows.row(r), rows.stride(), n, desc, buf, v, ix, chunks);
    else sort_real_row<T, I>(rows.row(r), rows.stride(), n, desc, buf, v, ix, chunks);
  };
  const int threads = num_threads();
  if (rows.count() < threads && n >= 4 * kGrain) {  // long rows: each split over the pool
    RowBuffers<U, I> buf(n, with_indices);
    for (std::int64_t r = 0; r < rows.count(); ++r) one_row(r, buf, threads);
    return;
  }
  parallel_for(rows.count(), std::max<std::int64_t>(1, kGrain / std::max<std::int64_t>(n, 1)),
               [&](std::int64_t b, std::int64_t e) {
                 RowBuffers<U, I> buf(n, with_indices);
                 for (std::int64_t r = b; r < e; ++r) one_row(r, buf, 1);
               });
}

/// The ordered key of an element: an unsigned key, or a complex one's three.
template <class T>
auto search_key(T v) {
  if constexpr (cu::is_complex_v<T>) {
    return cu::ComplexSortKey<typename T::value_type>::of(v.real(), v.imag());
  } else {
    return cu::SortKey<T>::key(v);
  }
}

template <class T>
void search_typed(const Array& sorted, const Array& needles, const Array& out, bool right) {
  using K = decltype(search_key(T{}));
  const std::int64_t n = sorted.size();
  const char* hay = static_cast<const char*>(sorted.data());
  const std::int64_t hay_stride = n > 1 ? sorted.strides()[0] * sorted.itemsize() : 0;
  std::vector<K> keys(static_cast<std::size_t>(n));
  over(n, true, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) keys[i] = search_key(load<T>(hay + i * hay_stride));
  });
  const ElementwisePlan plan = elementwise_plan({&needles, &out}, needles.shape());
  const int nd = plan.ndim();
  const std::int64_t s0 = nd ? plan.byte_strides[0][nd - 1] : 0, s1 = nd ? plan.byte_strides[1][nd - 1] : 0;
  parallel_for(plan.size(), kGrain / 8, [&](std::int64_t b, std::int64_t e) {
    for_each_run(plan, b, e, [&](char** p, std::int64_t m) {
      for (std::int64_t j = 0; j < m; ++j) {
        const K k = search_key(load<T>(p[0] + j * s0));
        const auto it =
            right ? std::upper_bound(keys.begin(), keys.end(), k) : std::lower_bound(keys.begin(), keys.end(), k);
        const std::int64_t pos = it - keys.begin();
        std::memcpy(p[1] + j * s1, &pos, sizeof(pos));
      }
    });
  });
}

}  // namespace

void CpuBackend::sort(const Array& in, const Array& values, const Array& indices, bool descending) {
  if (in.size() == 0) return;
  if (in.ndim() == 0)
    throw ValueError("sort: the backend sorts along the last axis of an array of 1 or more dimensions");
  const bool narrow = in.shape().back() <= static_cast<std::int64_t>(UINT32_MAX);
  visit_dtype(in.dtype(), [&]<class T>() {
    if (narrow) sort_typed<T, std::uint32_t>(in, values, indices, descending);
    else sort_typed<T, std::uint64_t>(in, values, indices, descending);
  });
}

void CpuBackend::search_sorted(const Array& sorted, const Array& needles, const Array& out, bool right) {
  if (needles.size() == 0) return;
  if (!(sorted.dtype() == needles.dtype()))
    throw TypeError(cat("search_sorted: needles of ", name(needles.dtype()), " in an array of ", name(sorted.dtype())));
  visit_dtype(sorted.dtype(), [&]<class T>() { search_typed<T>(sorted, needles, out, right); });
}

namespace {
template <class T>
std::int64_t unique_runs_typed(const Array& sorted, const Array& perm, const Array& values, const Array& index,
                               const Array& ends, const Array& inverse, bool equal_nan) {
  const std::int64_t n = sorted.size();
  const T* s = static_cast<const T*>(sorted.data());
  const auto* p = static_cast<const std::int64_t*>(perm.defined() ? perm.data() : nullptr);
  T* v = static_cast<T*>(values.defined() ? values.data() : nullptr);
  auto* ix = static_cast<std::int64_t*>(index.defined() ? index.data() : nullptr);
  auto* e = static_cast<std::int64_t*>(ends.defined() ? ends.data() : nullptr);
  auto* inv = static_cast<std::int64_t*>(inverse.defined() ? inverse.data() : nullptr);
  std::int64_t id = 0;  // runs begun up to element j
  if (e) e[0] = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    const bool start = j == 0 || cu::starts_run(s[j - 1], s[j], equal_nan);
    id += start;
    if (start && v) v[id - 1] = s[j];
    if (start && ix) ix[id - 1] = p[j];
    if (e && (j == n - 1 || cu::starts_run(s[j], s[j + 1], equal_nan))) e[id] = j + 1;
    if (inv) inv[p[j]] = id - 1;
  }
  return id;
}
}  // namespace

std::int64_t CpuBackend::unique_runs(const Array& sorted, const Array& perm, const Array& values, const Array& index,
                                     const Array& ends, const Array& inverse, bool equal_nan) {
  if (is_complex(sorted.dtype())) throw TypeError("unique_runs: complex elements have no run order here");
  std::int64_t runs = 0;
  visit_dtype(sorted.dtype(), [&]<class T>() {
    if constexpr (!cu::is_complex_v<T>)
      runs = unique_runs_typed<T>(sorted, perm, values, index, ends, inverse, equal_nan);
  });
  return runs;
}

}  // namespace cupric::cpu
