"""python/cupric/_vectorize.py: vectorize and frompyfunc against NumPy's, on the CPU (NumPy's loop),
through the compiled tile path (forced on the CPU target here, and on a CUDA device marked gpu),
and the host loop with its warning where the function is outside the tile language."""

import cupric as cu
import numpy as np
import pytest
from cupric import _vectorize
from oracle_helpers import assert_same

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
RNG = np.random.default_rng(91)


def smooth(u, v):
    return u * u - 2.5 * v + abs(u) / (1.0 + v * v)


def clipped(u, v):
    return u if u > v else v - 1  # `x if c else y` on run-time values: a ct.where


def loops(u):
    total = u
    while total > 1:  # no `while` in tiles: the host loop runs
        total = total / 2
    return total


@pytest.fixture
def compiled_on_cpu(monkeypatch):
    monkeypatch.setattr(_vectorize, "_COMPILE_ON_CPU", True)


def inputs(device, dtype="float64"):
    a = RNG.standard_normal((3, 5)).astype(dtype)
    b = RNG.standard_normal(5).astype(dtype)
    return a, b, cu.asarray(a, device=device), cu.asarray(b, device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_vectorize_matches_numpy(device):
    a, b, x, y = inputs(device)
    for fn in (smooth, clipped, lambda u, v: u * 10 + v if u > 1 else -v):
        got = cu.vectorize(fn)(x, y)
        assert got.device == device
        assert_same(got, np.vectorize(fn)(a, b))
    got = cu.vectorize(smooth, otypes=[np.float32])(x, 2.0)
    assert_same(got, np.vectorize(smooth, otypes=[np.float32])(a, 2.0))
    ints = RNG.integers(-5, 5, (4,))
    assert_same(cu.vectorize(clipped)(cu.asarray(ints, device=device), 0), np.vectorize(clipped)(ints, 0))


def test_vectorize_compiles_through_tiles(compiled_on_cpu, recwarn):
    a, b, x, y = inputs("cpu", "float32")
    f = cu.vectorize(smooth)
    assert_same(f(x, y), np.vectorize(smooth)(a, b))
    assert 2 in f._kernels and f._not_compiled is None
    assert_same(cu.vectorize(clipped)(x, y), np.vectorize(clipped)(a, b))
    assert not [w for w in recwarn if issubclass(w.category, cu.VectorizeWarning)]


def test_vectorize_outside_the_tile_language_warns_and_runs_on_the_host(compiled_on_cpu):
    a, _, x, _ = inputs("cpu")
    f = cu.vectorize(loops)
    with pytest.warns(cu.VectorizeWarning, match="scalar subset.*while"):
        assert_same(f(x * 4), np.vectorize(loops)(a * 4))
    with pytest.warns(cu.VectorizeWarning, match="scalar subset"):  # remembered: not compiled again
        f(x)
    with pytest.warns(cu.VectorizeWarning, match="complex"):
        assert_same(cu.vectorize(smooth)(x + 1j, x), np.vectorize(smooth)(a + 1j, a))
    with pytest.warns(cu.VectorizeWarning, match="signature"):
        cu.vectorize(np.sum, signature="(n)->()")(x)


@pytest.mark.parametrize("device", DEVICES)
def test_frompyfunc_matches_numpy_values(device):
    a, b, x, y = inputs(device)
    f = cu.frompyfunc(smooth, 2, 1)
    assert (f.nin, f.nout, f.nargs) == (2, 1, 3)
    got = f(x, y)
    assert got.device == device
    want = np.frompyfunc(smooth, 2, 1)(a, b)
    assert want.dtype == object
    assert_same(got, want.astype(np.float64))  # cupric has no object arrays: the values' dtype
    two = cu.frompyfunc(divmod, 2, 2)(cu.asarray([7, 9], device=device), cu.asarray([2, 4], device=device))
    assert_same(two, tuple(o.astype(np.int64) for o in np.frompyfunc(divmod, 2, 2)([7, 9], [2, 4])))
    with pytest.raises(TypeError, match="takes 2 arguments"):
        f(x)
    with pytest.raises(ValueError, match="at least one input"):
        cu.frompyfunc(smooth, 0, 1)


@pytest.mark.gpu
def test_vectorize_compiles_on_the_gpu(recwarn):
    a, b, x, y = inputs("cuda", "float32")
    f = cu.vectorize(smooth)
    got = f(x, y)
    assert got.device == "cuda" and 2 in f._kernels and f._not_compiled is None
    assert_same(got, np.vectorize(smooth)(a, b))
    assert_same(f(x[:, ::-2], 3.0), np.vectorize(smooth)(a[:, ::-2], 3.0))
    assert not [w for w in recwarn if issubclass(w.category, cu.VectorizeWarning)]


def test_compiled_path_computes_as_numpys_python_scalars():
    """The compiled path (run here on the tile CPU target) computes in float64/int64 as NumPy's loop
    does on Python scalars and rounds to otype: float32 inputs once gave float32 arithmetic on an H200."""
    a, b, x, y = inputs("cpu", "float32")
    f = cu.vectorize(smooth)
    got = f._on_gpu((x, y), {}, "cpu")
    np.testing.assert_array_equal(got.get(), np.vectorize(smooth)(a, b))
    got = f._on_gpu((x[:, ::-2], 3.0), {}, "cpu")
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got.get(), np.vectorize(smooth)(a[:, ::-2], 3.0))
