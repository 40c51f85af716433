"""The ufunc oracle: every cupric.ufunc (aliases included) against the NumPy ufunc of the same name,
for every dtype, with random domain-appropriate inputs, special values, views, broadcasting,
out=/where=, operators with Python scalars (NEP 50) and promotion properties.

Where cupric differs from NumPy on purpose, the test says so in a comment."""

import operator
import zlib

import cupric as cu
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]
UFUNCS = sorted(n for n in dir(cu) if isinstance(getattr(cu, n), cu.ufunc))
BINARY = [n for n in UFUNCS if getattr(cu, n).nin == 2]

# (rtol, atol) for inexact results; NumPy's float32 transcendental functions are SIMD
# implementations a few ULP away from the C library's, float16 computes through float32.
TOLERANCE = {"float16": (2e-3, 1e-3), "float32": (1e-5, 1e-6), "float64": (1e-12, 1e-14),
             "complex64": (1e-5, 1e-6), "complex128": (1e-12, 1e-14)}

# Input ranges (low, high) per input where the whole real line is not the domain, or where large
# values only overflow. Unsigned types clip the low end at 0.
DOMAINS = {
    "log": [(0.05, 60)], "log2": [(0.05, 60)], "log10": [(0.05, 60)], "sqrt": [(0, 100)],
    "log1p": [(-0.9, 60)], "arccosh": [(1, 60)], "acosh": [(1, 60)], "arcsin": [(-1, 1)], "asin": [(-1, 1)],
    "arccos": [(-1, 1)], "acos": [(-1, 1)], "arctanh": [(-0.99, 0.99)], "atanh": [(-0.99, 0.99)],
    "exp": [(-6, 6)], "exp2": [(-8, 8)], "expm1": [(-6, 6)], "sinh": [(-6, 6)], "cosh": [(-6, 6)],
    # integers to negative integer powers raise (test_integer_power_negative_exponent)
    "power": [(-5, 5), (0, 4)], "pow": [(-5, 5), (0, 4)],
    "left_shift": [(-30, 30), (0, "bits")], "bitwise_left_shift": [(-30, 30), (0, "bits")],
    "right_shift": [(-100, 100), (0, "bits")], "bitwise_right_shift": [(-100, 100), (0, "bits")],
    "gcd": [(-60, 60), (-60, 60)], "lcm": [(-12, 12), (-12, 12)],
}
# Integer reciprocal of 0: NumPy computes 1/0 and converts inf (platform-dependent garbage plus a
# warning); cupric returns 0. Nonzero inputs agree.
NONZERO = {"reciprocal"}


def make(dtype, shape, rng, low=-20, high=20):
    """Random values of a dtype in [low, high] (high may be 'bits': the width of the type)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if high == "bits":
        high = dt.itemsize * 8 + 2  # a few shifts past the width, which NumPy defines
    if dt.kind in "iu":
        info = np.iinfo(dt)
        low, high = max(int(np.floor(low)), info.min), min(int(np.ceil(high)), info.max)
        return rng.integers(low, high, size=shape, endpoint=True).astype(dt)
    if dt.kind == "u":
        low = max(low, 0)
    a = rng.uniform(low, high, size=shape)
    if dt.kind == "c":
        a = a + 1j * rng.uniform(low, high, size=shape)
    return a.astype(dt)


def inputs(name, dtype, shape, seed=0):
    rng = np.random.default_rng(zlib.crc32(repr((name, dtype, shape, seed)).encode()))  # stable across runs
    nin = getattr(cu, name).nin
    ranges = DOMAINS.get(name, [(-20, 20)] * nin)
    out = [make(dtype, shape, rng, *ranges[i]) for i in range(nin)]
    if name in NONZERO and np.dtype(dtype).kind in "iub":
        out = [np.where(a == 0, np.ones_like(a), a) for a in out]
    return out


def _floor_divide_infinities(out, a, b):
    """inf // 2 = inf and 1 // -inf = -0 (the Array API), where NumPy's answers are NaN and -1."""
    if out.dtype.kind != "f":
        return out
    with np.errstate(all="ignore"):  # operands as the loop sees them (a huge Python int is inf in float16)
        a, b = np.broadcast_arrays(np.asarray(a).astype(out.dtype), np.asarray(b).astype(out.dtype))
        return np.where((np.isinf(a) | np.isinf(b)) & (b != 0), a / b, out)


