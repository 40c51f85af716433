"""NumPy's names that no module's own tests ran on every device (docs/coverage.md, tools/coverage.py):
each called on random inputs on the CPU and (marked gpu) on a CUDA device, NumPy as the oracle."""

import cupric as cu
import numpy as np
import pytest

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
RNG = np.random.default_rng(15)


def rand(*shape, dtype="float64"):
    return (RNG.standard_normal(shape) * 3).astype(dtype)


def with_nans(*shape):
    """NaNs in about a third of the places, never in the first column (so no slice is all NaN)."""
    a = rand(*shape)
    a[RNG.random(shape) < 0.3] = np.nan
    a[..., 0] = 1.5
    return a


def spd(n):
    m = rand(n, n)
    return m @ m.T + n * np.eye(n)


def cplx(*shape):
    return rand(*shape) + 1j * rand(*shape)


# name: (NumPy inputs, the call with xp = numpy or cupric). "linalg.x" is numpy.linalg.x.
CASES = {
    "allclose": (lambda: (rand(3, 4), rand(3, 4)),
                 lambda xp, a, b: xp.allclose(a, a + 1e-9) and not xp.allclose(a, b)),
    "array_equal": (lambda: (rand(5),), lambda xp, a: (xp.array_equal(a, a), xp.array_equal(a, a + 1))),
    "amax": (lambda: (rand(3, 4),), lambda xp, a: xp.amax(a, axis=0)),
    "amin": (lambda: (rand(3, 4),), lambda xp, a: xp.amin(a, axis=1, keepdims=True)),
    "angle": (lambda: (cplx(6),), lambda xp, a: xp.angle(a, deg=True)),
    "around": (lambda: (rand(7),), lambda xp, a: xp.around(a, 2)),
    "round": (lambda: (rand(7),), lambda xp, a: xp.round(a, 1)),
    "real": (lambda: (cplx(4),), lambda xp, a: xp.real(a)),
    "imag": (lambda: (cplx(4),), lambda xp, a: xp.imag(a)),
    "astype": (lambda: (rand(5),), lambda xp, a: xp.astype(a, xp.int32)),
    "cumulative_sum": (lambda: (rand(3, 4),), lambda xp, a: xp.cumulative_sum(a, axis=1, include_initial=True)),
    "cumulative_prod": (lambda: (rand(3, 4),), lambda xp, a: xp.cumulative_prod(a, axis=0)),
    "diagonal": (lambda: (rand(3, 4, 5),), lambda xp, a: xp.diagonal(a, 1, 1, 2)),
    "trace": (lambda: (rand(4, 5),), lambda xp, a: xp.trace(a, -1)),
    "inner": (lambda: (rand(3, 4), rand(2, 4)), lambda xp, a, b: xp.inner(a, b)),
    "vdot": (lambda: (cplx(6), cplx(6)), lambda xp, a, b: xp.vdot(a, b)),
    "matvec": (lambda: (rand(2, 3, 4), rand(4)), lambda xp, a, b: xp.matvec(a, b)),
    "vecmat": (lambda: (rand(4), rand(2, 4, 3)), lambda xp, a, b: xp.vecmat(a, b)),
    "nanargmax": (lambda: (with_nans(4, 6),), lambda xp, a: xp.nanargmax(a, axis=1)),
    "nanargmin": (lambda: (with_nans(4, 6),), lambda xp, a: xp.nanargmin(a.T, axis=0)),
    "nancumsum": (lambda: (with_nans(3, 5),), lambda xp, a: xp.nancumsum(a, axis=1)),
    "nancumprod": (lambda: (with_nans(3, 5),), lambda xp, a: xp.nancumprod(a, axis=0)),
    "nanprod": (lambda: (with_nans(3, 5),), lambda xp, a: xp.nanprod(a, axis=1)),
    "nanstd": (lambda: (with_nans(3, 5),), lambda xp, a: xp.nanstd(a, axis=1, ddof=1)),
    "nanvar": (lambda: (with_nans(3, 5),), lambda xp, a: xp.nanvar(a, axis=0)),
    "logspace": (lambda: (), lambda xp: xp.logspace(0, 3, 7, base=2.0)),
    "result_type": (lambda: (rand(2, dtype="float32"),), lambda xp, a: xp.result_type(a, xp.int16, 2.0)),
    "row_stack": (lambda: (rand(3), rand(2, 3)), lambda xp, a, b: xp.vstack([a, b])),
    "einsum_path": (lambda: (rand(3, 4), rand(4, 5), rand(5, 2)), lambda xp, a, b, c: xp.einsum_path(
        "ij,jk,kl->il", a, b, c, optimize="greedy")[0]),
    "array": (lambda: (rand(2, 3),), lambda xp, a: xp.array(a, ndmin=3, copy=True)),
    "empty_like": (lambda: (rand(2, 3),), lambda xp, a: xp.empty_like(a, dtype=xp.int8).shape),
    "array2string": (lambda: (rand(3),), lambda xp, a: xp.array2string(a, precision=3)),
    "array_repr": (lambda: (rand(3),), lambda xp, a: xp.array_repr(a, precision=2).replace(", device='cuda:0'", "")),
    "array_str": (lambda: (rand(2, 2),), lambda xp, a: xp.array_str(a, precision=2)),
    "mgrid": (lambda: (), lambda xp: xp.mgrid[0:3, 1:5:2]),
    "ogrid": (lambda: (), lambda xp: xp.ogrid[0:4, 0:1:3j][1]),
    "r_": (lambda: (rand(3),), lambda xp, a: xp.r_[a, 0:3, a[:1]]),
    "c_": (lambda: (rand(3), rand(3)), lambda xp, a, b: xp.c_[a, b]),
    "linalg.cond": (lambda: (spd(4),), lambda xp, a: xp.linalg.cond(a)),
    "linalg.cross": (lambda: (rand(4, 3), rand(4, 3)), lambda xp, a, b: xp.linalg.cross(a, b)),
    "linalg.diagonal": (lambda: (rand(2, 3, 3),), lambda xp, a: xp.linalg.diagonal(a, offset=1)),
    "linalg.eig": (lambda: (spd(3),), lambda xp, a: np.sort(np.real(np.asarray(xp.linalg.eig(a)[0])))),
    "linalg.matmul": (lambda: (rand(2, 3, 4), rand(4, 2)), lambda xp, a, b: xp.linalg.matmul(a, b)),
    "linalg.matrix_norm": (lambda: (rand(2, 3, 3),), lambda xp, a: xp.linalg.matrix_norm(a, ord="nuc")),
    "linalg.matrix_power": (lambda: (rand(3, 3),), lambda xp, a: xp.linalg.matrix_power(a, 3)),
    "linalg.matrix_rank": (lambda: (rand(4, 2) @ rand(2, 5),), lambda xp, a: xp.linalg.matrix_rank(a)),
    "linalg.matrix_transpose": (lambda: (rand(2, 3, 4),), lambda xp, a: xp.linalg.matrix_transpose(a)),
    "linalg.norm": (lambda: (rand(3, 4),), lambda xp, a: xp.linalg.norm(a, ord=1, axis=1)),
    "linalg.outer": (lambda: (rand(3), rand(4)), lambda xp, a, b: xp.linalg.outer(a, b)),
    "linalg.pinv": (lambda: (rand(4, 3),), lambda xp, a: xp.linalg.pinv(a)),
    "linalg.tensordot": (lambda: (rand(2, 3, 4), rand(4, 3)),
                         lambda xp, a, b: xp.linalg.tensordot(a, b, axes=([1, 2], [1, 0]))),
    "linalg.tensorinv": (lambda: (spd(6).reshape(6, 2, 3),), lambda xp, a: xp.linalg.tensorinv(a, ind=1)),
    "linalg.tensorsolve": (lambda: (spd(6).reshape(2, 3, 6), rand(2, 3)), lambda xp, a, b: xp.linalg.tensorsolve(a, b)),
    "linalg.trace": (lambda: (rand(2, 3, 3),), lambda xp, a: xp.linalg.trace(a, offset=-1)),
    "linalg.vecdot": (lambda: (rand(3, 4), rand(4)), lambda xp, a, b: xp.linalg.vecdot(a, b)),
    "linalg.vector_norm": (lambda: (rand(3, 4),), lambda xp, a: xp.linalg.vector_norm(a, ord=3, axis=0)),
}


