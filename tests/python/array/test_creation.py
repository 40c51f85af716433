"""cupric creation functions (arange, linspace, logspace, eye, identity, tri, tril, triu,
meshgrid) against NumPy."""

import itertools

import numpy as np
import pytest

import cupric as cu

RNG = np.random.default_rng(7)


def check(got, want, exact=True):
    assert isinstance(got, cu.ndarray)
    got = np.asarray(got)
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=2e-7 if got.dtype.itemsize >= 8 else 2e-3)


def raises_like(np_fn, cu_fn):
    with pytest.raises(Exception) as np_err:
        np_fn()
    with pytest.raises(type(np_err.value)):
        cu_fn()


# ---- arange --------------------------------------------------------------------------------------


def test_arange_integers_follow_numpys_length_rule():
    values = [-7, -3, -1, 0, 1, 2, 5, 10]
    for start, stop, step in itertools.product(values, values, [-3, -2, -1, 1, 2, 4]):
        check(cu.arange(start, stop, step), np.arange(start, stop, step))
    for stop in values:
        check(cu.arange(stop), np.arange(stop))
        check(cu.arange(1, stop), np.arange(1, stop))


def test_arange_floats_match_numpy_bit_for_bit():
    for start, stop, step in [(0, 1, 0.1), (0.5, 3, 0.25), (-1.3, 2.7, 0.3), (10, -2.5, -0.7), (0, 5.5, 1),
                              (1e-3, 2e-3, 1e-4), (3, 0, -0.1), (0.0, 0.0, 1.0), (0, 1.0000001, 0.5)]:
        check(cu.arange(start, stop, step), np.arange(start, stop, step))
    check(cu.arange(2.5), np.arange(2.5))
    check(cu.arange(np.float32(3)), np.arange(np.float32(3)))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64,
                                   np.float16, np.float32, np.float64, np.complex64, np.complex128])
def test_arange_dtypes(dtype):
    exact = np.dtype(dtype).kind in "iu" or dtype in (np.float64, np.complex128)
    check(cu.arange(0, 20, 3, dtype=dtype), np.arange(0, 20, 3, dtype=dtype))
    check(cu.arange(1.5, 9, 0.75, dtype=dtype), np.arange(1.5, 9, 0.75, dtype=dtype), exact=exact)
    check(cu.arange(5, dtype=cu.dtype(dtype)), np.arange(5, dtype=dtype))


def test_arange_in_the_result_dtype_like_numpy():
    # NumPy computes the first two values in the dtype and continues with their difference
    check(cu.arange(0.5, 3, 0.5, dtype=cu.int64), np.arange(0.5, 3, 0.5, dtype=np.int64))
    check(cu.arange(0, 5, 0.5, dtype=cu.int8), np.arange(0, 5, 0.5, dtype=np.int8))
    check(cu.arange(2, dtype=cu.bool), np.arange(2, dtype=bool))
    raises_like(lambda: np.arange(3, dtype=bool), lambda: cu.arange(3, dtype=cu.bool))


def test_arange_errors_and_large_values():
    with pytest.raises(ZeroDivisionError):
        cu.arange(0, 10, 0)
    with pytest.raises(ZeroDivisionError):
        cu.arange(0.0, 1.0, 0.0)
    with pytest.raises(ValueError):
        cu.arange(0, float("nan"))
    check(cu.arange(2**40, 2**40 + 5), np.arange(2**40, 2**40 + 5))
    check(cu.arange(-(2**40), -(2**40) - 10, -3), np.arange(-(2**40), -(2**40) - 10, -3))
    check(cu.arange(cu.asarray(4)), np.arange(4))


def test_arange_device_and_default_device():
    assert cu.arange(3, device="cpu").device == "cpu"
    with pytest.raises(ValueError, match="device"):
        cu.arange(3, device="bogus")


# ---- linspace / logspace -------------------------------------------------------------------------


@pytest.mark.parametrize("num", [0, 1, 2, 5, 50, 101])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_scalars(num, endpoint):
    for start, stop in [(0, 1), (-3.5, 7.25), (10, -10), (1e-300, 3e-300), (2, 2), (0, 1e-320)]:
        got = cu.linspace(start, stop, num, endpoint=endpoint)
        check(got, np.linspace(start, stop, num, endpoint=endpoint))
        got, step = cu.linspace(start, stop, num, endpoint=endpoint, retstep=True)
        want, wstep = np.linspace(start, stop, num, endpoint=endpoint, retstep=True)
        check(got, want)
        assert (np.isnan(step) and np.isnan(wstep)) or step == wstep


