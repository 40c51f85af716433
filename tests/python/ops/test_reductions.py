"""cupric reductions (sum, prod, min, max, mean, var, std, any, all, argmin, argmax,
count_nonzero and the nan* forms) against NumPy: dtypes, axes, keepdims, views, special values,
out=/where=/initial=, accuracy and error messages."""

import warnings

import cupric as cu
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ALL_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
              "float16", "float32", "float64", "complex64", "complex128"]
INEXACT = ["float16", "float32", "float64", "complex64", "complex128"]
RTOL = {"float16": 3e-3, "float32": 2e-5, "float64": 1e-12, "complex64": 2e-5, "complex128": 1e-12,
        "bfloat16": 2e-2}


def rand(dtype, shape, rng=None, positive=False):
    """Random non-trivial values of a dtype (positive: in [0.5, 1.5), no cancellation)."""
    rng = rng or np.random.default_rng(0)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        lo = 1 if positive else (0 if dt.kind == "u" else -9)
        return rng.integers(lo, 10, size=shape).astype(dt)
    if positive:
        x = rng.random(shape) + 0.5
    else:
        x = rng.standard_normal(shape)
    if dt.kind == "c":
        x = x + 1j * (rng.random(shape) + 0.5 if positive else rng.standard_normal(shape))
    return np.asarray(x).astype(dt)


def check(got, want, dtype=None, rtol=None):
    """got (a cupric array) equals want (NumPy) in shape, dtype and value."""
    assert isinstance(got, cu.ndarray), type(got)
    want = np.asarray(want)
    g = np.asarray(got)
    assert g.shape == want.shape, (g.shape, want.shape)
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(g, want)
    else:
        tol = rtol if rtol is not None else RTOL[want.dtype.name if dtype is None else dtype]
        scale = np.max(np.abs(want[np.isfinite(want)]), initial=1.0)
        np.testing.assert_allclose(g.astype(np.complex128), want.astype(np.complex128), rtol=tol,
                                   atol=tol * scale, equal_nan=True)


def half_reference(fn, x, **kw):
    """NumPy result of fn computed in float32 and rounded to float16 (cupric's float16 contract)."""
    return np.asarray(fn(x.astype(np.float32), **kw)).astype(np.float16)


# ---- dtype sweeps ------------------------------------------------------------------------------

SUM_LIKE = ["sum", "prod"]
ORDER = ["min", "max"]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", SUM_LIKE + ORDER + ["any", "all"])
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_ufunc_reductions_dtype_sweep(dtype, op, axis, device):
    x = rand(dtype, (6, 7), positive=op == "prod")
    if op in ORDER and dtype.startswith("complex"):
        want = getattr(np, op)(x, axis=axis)
    elif dtype == "float16" and op in SUM_LIKE:
        want = half_reference(getattr(np, op), x, axis=axis)
    else:
        want = getattr(np, op)(x, axis=axis)
    check(getattr(cu, op)(cu.asarray(x, device=device), axis=axis), want)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", ["mean", "var", "std"])
def test_statistics_dtype_sweep(dtype, op):
    x = rand(dtype, (5, 9))
    for axis in (None, 1):
        if dtype == "float16":
            want = half_reference(getattr(np, op), x, axis=axis)
        else:
            want = getattr(np, op)(x, axis=axis)
        check(getattr(cu, op)(cu.asarray(x), axis=axis), want)


def test_accumulation_dtypes_follow_numpy():
    for dtype in ALL_DTYPES:
        x = cu.asarray(rand(dtype, (3,)))
        npx = np.asarray(x)
        assert cu.sum(x).dtype == np.sum(npx).dtype, dtype
        assert cu.prod(x).dtype == np.prod(npx).dtype, dtype
        assert cu.mean(x).dtype == np.mean(npx).dtype, dtype
        assert cu.var(x).dtype == np.var(npx).dtype, dtype
        assert cu.max(x).dtype == np.max(npx).dtype, dtype
        assert cu.argmax(x).dtype == cu.int64
        assert cu.any(x).dtype == cu.bool


@pytest.mark.parametrize("dtype,acc", [("int8", "int16"), ("float32", "float64"), ("int64", "int8"),
                                       ("float64", "float32"), ("bool", "bool"), ("float32", "complex64")])
