"""Shared pieces of the jit tests: random inputs and the check that a jit function equals the
same Python function run eagerly (NumPy-checked cupric is the oracle)."""

import cupric as cu
import numpy as np

RNG = np.random.default_rng(20261202)


def rand(shape, dtype="float32", device="cpu"):
    if np.dtype(dtype).kind in "iu":
        values = RNG.integers(-50 if np.dtype(dtype).kind == "i" else 0, 50, size=shape).astype(dtype)
    elif np.dtype(dtype).kind == "b":
        values = RNG.random(shape) > 0.5
    else:
        values = RNG.standard_normal(shape).astype(dtype)
    return cu.asarray(values, device=device)


def check(f, *args, rtol=2e-6, atol=1e-6, **kwargs):
    """f(*args) under jit three times (the trace, the compiled program run from Python, then its
    prepared call in C++ where it has one) against the eager result."""
    expected = f.fn(*args, **kwargs)
    first = f(*args, **kwargs)
    second = f(*args, **kwargs)
    third = f(*args, **kwargs)
    for got in (first, second, third):
        _same(got, expected, rtol, atol)
    return third


def _same(got, expected, rtol, atol):
    if isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            _same(g, e, rtol, atol)
        return
    if isinstance(expected, dict):
        assert got.keys() == expected.keys()
        for k in expected:
            _same(got[k], expected[k], rtol, atol)
        return
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    g, e = cu.asnumpy(got) if hasattr(cu, "asnumpy") else got.get(), expected.get()
    if e.dtype.kind in "biu":
        np.testing.assert_array_equal(g, e)
    else:
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
