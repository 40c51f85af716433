"""Elementwise functions composed from ufuncs (isclose, allclose, array_equal, nan_to_num, real,
imag, round/around, clip, angle) against NumPy: dtype sweeps, special values, views, 0-d/empty."""

import cupric as cu
import numpy as np
import pytest

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]
INEXACT = ["float16", "float32", "float64", "complex64", "complex128"]


def sample(dtype, shape=(4, 5), seed=0, scale=20):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    kind = np.dtype(dtype).kind
    if kind in "iu":
        lo = 0 if kind == "u" else -scale
        return rng.integers(lo, scale, size=shape, endpoint=True).astype(dtype)
    a = rng.uniform(-scale, scale, size=shape)
    if kind == "c":
        a = a + 1j * rng.uniform(-scale, scale, size=shape)
    return a.astype(dtype)


def with_specials(a):
    if a.dtype.kind not in "fc":
        return a
    a = a.copy()
    flat = a.reshape(-1)
    flat[:6] = [np.nan, np.inf, -np.inf, -0.0, 0.0, np.finfo(a.dtype).tiny / 4]
    if a.dtype.kind == "c":
        flat[6] = complex(1.0, np.nan)
        flat[7] = complex(np.inf, 2.0)
    return a


def same(result, expected):
    expected = np.asarray(expected)
    assert isinstance(result, cu.ndarray)
    assert result.dtype == expected.dtype, f"{result.dtype} != {expected.dtype}"
    assert result.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(result), expected)


def call_both(name, *args, **kwargs):
    """cupric and NumPy on the same arguments (NumPy arrays converted zero-copy for cupric)."""
    cu_args = [cu.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    with np.errstate(all="ignore"):
        expected = getattr(np, name)(*args, **kwargs)
    return getattr(cu, name)(*cu_args, **kwargs), expected


# ---- isclose / allclose / array_equal -------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_isclose_matches_numpy(dtype):
    a = with_specials(sample(dtype))
    noise = sample("float64", seed=1, scale=1e-4)
    if a.dtype.kind in "fc":
        b = with_specials((a + noise).astype(dtype))
    else:
        b = a ^ sample(dtype, seed=2) if dtype == "bool" else a + (sample(dtype, seed=2) % 3).astype(dtype)
    b.reshape(-1)[8:12] = a.reshape(-1)[8:12]
    for kwargs in ({}, {"equal_nan": True}, {"rtol": 0.0, "atol": 1e-3}, {"rtol": 1e-3, "atol": 0}, {"atol": 2}):
        same(*call_both("isclose", a, b, **kwargs))
        same(*call_both("isclose", b, a, **kwargs))
    same(*call_both("isclose", a[::-1, ::2], b[::-1, ::2]))
    same(*call_both("isclose", a[0], b[:, :1]))  # broadcasting


def test_isclose_scalars_and_infinities():
    x = np.array([1.0, np.inf, -np.inf, np.nan, 1e10, 0.0], dtype=np.float32)
    for other in (1.0, 1, np.inf, -np.inf, 1e10 + 1, 0, True):
        same(*call_both("isclose", x, other))
        same(*call_both("isclose", other, x))
    same(*call_both("isclose", np.array([-128, 127], dtype=np.int8), np.array([127, -128], dtype=np.int8)))
    same(*call_both("isclose", np.array([2**63 - 1], dtype=np.int64), np.array([2**63 - 2], dtype=np.int64)))
    r = cu.isclose(1.0, 1.0 + 1e-9)
    assert r.shape == () and bool(r)
    same(*call_both("isclose", x, x, rtol=np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6]), atol=np.float32(0)))
    same(*call_both("isclose", x[:0], x[:0]))


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "complex64"])
def test_allclose_and_array_equal(dtype):
    a = sample(dtype)
    b = a.copy()
    assert cu.allclose(cu.asarray(a), cu.asarray(b)) is True
    if a.dtype.kind in "fc":
        b[1, 1] += 1
        a2 = with_specials(a)
        for kwargs in ({}, {"equal_nan": True}):
            assert cu.allclose(cu.asarray(a2), cu.asarray(a2), **kwargs) == np.allclose(a2, a2, **kwargs)
            assert cu.array_equal(cu.asarray(a2), cu.asarray(a2), **kwargs) == np.array_equal(a2, a2, **kwargs)
    else:
        b[1, 1] += 3
    assert cu.allclose(cu.asarray(a), cu.asarray(b)) is False
    assert cu.allclose(cu.asarray(a), cu.asarray(b), atol=5) is True
    assert cu.array_equal(cu.asarray(a), cu.asarray(a.copy())) is True
    assert cu.array_equal(cu.asarray(a), cu.asarray(b)) is False
    assert cu.array_equal(cu.asarray(a), cu.asarray(a[:2])) is False  # shapes differ
    assert cu.array_equal(cu.asarray(a), a.tolist()) is True
    assert cu.array_equal(cu.asarray(a[:0]), cu.asarray(a[:0])) is True