def test_sum_dtype_argument(dtype, acc):
    x = rand(dtype, (4, 5), positive=True)
    check(cu.sum(cu.asarray(x), axis=0, dtype=acc), np.sum(x, axis=0, dtype=acc))
    check(cu.prod(cu.asarray(x), dtype=acc), np.prod(x, dtype=acc), rtol=1e-5)
    if acc not in ("bool", "int8"):
        check(cu.mean(cu.asarray(x), axis=1, dtype=acc), np.mean(x, axis=1, dtype=acc))


def test_integer_sums_wrap_like_numpy():
    x = np.array([100, 100, 100], np.int8)
    check(cu.sum(cu.asarray(x)), np.sum(x))                                  # int64: 300
    check(cu.sum(cu.asarray(x), dtype=cu.int8), np.sum(x, dtype=np.int8))    # wraps to 44
    big = np.array([2**62, 2**62, 2**62], np.int64)
    check(cu.sum(cu.asarray(big)), np.sum(big))
    u = np.array([2**63, 2**63 + 5], np.uint64)
    check(cu.sum(cu.asarray(u)), np.sum(u))


# ---- bfloat16 ----------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["sum", "prod", "min", "max", "mean"])
def test_bfloat16_matches_float32_math_rounded(op):
    x32 = rand("float32", (8, 33), positive=True)
    xb = cu.asarray(x32).astype(cu.bfloat16)
    vals = np.asarray(xb.astype(cu.float32))
    for axis in (None, 0, 1):
        got = getattr(cu, op)(xb, axis=axis)
        assert got.dtype == cu.bfloat16
        want = np.asarray(getattr(np, op)(vals, axis=axis)).astype(ml_dtypes.bfloat16).astype(np.float32)
        np.testing.assert_allclose(np.asarray(got.astype(cu.float32)), want, rtol=1e-2)


def test_bfloat16_argmax_and_any():
    xb = cu.asarray(np.array([1.0, 3.0, 2.0, 3.0], np.float32)).astype(cu.bfloat16)
    assert int(cu.argmax(xb)) == 1
    assert bool(cu.any(xb)) and bool(cu.all(xb))


# ---- axes, keepdims ----------------------------------------------------------------------------

