// cupric/fft_callbacks.hpp — cuFFT's JIT LTO callbacks made from tile functions: the CUDA source
// that wraps a tile `device_function` in cuFFT's load / store callback signature, and attaching
// compiled callbacks to a plan between cufftCreate and cufftMakePlan*.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "cupric/dtype.hpp"
#include "cupric/tile_compiler/ir.hpp"

namespace cupric::fft {

/// Where a callback runs: a prolog as cuFFT loads each input element, an epilog as it stores each
/// output element.
enum class CallbackKind : std::uint8_t { prolog, epilog };

/// cuFFT's cufftXtCallbackType for a callback of `kind` on elements of `element` (complex64,
/// complex128, float32 or float64; anything else is a TypeError naming the dtype).
int cufft_callback_type(CallbackKind kind, DType element);

/// The CUDA source of a callback: `function_source` (f rendered for the tile target
/// device_function) followed by `__device__ <T> <symbol>(void*, unsigned long long, void*, void*)`
/// (a prolog) or `__device__ void <symbol>(void*, unsigned long long, <T>, void*, void*)` (an
/// epilog), with cuFFT's C++ signature so that cuFFT finds it by its name. f's parameters are, in
/// order: the element's parts (one scalar of element's real dtype, or two: real and imaginary),
/// the offset (int64 scalar), the operand arrays, and one output array of one element per part.
/// Operand k is read from the caller-info words: its data pointer, its extents, then its strides
/// in elements (caller_info_words lays them out).
std::string callback_source(const tile::Function& f, const std::string& function_source, CallbackKind kind,
                            DType element, const std::string& symbol);

/// One compiled callback for a plan. cuFFT keeps `&caller_info` (its per-GPU array of one), so an
/// entry must live as long as the plan it is attached to.
struct FftCallback {
  std::string ltoir;           ///< the callback compiled to LTO-IR (nvrtcGetLTOIR)
  std::string symbol;          ///< its name in the source (C++, not extern "C": cuFFT mangles it)
  int type = 0;                ///< cufftXtCallbackType (cufft_callback_type)
  void* caller_info = nullptr;  ///< device pointer to the operands' words, or null without operands
};

/// cuFFT's JIT callback setter that takes a symbol name: `cufftXtSetJITCallback` of cuFFT 12
/// (CUDA 13), `__cufftXtSetJITCallback_12_7` of cuFFT 11.5+; null where the library has neither.
using SetJitCallback = int (*)(int plan, const char* symbol, const void* ltoir, std::size_t size, int type,
                               void** caller_info);

/// Attaches each callback to `plan`, after cufftCreate and before cufftMakePlan*, as cuFFT requires.
/// A null setter is a NotImplementedError naming the cuFFT version needed; a failed call a
/// RuntimeError with cuFFT's status and the callback's symbol.
void attach_callbacks(SetJitCallback set_jit, int plan, std::span<FftCallback> callbacks);

}  // namespace cupric::fft
