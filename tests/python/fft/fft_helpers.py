"""Shared by the fft tests: random operands and the tolerance of a transform (NumPy is the oracle,
errors grow with log n)."""

import math

import cupric as cu
import numpy as np

RNG = np.random.default_rng(16)


def random(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)
    if dtype.kind in "iub":
        return RNG.integers(0, 5, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def tolerance(dtype, n):
    """rtol for a transform of n points computed in dtype's precision."""
    single = np.dtype(dtype) in (np.float16, np.float32, np.complex64) or np.dtype(dtype).name == "bfloat16"
    eps = 1.2e-7 if single else 2.3e-16
    return 8 * eps * max(1.0, math.log2(max(n, 2)))


def check(got, expected, dtype, n):
    """got (a cupric array) equals expected (NumPy's) in dtype and shape, and within the
    tolerance relative to the largest value (the error of an FFT is spread over all entries)."""
    got_np = got.get() if isinstance(got, cu.ndarray) else np.asarray(got)
    assert got_np.shape == expected.shape, (got_np.shape, expected.shape)
    assert got_np.dtype == expected.dtype, (got_np.dtype, expected.dtype)
    scale = max(float(np.max(np.abs(expected))) if expected.size else 0.0, 1e-30)
    err = float(np.max(np.abs(got_np.astype(np.complex128) - expected.astype(np.complex128)))) if expected.size else 0
    # float16: NumPy rounds results and even the norm's 1/n to float16; cupric keeps float32's 1/n
    half = np.float16 in (np.dtype(dtype), expected.dtype)
    rtol = 2e-3 if half else tolerance(dtype, n) * 4
    assert err <= rtol * scale, (err, scale, dtype, n)