AXES = [None, 0, 1, 2, -1, -3, (0, 2), (2, 0), (0, 1, 2), (), (1,)]


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_axis_sweep(axis, keepdims, device):
    x = rand("float64", (3, 4, 5))
    c = cu.asarray(x, device=device)
    for op in ["sum", "prod", "min", "max", "mean", "var", "std", "any", "all", "nansum", "nanmax", "nanmean"]:
        check(getattr(cu, op)(c, axis=axis, keepdims=keepdims), getattr(np, op)(x, axis=axis, keepdims=keepdims))
    check(cu.count_nonzero(c > 0, axis=axis, keepdims=keepdims), np.count_nonzero(x > 0, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_argmin_argmax_axes(axis, keepdims, device):
    x = rand("int16", (4, 5, 6))  # many ties: the first occurrence must win
    for op in ["argmin", "argmax"]:
        check(getattr(cu, op)(cu.asarray(x, device=device), axis=axis, keepdims=keepdims),
              getattr(np, op)(x, axis=axis, keepdims=keepdims))


# ---- views -------------------------------------------------------------------------------------

def views():
    base = rand("float32", (12, 10, 8))
    return [base[::2, ::-1, 1:7], base.transpose(2, 0, 1), base[:, 3, ::-2], base[::-1],
            np.broadcast_to(base[0, 0], (5, 4, 8)), base[1:, :, 0], base.swapaxes(0, 2)[::3]]


@pytest.mark.parametrize("index", range(7))
def test_non_contiguous_views(index):
    x = views()[index]
    c = cu.asarray(x)
    assert c.shape == x.shape
    for axis in [None, 0, -1, (0, x.ndim - 1)]:
        for op in ["sum", "max", "min", "mean", "var", "prod"]:
            check(getattr(cu, op)(c, axis=axis), getattr(np, op)(x, axis=axis), rtol=1e-4)
    for axis in [None, 0, x.ndim - 1]:
        check(cu.argmax(c, axis=axis), np.argmax(x, axis=axis))
        check(cu.argmin(c, axis=axis), np.argmin(x, axis=axis))


# ---- 0-d and empty arrays ----------------------------------------------------------------------

def test_zero_dimensional():
    x = np.array(2.5)
    c = cu.asarray(x)
    for op in ["sum", "prod", "min", "max", "mean", "var", "std", "any", "all", "nansum", "nanmax"]:
        check(getattr(cu, op)(c), getattr(np, op)(x))
    check(cu.sum(c, axis=0), np.sum(x, axis=0))   # NumPy's ufuncs accept axis 0 / -1 on 0-d
    check(cu.sum(c, axis=-1), np.sum(x, axis=-1))
    check(cu.sum(c, axis=()), np.sum(x, axis=()))
    check(cu.argmax(c), np.argmax(x))
    check(cu.argmax(c, axis=0), np.argmax(x, axis=0))
    with pytest.raises(cu.AxisError, match="axis 1 is out of bounds for array of dimension 0"):
        cu.sum(c, axis=1)
    with pytest.raises(cu.AxisError):
        cu.mean(c, axis=0)


@pytest.mark.parametrize("shape,axis", [((0,), None), ((0, 3), 0), ((0, 3), 1), ((3, 0), 0), ((3, 0), 1),
                                        ((2, 0, 3), (0, 2)), ((0, 0), None)])
def test_empty_reductions(shape, axis):
    x = np.zeros(shape, np.float32)
    c = cu.asarray(x)
    for op in ["sum", "prod", "any", "all", "nansum", "nanprod"]:
        check(getattr(cu, op)(c, axis=axis), getattr(np, op)(x, axis=axis))
    check(cu.count_nonzero(c, axis=axis), np.count_nonzero(x, axis=axis))
    for op in ["max", "min", "nanmax", "nanmin"]:
        try:
            want = getattr(np, op)(x, axis=axis)
        except ValueError as e:
            with pytest.raises(ValueError, match=str(e)):
                getattr(cu, op)(c, axis=axis)
        else:
            check(getattr(cu, op)(c, axis=axis), want)


def test_empty_mean_is_nan_and_empty_argmax_raises():
    c = cu.asarray(np.zeros((0,), np.float64))
    assert np.isnan(float(cu.mean(c)))
    assert np.isnan(float(cu.var(c)))
    with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
        cu.argmax(c)
    with pytest.raises(ValueError, match="attempt to get argmin of an empty sequence"):
        cu.argmin(cu.asarray(np.zeros((3, 0))), axis=1)
    check(cu.argmax(cu.asarray(np.zeros((0, 3))), axis=1), np.argmax(np.zeros((0, 3)), axis=1))
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum which has no identity"):
        cu.max(c)
    with pytest.raises(ValueError, match="zero-size array to reduction operation fmin which has no identity"):
        cu.nanmin(c)


# ---- NaN and infinities ------------------------------------------------------------------------

@pytest.mark.parametrize("n", [7, 100, 5000])
@pytest.mark.parametrize("where_nan", [0, "middle", -1])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_nan_propagation_and_skipping(n, where_nan, dtype):
    x = rand(dtype, (n,))
    i = n // 2 if where_nan == "middle" else where_nan
    x[i] = np.nan
    x[(i + 3) % n] = np.nan
    c = cu.asarray(x)
    for op in ["min", "max", "sum", "argmin", "argmax"]:
        got = getattr(cu, op)(c)
        want = getattr(np, op)(x)
        check(got, want)
    for op in ["nanmin", "nanmax"]:
        check(getattr(cu, op)(c), getattr(np, op)(x))
    x2 = np.stack([x, x[::-1], np.full(n, np.nan, dtype)], axis=1)  # columns; one all-NaN
    c2 = cu.asarray(x2)
    for axis in (0, 1):
        for op in ["min", "max", "argmax", "argmin"]:
            check(getattr(cu, op)(c2, axis=axis), getattr(np, op)(x2, axis=axis))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumPy warns about all-NaN slices
            for op in ["nanmin", "nanmax", "nansum", "nanmean", "nanvar", "nanstd", "nanprod"]:
                got = getattr(cu, op)(c2, axis=axis)
                want = getattr(np, op)(x2, axis=axis) if dtype != "float16" or op in ("nanmin", "nanmax") \
                    else half_reference(getattr(np, op), x2, axis=axis)
                check(got, want, rtol=2e-2 if dtype == "float16" else None)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_min_max_see_a_nan_at_every_position_of_the_vector_loop(dtype):
    # the contiguous loop picks pairs of vectors and keeps a NaN mask on the side (reduce_ops.hpp):
    # a NaN first or second of a pair, in the scalar tail, or in a later chunk; infinities and
    # all-NaN runs; exact values otherwise
    rng = np.random.default_rng(23)
    base = rng.uniform(-1e3, 1e3, 300).astype(dtype)
    c = cu.asarray(base)
    for op in ["min", "max"]:
        check(getattr(cu, op)(c), getattr(np, op)(base))
    for i in range(base.size):
        x = base.copy()
        x[i] = np.nan
        for op in ["min", "max"]:
            got = float(np.asarray(getattr(cu, op)(cu.asarray(x))))
            assert np.isnan(got), (op, i)
    for fill in [np.inf, -np.inf, np.nan]:
        x = np.full(257, fill, dtype)
        for op in ["min", "max"]:
            check(getattr(cu, op)(cu.asarray(x)), getattr(np, op)(x))
    x = base.copy()
    x[::7] = np.inf
    x[3::7] = -np.inf
    for op in ["min", "max"]:
        check(getattr(cu, op)(cu.asarray(x)), getattr(np, op)(x))
    big = rng.uniform(-1.0, 1.0, (1 << 17) + 5).astype(dtype)
    for i in [(1 << 16) + 1, big.size - 1]:
        x = big.copy()
        x[i] = np.nan
        for threads in (1, 2):
            cu.set_num_threads(threads)
            try:
                for op in ["min", "max"]:
                    check(getattr(cu, op)(cu.asarray(x)), getattr(np, op)(x))
                    check(getattr(cu, op)(cu.asarray(big)), getattr(np, op)(big))
            finally:
                cu.set_num_threads(0)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_infinities_and_complex_nan():
    x = np.array([1.0, np.inf, -np.inf, 3.0])
    c = cu.asarray(x)
    for op in ["min", "max", "sum", "argmin", "argmax", "prod"]:
        check(getattr(cu, op)(c), getattr(np, op)(x))
    z = np.array([1 + 5j, 2 + 0j, 2 - 1j, complex(np.nan, 0), 3j])
    for op in ["min", "max", "argmin", "argmax"]:
        check(getattr(cu, op)(cu.asarray(z)), getattr(np, op)(z))
        check(getattr(cu, op)(cu.asarray(z[:3])), getattr(np, op)(z[:3]))
    check(cu.nansum(cu.asarray(z)), np.nansum(z))
    check(cu.any(cu.asarray(np.array([0.0, np.nan]))), np.any(np.array([0.0, np.nan])))


def test_nan_functions_on_integers_are_plain_reductions():
    x = rand("int32", (4, 6))
    c = cu.asarray(x)
    for op in ["nansum", "nanprod", "nanmin", "nanmax", "nanmean", "nanvar", "nanstd"]:
        check(getattr(cu, op)(c, axis=0), getattr(np, op)(x, axis=0))


# ---- out=, where=, initial= --------------------------------------------------------------------

def test_out_argument():
    x = rand("int8", (4, 5))
    c = cu.asarray(x)
    out = cu.zeros((5,), dtype=cu.float32)
    r = cu.sum(c, axis=0, out=out)
    assert r is out
    check(out, np.sum(x, axis=0, out=np.zeros(5, np.float32)))
    out8 = cu.zeros((), dtype=cu.int8)
    big = np.array([100, 100], np.int8)
    cu.sum(cu.asarray(big), out=out8)                     # accumulates in int8, as NumPy
    check(out8, np.sum(big, out=np.zeros((), np.int8)))
    outk = cu.zeros((1, 5), dtype=cu.float64)
    assert cu.mean(c, axis=0, keepdims=True, out=outk) is outk
    check(outk, np.mean(x, axis=0, keepdims=True))
    outi = cu.zeros((4,), dtype=cu.int32)
    assert c.argmax(axis=1, out=outi) is outi
    check(outi, np.argmax(x, axis=1).astype(np.int32))
    outb = cu.zeros((4,), dtype=cu.int32)
    cu.any(c, axis=1, out=outb)
    check(outb, np.any(x, axis=1).astype(np.int32))


def test_out_errors_leave_out_unchanged():
    c = cu.asarray(rand("float64", (2, 3)))
    out = cu.asarray(np.full(2, 7.0))
    with pytest.raises(ValueError, match="wrong number of dimensions: Found 1 but expected 2"):
        cu.sum(c, axis=0, keepdims=True, out=out)
    with pytest.raises(ValueError, match=r"has shape \(2,\) but the result has shape \(3,\)"):
        cu.sum(c, axis=0, out=out)
    with pytest.raises(TypeError):
        cu.argmax(c, axis=1, out=out)
    np.testing.assert_array_equal(np.asarray(out), [7.0, 7.0])
    ro = cu.asarray(np.broadcast_to(np.zeros(3), (3,)))
    with pytest.raises(ValueError, match="read-only"):
        cu.sum(c, axis=0, out=ro)


def test_where_and_initial():
    x = np.array([[1, 2, 3], [4, 5, 6]])
    c = cu.asarray(x)
    w = np.array([True, False, True])
    cw = cu.asarray(w)
    check(cu.sum(c, where=cw), np.sum(x, where=w))
    check(cu.sum(c, axis=0, where=cw, initial=5), np.sum(x, axis=0, where=w, initial=5))
    check(cu.prod(c, axis=1, where=cw), np.prod(x, axis=1, where=w))
    check(cu.max(c, axis=1, where=cw, initial=-5), np.max(x, axis=1, where=w, initial=-5))
    check(cu.min(c, where=cu.asarray(np.array([[True], [False]])), axis=1, initial=9),
          np.min(x, where=np.array([[True], [False]]), axis=1, initial=9))
    check(cu.max(c, axis=0, initial=3), np.max(x, axis=0, initial=3))
    check(cu.min(cu.asarray(np.zeros(0)), initial=3.0), np.min(np.zeros(0), initial=3.0))
    check(cu.sum(c, initial=10.5), np.sum(x, initial=10.5))
    check(cu.any(c > 4, axis=1, where=cw), np.any(x > 4, axis=1, where=w))
    check(cu.all(c > 4, axis=1, where=cw), np.all(x > 4, axis=1, where=w))
    xf = rand("float64", (3, 4))
    wf = rand("bool", (3, 4))
    wf[:, 0] = True
    check(cu.mean(cu.asarray(xf), axis=1, where=cu.asarray(wf)), np.mean(xf, axis=1, where=wf))
    check(cu.var(cu.asarray(xf), axis=1, where=cu.asarray(wf)), np.var(xf, axis=1, where=wf))
    check(cu.std(cu.asarray(xf), where=cu.asarray(wf), ddof=1), np.std(xf, where=wf, ddof=1))
    check(cu.nansum(cu.asarray(xf), axis=0, where=cu.asarray(wf)), np.nansum(xf, axis=0, where=wf))
    check(c.sum(where=[True, False, True]), np.sum(x, where=w))  # list masks convert


def test_where_and_initial_errors():
    c = cu.asarray(np.array([1, 2, 3]))
    with pytest.raises(ValueError, match="does not have an identity, so to use a where mask one has to specify"):
        cu.max(c, where=cu.asarray(np.array([True, False, True])))
    with pytest.raises(TypeError, match="where= must be a bool array, got int64"):
        cu.sum(c, where=cu.asarray(np.array([1, 0, 1])))
    with pytest.raises(ValueError):
        cu.sum(c, where=cu.asarray(np.array([True, False])))
    with pytest.raises(TypeError):
        cu.sum(cu.asarray(np.array([1.0, 2.0])), initial=1j)


# ---- var / std ---------------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("ddof", [0, 1, 2.5])
def test_var_std_ddof_and_complex(ddof):
    x = rand("complex128", (5, 4))
    c = cu.asarray(x)
    for op in ["var", "std"]:
        check(getattr(cu, op)(c, ddof=ddof), getattr(np, op)(x, ddof=ddof))
        check(getattr(cu, op)(c, axis=0, ddof=ddof), getattr(np, op)(x, axis=0, ddof=ddof))
    assert cu.var(cu.asarray(x.astype(np.complex64))).dtype == cu.float32
    check(cu.var(c, correction=1), np.var(x, correction=1))
    with pytest.raises(ValueError, match="ddof and correction"):
        cu.var(c, ddof=1, correction=1)
    check(cu.var(cu.asarray(np.array([1.0, 2.0])), ddof=2), np.var(np.array([1.0, 2.0]), ddof=2))


def test_var_is_two_pass_accurate():
    x = (1e8 + np.random.default_rng(1).random(1000)).astype(np.float64)
    check(cu.var(cu.asarray(x)), np.var(x), rtol=1e-6)


# ---- accuracy ----------------------------------------------------------------------------------

def test_float32_sum_accuracy_no_worse_than_numpy():
    rng = np.random.default_rng(42)
    x = rng.random(10**7, dtype=np.float32)
    ref = np.sum(x, dtype=np.float64)
    ulp = float(np.spacing(np.float32(ref)))
    ours = abs(float(cu.sum(cu.asarray(x))) - ref)
    theirs = abs(float(np.sum(x)) - ref)
    assert ours <= max(theirs, 0.51 * ulp), (ours, theirs, ulp)  # float32 sums round (almost) correctly
    errs_ours, errs_np = [], []
    for seed in range(8):
        y = np.random.default_rng(seed).standard_normal(300001).astype(np.float32) + 0.25
        yref = np.sum(y, dtype=np.float64)
        errs_ours.append(abs(float(cu.sum(cu.asarray(y))) - yref))
        errs_np.append(abs(float(np.sum(y)) - yref))
    assert np.mean(errs_ours) <= np.mean(errs_np), (errs_ours, errs_np)
    # column sums: NumPy accumulates rows naively; cupric pairs row blocks
    m = x[: 4000 * 1000].reshape(4000, 1000)
    ref0 = m.sum(axis=0, dtype=np.float64)
    err_ours = np.max(np.abs(np.asarray(cu.sum(cu.asarray(m), axis=0)) - ref0))
    err_np = np.max(np.abs(m.sum(axis=0) - ref0))
    assert err_ours <= err_np, (err_ours, err_np)
    ref1 = m.sum(axis=1, dtype=np.float64)
    assert np.max(np.abs(np.asarray(cu.sum(cu.asarray(m), axis=1)) - ref1)) <= \
        max(np.max(np.abs(m.sum(axis=1) - ref1)), 1e-7 * 1000)


def test_float16_sums_accumulate_in_float32():
    ones = np.ones((5000, 2), np.float16)
    check(cu.sum(cu.asarray(ones), axis=0), np.array([5000, 5000], np.float16))   # NumPy's column sum: 2048
    check(cu.sum(cu.asarray(ones)), np.float16(10000))
    check(cu.mean(cu.asarray(ones)), np.float16(1.0))


def test_results_do_not_depend_on_thread_count():
    x = cu.asarray(np.random.default_rng(3).random((700, 3000), dtype=np.float32))
    n = cu.get_num_threads()
    try:
        cu.set_num_threads(1)
        one = [float(cu.sum(x)), np.asarray(cu.sum(x, axis=0)), np.asarray(cu.sum(x, axis=1))]
        cu.set_num_threads(max(n, 2))
        many = [float(cu.sum(x)), np.asarray(cu.sum(x, axis=0)), np.asarray(cu.sum(x, axis=1))]
    finally:
        cu.set_num_threads(n)
    assert one[0] == many[0]
    np.testing.assert_array_equal(one[1], many[1])
    np.testing.assert_array_equal(one[2], many[2])


@pytest.mark.parametrize("shape,axis", [((2000, 1500), None), ((2000, 1500), 0), ((2000, 1500), 1),
                                        ((3, 200000), 1), ((200000, 3), 0), ((40, 50, 600), (0, 2))])
def test_large_paths(shape, axis):
    x = rand("float32", shape, positive=True)
    c = cu.asarray(x)
    check(cu.sum(c, axis=axis), np.sum(x, axis=axis, dtype=np.float64).astype(np.float32), rtol=1e-5)
    check(cu.max(c, axis=axis), np.max(x, axis=axis))
    xi = x.astype(np.int32)  # converted on the fly
    check(cu.sum(cu.asarray(xi), axis=axis), np.sum(xi, axis=axis))


def test_long_strided_runs_are_converted_in_blocks():
    x = rand("float64", (50000, 3))
    c = cu.asarray(x)
    check(cu.sum(cu.asarray(x[:, 1]), axis=0), np.sum(x[:, 1]))
    check(cu.argmax(cu.asarray(x[::-1, 2])), np.argmax(x[::-1, 2]))
    check(cu.argmin(c, axis=0), np.argmin(x, axis=0))


# ---- count_nonzero, methods, errors ------------------------------------------------------------

def test_count_nonzero():
    x = rand("int8", (4, 5, 6))
    c = cu.asarray(x)
    for axis in [None, 0, (0, 2), -1]:
        check(cu.count_nonzero(c, axis=axis), np.count_nonzero(x, axis=axis))
    check(cu.count_nonzero(c, axis=1, keepdims=True), np.count_nonzero(x, axis=1, keepdims=True))
    z = np.array([0j, 1j, 0, 2 + 0j])
    check(cu.count_nonzero(cu.asarray(z)), np.count_nonzero(z))


def test_methods_and_zero_d_results():
    x = rand("float64", (3, 4))
    c = cu.asarray(x)
    for name in ["sum", "prod", "min", "max", "mean", "var", "std", "any", "all", "argmin", "argmax"]:
        r = getattr(c, name)()
        assert isinstance(r, cu.ndarray) and r.shape == (), name
        check(r, getattr(x, name)())
        check(getattr(c, name)(axis=1), getattr(x, name)(axis=1))
    check(c.sum(0), x.sum(0))
    check(c.cumsum(axis=0), x.cumsum(axis=0))
    check(c.std(ddof=1), x.std(ddof=1))
    check(cu.sum([[1, 2], [3, 4]], axis=1), np.sum([[1, 2], [3, 4]], axis=1))  # array-likes convert
    check(cu.sum(c, axis=0, keepdims=np.True_), x.sum(axis=0, keepdims=True))   # truthy flags, NumPy ints
    check(cu.argmax(c, axis=np.int32(1), keepdims=1), x.argmax(axis=1, keepdims=True))
    check(cu.var(c, ddof=np.int64(1), axis=[0, 1]), x.var(ddof=1, axis=(0, 1)))
    check(cu.sum(c, initial=np.float64(1.5)), x.sum(initial=1.5))
    assert cu.sum(c, 0, cu.float32).dtype == cu.float32  # positional axis, dtype


def test_axis_errors():
    c = cu.asarray(np.zeros((2, 2)))
    with pytest.raises(cu.AxisError, match="axis 2 is out of bounds for array of dimension 2") as info:
        cu.sum(c, axis=2)
    assert isinstance(info.value, ValueError) and isinstance(info.value, IndexError)
    assert isinstance(info.value, np.exceptions.AxisError)
    for bad in [-3, (0, 5)]:
        with pytest.raises(IndexError, match="out of bounds"):
            cu.mean(c, axis=bad)
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        cu.sum(c, axis=(0, -2))
    with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
        cu.sum(c, axis=1.0)
    with pytest.raises(TypeError):
        cu.argmax(c, axis=(0,))
    with pytest.raises(cu.AxisError, match="axis 2 is out of bounds"):
        cu.argmax(c, axis=2)
    check(cu.sum(c, axis=np.int64(1)), np.sum(np.zeros((2, 2)), axis=1))


# ---- property test -----------------------------------------------------------------------------

@st.composite
def array_and_axes(draw):
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim)))
    dtype = draw(st.sampled_from(["float64", "float32", "int32", "uint8", "bool", "complex128"]))
    axes = draw(st.one_of(st.none(), st.lists(st.integers(0, max(ndim - 1, 0)), unique=True, max_size=ndim)
                          .map(tuple) if ndim else st.just(())))
    neg = draw(st.booleans())
    if axes and neg:
        axes = tuple(a - ndim for a in axes)
    flip = draw(st.booleans())
    seed = draw(st.integers(0, 2**16))
    return rand(dtype, shape, np.random.default_rng(seed)), axes, draw(st.booleans()), flip


