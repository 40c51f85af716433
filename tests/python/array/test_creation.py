"""cupric creation functions (arange, linspace, logspace, eye, identity, tri, tril, triu,
meshgrid) against NumPy."""

import itertools

import cupric as cu
import numpy as np
import pytest
from array_helpers import raises_like as shared_raises_like

RNG = np.random.default_rng(7)


def check(got, want, exact=True, device=None):
    """`got` matches NumPy's `want`; with `device`, `got` also lives there."""
    assert isinstance(got, cu.ndarray)
    if device is not None:
        assert str(got.device).startswith(device), (got.device, device)
    got = np.asarray(got)
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=2e-7 if got.dtype.itemsize >= 8 else 2e-3)


def raises_like(np_fn, cu_fn):
    shared_raises_like(np_fn, cu_fn, same_message=False)


# ---- arange --------------------------------------------------------------------------------------


def test_arange_integers_follow_numpys_length_rule(device):
    values = [-7, -3, -1, 0, 1, 2, 5, 10]
    for start, stop, step in itertools.product(values, values, [-3, -2, -1, 1, 2, 4]):
        check(cu.arange(start, stop, step, device=device), np.arange(start, stop, step), device=device)
    for stop in values:
        check(cu.arange(stop, device=device), np.arange(stop), device=device)
        check(cu.arange(1, stop, device=device), np.arange(1, stop), device=device)


def test_arange_floats_match_numpy_bit_for_bit(device):
    for start, stop, step in [(0, 1, 0.1), (0.5, 3, 0.25), (-1.3, 2.7, 0.3), (10, -2.5, -0.7), (0, 5.5, 1),
                              (1e-3, 2e-3, 1e-4), (3, 0, -0.1), (0.0, 0.0, 1.0), (0, 1.0000001, 0.5)]:
        check(cu.arange(start, stop, step, device=device), np.arange(start, stop, step), device=device)
    check(cu.arange(2.5, device=device), np.arange(2.5), device=device)
    check(cu.arange(np.float32(3), device=device), np.arange(np.float32(3)), device=device)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64,
                                   np.float16, np.float32, np.float64, np.complex64, np.complex128])
def test_arange_dtypes(dtype, device):
    exact = np.dtype(dtype).kind in "iu" or dtype in (np.float64, np.complex128)
    check(cu.arange(0, 20, 3, dtype=dtype, device=device), np.arange(0, 20, 3, dtype=dtype), device=device)
    check(cu.arange(1.5, 9, 0.75, dtype=dtype, device=device), np.arange(1.5, 9, 0.75, dtype=dtype), exact=exact,
          device=device)
    check(cu.arange(5, dtype=cu.dtype(dtype), device=device), np.arange(5, dtype=dtype), device=device)


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


INT64, UINT64 = np.iinfo(np.int64), np.iinfo(np.uint64)


@pytest.mark.parametrize("dtype", [None, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
                                   np.uint64])
