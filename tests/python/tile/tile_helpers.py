"""Helpers shared by the cupric.tile tests: both execution modes, NumPy <-> cupric conversion
(bfloat16 included), and a generated-CUDA compile check."""

import cupric as cu
import numpy as np

try:
    import ml_dtypes

    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    BF16 = None

MODES = ["compiled", "interpret"]


def np_dtype(name):
    return BF16 if name == "bfloat16" else np.dtype(name)


def to_cu(a):
    """A cupric CPU array with a's values and dtype (bfloat16 through float32)."""
    a = np.asarray(a)
    if a.dtype == BF16:
        return cu.asarray(a.astype(np.float32)).astype(cu.bfloat16)
    return cu.asarray(np.ascontiguousarray(a))


def to_np(x):
    """NumPy copy of a cupric array (bfloat16 stays bfloat16, through ml_dtypes)."""
    if x.dtype == cu.bfloat16:
        return np.asarray(x.astype(cu.float32)).astype(BF16)
    return np.asarray(x).copy()


def run(kernel, mode, grid, *args, **kwargs):
    """Launches in the given mode: the compiled CPU path or the interpreter."""
    if mode == "interpret":
        return kernel.interpret[grid](*args, **kwargs)
    return kernel[grid](*args, **kwargs)


def random(shape, dtype, rng=None, low=-3.0, high=3.0):
    """Random values of a dtype (not zeros): uniform floats, integers in a small range."""
    rng = rng or np.random.default_rng(1234)
    dt = np_dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else -50
        return rng.integers(lo, 50, size=shape).astype(dt)
    return rng.uniform(low, high, size=shape).astype(np.float32).astype(dt)


TOL = {
    "float16": dict(rtol=2e-3, atol=2e-3),
    "bfloat16": dict(rtol=1.6e-2, atol=1.6e-2),
    "float32": dict(rtol=2e-5, atol=2e-6),
    "float64": dict(rtol=1e-11, atol=1e-12),
}


def assert_close(got, want, dtype_name=None, **kw):
    got = np.asarray(got)
    want = np.asarray(want)
    name = dtype_name or want.dtype.name
    tol = TOL.get(name, dict(rtol=0, atol=0))
    tol.update(kw)
    if got.dtype == BF16 or want.dtype == BF16 or got.dtype == np.float16:
        got, want = got.astype(np.float64), want.astype(np.float64)
    if got.dtype.kind in "biu" and want.dtype.kind in "biu" and not kw:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), equal_nan=True, **tol)


# the ring's modes: TMA filled by a producer warpgroup in a persistent kernel, the same persistent
# where the K loop can be split (the default), one output tile per block, TMA from the tile code's
# thread 0, cp.async from every thread
RING_MODES = {
    "tma ws persistent": ("1", "1", "1"),
    "tma ws": ("1", "1", ""),
    "tma ws plain": ("1", "1", "0"),
    "tma": ("1", "0", "1"),
    "cp.async": ("0", "1", "1"),
}


def set_ring_mode(monkeypatch, mode):
    """The environment switches (CUPRIC_TILE_TMA / _WS / _PERSISTENT) for one of RING_MODES."""
    from cupric.tile import _cuda

    tma, ws, persistent = RING_MODES[mode]
    monkeypatch.setenv("CUPRIC_TILE_TMA", tma)
    monkeypatch.setenv("CUPRIC_TILE_WS", ws)
    monkeypatch.setenv("CUPRIC_TILE_PERSISTENT", persistent)
    assert _cuda.ring_mode() == mode