@settings(max_examples=150, deadline=None)
@given(array_and_axes())
def test_property_reductions_match_numpy(case):
    x, axes, keepdims, flip = case
    if flip and x.ndim:
        x = x[..., ::-1]
    c = cu.asarray(x)
    for op in ["sum", "prod", "any", "all"]:
        check(getattr(cu, op)(c, axis=axes, keepdims=keepdims), getattr(np, op)(x, axis=axes, keepdims=keepdims),
              rtol=1e-5)
    count = x.size if axes is None else int(np.prod([x.shape[a] for a in axes]))
    for op in ["max", "min"]:
        if count == 0:
            with pytest.raises(ValueError, match="zero-size array"):
                getattr(cu, op)(c, axis=axes, keepdims=keepdims)
        else:
            check(getattr(cu, op)(c, axis=axes, keepdims=keepdims), getattr(np, op)(x, axis=axes, keepdims=keepdims))


# ---- nanargmin / nanargmax ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex128", "int16"])
def test_nanargmin_nanargmax(dtype):
    x = rand(dtype, (5, 6))
    if x.dtype.kind in "fc":
        x[1, 2] = x[3, 0] = x[0, :2] = np.nan
    c = cu.asarray(x)
    for op in ["nanargmin", "nanargmax"]:
        for axis in [None, 0, 1, -1]:
            check(getattr(cu, op)(c, axis=axis), getattr(np, op)(x, axis=axis))
        check(getattr(cu, op)(c, axis=1, keepdims=True), getattr(np, op)(x, axis=1, keepdims=True))