def test_array_equal_odd_inputs():
    assert cu.array_equal([1, 2, 3], np.array([1.0, 2.0, 3.0])) is True
    assert cu.array_equal(cu.asarray([1, 2]), "not an array") is np.array_equal(np.array([1, 2]), "not an array")
    assert cu.array_equal(np.array(1.5), 1.5) is True
    z = np.array([complex(np.nan, 1), 2])
    assert cu.array_equal(z, z, equal_nan=True) is np.array_equal(z, z, equal_nan=True)


# ---- nan_to_num --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_to_num_matches_numpy(dtype):
    a = with_specials(sample(dtype))
    same(*call_both("nan_to_num", a))
    if a.dtype.kind in "fc":
        same(*call_both("nan_to_num", a, nan=-1.5, posinf=1000, neginf=-1e300))
        same(*call_both("nan_to_num", a[::-2, 1:], nan=7))
        same(*call_both("nan_to_num", a[1, 1, ...]))


def test_nan_to_num_in_place_and_copies():
    ref = np.array([np.nan, 1.0, np.inf], dtype=np.float32)
    x = cu.asarray(ref.copy())
    y = cu.nan_to_num(x, copy=False)
    assert y._data_ptr == x._data_ptr and x.tolist() == [0.0, 1.0, float(np.finfo(np.float32).max)]
    z = cu.asarray([complex(np.nan, np.inf)])
    cu.nan_to_num(z, copy=False, posinf=5)
    assert z.tolist() == [complex(0, 5)]
    ints = cu.asarray([1, 2, 3])
    assert cu.nan_to_num(ints)._data_ptr != ints._data_ptr  # copy=True copies even integers
    assert cu.nan_to_num(ints, copy=False)._data_ptr == ints._data_ptr
    ro_ref = np.array([np.nan])
    ro_ref.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        cu.nan_to_num(cu.asarray(ro_ref), copy=False)
    assert np.isnan(ro_ref[0])


# ---- real / imag -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_real_imag_match_numpy(dtype):
    a = sample(dtype)
    for name in ("real", "imag"):
        same(*call_both(name, a))
        same(*call_both(name, a.T[::-1]))
        same(*call_both(name, a[0, 0, ...]))
        same(getattr(cu.asarray(a), name), getattr(a, name))


def test_real_imag_are_views():
    z = cu.asarray(np.array([1 + 2j, 3 - 4j, -5 + 0.5j], dtype=np.complex64))
    re, im = cu.real(z), z.imag
    assert re.dtype == cu.float32 and re.strides == (8,)
    cu.multiply(re, 10, out=re)  # writes go to z
    cu.add(im, 1, out=im)
    assert z.tolist() == [10 + 3j, 30 - 3j, -50 + 1.5j]
    x = cu.asarray([1.0, 2.0])
    assert cu.real(x)._data_ptr == x._data_ptr
    zeros = cu.imag(x)
    assert zeros.tolist() == [0.0, 0.0] and not zeros.flags["WRITEABLE"]  # as NumPy's x.imag


# ---- round / around ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_matches_numpy(dtype):
    a = with_specials(sample(dtype, scale=2000))
    if a.dtype.kind in "fc":
        with np.errstate(invalid="ignore"):  # inf * complex
            a = (a * np.array(1.2345, dtype=a.dtype)).astype(dtype)
    for decimals in (0, 1, 2, 3, 5, -1, -2, -3, 12):
        try:
            with np.errstate(all="ignore"):
                expected = np.round(a, decimals)
        except TypeError:
            with pytest.raises(TypeError):
                cu.round(cu.asarray(a), decimals)
            continue
        result = cu.round(cu.asarray(a), decimals)
        assert result.dtype == expected.dtype
        got = np.asarray(result)
        if a.dtype.kind in "fc":  # x * 10**d, rint, / 10**d: the same steps as NumPy, so exact
            np.testing.assert_array_equal(got, expected, err_msg=f"decimals={decimals}")
        else:
            np.testing.assert_array_equal(got, expected, err_msg=f"decimals={decimals}")
    same(cu.around(cu.asarray(a)), np.around(a))