def _expm1_infinities(out, z):
    """Complex expm1 at infinities and on the real axis as the Array API writes it (C99's cexp,
    minus one), where NumPy's formula makes inf * 0 = NaN."""
    z = np.asarray(z)
    if out.dtype.kind != "c":
        return out
    x, y = z.real, z.imag
    re, im = out.real.copy(), out.imag.copy()  # set apart: 1j * inf would make a NaN real part

    def put(mask, real, imag):
        re[mask], im[mask] = real, imag

    put((y == 0) & ~np.isinf(x), np.expm1(x[(y == 0) & ~np.isinf(x)]), y[(y == 0) & ~np.isinf(x)])
    neg, pos = x == -np.inf, x == np.inf
    finite_y = np.where(np.isfinite(y), y, 0)
    put(neg, -1, np.where(np.isfinite(y), np.copysign(0, np.sin(finite_y)), 0)[neg])
    put(pos & (y == 0), np.inf, y[pos & (y == 0)])
    ok = pos & np.isfinite(y) & (y != 0)
    put(ok, np.inf * np.cos(y[ok]), np.inf * np.sin(y[ok]))
    put(pos & ~np.isfinite(y), np.inf, np.nan)
    return _complex(re, im, out.dtype)


def _complex(re, im, dtype):
    out = np.empty(re.shape, dtype)
    out.real, out.imag = re, im
    return out


# where cupric follows the Array API's special cases rather than NumPy (docs/conformance.md)
STANDARD_CASES = {"floor_divide": _floor_divide_infinities, "expm1": _expm1_infinities}


def numpy_call(name, args, **kwargs):
    """NumPy's answer, with the Array API's special cases where cupric follows them (STANDARD_CASES)."""
    with np.errstate(all="ignore"):
        out = getattr(np, name)(*args, **kwargs)
        fix = STANDARD_CASES.get(name)
        return out if fix is None or kwargs or not isinstance(out, np.ndarray) else fix(out, *args)


def assert_matches(result, expected, context=""):
    assert isinstance(result, cu.ndarray), context
    assert result.dtype == expected.dtype, f"{context}: dtype {result.dtype} != NumPy's {expected.dtype}"
    assert result.shape == expected.shape, context
    got = np.asarray(result)
    if expected.dtype.kind in "fc":
        rtol, atol = TOLERANCE[expected.dtype.name]
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True, err_msg=context)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=context)


def check_call(name, np_args, device="cpu", **kwargs):
    """Calls cupric (on `device`) and NumPy with the same (NumPy-array) inputs: same result or same
    exception type."""
    try:
        expected = numpy_call(name, np_args, **kwargs)
    except TypeError:
        with pytest.raises(TypeError):
            getattr(cu, name)(*[cu.asarray(a, device=device) for a in np_args], **kwargs)
        return None
    result = getattr(cu, name)(*[cu.asarray(a, device=device) for a in np_args], **kwargs)
    assert result.device == device or result.device.startswith(device + ":")
    assert_matches(result, expected, f"{name}{tuple(a.dtype.name for a in np_args)} on {device}")
    return result


# The CUDA run of the sweeps compiles a kernel per ufunc and dtype: a subset keeps it to about a
# minute. Complex transcendental functions on the GPU use cuda_prelude.h's textbook formulas, which
# are not yet within the complex128 tolerance of the CPU's; complex arithmetic is checked in
# tests/python/backend/test_cuda_backend.py.
GPU_SWEEP_DTYPES = {"bool", "int64", "float16", "float32", "float64"}


def skip_unswept(device, dtype):
    if device == "cuda" and dtype not in GPU_SWEEP_DTYPES:
        pytest.skip("dtype outside the CUDA sweep")


# ---- every ufunc x every dtype ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", UFUNCS)
def test_ufunc_matches_numpy(name, dtype, device):
    skip_unswept(device, dtype)
    args = inputs(name, dtype, (7, 9))
    if check_call(name, args, device) is None:
        return  # no loop in NumPy: cupric refused too
    # non-contiguous, negative-stride and transposed views (zero-copy into cupric on the CPU)
    check_call(name, [a[::-2, 1::3] for a in args], device)
    check_call(name, [a.T for a in args], device)
    # 0-d and empty
    check_call(name, [a[2, 3, ...] for a in args], device)
    check_call(name, [a[:0] for a in args], device)
    check_call(name, [a[:, :0].T for a in args], device)


