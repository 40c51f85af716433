"""cupric's set functions (python/cupric/_sets.py) against NumPy on every device: unique with
every return, axis and equal_nan; the Array API's unique_*; isin/in1d and the *1d set algebra."""

import cupric as cu
import numpy as np
import pytest

# "cuda:old": the GPU with the first sort and unique kernels (CUPRIC_SORT_KERNEL=old, set by conftest.py)
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu), pytest.param("cuda:old", marks=pytest.mark.gpu)]


def host(a):
    return np.asarray(a.to_device("cpu")) if isinstance(a, cu.ndarray) else np.asarray(a)


def same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            same(g, w)
        return
    g, w = host(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
    np.testing.assert_array_equal(g, w)


def on(x, device):
    return cu.asarray(x).to_device(device.removesuffix(":old"))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["int8", "uint32", "int64", "float32", "float64", "complex64", "bool"])
@pytest.mark.parametrize("returns", [(), ("return_index",), ("return_inverse",), ("return_counts",),
                                     ("return_index", "return_inverse", "return_counts")])
def test_unique_matches_numpy(dtype, returns, device):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 6, (9, 14)).astype(dtype)
    kw = dict.fromkeys(returns, True)
    same(cu.unique(on(x, device), **kw), np.unique(x, **kw))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("equal_nan", [True, False])
def test_unique_nan(equal_nan, device):
    x = np.array([2.0, np.nan, 1.0, np.nan, 2.0, -0.0, 0.0, np.inf, np.nan])
    same(cu.unique(on(x, device), equal_nan=equal_nan, return_counts=True),
         np.unique(x, equal_nan=equal_nan, return_counts=True))
    z = np.array([1 + 1j, complex(np.nan, 0), 1 + 1j, complex(0, np.nan)])
    same(cu.unique(on(z, device), equal_nan=equal_nan), np.unique(z, equal_nan=equal_nan))


UNIQUE_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
                 "float32", "float64"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", UNIQUE_DTYPES)
def test_unique_one_pass_sizes_and_runs(dtype, device):
    # sorting.hpp's unique_flat: its GPU tiles hold 4096 elements, so runs cross tile edges; sizes
    # around one and two tiles, many tiles, one run, every element its own run
    rng = np.random.default_rng(21)
    everything = ("return_index", "return_inverse", "return_counts")
    for n, distinct in [(1, 1), (4095, 7), (4096, 4096), (4097, 300), (8193, 2), (50_000, 5000), (70_001, 1)]:
        x = rng.integers(0, distinct, n).astype(dtype)
        if np.dtype(dtype).kind == "f" and n > 8:
            x[rng.integers(0, n, 5)] = np.nan
            x[rng.integers(0, n, 5)] = -0.0
        for kw in [{}, dict.fromkeys(everything, True), {"return_counts": True, "equal_nan": False}]:
            same(cu.unique(on(x.reshape(-1, 1) if n % 2 else x, device), **kw),
                 np.unique(x.reshape(-1, 1) if n % 2 else x, **kw))
    for edge in (4095, 4096, 4097):  # a run ends at (or beside) the first tile's last element
        x = np.repeat(np.array([0, 1]).astype(dtype), [edge, 9000 - edge])
        same(cu.unique(on(x, device), return_counts=True, return_inverse=True),
             np.unique(x, return_counts=True, return_inverse=True))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("axis", [0, 1, -1, 2])
def test_unique_axis(axis, device):
    x = np.random.default_rng(1).integers(0, 2, (6, 4, 3)).astype(np.float32)
    kw = dict(return_index=True, return_inverse=True, return_counts=True)
    same(cu.unique(on(x, device), axis=axis, **kw), np.unique(x, axis=axis, **kw))


@pytest.mark.parametrize("device", DEVICES)
def test_unique_empty_and_errors(device):
    same(cu.unique(on(np.zeros(0), device), return_counts=True), np.unique(np.zeros(0), return_counts=True))
    with pytest.raises(np.exceptions.AxisError):
        cu.unique(cu.ones((2, 2)), axis=2)


@pytest.mark.parametrize("device", DEVICES)
def test_array_api_unique_functions(device):
    x = np.random.default_rng(2).integers(-3, 3, (5, 7))
    c = on(x, device)
    for name in ["unique_all", "unique_counts", "unique_inverse"]:
        got, want = getattr(cu, name)(c), getattr(np, name)(x)
        assert got._fields == want._fields
        same(tuple(got), tuple(want))
    same(cu.unique_values(c), np.sort(np.unique_values(x)))  # NumPy leaves its (hash) order unspecified


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("invert", [False, True])
def test_isin_and_in1d(invert, device):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 30, (4, 10)).astype(np.float64)
    a[0, 0] = np.nan
    b = rng.integers(0, 30, 12).astype(np.int32)
    same(cu.isin(on(a, device), on(b, device), invert=invert), np.isin(a, b, invert=invert))
    same(cu.in1d(on(a, device), on(b, device), invert=invert), np.isin(a, b, invert=invert).ravel())
    same(cu.isin(on(a, device), on(b[:0], device)), np.isin(a, b[:0]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["union1d", "setdiff1d", "setxor1d", "intersect1d"])
def test_set_algebra(name, device):
    rng = np.random.default_rng(4)
    a, b = rng.integers(0, 25, 40), rng.integers(10, 40, (3, 7))
    same(getattr(cu, name)(on(a, device), on(b, device)), getattr(np, name)(a, b))
    ua, ub = np.unique(a), np.unique(b)
    if name != "union1d":
        same(getattr(cu, name)(on(ua, device), on(ub, device), assume_unique=True),
             getattr(np, name)(ua, ub, assume_unique=True))


@pytest.mark.parametrize("device", DEVICES)
def test_intersect1d_indices(device):
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 20, 30), rng.integers(5, 25, 30)
    same(cu.intersect1d(on(a, device), on(b, device), return_indices=True),
         np.intersect1d(a, b, return_indices=True))
