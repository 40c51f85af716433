// random_sampling.cpp — Generator::permutation, shuffle and choice. Positions are drawn on the
// host from the generator's stream (the same words a device would draw), so a seed orders and
// samples alike on every device; the data is then gathered on its own device.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "cupric/backend.hpp"
#include "cupric/errors.hpp"
#include "cupric/indexing.hpp"
#include "cupric/manipulation.hpp"
#include "cupric/philox.h"
#include "cupric/random.hpp"

namespace cupric {

namespace {
/// Host int64 positions as an array on `device`.
Array positions_on(const std::vector<std::int64_t>& pos, Device device) {
  Array h = Array::empty({static_cast<std::int64_t>(pos.size())}, DType::int64);
  std::copy(pos.begin(), pos.end(), static_cast<std::int64_t*>(h.data()));
  if (device.is_cpu()) return h;
  Array d = Array::empty(h.shape(), DType::int64, device);
  backend_for(device).copy_from_host(d.data(), h.data(), static_cast<std::size_t>(h.nbytes()));
  return d;
}

/// The values of a (any device, any dtype) as a host float64 array.
Array host_float64(const Array& a) {
  Array src = ascontiguous(a);
  if (!src.device().is_cpu()) {
    Array h = Array::empty(src.shape(), src.dtype());
    backend_for(src.device()).copy_to_host(h.data(), src.data(), static_cast<std::size_t>(src.nbytes()));
    src = h;
  }
  Array out = Array::empty(src.shape(), DType::float64);
  copy_into(out, src);
  return out;
}

/// out (count, ...) reshaped to shape + out.shape[1:]; a 0-d result for an empty `shape`.
Array sample_shape(const Array& out, const Shape& shape) {
  if (shape.empty()) return getitem(out, {IndexItem::from_int(0)});
  Shape full = shape;
  for (int d = 1; d < out.ndim(); ++d) full.push_back(out.shape()[d]);
  return reshape(out, full);
}

Array along_axis0(const Array& x, const Array& positions) { return getitem(x, {IndexItem::from_array(positions)}); }

void check_population(const char* what, const Array& x) {
  if (x.ndim() == 0) throw ValueError(cat(what, ": x must have at least one dimension, got a 0-d array"));
}
}  // namespace

std::vector<std::int64_t> Generator::host_ordering(std::int64_t n) {
  if (n < 0) throw ValueError(cat("permutation: n must be non-negative, got ", n));
  std::vector<std::int64_t> idx(static_cast<std::size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  // step t (t = 0 .. n-2) swaps position i = n-1-t with j uniform in [0, i]: words 2k, 2k+1 of
  // block counter + t / 2 (k = t % 2), as integers() draws them
  cu::Philox4 w{};
  for (std::int64_t t = 0; t + 1 < n; ++t) {
    if (t % 2 == 0) w = cu::philox4x32_10(counter_ + static_cast<std::uint64_t>(t / 2), 0, key_);
    const int k = static_cast<int>(t % 2);
    const std::int64_t i = n - 1 - t;
    const auto j =
        static_cast<std::int64_t>(cu::bounded(w.v[2 * k], w.v[2 * k + 1], static_cast<std::uint64_t>(i + 1)));
    std::swap(idx[static_cast<std::size_t>(i)], idx[static_cast<std::size_t>(j)]);
  }
  counter_ += n > 1 ? static_cast<std::uint64_t>(n) / 2 : 0;  // ceil((n - 1) / 2) blocks
  return idx;
}

Array Generator::permutation(std::int64_t n, Device device) { return positions_on(host_ordering(n), device); }

Array Generator::permutation(const Array& x) {
  check_population("permutation", x);
  return along_axis0(x, positions_on(host_ordering(x.shape()[0]), x.device()));
}

void Generator::shuffle(const Array& x) {
  check_population("shuffle", x);
  if (!x.writeable()) throw ValueError("shuffle: the array is read-only (assignment destination is read-only)");
  const Array reordered = permutation(x);
  setitem(x, {IndexItem::ellipsis()}, reordered);
}

Array Generator::choice(const Array* population, std::int64_t n, const Shape& shape, bool replace, const Array* p,
                        Device device) {
  if (population) {
    check_population("choice", *population);
    n = population->shape()[0];
    device = population->device();
  }
  for (std::int64_t d : shape)
    if (d < 0) throw ValueError(cat("choice: negative dimensions are not allowed: size=", shape_str(shape)));
  const std::int64_t count = shape_size(shape);
  if (n <= 0 && count > 0)
    throw ValueError(cat("choice: a cannot be empty unless no samples are taken (a has ", n, " elements)"));
  if (!replace && count > n)
    throw ValueError(
        cat("choice: cannot take a larger sample (", count, ") than the population (", n, ") when replace is False"));
  std::vector<double> prob;
  if (p) {
    if (p->ndim() != 1 || p->shape()[0] != n)
      throw ValueError(cat("choice: p must be 1-dimensional with one probability per element (", n, "), got shape ",
                           shape_str(p->shape())));
    const Array ph = host_float64(*p);
    const auto* v = static_cast<const double*>(ph.data());
    prob.assign(v, v + n);
    double total = 0;
    for (double q : prob) {
      if (!(q >= 0) || !std::isfinite(q))
        throw ValueError(cat("choice: probabilities must be finite and non-negative, got ", q));
      total += q;
    }
    if (std::fabs(total - 1.0) > std::sqrt(1e-16) * 10)
      throw ValueError(cat("choice: probabilities do not sum to 1 (they sum to ", total, ")"));
  }
  std::vector<std::int64_t> pos;
  if (!p && replace) {
    Array idx = integers(0, n, shape.empty() ? Shape{1} : Shape{count}, DType::int64, device);
    Array out = population ? along_axis0(*population, idx) : idx;
    return sample_shape(out, shape);
  }
  if (!p) {
    pos = host_ordering(n);
    pos.resize(static_cast<std::size_t>(count));
  } else {
    // the uniform draws are made on the host: the stream is the same everywhere
    if (replace) {  // inverse of the cumulative distribution
      const Array u = random({count}, DType::float64);
      const auto* uv = static_cast<const double*>(u.data());
      std::vector<double> cdf(prob.size());
      std::partial_sum(prob.begin(), prob.end(), cdf.begin());
      for (double& c : cdf) c /= cdf.back();
      for (std::int64_t i = 0; i < count; ++i) {
        auto it = std::upper_bound(cdf.begin(), cdf.end(), uv[i]);
        pos.push_back(std::min<std::int64_t>(it - cdf.begin(), n - 1));
      }
    } else {  // weighted sampling without replacement: the count largest keys log(u) / p
      // (Efraimidis-Spirakis); zero-probability elements are never taken
      std::int64_t nonzero = std::count_if(prob.begin(), prob.end(), [](double q) { return q > 0; });
      if (count > nonzero)
        throw ValueError(cat("choice: fewer non-zero probabilities (", nonzero, ") than samples (", count,
                             ") when replace is False"));
      const Array uk = random({n}, DType::float64);
      const auto* kv = static_cast<const double*>(uk.data());
      std::vector<std::pair<double, std::int64_t>> keys;
      for (std::int64_t i = 0; i < n; ++i)
        if (prob[static_cast<std::size_t>(i)] > 0)
          keys.emplace_back(std::log(kv[i]) / prob[static_cast<std::size_t>(i)], i);
      std::partial_sort(keys.begin(), keys.begin() + count, keys.end(), [](const auto& a, const auto& b) {
        return a.first > b.first || (a.first == b.first && a.second < b.second);
      });
      for (std::int64_t i = 0; i < count; ++i) pos.push_back(keys[static_cast<std::size_t>(i)].second);
    }
  }
  Array idx = positions_on(pos, device);
  Array out = population ? along_axis0(*population, idx) : idx;
  return sample_shape(out, shape);
}

}  // namespace cupric
