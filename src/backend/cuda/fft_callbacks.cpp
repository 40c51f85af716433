// fft_callbacks.cpp — cuFFT's JIT LTO callbacks from tile functions: the wrapper with cuFFT's
// callback signature around a tile `device_function` (compiled to LTO-IR by NVRTC in Python; the
// plan layer in fft.cpp attaches it between cufftCreate and cufftMakePlanMany64).
#include "cupric/fft_callbacks.hpp"

#include "cupric/errors.hpp"
#include "cupric/tile_compiler/emit.hpp"

namespace cupric::fft {

namespace {

/// One row per element type cuFFT calls callbacks with: its cufftXtCallbackType for loads and
/// stores (cufftXt.h's values), the C types, and how many real parts an element has.
struct ElementRow {
  DType element;
  int load_type, store_type;
  const char* value_type;  ///< what the callback returns / receives (cufftComplex is float2)
  const char* part_type;
  int parts;
};
constexpr ElementRow kElements[] = {
    {DType::complex64, 0x0, 0x4, "float2", "float", 2},
    {DType::complex128, 0x1, 0x5, "double2", "double", 2},
    {DType::float32, 0x2, 0x6, "float", "float", 1},
    {DType::float64, 0x3, 0x7, "double", "double", 1},
};

const ElementRow& element_row(DType element) {
  for (const ElementRow& r : kElements)
    if (r.element == element) return r;
  throw TypeError(cat("cuFFT callbacks see complex64, complex128, float32 or float64 elements, not ", name(element)));
}

/// The callback's parameters as the wrapper passes them (see callback_source): checked against f
/// so that a frontend that built another order fails here, not in NVRTC.
void check_params(const tile::Function& f, const ElementRow& row) {
  const std::size_t n = f.params.size();
  bool ok = n >= static_cast<std::size_t>(2 * row.parts + 1);
  for (int i = 0; ok && i < row.parts; ++i) {
    const tile::Type& value = f.type(f.params[i]);
    const tile::Type& out = f.type(f.params[n - row.parts + i]);
    ok = value.is_scalar() && value.dtype == real_dtype(row.element) && out.is_array() && out.ndim == 1 &&
         out.dtype == real_dtype(row.element);
  }
  ok = ok && f.type(f.params[row.parts]).is_scalar() && f.type(f.params[row.parts]).dtype == DType::int64;
  for (std::size_t i = row.parts + 1; ok && i < n - row.parts; ++i) ok = f.type(f.params[i]).is_array();
  if (!ok)
    throw ValueError(
        cat("internal: the tile function `", f.name, "` has not the parameters of a ", name(row.element), " callback"));
}

/// The statements that read the operands from the caller-info words and call the tile function;
/// `values` are the element's parts, the results land in r0 (and r1).
std::string call_function(const tile::Function& f, const ElementRow& row, const std::string& values) {
  std::string s =
      cat("  const long long* words = static_cast<const long long*>(info);\n", "  (void)words;\n  (void)shared;\n",
          "  const ::cu::tile::Block blk{{0, 0, 0}, {1, 1, 1}, 0, nullptr, nullptr};\n");
  std::string args = cat("blk, ", values, ", static_cast<long long>(offset)");
  const std::size_t n = f.params.size();
  int word = 0;
  for (std::size_t i = row.parts + 1; i < n - row.parts; ++i) {
    const tile::Type& t = f.type(f.params[i]);
    const std::string ty = tile::ctype(t.dtype), a = cat("a", i);
    std::string shape, stride;
    for (int d = 0; d < t.ndim; ++d) shape += cat(d ? ", " : "", "words[", word + 1 + d, "]");
    for (int d = 0; d < t.ndim; ++d) stride += cat(d ? ", " : "", "words[", word + 1 + t.ndim + d, "]");
    s += cat("  const ::cu::tile::ArrayRef<", ty, ", ", t.ndim, "> ", a, "{reinterpret_cast<", ty, "*>(words[", word,
             "]), {", shape, "}, {", stride, "}};\n");
    args += cat(", ", a);
    word += 1 + 2 * t.ndim;
  }
  for (int p = 0; p < row.parts; ++p) {
    s += cat("  const ::cu::tile::ArrayRef<", row.part_type, ", 1> o", p, "{&r", p, ", {1}, {1}};\n");
    args += cat(", o", p);
  }
  return s + cat("  ", f.name, "(", args, ");\n");
}

}  // namespace

int cufft_callback_type(CallbackKind kind, DType element) {
  const ElementRow& row = element_row(element);
  return kind == CallbackKind::prolog ? row.load_type : row.store_type;
}

std::string callback_source(const tile::Function& f, const std::string& function_source, CallbackKind kind,
                            DType element, const std::string& symbol) {
  const ElementRow& row = element_row(element);
  check_params(f, row);
  const bool complex = row.parts == 2;
  const std::string parts = complex ? "r0, r1" : "r0";
  std::string s = cat(function_source, "\n// cuFFT's ", kind == CallbackKind::prolog ? "load" : "store", " callback (",
                      name(element), ")\n");
  if (kind == CallbackKind::prolog) {
    s += cat("__device__ ", row.value_type, " ", symbol,
             "(void* data, unsigned long long offset, void* info, void* shared) {\n", "  const ", row.part_type,
             "* in = static_cast<const ", row.part_type, "*>(data) + ", row.parts, " * offset;\n  ", row.part_type, " ",
             parts, ";\n", call_function(f, row, complex ? "in[0], in[1]" : "in[0]"), "  return ",
             complex ? cat(row.value_type, "{r0, r1}") : "r0", ";\n}\n");
  } else {
    s += cat("__device__ void ", symbol, "(void* data, unsigned long long offset, ", row.value_type,
             " element, void* info, void* shared) {\n  ", row.part_type, " ", parts, ";\n",
             call_function(f, row, complex ? "element.x, element.y" : "element"), "  ", row.part_type,
             "* out = static_cast<", row.part_type, "*>(data) + ", row.parts, " * offset;\n  out[0] = r0;\n",
             complex ? "  out[1] = r1;\n" : "", "}\n");
  }
  return s;
}

}  // namespace cupric::fft