def test_linspace_dtypes_and_arrays():
    for dtype in [np.int32, np.int64, np.uint8, np.float16, np.float32, np.complex128]:
        check(cu.linspace(-2, 20, 9, dtype=dtype), np.linspace(-2, 20, 9, dtype=dtype))
    check(cu.linspace(cu.asarray(np.float32(0)), 1, 7), np.linspace(np.array(np.float32(0)), 1, 7))
    start = RNG.random(3).astype(np.float32)
    stop = RNG.random((2, 1)) * 10
    for axis in [0, 1, -1, 2]:
        check(cu.linspace(cu.asarray(start), cu.asarray(stop), 5, axis=axis), np.linspace(start, stop, 5, axis=axis))
    check(cu.linspace(1 + 2j, 3 - 1j, 4), np.linspace(1 + 2j, 3 - 1j, 4))
    with pytest.raises(ValueError, match="^Number of samples, -1, must be non-negative.$"):
        cu.linspace(0, 1, -1)


def test_logspace():
    for kwargs in [dict(), dict(num=7, endpoint=False), dict(base=2), dict(base=2.5, num=4), dict(dtype=np.float32),
                   dict(dtype=np.int64, num=5)]:
        dtype = kwargs.pop("dtype", None)
        check(cu.logspace(0, 3, dtype=dtype, **kwargs), np.logspace(0, 3, dtype=dtype, **kwargs), exact=False)
    start = np.array([0.0, 1.0], np.float32)
    check(cu.logspace(cu.asarray(start), 2, 4), np.logspace(start, 2, 4), exact=False)
    base = np.array([2.0, 10.0])
    check(cu.logspace(0, 3, 4, base=cu.asarray(base)), np.logspace(0, 3, 4, base=base), exact=False)
    check(cu.logspace(0, cu.asarray([1.0, 2.0]), 3, base=cu.asarray(base), axis=1),
          np.logspace(0, np.array([1.0, 2.0]), 3, base=base, axis=1), exact=False)


# ---- matrices ----------------------------------------------------------------------------------


def test_eye_and_identity():
    for n, m, k in itertools.product([0, 1, 3, 4], [None, 0, 2, 5], [-5, -2, -1, 0, 1, 3, 6]):
        check(cu.eye(n, m, k), np.eye(n, m, k))
    for dtype in [np.bool_, np.int8, np.uint64, np.float16, np.float32, np.complex64]:
        check(cu.eye(3, 4, 1, dtype=dtype), np.eye(3, 4, 1, dtype=dtype))
        check(cu.identity(3, dtype=dtype), np.identity(3, dtype=dtype))
    check(cu.identity(4), np.identity(4))
    raises_like(lambda: np.eye(-1), lambda: cu.eye(-1))


def test_tri():
    for n, m, k in itertools.product([0, 1, 4], [None, 0, 3, 6], [-4, -1, 0, 1, 2, 7]):
        check(cu.tri(n, m, k), np.tri(n, m, k))
    check(cu.tri(3, dtype=cu.int32), np.tri(3, dtype=np.int32))
    check(cu.tri(3, 2, dtype=bool), np.tri(3, 2, dtype=bool))


def test_tril_and_triu_on_matrices_and_stacks():
    for shape in [(4, 4), (3, 5), (5, 2), (2, 3, 4), (2, 1, 3, 3), (0, 3), (4,)]:
        n = RNG.integers(-9, 9, size=shape).astype(np.float32)
        c = cu.asarray(n)
        for k in [-3, -1, 0, 1, 4]:
            check(cu.tril(c, k), np.tril(n, k))
            check(cu.triu(c, k=k), np.triu(n, k=k))
    n = RNG.random((5, 6))[::-1, ::2]
    check(cu.tril(cu.asarray(n)), np.tril(n))
    b = RNG.random((3, 3)) > 0.3
    check(cu.triu(cu.asarray(b)), np.triu(b))
    with pytest.raises(ValueError):
        cu.tril(cu.asarray(1.0))


# ---- meshgrid ----------------------------------------------------------------------------------


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid(indexing, sparse):
    xs = [RNG.random(3), RNG.integers(0, 9, 4), RNG.random(2).astype(np.float32)]
    for k in range(4):
        got = cu.meshgrid(*[cu.asarray(x) for x in xs[:k]], indexing=indexing, sparse=sparse)
        want = np.meshgrid(*xs[:k], indexing=indexing, sparse=sparse)
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            check(g, w)


def test_meshgrid_copy_and_errors():
    x, y = cu.arange(3), cu.arange(2)
    gx, gy = cu.meshgrid(x, y)
    gx[0, 0] = 100
    assert np.asarray(x)[0] == 0
    vx, vy = cu.meshgrid(x, y, copy=False)
    assert vx._storage_id == x._storage_id
    check(cu.meshgrid(cu.arange(4).reshape(2, 2), y)[0], np.meshgrid(np.arange(4).reshape(2, 2), np.arange(2))[0])
    with pytest.raises(ValueError, match="Valid values for `indexing` are 'xy' and 'ij'."):
        cu.meshgrid(x, indexing="yx")