def same(got, want, device):
    if isinstance(want, (tuple, list)) and not isinstance(got, cu.ndarray):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            same(g, w, device)
        return
    if isinstance(got, (cu.ndarray, np.ndarray)):
        if isinstance(got, cu.ndarray):
            assert got.device == device, got.device
            got = got.to_device("cpu")
        g, w = np.asarray(got), np.asarray(want)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)
    elif isinstance(want, (float, np.floating)):
        assert got == pytest.approx(want, rel=1e-9)
    else:
        assert got == want


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_name_matches_numpy_on_device(name, device):
    make, call = CASES[name]
    inputs = make()
    want = call(np, *inputs)
    with cu.device(device):
        got = call(cu, *(cu.asarray(a, device=device) for a in inputs))
    same(got, want, device)


# NumPy's scalar types under every alias: each is a dtype on every device.
SCALAR_TYPES = ["bool_", "byte", "ubyte", "short", "ushort", "intc", "uintc", "int_", "uint", "long", "ulong",
                "longlong", "ulonglong", "intp", "uintp", "half", "single", "double", "csingle", "cdouble"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", SCALAR_TYPES)
def test_scalar_type_aliases_are_dtypes_on_device(name, device):
    t = getattr(cu, name)
    assert t is getattr(np, name)
    a = (RNG.random(6) * 20).astype(t)
    x = cu.asarray(a, device=device)
    assert x.dtype == np.dtype(t)
    same(cu.ones(4, dtype=t, device=device) + x[:4], np.ones(4, dtype=t) + a[:4], device)
    same(cu.zeros((2, 3), dtype=t, device=device).dtype, np.dtype(t), device)
    same(x.astype(t), a, device)


# The legacy global functions of numpy.random: cupric's draw the same values on every device.
LEGACY = {
    "random.rand": lambda: cu.random.rand(3, 4),
    "random.randn": lambda: cu.random.randn(5),
    "random.randint": lambda: cu.random.randint(3, 9, size=20),
    "random.random": lambda: cu.random.random(7),
    "random.random_sample": lambda: cu.random.random_sample((2, 2)),
    "random.uniform": lambda: cu.random.uniform(-2.0, 5.0, 9),
    "random.normal": lambda: cu.random.normal(1.0, 2.0, 9),
    "random.standard_normal": lambda: cu.random.standard_normal(6),
    "random.exponential": lambda: cu.random.exponential(2.0, 6),
    "random.choice": lambda: cu.random.choice(10, size=5, replace=False),
    "random.permutation": lambda: cu.random.permutation(cu.arange(8)),
    "random.Generator": lambda: cu.random.Generator(5).integers(0, 100, size=8),
}


def _draw(name, device):
    with cu.device(device):
        cu.random.seed(2026)
        got = LEGACY[name]()
    assert got.device == device
    return np.asarray(got.to_device("cpu"))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(LEGACY))