def test_aliases_are_the_same_ufuncs():
    for alias in ["abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "atan2", "pow", "true_divide", "mod",
                  "conj", "bitwise_not", "bitwise_invert", "bitwise_left_shift", "bitwise_right_shift"]:
        assert getattr(cu, alias).name == getattr(np, alias).__name__, alias
    # NumPy keeps degrees/radians as ufuncs of their own; cupric maps them to rad2deg/deg2rad
    assert cu.degrees.name == "rad2deg" and cu.radians.name == "deg2rad"


def test_ufunc_attributes():
    for name in UFUNCS:
        uf, ref = getattr(cu, name), getattr(np, name)
        assert uf.nin == ref.nin and uf.nout == 1 and uf.nargs == ref.nin + 1
        assert all("->" in sig for sig in uf.types)


# ---- special values ----------------------------------------------------------------------------------


def special_values(dtype):
    info = np.finfo(dtype)
    vals = [np.nan, np.inf, -np.inf, -0.0, 0.0, info.smallest_subnormal * 3, -info.smallest_subnormal,
            info.tiny, info.max, -info.max, 1.0, -1.0, 0.5, -2.5, 3.0]
    return np.array(vals, dtype=dtype)


FLOAT_UFUNCS = [n for n in UFUNCS if "f" in "".join(getattr(cu, n).types)]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("name", FLOAT_UFUNCS)
def test_special_values(name, dtype):
    v = special_values(dtype)
    if getattr(cu, name).nin == 1:
        args = [v]
    else:  # every pair
        args = [np.repeat(v, v.size), np.tile(v, v.size)]
    result = check_call(name, args)
    expected = numpy_call(name, args)
    # NumPy's maximum(-0.0, +0.0) depends on its SIMD path (float16 keeps the first operand,
    # float32/64 the second); cupric keeps the first for every dtype
    # NumPy < 2.5's float16 nextafter(a, b) returned a for a == b (so nextafter(-0.0, 0.0) kept -0.0);
    # 2.5 returns b, as C does and as cupric does
    old_half_nextafter = name == "nextafter" and dtype == "float16" and np.lib.NumpyVersion(np.__version__) < "2.5.0"
    if (result is not None and expected.dtype.kind == "f" and not old_half_nextafter
            and name not in ("maximum", "minimum", "fmax", "fmin")):
        zeros = expected == 0  # signed zeros must agree too
        np.testing.assert_array_equal(np.signbit(np.asarray(result)[zeros]), np.signbit(expected[zeros]),
                                      err_msg=f"{name}: sign of zero")


COMPLEX_SPECIAL = np.array([complex(r, i) for r in (0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan)
                            for i in (0.0, -0.0, 0.75, -3.0, np.inf, -np.inf, np.nan)])


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", [n for n in UFUNCS if "D" in "".join(getattr(cu, n).types)])
def test_complex_special_values(name, dtype):
    v = COMPLEX_SPECIAL.astype(dtype)
    if getattr(cu, name).nin == 2:
        check_call(name, [np.repeat(v, v.size), np.tile(v, v.size)])
        return
    finite = v[np.isfinite(v)]
    check_call(name, [finite])
    # Infinities and NaNs: C99 Annex G (std::complex) and NumPy's npymath mostly agree; where they
    # do not, cupric's result is allowed to differ only by NaN-ness of an infinite/NaN result
    expected = numpy_call(name, [v])
    result = np.asarray(getattr(cu, name)(cu.asarray(v)))
    assert result.dtype == expected.dtype
    if expected.dtype.kind not in "fc":
        np.testing.assert_array_equal(result, expected, err_msg=name)
        return
    both_finite = np.isfinite(expected) & np.isfinite(result)
    rtol, atol = TOLERANCE[expected.dtype.name]
    np.testing.assert_allclose(result[both_finite], expected[both_finite], rtol=rtol, atol=atol)
    assert (np.isfinite(result) == np.isfinite(expected)).all(), f"{name}: finiteness differs"



