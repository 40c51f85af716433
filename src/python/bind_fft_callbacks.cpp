// bind_fft_callbacks.cpp — cupric._cupric._fft_callbacks: the cuFFT callback wrapper's source for
// a tile function (cupric.fft._callbacks compiles it to LTO-IR) and cuFFT's callback type codes.
#include "convert.hpp"
#include "py_types.hpp"
#include "cupric/errors.hpp"
#include "cupric/fft_callbacks.hpp"
#include "cupric/tile_compiler/emit.hpp"

namespace cupric::py {

using cupric::cat;

namespace {

fft::CallbackKind kind_from_name(const std::string& kind) {
  if (kind == "prolog") return fft::CallbackKind::prolog;
  if (kind == "epilog") return fft::CallbackKind::epilog;
  throw ValueError(cat("a callback is a 'prolog' or an 'epilog', not '", kind, "'"));
}

}  // namespace

void bind_fft_callbacks(nb::module_& m) {
  nb::module_ c = m.def_submodule("_fft_callbacks", "cuFFT's JIT LTO callbacks from tile functions.");
  c.def(
      "source",
      [](const tile::Function& f, const std::string& kind, DTypeLike element, const std::string& symbol) {
        tile::EmitOptions o;
        o.target = tile::Target::device_function;
        const tile::EmitResult r = tile::emit(f, o);
        return fft::callback_source(f, r.source, kind_from_name(kind), dtype_from_py(element), symbol);
      },
      nb::arg("function"), nb::arg("kind"), nb::arg("element"), nb::arg("symbol"),
      "The CUDA source of a cuFFT load ('prolog') or store ('epilog') callback named `symbol` around the tile "
      "function (parameters: the element's parts, the int64 offset, the operand arrays, one output array per part).");
  c.def(
      "callback_type",
      [](const std::string& kind, DTypeLike element) {
        return fft::cufft_callback_type(kind_from_name(kind), dtype_from_py(element));
      },
      nb::arg("kind"), nb::arg("element"), "cuFFT's cufftXtCallbackType for a callback on elements of this dtype.");
}

}  // namespace cupric::py