def test_arange_integers_are_exact_to_the_ends_of_the_type(dtype, device):
    # cu.arange(10**18 + 1, 10**18 + 4) was [10**18] * 3: integer ranges were computed in doubles
    info = np.iinfo(dtype or np.int64)
    lo, hi = int(info.min), int(info.max)
    cases = [(10**18 + 1, 10**18 + 4, 1), (hi - 5, hi + 1, 1), (hi, hi - 7, -2), (lo, lo + 5, 1),
             (lo + 7, lo - 1, -3), (lo, hi, (hi - lo) // 3 + 1), (hi, lo, -((hi - lo) // 5 + 1)),
             (0, hi, hi // 2), (hi - 1, lo, -(hi // 4)), (2**53 + 1, 2**53 + 9, 3)]
    for start, stop, step in cases:
        want = list(range(start, stop, step))  # the exact answer (NumPy's length is computed in doubles)
        if len(want) > 1 and not lo <= start + step <= hi:
            continue  # NumPy stores the first two values in the dtype: OverflowError (checked below)
        if dtype is None and not all(lo <= v <= hi for v in (start, stop, step)):
            continue  # a Python int past int64 makes the default dtype float64 (checked below)
        got = cu.arange(start, stop, step, dtype=dtype, device=device)
        assert got.dtype == np.dtype(dtype or np.int64) and str(got.device).startswith(device)
        assert got.tolist() == want, (start, stop, step)
        if len(want) == len(np.arange(start, stop, step, dtype=dtype)):
            check(got, np.arange(start, stop, step, dtype=dtype))


def test_arange_integer_overflow_and_wraparound_follow_numpy():
    check(cu.arange(0, 300, 100, dtype=cu.int8), np.arange(0, 300, 100, dtype=np.int8))  # wraps past the 2nd
    check(cu.arange(250, 251, 10, dtype=cu.uint8), np.arange(250, 251, 10, dtype=np.uint8))
    check(cu.arange(-3, -5, dtype=cu.uint8), np.arange(-3, -5, dtype=np.uint8))  # empty: nothing stored
    check(cu.arange(0.5, 5, 1.5, dtype=cu.uint8), np.arange(0.5, 5, 1.5, dtype=np.uint8))
    check(cu.arange(-2.5, 3, 2, dtype=cu.int8), np.arange(-2.5, 3, 2, dtype=np.int8))
    check(cu.arange(2**64 - 3, 2**64, dtype=cu.uint64), np.arange(2**64 - 3, 2**64, dtype=np.uint64))
    check(cu.arange(INT64.max - 2, INT64.max, dtype=cu.float64), np.arange(INT64.max - 2, INT64.max, dtype=np.float64))
    # past the second value NumPy's fill wraps around in the dtype, and so does cupric's
    check(cu.arange(INT64.max - 1, INT64.max + 5, dtype=cu.int64),
          np.arange(INT64.max - 1, INT64.max + 5, dtype=np.int64))
    for args, kwargs in [((-3, 3), {"dtype": np.uint8}), ((250, 270, 10), {"dtype": np.uint8})]:
        cu_kwargs = {"dtype": cu.dtype(kwargs["dtype"])}
        raises_like(lambda a=args, k=kwargs: np.arange(*a, **k), lambda a=args, k=cu_kwargs: cu.arange(*a, **k))
    # past int64, NumPy promotes int64 with uint64 to float64 for the default dtype
    assert cu.arange(2**63, 2**63 + 3).dtype == np.arange(2**63, 2**63 + 3).dtype == np.float64
    # the length is exact in integers (NumPy computes it in doubles: np.arange(0, 2**62 + 1, 2**62) has 1)
    assert cu.arange(0, 2**62 + 1, 2**62).tolist() == [0, 2**62]
    with pytest.raises(ValueError, match="Maximum allowed size exceeded"):
        cu.arange(-(2**63), 2**64 - 1)


def test_arange_device_and_default_device():
    assert cu.arange(3, device="cpu").device == "cpu"
    with pytest.raises(ValueError, match="device"):
        cu.arange(3, device="bogus")


# ---- zeros / ones / full -------------------------------------------------------------------------


def test_zeros_ones_full_and_likes(device):
    for shape in [(), (0,), (3,), (2, 3), (2, 0, 4)]:
        for dtype in [None, np.bool_, np.int8, np.uint32, np.float16, np.float32, np.complex128]:
            check(cu.zeros(shape, dtype=dtype, device=device), np.zeros(shape, dtype=dtype), device=device)
            check(cu.ones(shape, dtype=dtype, device=device), np.ones(shape, dtype=dtype), device=device)
    for fill, dtype in [(7, None), (-2.5, None), (True, None), (1 + 2j, None), (300, np.int16), (2.75, np.int32),
                        (-1, np.float32), (1, np.bool_)]:
        check(cu.full((2, 3), fill, dtype=dtype, device=device), np.full((2, 3), fill, dtype=dtype), device=device)
    n = RNG.random((3, 4)).astype(np.float32)
    c = cu.asarray(n, device=device)
    check(cu.zeros_like(c), np.zeros_like(n), device=device)
    check(cu.ones_like(c, dtype=cu.int8), np.ones_like(n, dtype=np.int8), device=device)
    check(cu.full_like(c[::-1, ::2], 4.5), np.full_like(n[::-1, ::2], 4.5), device=device)


# ---- linspace / logspace -------------------------------------------------------------------------


@pytest.mark.parametrize("num", [0, 1, 2, 5, 50, 101])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_scalars(num, endpoint, device):
    for start, stop in [(0, 1), (-3.5, 7.25), (10, -10), (1e-300, 3e-300), (2, 2), (0, 1e-320)]:
        got = cu.linspace(start, stop, num, endpoint=endpoint, device=device)
        check(got, np.linspace(start, stop, num, endpoint=endpoint), device=device)
        got, step = cu.linspace(start, stop, num, endpoint=endpoint, retstep=True, device=device)
        want, wstep = np.linspace(start, stop, num, endpoint=endpoint, retstep=True)
        check(got, want, device=device)
        assert (np.isnan(step) and np.isnan(wstep)) or step == wstep


def test_linspace_dtypes_and_arrays(device):
    for dtype in [np.int32, np.int64, np.uint8, np.float16, np.float32, np.complex128]:
        check(cu.linspace(-2, 20, 9, dtype=dtype, device=device), np.linspace(-2, 20, 9, dtype=dtype), device=device)
    check(cu.linspace(cu.asarray(np.float32(0), device=device), 1, 7), np.linspace(np.array(np.float32(0)), 1, 7),
          device=device)
    start = RNG.random(3).astype(np.float32)
    stop = RNG.random((2, 1)) * 10
    for axis in [0, 1, -1, 2]:
        check(cu.linspace(cu.asarray(start, device=device), cu.asarray(stop, device=device), 5, axis=axis),
              np.linspace(start, stop, 5, axis=axis), device=device)
    check(cu.linspace(1 + 2j, 3 - 1j, 4, device=device), np.linspace(1 + 2j, 3 - 1j, 4), device=device)
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


def test_eye_and_identity(device):
    for n, m, k in itertools.product([0, 1, 3, 4], [None, 0, 2, 5], [-5, -2, -1, 0, 1, 3, 6]):
        check(cu.eye(n, m, k, device=device), np.eye(n, m, k), device=device)
    for dtype in [np.bool_, np.int8, np.uint64, np.float16, np.float32, np.complex64]:
        check(cu.eye(3, 4, 1, dtype=dtype, device=device), np.eye(3, 4, 1, dtype=dtype), device=device)
        check(cu.identity(3, dtype=dtype, device=device), np.identity(3, dtype=dtype), device=device)
    check(cu.identity(4, device=device), np.identity(4), device=device)
    raises_like(lambda: np.eye(-1), lambda: cu.eye(-1))


def test_tri(device):
    for n, m, k in itertools.product([0, 1, 4], [None, 0, 3, 6], [-4, -1, 0, 1, 2, 7]):
        check(cu.tri(n, m, k, device=device), np.tri(n, m, k), device=device)
    check(cu.tri(3, dtype=cu.int32, device=device), np.tri(3, dtype=np.int32), device=device)
    check(cu.tri(3, 2, dtype=bool, device=device), np.tri(3, 2, dtype=bool), device=device)


def test_tril_and_triu_on_matrices_and_stacks(device):
    for shape in [(4, 4), (3, 5), (5, 2), (2, 3, 4), (2, 1, 3, 3), (0, 3), (4,)]:
        n = RNG.integers(-9, 9, size=shape).astype(np.float32)
        c = cu.asarray(n, device=device)
        for k in [-3, -1, 0, 1, 4]:
            check(cu.tril(c, k), np.tril(n, k), device=device)
            check(cu.triu(c, k=k), np.triu(n, k=k), device=device)
    n = RNG.random((5, 6))
    check(cu.tril(cu.asarray(n[::-1, ::2], device=device)), np.tril(n[::-1, ::2]), device=device)
    check(cu.triu(cu.asarray(n, device=device)[::-1, ::2], -1), np.triu(n[::-1, ::2], -1), device=device)
    b = RNG.random((3, 3)) > 0.3
    check(cu.triu(cu.asarray(b, device=device)), np.triu(b), device=device)
    with pytest.raises(ValueError):
        cu.tril(cu.asarray(1.0, device=device))


EXTREME_OFFSETS = [-(2**63), -(2**63) + 1, -(2**31), -7, 7, 2**31, 2**63 - 1, 2**63, 2**100, -(2**100)]


def triangle(n, m, k):
    """np.tri by its definition (j - i <= k), for offsets NumPy itself cannot take."""
    i, j = np.indices((n, m))
    return (j - i <= k).astype(np.float64)


def test_matrices_at_extreme_diagonal_offsets(device):
    # cu.tril(x, k=-2**63) was all of x (-k overflowed); NumPy raises OverflowError for most of
    # these offsets, so the oracle is the definition
    x = RNG.integers(1, 9, size=(3, 4)).astype(np.float32)
    c = cu.asarray(x, device=device)
    for k in EXTREME_OFFSETS:
        mask = triangle(3, 4, k)
        check(cu.tri(3, 4, k, device=device), mask, device=device)
        check(cu.tril(c, k), np.where(mask > 0, x, 0).astype(np.float32), device=device)
        check(cu.triu(c, k), np.where(triangle(3, 4, k - 1) > 0, 0, x).astype(np.float32), device=device)
        check(cu.eye(3, 4, k, device=device), np.eye(3, 4, max(min(k, 4), -3)), device=device)
        try:
            want = np.tril(x, k)
        except OverflowError:
            continue
        check(cu.tril(c, k), want, device=device)
        check(cu.triu(c, k), np.triu(x, k), device=device)
    with pytest.raises(TypeError):
        cu.tril(c, 1.5)


# ---- meshgrid ----------------------------------------------------------------------------------


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid(indexing, sparse, device):
    xs = [RNG.random(3), RNG.integers(0, 9, 4), RNG.random(2).astype(np.float32)]
    for k in range(4):
        got = cu.meshgrid(*[cu.asarray(x, device=device) for x in xs[:k]], indexing=indexing, sparse=sparse)
        want = np.meshgrid(*xs[:k], indexing=indexing, sparse=sparse)
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            check(g, w, device=device)


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