@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name, z, want", [
    # the Array API's signed zeros where C99 (and NumPy) sign them otherwise
    ("expm1", complex(-0.0, 0.0), complex(0.0, 0.0)),
    ("expm1", complex(0.0, 0.0), complex(0.0, 0.0)),
    ("expm1", complex(-0.0, -0.0), complex(0.0, -0.0)),
    ("tanh", complex(np.inf, 2.0), complex(1.0, 0.0)),  # C99: 1 - 0j (sin(4) < 0)
    ("tanh", complex(np.inf, -2.0), complex(1.0, -0.0)),
    ("tanh", complex(-np.inf, 3.0), complex(-1.0, 0.0)),
    ("tanh", complex(np.inf, 0.0), complex(1.0, 0.0)),
])
def test_complex_standard_zeros(name, z, want, dtype):
    got = np.asarray(getattr(cu, name)(cu.asarray(np.array([z], dtype))))[0]
    assert got == want and np.signbit(got.real) == np.signbit(want.real) \
        and np.signbit(got.imag) == np.signbit(want.imag), f"{name}({z}) = {got}, the standard says {want}"

# ---- bfloat16: float32 math rounded to bfloat16 ---------------------------------------------------------


@pytest.mark.parametrize("name", [n for n in UFUNCS if "E" in "".join(getattr(cu, n).types)])
def test_bfloat16_matches_float32_rounded(name):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = ml_dtypes.bfloat16
    args = [a.astype(bf16) for a in inputs(name, "float32", (6, 5))]  # values exact in bfloat16
    special = special_values("float32").astype(bf16)
    if getattr(cu, name).nin == 2:
        special = [np.repeat(special, special.size), np.tile(special, special.size)]
    else:
        special = [special]
    for arrays in (args, special):
        if name == "nextafter":  # steps bfloat16's own spacing: ml_dtypes' loop is the oracle
            expected = numpy_call(name, arrays)
            assert_matches(getattr(cu, name)(*[cu.asarray(a) for a in arrays]).astype(cu.float32),
                           expected.astype(np.float32), name)
            continue
        expected = numpy_call(name, [a.astype(np.float32) for a in arrays])
        if expected.dtype == np.float32:
            expected = expected.astype(bf16)
        result = getattr(cu, name)(*[cu.asarray(a) for a in arrays])
        assert result.dtype == (cu.bfloat16 if expected.dtype == bf16 else expected.dtype)
        got = np.asarray(result.astype(cu.float32)) if result.dtype == cu.bfloat16 else np.asarray(result)
        # one bfloat16 ulp (2^-7): float32 results a ULP apart may round to neighbouring bfloat16
        np.testing.assert_allclose(got, expected.astype(got.dtype), rtol=8e-3, atol=1e-30, equal_nan=True,
                                   err_msg=name)


# ---- float8: float32 math rounded to float8, as ml_dtypes' loops -----------------------------------------


@pytest.mark.parametrize("f8", ["float8_e4m3fn", "float8_e5m2"])
# (np.clip on ml_dtypes arrays answers in float32, through its Python-level fallback: not a loop)
@pytest.mark.parametrize("name", [n for n in UFUNCS if "4" in "".join(getattr(cu, n).types) and n != "clip"])
def test_float8_matches_ml_dtypes(name, f8):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    t = getattr(ml_dtypes, f8)
    args = [a.astype(t) for a in inputs(name, "float32", (6, 5))]
    special = special_values("float32").astype(t)
    nin = getattr(cu, name).nin
    special = [np.repeat(special, special.size), np.tile(special, special.size)] if nin == 2 else [special] * nin
    # ml_dtypes' floor_divide by zero gives NaN where NumPy's float loops give +-inf; cupric keeps
    # NumPy's float32 answer (as for bfloat16), so only the random inputs are compared there
    for arrays in (args,) if name == "floor_divide" else (args, special):
        with np.errstate(all="ignore"):
            # by the table's name: NumPy's aliases (degrees for rad2deg) are other ufuncs with no ml_dtypes loop
            table_name = getattr(cu, name).name
            expected = getattr(np, table_name)(*arrays) if table_name != "_where" else np.where(*arrays)
        result = getattr(cu, name)(*[cu.asarray(a) for a in arrays])
        assert result.dtype == expected.dtype, (name, result.dtype, expected.dtype)
        got = np.asarray(result.astype(cu.float32)) if result.dtype == t else np.asarray(result)
        want = expected.astype(np.float32) if expected.dtype == t else expected
        # libm's float32 answers a ulp apart may round to neighbouring float8 values: one float8 ulp
        np.testing.assert_allclose(got, want.astype(got.dtype), rtol=0.26, atol=2.0**-16, equal_nan=True,
                                   err_msg=name)