def test_legacy_random_functions_draw_the_same_stream_on_every_device(name, device):
    got, again, on_cpu = _draw(name, device), _draw(name, device), _draw(name, "cpu")
    np.testing.assert_array_equal(got, again)
    np.testing.assert_array_equal(got, on_cpu)
    assert len(np.unique(got)) > 1


@pytest.mark.parametrize("device", DEVICES)
def test_legacy_shuffle_and_distributions(device):
    with cu.device(device):
        cu.random.seed(7)
        x = cu.arange(50, device=device)
        cu.random.shuffle(x)
        u = np.asarray(cu.random.uniform(2.0, 4.0, 20000).to_device("cpu"))
        n = np.asarray(cu.random.normal(1.0, 3.0, 20000).to_device("cpu"))
        e = np.asarray(cu.random.exponential(2.0, 20000).to_device("cpu"))
    assert sorted(np.asarray(x.to_device("cpu")).tolist()) == list(range(50))
    assert not np.array_equal(np.asarray(x.to_device("cpu")), np.arange(50))
    assert 2.0 <= u.min() and u.max() < 4.0 and abs(u.mean() - 3.0) < 0.03
    assert abs(n.mean() - 1.0) < 0.1 and abs(n.std() - 3.0) < 0.1
    assert e.min() >= 0 and abs(e.mean() - 2.0) < 0.1