def test_nanargmax_all_nan_slice_raises():
    x = np.array([[1.0, np.nan], [np.nan, np.nan]])
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        cu.nanargmax(cu.asarray(x), axis=1)
    check(cu.nanargmax(cu.asarray(x), axis=None), np.nanargmax(x))
    check(cu.nanargmin(cu.asarray(x[0]), axis=0), np.nanargmin(x[0], axis=0))
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        cu.nanargmin(cu.asarray(x[1]))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("op", ["max", "min", "nanmax", "nanmin", "amax"])
def test_extrema_of_signed_zeros_do_not_depend_on_the_split(op, dtype):
    # -0.0 < +0.0: a max of zeros is +0.0 if any zero is +0.0, a min -0.0 if any is -0.0, whatever
    # the order, the lanes, the threads or the axis (NumPy's zero depends on its SIMD path)
    rng = np.random.default_rng(17)
    other = -1.0 if "max" in op else 1.0
    for n in (2, 3, 17, 100, 4097, 1 << 18):
        a = rng.choice(np.array([-0.0, 0.0, other]), size=n, p=[0.2, 0.2, 0.6]).astype(dtype)
        if "nan" in op:
            a[rng.integers(0, n, n // 10 + 1)] = np.nan
        zeros = a[a == 0]
        if zeros.size == 0:
            continue
        want_negative = bool(np.signbit(zeros).all()) if "max" in op else bool(np.signbit(zeros).any())
        for threads in (1, 3):
            cu.set_num_threads(threads)
            try:
                x = cu.asarray(a)
                assert bool(np.signbit(np.asarray(getattr(cu, op)(x)))) == want_negative, (n, threads)
                assert bool(np.signbit(np.asarray(getattr(cu, op)(x[::-1])))) == want_negative
                m = n - n % 4
                if m == 0:
                    continue
                cols = np.asarray(getattr(cu, op)(x[:m].reshape(-1, 4), axis=0))
                for j in range(4):
                    col = a[:m].reshape(-1, 4)[:, j]
                    z = col[col == 0]
                    if z.size and cols[j] == 0:
                        neg = bool(np.signbit(z).all()) if "max" in op else bool(np.signbit(z).any())
                        assert bool(np.signbit(cols[j])) == neg
            finally:
                cu.set_num_threads(0)
