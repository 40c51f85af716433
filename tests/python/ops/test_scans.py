"""cupric scans (cumsum, cumprod, cumulative_sum, cumulative_prod) against NumPy: dtypes, axes,
views, 0-d and empty arrays, dtype=/out=, include_initial, float16 rounding and errors."""

import cupric as cu
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ALL_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
              "float16", "float32", "float64", "complex64", "complex128"]
RTOL = {"float16": 0, "float32": 1e-6, "float64": 1e-13, "complex64": 1e-6, "complex128": 1e-13}


def rand(dtype, shape, rng=None):
    rng = rng or np.random.default_rng(0)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        return rng.integers(0 if dt.kind == "u" else -3, 4, size=shape).astype(dt)
    x = rng.random(shape) + 0.5
    if dt.kind == "c":
        x = x + 1j * (rng.random(shape) - 0.5)
    return np.asarray(x).astype(dt)


def check(got, want):
    assert isinstance(got, cu.ndarray)
    want = np.asarray(want)
    g = np.asarray(got)
    assert g.shape == want.shape and g.dtype == want.dtype, (g.shape, g.dtype, want.shape, want.dtype)
    if want.dtype.kind in "biu" or want.dtype == np.float16:
        np.testing.assert_array_equal(g, want)  # same sequential order: bit-identical
    else:
        np.testing.assert_allclose(g, want, rtol=RTOL[want.dtype.name])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_dtype_and_axis_sweep(dtype, op, axis, device):
    x = rand(dtype, (5, 6))
    check(getattr(cu, op)(cu.asarray(x, device=device), axis=axis), getattr(np, op)(x, axis=axis))


def test_float16_rounds_every_step_like_numpy(device):
    ones = np.ones(5000, np.float16)
    check(cu.cumsum(cu.asarray(ones, device=device)), np.cumsum(ones))      # stalls at 2048, as NumPy's
    x = rand("float16", (300, 7))
    for axis in (0, 1):
        check(cu.cumsum(cu.asarray(x, device=device), axis=axis), np.cumsum(x, axis=axis))
    check(cu.cumsum(cu.asarray(ones, device=device), dtype=cu.float32), np.cumsum(ones, dtype=np.float32))


def test_bfloat16_rounds_every_step():
    x32 = rand("float32", (40,))
    xb = cu.asarray(x32).astype(cu.bfloat16)
    got = np.asarray(cu.cumsum(xb).astype(cu.float32))
    vals = np.asarray(xb.astype(cu.float32))
    want, acc = [], np.float32(0)
    for v in vals:
        acc = np.float32(ml_dtypes.bfloat16(acc + v))
        want.append(acc)
    np.testing.assert_array_equal(got, np.array(want, np.float32))


@pytest.mark.parametrize("index", range(5))
def test_views(index, device):
    base = rand("float64", (8, 9, 10))
    x = [base[::2, ::-1], base.transpose(2, 0, 1), base[:, 4, ::-3], base[::-1, ::-1, ::-1],
         np.broadcast_to(base[0, 0], (3, 10))][index]
    c = cu.asarray(x, device=device)
    for axis in [None] + list(range(x.ndim)):
        check(cu.cumsum(c, axis=axis), np.cumsum(x, axis=axis))
        check(cu.cumprod(c, axis=axis), np.cumprod(x, axis=axis))


def test_zero_d_and_empty():
    check(cu.cumsum(cu.asarray(np.array(3))), np.cumsum(np.array(3)))
    check(cu.cumsum(cu.asarray(np.array(3)), axis=0), np.cumsum(np.array(3), axis=0))
    check(cu.cumulative_sum(cu.asarray(np.array(2.0))), np.cumulative_sum(np.array(2.0)))
    for shape, axis in [((0,), None), ((0, 3), 1), ((0, 3), 0), ((3, 0), 1)]:
        x = np.zeros(shape)
        check(cu.cumsum(cu.asarray(x), axis=axis), np.cumsum(x, axis=axis))
        check(cu.cumprod(cu.asarray(x), axis=axis), np.cumprod(x, axis=axis))
    check(cu.cumulative_sum(cu.asarray(np.zeros(0)), include_initial=True),
          np.cumulative_sum(np.zeros(0), include_initial=True))


