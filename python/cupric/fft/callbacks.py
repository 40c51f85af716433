"""cupric.fft.callbacks: writing FFT prologs and epilogs (docs/fft_callbacks.md). A callback is a
Python function `fn(value, offset, *operands) -> value` in the tile language's scalar subset, given
to cupric.fft.advanced as `prolog=` / `epilog=`; complex values are (real, imag) pairs, and `cmul`
multiplies two of them. `compile_callback` compiles one directly (cuFFT's LTO-IR, the CPU pass)."""

from ._callbacks import Callback, cmul, compile_callback

__all__ = ["Callback", "cmul", "compile_callback"]
