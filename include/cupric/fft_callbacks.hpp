// cupric/fft_callbacks.hpp — cuFFT's JIT LTO callbacks made from tile functions: the CUDA source
// that wraps a tile `device_function` in cuFFT's load / store callback signature, and its
// cufftXtCallbackType. (The plan layer, src/backend/cuda/fft.cpp, attaches the compiled callbacks.)
#pragma once

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
/// in elements (cupric.fft._callbacks.Callback.caller_info lays them out).
std::string callback_source(const tile::Function& f, const std::string& function_source, CallbackKind kind,
                            DType element, const std::string& symbol);

}  // namespace cupric::fft