@pytest.mark.parametrize("op", ["cumulative_sum", "cumulative_prod"])
def test_cumulative_array_api(op):
    x = rand("int16", (3, 4))
    c = cu.asarray(x)
    for axis in (0, 1, -1):
        for include_initial in (False, True):
            check(getattr(cu, op)(c, axis=axis, include_initial=include_initial),
                  getattr(np, op)(x, axis=axis, include_initial=include_initial))
    check(getattr(cu, op)(c, axis=0, dtype=cu.float32), getattr(np, op)(x, axis=0, dtype=np.float32))
    v = rand("float32", (7,))
    check(getattr(cu, op)(cu.asarray(v), include_initial=True), getattr(np, op)(v, include_initial=True))
    with pytest.raises(ValueError, match="``axis`` argument is required"):
        getattr(cu, op)(c)


def test_dtype_and_out():
    x = np.array([100, 100, 100], np.int8)
    c = cu.asarray(x)
    check(cu.cumsum(c), np.cumsum(x))                               # int64
    check(cu.cumsum(c, dtype=cu.int8), np.cumsum(x, dtype=np.int8))  # wraps
    out = cu.zeros((3,), dtype=cu.int8)
    assert cu.cumsum(c, out=out) is out
    check(out, np.cumsum(x, out=np.zeros(3, np.int8)))
    outf = cu.zeros((3,), dtype=cu.float32)
    cu.cumprod(c, out=outf)
    check(outf, np.cumprod(x, out=np.zeros(3, np.float32)))
    y = rand("float64", (4, 5))
    cy = cu.asarray(y)
    out2 = cu.zeros((4, 5), dtype=cu.int32)
    assert cy.cumsum(axis=0, out=out2) is out2
    check(out2, np.cumsum(y, axis=0, out=np.zeros((4, 5), np.int32)))
    with pytest.raises(ValueError, match=r"out= has shape \(3,\) but the result has shape \(20,\)"):
        cu.cumsum(cy, out=cu.zeros((3,)))


def test_in_place():
    x = rand("float64", (6, 7))
    c = cu.asarray(x.copy())
    cu.cumsum(c, axis=0, out=c)
    np.testing.assert_allclose(np.asarray(c), np.cumsum(x, axis=0))
    cu.cumsum(c, axis=1, out=c)
    np.testing.assert_allclose(np.asarray(c), np.cumsum(np.cumsum(x, axis=0), axis=1))


def test_errors():
    c = cu.asarray(np.ones(3))
    with pytest.raises(cu.AxisError, match="axis 1 is out of bounds for array of dimension 1"):
        cu.cumsum(c, axis=1)
    with pytest.raises(TypeError):
        cu.cumsum(c, axis=(0,))
    with pytest.raises(cu.AxisError):
        cu.cumsum(cu.asarray(np.array(1.0)), axis=1)


@pytest.mark.parametrize("shape,axis", [((300000,), 0), ((500, 2000), 0), ((2000, 500), 1), ((3, 100000), 0)])
def test_large(shape, axis):
    x = rand("float32", shape)
    check(cu.cumsum(cu.asarray(x), axis=axis), np.cumsum(x, axis=axis))
    xi = rand("int32", shape)
    check(cu.cumsum(cu.asarray(xi), axis=axis), np.cumsum(xi, axis=axis))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=0, max_size=4), st.data())
def test_property_scans_match_numpy(shape, data):
    dtype = data.draw(st.sampled_from(["float64", "int32", "uint8", "bool", "complex128"]))
    x = rand(dtype, tuple(shape), np.random.default_rng(data.draw(st.integers(0, 1000))))
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1))) if shape else None
    if shape and data.draw(st.booleans()):
        x = x[..., ::-1]
    c = cu.asarray(x)
    check(cu.cumsum(c, axis=axis), np.cumsum(x, axis=axis))
    check(cu.cumprod(c, axis=axis), np.cumprod(x, axis=axis))


@pytest.mark.parametrize("op", ["nancumsum", "nancumprod"])
def test_nan_scans(op):
    x = rand("float64", (4, 5))
    x[1, 2] = x[0, 0] = x[3, 4] = np.nan
    c = cu.asarray(x)
    for axis in [None, 0, 1]:
        check(getattr(cu, op)(c, axis=axis), getattr(np, op)(x, axis=axis))
    xi = rand("int8", (6,))
    check(getattr(cu, op)(cu.asarray(xi)), getattr(np, op)(xi))
    z = np.array([1 + 1j, complex(np.nan, 1), 2j], np.complex64)
    check(getattr(cu, op)(cu.asarray(z)), getattr(np, op)(z))
