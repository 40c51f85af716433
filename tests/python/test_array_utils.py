"""python/cupric/_array_utils.py against NumPy, on the CPU and (marked gpu) on a CUDA device."""

import cupric as cu
import numpy as np
import pytest

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
RNG = np.random.default_rng(66)


def same(got, want):
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
    np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("device", DEVICES)
def test_conversions_and_questions(device):
    a = RNG.standard_normal((3, 4))
    x = cu.asarray(a, device=device)
    same(cu.asanyarray(x), a)
    c = cu.copy(x)
    c[0, 0] = 99
    assert float(x[0, 0]) == a[0, 0]
    same(cu.asarray_chkfinite(x), a)
    with pytest.raises(ValueError, match="infs or NaNs"):
        cu.asarray_chkfinite(cu.asarray([1.0, np.nan], device=device))
    assert cu.ndim(x) == 2 and cu.shape(x) == (3, 4) and cu.size(x) == 12 and cu.size(x, 1) == 4
    assert cu.ndim([[1, 2]]) == 2 and cu.shape([1, 2, 3]) == (3,)
    assert cu.isscalar(3.0) and not cu.isscalar([3.0]) and cu.iterable([1]) and not cu.iterable(3)
    assert not cu.isfortran(x) and cu.isfortran(x.T)
    assert cu.issubdtype(x.dtype, cu.floating) and not cu.issubdtype(cu.int32, cu.floating)
    assert cu.common_type(x, cu.asarray([1], device=device)) is np.float64
    assert cu.min_scalar_type(10) == np.min_scalar_type(10) and cu.typename("d") == np.typename("d")
    assert cu.mintypecode("idF") == np.mintypecode("idF")


@pytest.mark.parametrize("device", DEVICES)
def test_memory_overlap(device):
    x = cu.asarray(RNG.standard_normal(20), device=device)
    assert cu.shares_memory(x, x[2:5]) and cu.may_share_memory(x[::2], x[1::2])
    assert not cu.shares_memory(x[:5], x[5:]) and not cu.may_share_memory(x[:5], x[5:])
    assert not cu.shares_memory(x, cu.asarray(RNG.standard_normal(20), device=device))
    assert not cu.shares_memory(x[::2], x[1::2])  # interleaved, no common element


@pytest.mark.parametrize("device", DEVICES)
def test_bits(device):
    a = RNG.integers(0, 2, (3, 13)).astype(bool)
    for axis in (None, 0, 1):
        for order in ("big", "little"):
            same(cu.packbits(cu.asarray(a, device=device), axis=axis, bitorder=order),
                 np.packbits(a, axis=axis, bitorder=order))
    p = RNG.integers(0, 256, (2, 3)).astype(np.uint8)
    for axis, count in ((None, None), (1, None), (0, 5), (1, -3), (1, 30)):
        same(cu.unpackbits(cu.asarray(p, device=device), axis=axis, count=count),
             np.unpackbits(p, axis=axis, count=count))
    ints = RNG.integers(-2**31, 2**31, 50).astype(np.int64)
    same(cu.bitwise_count(cu.asarray(ints, device=device)), np.bitwise_count(ints))
    same(cu.bitwise_count(cu.asarray(p, device=device)), np.bitwise_count(p))
    with pytest.raises(TypeError):
        cu.packbits(cu.asarray([1.5], device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_i0_kaiser(device):
    x = np.concatenate([RNG.uniform(-50, 50, 200), [0.0, 1e-8, 30.0, 700.0]])
    np.testing.assert_allclose(np.asarray(cu.i0(cu.asarray(x, device=device))), np.i0(x), rtol=1e-14)
    for M, beta in ((0, 1.0), (1, 5.0), (12, 14.0), (51, 0.0)):
        np.testing.assert_allclose(np.asarray(cu.kaiser(M, beta)), np.kaiser(M, beta), rtol=1e-13, atol=1e-15)


def test_broadcast():
    a, b = cu.asarray([[1], [2]]), cu.asarray([3, 4, 5])
    bc, nb = cu.broadcast(a, b), np.broadcast(np.asarray([[1], [2]]), np.asarray([3, 4, 5]))
    assert (bc.shape, bc.ndim, bc.size, bc.numiter) == (nb.shape, nb.ndim, nb.size, nb.numiter)
    assert list(bc) == [tuple(int(v) for v in t) for t in nb]


@pytest.mark.parametrize("device", DEVICES)
def test_testing_module_compares_on_the_host(device):
    a = RNG.standard_normal(5)
    x = cu.asarray(a, device=device)
    cu.testing.assert_allclose(x, a)
    cu.testing.assert_array_equal(x, cu.asarray(a, device=device))
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 5"):
        cu.testing.assert_allclose(x, np.where(np.arange(5) == 2, a + 1, a))
    with cu.errstate(divide="ignore"):
        assert cu.geterr()["divide"] == "ignore"
    assert isinstance(cu.typing.ArrayLike, object) and "cupric.testing" in repr(cu.testing)