def test_round_half_to_even_and_methods():
    x = cu.asarray([0.5, 1.5, 2.5, -0.5, -1.5, 0.125, 0.375])
    assert cu.round(x).tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, 0.0, 0.0]
    assert x.round(2).tolist() == np.round(np.array([0.5, 1.5, 2.5, -0.5, -1.5, 0.125, 0.375]), 2).tolist()
    ints = cu.asarray(np.array([15, 25, -35, 127], dtype=np.int8))
    same(cu.round(ints, -1), np.round(np.array([15, 25, -35, 127], dtype=np.int8), -1))
    y = cu.round(ints)
    assert y._data_ptr != ints._data_ptr and y.tolist() == ints.tolist()
    out = cu.zeros(7)
    assert cu.round(x, 1, out=out) is out
    np.testing.assert_array_equal(np.asarray(out), np.round(np.asarray(x), 1))
    assert np.round(x, 1).tolist() == out.tolist()  # through __array_function__


# ---- clip ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_clip_matches_numpy(dtype):
    a = with_specials(sample(dtype))
    bounds = [(-5, 5), (0, None), (None, 3), (2.5, 7.5), (None, None), (10, -10), (-300, 300),
              (np.array(1, dtype=dtype), np.array(3, dtype=dtype))]
    for lo, hi in bounds:
        try:
            with np.errstate(all="ignore"):
                expected = np.clip(a, lo, hi)
        except (TypeError, OverflowError) as err:
            kind = OverflowError if isinstance(err, OverflowError) else TypeError
            with pytest.raises(kind):
                cu.clip(cu.asarray(a), lo, hi)
            continue
        result = cu.clip(cu.asarray(a), lo, hi)
        assert result.dtype == expected.dtype, (lo, hi)
        np.testing.assert_array_equal(np.asarray(result), expected, err_msg=f"{lo}, {hi}")


def test_clip_signatures():
    ref = np.arange(-5, 6, dtype=np.int16)
    x = cu.asarray(ref)
    same(cu.clip(x, min=-2), np.clip(ref, min=-2))
    same(cu.clip(x, max=3), np.clip(ref, max=3))
    same(cu.clip(x, a_min=-1, a_max=1), np.clip(ref, -1, 1))
    same(cu.clip(x, -1, 1), np.clip(ref, -1, 1))
    lower = np.array([0, 1] * 5 + [2])
    same(cu.clip(x, lower, 4), np.clip(ref, lower, 4))
    same(x.clip(0, 2), ref.clip(0, 2))
    same(np.clip(x, 0, 2), np.clip(ref, 0, 2))  # through __array_function__
    with pytest.raises(TypeError, match="once"):
        cu.clip(x, 1, a_min=2)
    copy = cu.clip(x)
    assert copy.tolist() == ref.tolist() and copy._data_ptr != x._data_ptr
    out = cu.zeros(11, dtype=cu.int16)
    assert cu.clip(x, -1, 1, out=out) is out
    assert out.tolist() == np.clip(ref, -1, 1).tolist()
    i8 = cu.asarray(np.array([-100, 0, 100], dtype=np.int8))
    assert cu.clip(i8, -1000, 1000).dtype == cu.int8  # Python-int bounds past the range are no bounds
    assert cu.clip(i8, 0, 1000).tolist() == [0, 0, 100]


# ---- angle ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_angle_matches_numpy(dtype):
    a = with_specials(sample(dtype))
    for deg in (False, True):
        result, expected = call_both("angle", a, deg=deg)
        assert result.dtype == expected.dtype
        rtol = {"float16": 1e-3, "float32": 1e-6, "complex64": 1e-6}.get(expected.dtype.name, 1e-14)
        np.testing.assert_allclose(np.asarray(result), expected, rtol=rtol)
    r, e = call_both("angle", a[1, 2, ...])
    assert r.shape == e.shape == ()


def test_conj_method():
    z = np.array([1 + 2j, -3j], dtype=np.complex64)
    same(cu.asarray(z).conj(), z.conj())
    same(cu.asarray(z).conjugate(), z.conjugate())


@pytest.mark.gpu
@pytest.mark.parametrize("equal_nan", [False, True])
def test_isclose_with_a_python_number_stays_on_the_arrays_device(equal_nan):
    # isfinite/isnan of the Python number were arrays on the default device (the CPU in the tests)
    x = cu.asarray([0.0, 1e-20, 1.0, float("nan")], device="cuda")
    for got in (cu.isclose(x, 0, equal_nan=equal_nan), cu.isclose(0.0, x, equal_nan=equal_nan)):
        assert str(got.device).startswith("cuda")
        assert np.asarray(got.to_device("cpu")).tolist() == [True, True, False, False]
    assert bool(cu.isclose(x[0], 0).to_device("cpu"))