# ---- mixed dtypes: the buffered casting path -------------------------------------------------------------


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "less", "maximum", "arctan2", "power",
                                  "bitwise_and", "logical_xor", "floor_divide", "copysign"])
def test_mixed_dtype_pairs(name):
    rng = np.random.default_rng(1)
    for da in DTYPES:
        a = make(da, (5,), rng, 1, 9)
        for db in DTYPES:
            b = make(db, (5,), rng, 1, 4)
            check_call(name, [a, b])


# ---- broadcasting ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("shapes", [((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((), (5,)), ((0, 3), (1, 3)),
                                    ((5, 1, 1), (1, 2, 3)), ((1,), (4, 1)), ((2, 1, 3, 1), (4, 1, 5))])
@pytest.mark.parametrize("name", ["add", "multiply", "less_equal", "arctan2", "logaddexp", "bitwise_or"])
def test_broadcasting_sweep(name, shapes):
    rng = np.random.default_rng(2)
    dtype = "int32" if name == "bitwise_or" else "float64"
    check_call(name, [make(dtype, s, rng) for s in shapes])


@settings(max_examples=60, deadline=None)
@given(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4))
def test_broadcasting_property(shapes):
    rng = np.random.default_rng(3)
    a, b = (make("float32", s, rng) for s in shapes.input_shapes)
    result = cu.add(cu.asarray(a), cu.asarray(b))
    assert result.shape == shapes.result_shape
    np.testing.assert_array_equal(np.asarray(result), a + b)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.lists(st.integers(1, 4), min_size=1, max_size=3))
def test_broadcast_errors_match_numpy(sa, sb):
    a, b = np.zeros(sa), np.zeros(sb)
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        with pytest.raises(ValueError, match="cannot broadcast shapes"):
            cu.add(cu.asarray(a), cu.asarray(b))
        return
    assert cu.add(cu.asarray(a), cu.asarray(b)).shape == np.broadcast_shapes(a.shape, b.shape)


# ---- out= and where= ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int16", "float32", "complex128"])
@pytest.mark.parametrize("name", UFUNCS)
def test_out_and_where(name, dtype, device):
    if device == "cuda" and dtype != "float32":
        pytest.skip("outside the CUDA sweep")
    args = inputs(name, dtype, (4, 5))
    try:
        expected = numpy_call(name, args)
    except TypeError:
        return
    rng = np.random.default_rng(4)
    mask = rng.random((4, 5)) < 0.5
    start = make(expected.dtype.name, (4, 5), rng)
    np_out = start.copy()
    numpy_call(name, args, out=np_out, where=mask)
    dev_args = [cu.asarray(a, device=device) for a in args]
    out = cu.asarray(start.copy(), device=device)
    returned = getattr(cu, name)(*dev_args, out=out, where=cu.asarray(mask, device=device))
    assert returned is out
    assert_matches(out, np_out, name)
    out2 = cu.asarray(start.copy(), device=device)
    getattr(cu, name)(*dev_args, out=(out2,))
    assert_matches(out2, expected, name)
    # a broadcast mask (a list on the CPU), and where=True / where=False as Python bools
    row = [True, False, True, True, False]
    np_out = start.copy()
    numpy_call(name, args, out=np_out, where=row)
    out3 = cu.asarray(start.copy(), device=device)
    getattr(cu, name)(*dev_args, out=out3, where=row if device == "cpu" else cu.asarray(row, device=device))
    assert_matches(out3, np_out, name)
    out4 = cu.asarray(start.copy(), device=device)
    getattr(cu, name)(*dev_args, out=out4, where=False)
    assert_matches(out4, start, name)
    getattr(cu, name)(*dev_args, out=out4, where=True)
    assert_matches(out4, expected, name)


def test_out_errors_leave_out_unchanged():
    x = cu.asarray(np.arange(6, dtype=np.float64).reshape(2, 3))
    out = cu.asarray(np.full((2, 3), 7, dtype=np.int32))
    with pytest.raises(TypeError, match="same_kind"):
        cu.add(x, 1, out=out)  # float64 -> int32 is not same_kind
    with pytest.raises(ValueError, match="non-broadcastable output"):
        cu.add(x, 1, out=cu.zeros((3,)))
    with pytest.raises(TypeError, match="bool"):
        cu.add(x, 1, out=cu.zeros((2, 3)), where=cu.ones((2, 3)))
    assert np.asarray(out).tolist() == [[7, 7, 7], [7, 7, 7]]


