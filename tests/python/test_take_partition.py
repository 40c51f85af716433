"""python/cupric/_sorting.py against NumPy on every device: take, take_along_axis, put,
put_along_axis, partition, argpartition, lexsort, sort_complex; their errors."""

import cupric as cu
import numpy as np
import pytest

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def host(a):
    return np.asarray(a.to_device("cpu"))


def on(x, device):
    return cu.asarray(x).to_device(device)


def same(got, want):
    g = host(got)
    assert g.dtype == want.dtype and g.shape == want.shape, (g.dtype, g.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_take(axis, mode, device):
    x = np.random.default_rng(0).standard_normal((5, 6))
    ind = np.array([[0, -1], [4, 2]]) if mode == "raise" else np.array([[0, 9], [-7, 2]])
    same(cu.take(on(x, device), on(ind, device), axis=axis, mode=mode), np.take(x, ind, axis=axis, mode=mode))


def test_take_errors():
    with pytest.raises(IndexError, match="out of bounds"):
        cu.take(cu.arange(3), cu.asarray([3]))
    with pytest.raises(IndexError):
        cu.take(cu.arange(3.0), cu.asarray([0.5]))
    with pytest.raises(ValueError, match="clipmode"):
        cu.take(cu.arange(3), cu.asarray([0]), mode="nope")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("axis", [0, 1, 2, -1, None])
def test_take_and_put_along_axis(axis, device):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 100, (4, 5, 6))
    idx = np.argsort(x, axis=axis, kind="stable")
    same(cu.take_along_axis(on(x, device), on(idx, device), axis=axis), np.take_along_axis(x, idx, axis=axis))
    if axis is not None:
        some = np.take(idx, [0, 2], axis=axis)
        want = x.copy()
        np.put_along_axis(want, some, -1, axis=axis)
        got = on(x, device)
        cu.put_along_axis(got, on(some, device), -1, axis=axis)
        same(got, want)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_put(mode, device):
    x = np.arange(12.0).reshape(3, 4)
    ind = [0, 5, -1, 3] if mode == "raise" else [0, 15, -20, 3]
    want = x.copy()
    np.put(want, ind, [7.5, 8.5, 9.5], mode=mode)
    got = on(x, device)
    cu.put(got, ind, [7.5, 8.5, 9.5], mode=mode)
    same(got, want)
    with pytest.raises(IndexError):
        cu.put(on(x, device), [12], 1.0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kth", [0, 3, -1, [1, 5]])
def test_partition_and_argpartition(kth, device):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 9))
    x[1, 2] = np.nan
    got = host(cu.partition(on(x, device), kth, axis=1))
    want = np.partition(x, kth, axis=1)
    for k in np.atleast_1d(kth):
        np.testing.assert_array_equal(got[:, k], want[:, k])
    order = host(cu.argpartition(on(x, device), kth, axis=1))
    for k in np.atleast_1d(kth):
        np.testing.assert_array_equal(np.take_along_axis(x, order, 1)[:, k], want[:, k])
    with pytest.raises(ValueError, match="out of bounds"):
        cu.partition(on(x, device), 9)


@pytest.mark.parametrize("device", DEVICES)
def test_lexsort(device):
    rng = np.random.default_rng(3)
    keys = [rng.integers(0, 3, 50), rng.standard_normal(50).round(), rng.integers(0, 2, 50)]
    same(cu.lexsort([on(k, device) for k in keys]), np.lexsort(keys))
    two = np.stack([rng.integers(0, 3, (4, 6)), rng.integers(0, 3, (4, 6))])
    same(cu.lexsort(on(two, device), axis=0), np.lexsort(two, axis=0))
    with pytest.raises(ValueError, match="same shape"):
        cu.lexsort([cu.arange(3), cu.arange(4)])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float32", "float64", "complex64"])
def test_sort_complex(dtype, device):
    x = (np.random.default_rng(4).standard_normal(20) * 5).astype(dtype)
    same(cu.sort_complex(on(x, device)), np.sort_complex(x))
