// bind_fft.cpp — the cuFFT layer (cupric/cuda/fft.hpp) as private functions that python/cupric/fft
// composes: one transform over trailing axes, and the per-device plan cache (cu.fft.config).
#include <nanobind/stl/string.h>

#include "convert.hpp"
#include "cupric/cuda/fft.hpp"
#include "cupric/errors.hpp"

namespace cupric::py {

namespace {
using cuda_backend::FftCallback;
using cuda_backend::FftKind;

FftKind kind_from(const std::string& kind) {
  if (kind == "c2c") return FftKind::c2c;
  if (kind == "r2c") return FftKind::r2c;
  if (kind == "c2r") return FftKind::c2r;
  throw ValueError(cat("unknown FFT kind '", kind, "' (expected 'c2c', 'r2c' or 'c2r')"));
}

DType out_dtype(FftKind kind, DType in) {
  const bool single = in == DType::float32 || in == DType::complex64;
  if (kind == FftKind::c2c) return in;
  if (kind == FftKind::r2c) return single ? DType::complex64 : DType::complex128;
  return single ? DType::float32 : DType::float64;
}

/// Callbacks as Python hands them: (ltoir bytes, symbol, cufftXtCallbackType, caller-info pointer).
std::vector<FftCallback> callbacks_from(nb::handle items) {
  std::vector<FftCallback> out;
  if (items.is_none()) return out;
  for (nb::handle item : items) {
    nb::tuple t = nb::cast<nb::tuple>(item);
    if (t.size() != 4)
      throw ValueError(cat("an FFT callback is (ltoir, symbol, type, caller_info), got ", t.size(), " items"));
    nb::bytes ltoir = nb::cast<nb::bytes>(t[0]);
    out.push_back({std::string(ltoir.c_str(), ltoir.size()), nb::cast<std::string>(t[1]), nb::cast<int>(t[2]),
                   nb::cast<std::uintptr_t>(t[3])});
  }
  return out;
}

/// A new C-contiguous array holding the transform of x's last `rank` axes (out_shape: the result's).
Array fft_cuda(const Array& x, const std::vector<std::int64_t>& out_shape, const std::string& kind, int rank,
               bool forward, nb::handle callbacks, bool input_is_scratch) {
  const FftKind k = kind_from(kind);
  Array out = Array::empty(Shape(out_shape), out_dtype(k, x.dtype()), x.device());
  const auto cbs = callbacks_from(callbacks);
  nb::gil_scoped_release release;  // plan creation can take milliseconds
  cuda_backend::fft_execute(x, out, rank, k, forward, cbs, input_is_scratch);
  return out;
}

nb::dict plan_cache_info(int device) {
  const auto info = cuda_backend::fft_plan_cache_info(device);
  nb::dict d;
  d["device"] = info.device;
  d["size"] = info.size;
  d["max_size"] = info.max_size;
  d["memsize"] = info.memsize;
  d["max_memsize"] = info.max_memsize;
  d["hits"] = info.hits;
  d["misses"] = info.misses;
  nb::list entries;
  for (const auto& e : info.entries) entries.append(nb::make_tuple(e.description, e.workspace));
  d["plans"] = entries;
  return d;
}
}  // namespace

void bind_fft(nb::module_& m) {
  m.def("_fft_cuda", &fft_cuda, nb::arg("x"), nb::arg("out_shape"), nb::arg("kind"), nb::arg("rank"),
        nb::arg("forward"), nb::arg("callbacks") = nb::none(), nb::arg("input_is_scratch") = false,
        "The unnormalised cuFFT transform of x's last `rank` axes into a new array (cupric.fft uses it).");
  m.def("_fft_plan_cache_info", &plan_cache_info, nb::arg("device"));
  m.def("_fft_set_plan_cache_limits", &cuda_backend::set_fft_plan_cache_limits, nb::arg("device"), nb::arg("max_size"),
        nb::arg("max_memsize"));
  m.def("_fft_clear_plan_cache", &cuda_backend::clear_fft_plan_cache, nb::arg("device"));
}

}  // namespace cupric::py