def test_out_overlapping_input():
    ref = np.arange(10.0)
    x = cu.asarray(ref.copy())
    view_a, view_b = cu.asarray(np.asarray(x)[1:]), cu.asarray(np.asarray(x)[:-1])
    cu.add(view_b, 1, out=view_a)  # reads what it writes, shifted: must see the old values
    expected = ref.copy()
    np.add(expected[:-1], 1, out=expected[1:])
    np.testing.assert_array_equal(np.asarray(x), expected)


def test_integer_power_negative_exponent():
    # NumPy raises "Integers to negative integer powers are not allowed" (C would truncate to 0);
    # cupric checks the exponents the loop would read before it writes anything
    base = cu.asarray(np.array([1, -1, -1, 2, -3, 0], dtype=np.int32))
    exp = cu.asarray(np.array([-3, -2, -3, -1, -2, -1], dtype=np.int32))
    for args in [(base, exp), (base, -1), (2, exp), (cu.asarray([True, False]), -1),
                 (cu.asarray([2], dtype=cu.int8), cu.asarray([1, -1]))]:
        with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
            np.power(*[np.asarray(a) if isinstance(a, cu.ndarray) else a for a in args])
        with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
            cu.power(*args)
    out = cu.asarray(np.full(6, 7, dtype=np.int32))
    with pytest.raises(ValueError):
        cu.power(base, exp, out=out)
    with pytest.raises(ValueError):
        out **= -2
    assert out.tolist() == [7] * 6  # nothing written
    # where= leaves the masked exponents unread, as NumPy's loop does
    mask = [False, False, False, True, False, False]
    exp3 = cu.asarray(np.array([-3, -2, -3, 3, -2, -1], dtype=np.int32))
    np_out = np.full(6, 7, np.int32)
    np.power(np.asarray(base), np.asarray(exp3), out=np_out, where=mask)
    cu.power(base, exp3, out=out, where=cu.asarray(mask))
    assert out.tolist() == np_out.tolist() == [7, 7, 7, 8, 7, 7]
    # float loops and unsigned exponents are not integer powers of negative exponents
    assert cu.power(cu.asarray([2]), cu.asarray([-1.0])).tolist() == [0.5]
    assert cu.power(base, cu.asarray([0, 1, 2, 3, 1, 0])).tolist() == [1, -1, 1, 8, -3, 1]
    assert cu.power(cu.asarray([], dtype=cu.int64), -1).shape == (0,)


# ---- operators with Python scalars (NEP 50) ------------------------------------------------------------

BINOPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
          operator.pow, operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift,
          operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]
SCALARS = [3, -2, 300, 2.5, True, 1j, 2**63]


def error_kind(err):
    """The builtin exception class cupric must raise where NumPy raised err (NumPy's
    UFuncTypeError and friends are TypeError subclasses)."""
    for kind in (OverflowError, TypeError, ValueError):
        if isinstance(err, kind):
            return kind
    return type(err)


def same_behaviour(fn, np_value, cu_value, context, np_fn=None):
    """fn on cupric's value behaves as on NumPy's (np_fn there, when given: the oracle)."""
    try:
        with np.errstate(all="ignore"):
            expected = (np_fn or fn)(np_value)
    except Exception as err:  # noqa: BLE001 — cupric must raise the same kind of error
        with pytest.raises(error_kind(err)):
            fn(cu_value)
        return
    result = fn(cu_value)
    assert_matches(result, np.asarray(expected), context)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", BINOPS, ids=lambda f: f.__name__)
def test_operators_with_python_scalars(op, dtype):
    ref = make(dtype, (6,), np.random.default_rng(5), 1, 5)
    x = cu.asarray(ref)
    oracle = STANDARD_CASES.get({"floordiv": "floor_divide"}.get(op.__name__))  # NumPy, or the standard's cases
    for s in SCALARS:
        np_fn = None if oracle is None else (lambda v, s=s: oracle(op(v, s), v, s))
        same_behaviour(lambda v, s=s: op(v, s), ref, x, f"{op.__name__}({dtype}, {s!r})", np_fn)
        np_fn = None if oracle is None else (lambda v, s=s: oracle(op(s, v), s, v))
        same_behaviour(lambda v, s=s: op(s, v), ref, x, f"{op.__name__}({s!r}, {dtype})", np_fn)  # reflected
    same_behaviour(lambda v: op(v, v), ref, x, f"{op.__name__}({dtype}, {dtype})")


def test_nep50_examples():
    i8 = cu.asarray([1, 2, 3], dtype=cu.int8)
    with pytest.raises(OverflowError, match="300"):
        i8 + 300
    assert (i8 + 100).dtype == cu.int8
    assert (cu.asarray([1.0], dtype=cu.float32) + 1.0).dtype == cu.float32
    assert (cu.asarray([1.0], dtype=cu.float16) * 1e10).dtype == cu.float16
    assert (i8 + 1.5).dtype == cu.float64
    assert (cu.asarray([1.0], dtype=cu.float32) + 1j).dtype == cu.complex64
    assert (cu.asarray([True]) + 1).dtype == cu.int64
    with pytest.raises(OverflowError):
        cu.asarray([1], dtype=cu.uint8) - (-1)


INPLACE = [operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ifloordiv, operator.imod,
           operator.ipow, operator.iand, operator.ior, operator.ixor, operator.ilshift, operator.irshift]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", INPLACE, ids=lambda f: f.__name__)
def test_inplace_operators(op, dtype):
    ref = make(dtype, (5,), np.random.default_rng(6), 1, 5)
    for other in (2, 1.5, True, 1j, 300, ref[::-1].copy()):
        if op is operator.ipow and isinstance(other, int) and not isinstance(other, bool) and other > 10:
            continue
        expected = ref.copy()
        try:
            with np.errstate(all="ignore"):
                expected = op(expected, other)
        except (TypeError, OverflowError) as err:
            x = cu.asarray(ref.copy())
            with pytest.raises(OverflowError if isinstance(err, OverflowError) else TypeError):
                op(x, cu.asarray(other) if isinstance(other, np.ndarray) else other)
            np.testing.assert_array_equal(np.asarray(x), ref)  # a failed in-place op leaves x as it was
            continue
        x = cu.asarray(ref.copy())
        y = op(x, cu.asarray(other) if isinstance(other, np.ndarray) else other)
        assert y is x
        assert_matches(x, expected, f"{op.__name__}({dtype}, {other!r})")


def test_inplace_float_into_int_is_refused():
    x = cu.asarray([1, 2, 3])
    with pytest.raises(TypeError, match="same_kind"):
        x += 1.5
    assert x.tolist() == [1, 2, 3]


def test_unary_operators():
    for dtype in DTYPES:
        ref = make(dtype, (5,), np.random.default_rng(7))
        x = cu.asarray(ref)
        for op in (operator.neg, operator.pos, operator.abs, operator.invert):
            same_behaviour(op, ref, x, f"{op.__name__}({dtype})")


# ---- promotion properties (hypothesis) ---------------------------------------------------------------------

PY_SCALARS = st.sampled_from([True, 1, -7, 2.5, 1j])
DTYPE_NAMES = st.sampled_from(DTYPES)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(DTYPE_NAMES, PY_SCALARS), min_size=1, max_size=4))
def test_result_type_matches_numpy(operands):
    def np_operand(o):
        return np.dtype(o) if isinstance(o, str) else o

    def cu_operand(o):
        return cu.dtype(o) if isinstance(o, str) else o

    try:
        expected = np.result_type(*[np_operand(o) for o in operands])
    except TypeError:
        with pytest.raises(TypeError):
            cu.result_type(*[cu_operand(o) for o in operands])
        return
    assert cu.result_type(*[cu_operand(o) for o in operands]) == expected


@settings(max_examples=200, deadline=None)
@given(DTYPE_NAMES, DTYPE_NAMES, st.sampled_from(["no", "equiv", "safe", "same_kind", "unsafe"]))
def test_can_cast_matches_numpy(a, b, casting):
    assert cu.can_cast(cu.dtype(a), cu.dtype(b), casting) == np.can_cast(a, b, casting)


@settings(max_examples=150, deadline=None)
@given(DTYPE_NAMES, st.one_of(DTYPE_NAMES, PY_SCALARS), st.sampled_from(["add", "multiply", "maximum", "less"]))
def test_ufunc_result_dtype_matches_numpy(a, b, name):
    x = np.ones(3, dtype=a)
    y = np.ones(3, dtype=b) if isinstance(b, str) else b
    try:
        expected = numpy_call(name, [x, y])
    except (TypeError, OverflowError) as err:
        with pytest.raises(error_kind(err)):
            getattr(cu, name)(cu.asarray(x), cu.asarray(y) if isinstance(b, str) else y)
        return
    result = getattr(cu, name)(cu.asarray(x), cu.asarray(y) if isinstance(b, str) else y)
    assert result.dtype == expected.dtype


# ---- calling conventions, and shapes past the inline sizes of the dispatch path ------------------------


def test_ufunc_call_argument_counts_and_positional_out():
    x = cu.asarray(np.linspace(-1, 1, 5))
    with pytest.raises(TypeError, match="takes from 2 to 3 positional arguments but 1 were given"):
        cu.add(x)
    with pytest.raises(TypeError, match="but 4 were given"):
        cu.add(x, x, cu.empty(5), cu.empty(5))
    with pytest.raises(TypeError, match="but 3 were given"):  # out given twice
        cu.add(x, x, cu.empty(5), out=cu.empty(5))
    out = cu.empty(5)
    assert cu.exp(x, out) is out  # a positional out is returned itself, as NumPy does
    np.testing.assert_allclose(np.asarray(out), np.exp(np.asarray(x)), rtol=1e-15)
    assert cu.add(x, 2, out=(out,)) is out
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x) + 2)


def test_operands_of_every_kind_in_one_call():
    ref = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    x = cu.asarray(ref)
    for other in (2, 2.5, True, 1j, 2**64 - 1, np.float64(1.5), np.float32(1.5), [1, 2, 3], ref[::-1].copy()):
        for fn in (lambda a, b: a + b, lambda a, b: b * a, lambda a, b: np.subtract(a, b)):
            cu_fn = (lambda a, b: cu.subtract(a, b)) if fn.__code__.co_names == ("np", "subtract") else fn
            expected = fn(ref, other)
            got = cu_fn(x, cu.asarray(other) if isinstance(other, np.ndarray) else other)
            assert got.dtype == expected.dtype, (other, got.dtype, expected.dtype)
            np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)


def test_small_results_are_64_byte_aligned():
    # host arrays up to 8 KiB share one allocation with their storage; the data still starts on a
    # cache line, as larger blocks do
    for n in (1, 3, 8, 33, 127, 128, 129, 1000, 1025, 5000, 8193):
        for dtype in ("int8", "float64", "complex128"):
            a = cu.asarray(np.arange(n).astype(dtype))
            r = a + a
            assert r.__array_interface__["data"][0] % 64 == 0, (n, dtype)
            np.testing.assert_array_equal(np.asarray(r), np.arange(n).astype(dtype) * 2)


def test_more_dimensions_than_kept_inline():
    # shapes, strides and plans keep 8 dimensions inline and spill past that; index tuples 4 items
    rng = np.random.default_rng(11)
    shape = (2, 1, 3, 2, 1, 2, 3, 2, 2, 1, 2)
    a = rng.standard_normal(shape)
    b = rng.standard_normal(shape[3:])
    view = a[::-1, :, ::2, :, :, ::-1]
    x, y = cu.asarray(a)[::-1, :, ::2, :, :, ::-1], cu.asarray(b)
    np.testing.assert_array_equal(np.asarray(x + y), view + b)
    np.testing.assert_allclose(np.asarray(cu.exp(x) * 2.0), np.exp(view) * 2.0, rtol=1e-15)  # exp: <= 2 ulp
    r = cu.asarray(a).reshape(2, 3, 2, 2, 3, 2, 2, 2, 1, 1)
    np.testing.assert_array_equal(np.asarray(r), a.reshape(2, 3, 2, 2, 3, 2, 2, 2, 1, 1))
    idx = (1, 0, slice(None, None, -1), 1, None, 0, Ellipsis, 1)
    np.testing.assert_array_equal(np.asarray(cu.asarray(a)[idx]), a[idx])
    with pytest.raises(ValueError, match="cannot broadcast shapes"):
        x + cu.asarray(rng.standard_normal((3,) * 9))
