"""float8_e4m3fn and float8_e5m2 (ml_dtypes' types): conversions bit for bit as ml_dtypes rounds,
NumPy's promotion and casting with every dtype, creation, interop, and the operations NumPy with
ml_dtypes refuses refused by name. NumPy on ml_dtypes arrays is the oracle throughout."""

import pickle

import cupric as cu
import ml_dtypes
import numpy as np
import pytest

F8 = ["float8_e4m3fn", "float8_e5m2"]
OTHERS = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128"]
ALL = OTHERS + F8


def npdt(name):
    return np.dtype(getattr(ml_dtypes, name)) if name in ("bfloat16", *F8) else np.dtype(name)


def bits(a):
    """The uint8 codes of a float8 array (cupric's or NumPy's)."""
    a = np.asarray(a)
    return a.view(np.uint8)


def codes(name):
    return np.arange(256, dtype=np.uint8).view(npdt(name))


def same_values(got, want):
    """Equal values, NaN where NumPy has NaN, and the sign of zeros."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind in "fcV" or want.dtype in (npdt(n) for n in F8):
        g, w = got.astype(np.complex128 if want.dtype.kind == "c" else np.float64), \
            want.astype(np.complex128 if want.dtype.kind == "c" else np.float64)
        np.testing.assert_array_equal(g, w)
        if want.dtype.kind != "c":
            np.testing.assert_array_equal(np.signbit(g), np.signbit(w))
    else:
        np.testing.assert_array_equal(got, want)


def test_names_are_ml_dtypes():
    assert cu.float8_e4m3fn is ml_dtypes.float8_e4m3fn
    assert cu.float8_e5m2 is ml_dtypes.float8_e5m2
    for name in F8:
        x = cu.zeros(3, dtype=name)
        assert x.dtype is npdt(name) and x.itemsize == 1
        assert cu.zeros(2, dtype=getattr(ml_dtypes, name)).dtype is npdt(name)
        assert cu.zeros(2, dtype=npdt(name)).dtype is npdt(name)


@pytest.mark.parametrize("name", F8)
def test_every_code_reads_as_ml_dtypes(name):
    want = codes(name).astype(np.float32)
    got = np.asarray(cu.asarray(codes(name)).astype("float32"))
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))


@pytest.mark.parametrize("name", F8)
def test_every_code_round_trips(name):
    f = codes(name).astype(np.float32)
    got = bits(cu.asarray(f).astype(name))
    np.testing.assert_array_equal(got, bits(f.astype(npdt(name))))


def boundary_sweep(dtype, wide):
    """Every float8 value, every midpoint between neighbours (and past the largest), and the
    values one and a few ulps of `wide` either side of each, with both signs; plus specials."""
    v = np.unique(codes(dtype).astype(np.float64))
    v = v[np.isfinite(v)]
    v = v[v >= 0]
    step = np.diff(v)
    mids = np.concatenate([v[:-1] + step / 2, [v[-1] + step[-1] / 2, v[-1] + step[-1], v[-1] * 4]])
    pts = np.concatenate([v, mids]).astype(wide)
    around = [pts]
    for k in (1, 2, 7):
        up, down = pts.copy(), pts.copy()
        for _ in range(k):
            up, down = np.nextafter(up, wide(np.inf)), np.nextafter(down, wide(-np.inf))
        around += [up, down]
    x = np.concatenate(around)
    specials = np.array([np.inf, np.nan, 0.0, 1e-300 if wide is np.float64 else 1e-40, 1e30], wide)
    x = np.concatenate([x, -x, specials, -specials])
    return x


@pytest.mark.parametrize("name", F8)
@pytest.mark.parametrize("wide", [np.float32, np.float64, np.float16], ids=["f32", "f64", "f16"])
def test_rounding_at_every_boundary(name, wide):
    x = boundary_sweep(name, wide)
    got = bits(cu.asarray(x).astype(name))
    np.testing.assert_array_equal(got, bits(x.astype(npdt(name))))


@pytest.mark.parametrize("name", F8)
def test_rounding_of_random_floats(name):
    rng = np.random.default_rng(8)
    x = np.concatenate([rng.standard_normal(20000) * s for s in (1e-4, 1e-2, 1, 100, 1e4)])
    for wide in (np.float32, np.float64):
        y = x.astype(wide)
        np.testing.assert_array_equal(bits(cu.asarray(y).astype(name)), bits(y.astype(npdt(name))))


@pytest.mark.parametrize("name", F8)
@pytest.mark.parametrize("other", ALL)
def test_casts_both_ways_match_numpy(name, other):
    rng = np.random.default_rng(1)
    vals = np.concatenate([rng.standard_normal(64) * 50, [0, -0.0, 1, -1, 0.5, 3.7, -3.7, 127, 200, -200, 300,
                                                           448, 1e4, -1e4, 60000, np.inf, -np.inf, np.nan]])
    src = vals.astype(np.float32).astype(npdt(name))  # every value a float8
    with np.errstate(all="ignore"):
        want = src.astype(npdt(other))
    same_values(np.asarray(cu.asarray(src).astype(other)), want)
    # and into the float8 from the other dtype's values
    with np.errstate(all="ignore"):
        start = (vals + 1j * vals if npdt(other).kind == "c" else vals).astype(npdt(other))
        want = start.astype(npdt(name))
    np.testing.assert_array_equal(bits(cu.asarray(start).astype(name)), bits(want))


@pytest.mark.parametrize("a", ALL)
def test_promotion_and_casting_sweep_matches_numpy(a):
    for b in ALL:
        if a not in F8 and b not in F8:
            continue
        assert cu.promote_types(a, b) == np.promote_types(npdt(a), npdt(b)), (a, b)
        assert cu.result_type(cu.zeros(1, a), cu.zeros(1, b)) == np.result_type(npdt(a), npdt(b)), (a, b)
        for casting in ("no", "equiv", "safe", "same_kind", "unsafe"):
            assert cu.can_cast(a, b, casting) == np.can_cast(npdt(a), npdt(b), casting), (a, b, casting)


@pytest.mark.parametrize("name", F8)
@pytest.mark.parametrize("scalar", [1, 1.5, 300.0, True, 2j])
def test_python_scalars_are_weak(name, scalar):
    a = np.array([1.5, -2, 0.25], npdt(name))
    with np.errstate(all="ignore"):
        want = a + scalar
    same_values(cu.asarray(a) + scalar, want)


@pytest.mark.parametrize("name", F8)
@pytest.mark.parametrize("other", ["int8", "uint8", "int16", "float16", "bfloat16", "float32", *F8])
def test_mixed_arithmetic_matches_numpy(name, other):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(50) * 4).astype(npdt(name))
    b = (rng.standard_normal(50) * 4).astype(npdt(other))
    for op in (np.add, np.multiply, np.subtract):
        same_values(op(cu.asarray(a), cu.asarray(b)), op(a, b))


@pytest.mark.parametrize("name", F8)
def test_finfo_matches_ml_dtypes(name):
    got, want = cu.finfo(name), ml_dtypes.finfo(getattr(ml_dtypes, name))
    for field in ("bits", "precision", "nmant", "nexp", "minexp", "maxexp"):
        assert getattr(got, field) == getattr(want, field), field
    for field in ("eps", "max", "min", "tiny", "smallest_normal", "smallest_subnormal", "resolution"):
        assert float(getattr(got, field)) == float(getattr(want, field)), field
    assert got.dtype == npdt(name)


@pytest.mark.parametrize("name", F8)
def test_creation(name):
    d = npdt(name)
    same_values(cu.zeros((2, 3), dtype=name), np.zeros((2, 3), d))
    same_values(cu.ones(4, dtype=name), np.ones(4, d))
    same_values(cu.full(3, 1.1, dtype=name), np.full(3, 1.1, d))
    same_values(cu.arange(0, 5, 1.5, dtype=name), np.arange(0, 5, 1.5, dtype=d))
    same_values(cu.asarray([1.1, 2.2, -300.0], dtype=name), np.asarray([1.1, 2.2, -300.0], d))
    same_values(cu.empty_like(cu.zeros(2, dtype=name)).astype("float32") * 0, np.zeros(2, np.float32))


@pytest.mark.parametrize("name", F8)
def test_numpy_interop_and_indexing(name):
    d = npdt(name)
    a = (np.random.default_rng(2).standard_normal((4, 5)) * 10).astype(d)
    x = cu.asarray(a)
    assert x.dtype is d
    np.testing.assert_array_equal(bits(np.asarray(x)), bits(a))
    np.testing.assert_array_equal(bits(np.asarray(x[1:3, ::2])), bits(a[1:3, ::2]))
    np.testing.assert_array_equal(bits(np.asarray(x[[0, 3]])), bits(a[[0, 3]]))
    np.testing.assert_array_equal(bits(np.asarray(x[x > 0])), bits(a[a > 0]))
    y = x.copy()
    y[0] = 1.1
    y[1, :] = x[2, :]
    b = a.copy()
    b[0] = 1.1
    b[1, :] = a[2, :]
    np.testing.assert_array_equal(bits(np.asarray(y)), bits(b))
    assert float(x[0, 0]) == float(a[0, 0])
    same_values(cu.concatenate([x, x]), np.concatenate([a, a]))
    same_values(x.T.reshape(-1), a.T.reshape(-1))


@pytest.mark.parametrize("name", F8)
def test_printing_is_numpys(name):
    a = np.array([1.5, -2, 0.1015625, 448, np.nan], np.float32).astype(npdt(name))
    x = cu.asarray(a)
    assert str(x) == str(a)
    assert repr(x) == f"array({np.array2string(a, separator=', ', prefix='array(')}, dtype={name})"
    assert x.tolist() == pytest.approx(a.tolist(), nan_ok=True)


@pytest.mark.parametrize("name", F8)
@pytest.mark.parametrize("protocol", [2, 5])
def test_pickle_round_trips(name, protocol):
    a = (np.random.default_rng(4).standard_normal((3, 4)) * 10).astype(npdt(name))
    x = cu.asarray(a)
    for view in (x, x.T):
        y = pickle.loads(pickle.dumps(view, protocol=protocol))
        assert y.dtype is npdt(name)
        np.testing.assert_array_equal(bits(np.ascontiguousarray(np.asarray(y))),
                                      bits(np.ascontiguousarray(np.asarray(view))))


@pytest.mark.parametrize("name", F8)
def test_buffer_protocol_and_interfaces_refuse_by_name(name):
    x = cu.zeros(3, dtype=name)
    with pytest.raises(BufferError, match=name):
        memoryview(x)
    assert not hasattr(x, "__array_interface__")


@pytest.mark.parametrize("name", F8)
def test_dlpack_codes_are_dlpack_1_1s(name):
    x = cu.asarray(np.array([1.5, -2, 0.25], npdt(name)))
    # NumPy itself cannot take float8 through DLPack (its own limitation): torch can, when present
    torch = pytest.importorskip("torch")
    t = torch.from_dlpack(x)
    assert str(t.dtype) == f"torch.{name}"
    np.testing.assert_array_equal(t.view(torch.uint8).numpy(), bits(x))
    back = cu.from_dlpack(t)
    assert back.dtype is npdt(name)
    np.testing.assert_array_equal(bits(back), bits(x))


@pytest.mark.parametrize("name", F8)
def test_reductions_that_select_are_exact(name):
    a = (np.random.default_rng(5).standard_normal((6, 7)) * 30).astype(npdt(name))
    x = cu.asarray(a)
    for f in ("max", "min"):
        same_values(getattr(x, f)(), getattr(a, f)())
        same_values(getattr(x, f)(axis=0), getattr(a, f)(axis=0))
    np.testing.assert_array_equal(np.asarray(x.argmax(axis=1)), a.argmax(axis=1))
    np.testing.assert_array_equal(np.asarray(x.argmin()), a.argmin())
    np.testing.assert_array_equal(bits(np.asarray(cu.sort(x, axis=1))), bits(np.sort(a, axis=1)))


@pytest.mark.parametrize("name", F8)
def test_sums_keep_the_dtype(name):
    # NumPy's float8 sum and mean round to float8 after every addition; cupric adds in float32 and
    # rounds once (as for bfloat16), so the two agree where no partial sum rounds
    a = np.array([[2, 1, 0.5, 0.5], [1, 1, 1, 1]], npdt(name))
    x = cu.asarray(a)
    for f in ("sum", "mean", "max", "min", "prod"):
        for axis in (None, 0, 1):
            same_values(getattr(x, f)(axis=axis), getattr(a, f)(axis=axis))


@pytest.mark.parametrize("name", F8)
def test_linalg_refuses_by_name(name):
    x = cu.asarray(np.eye(3).astype(npdt(name)))
    with pytest.raises(TypeError, match=f"matmul: {name}"):
        x @ x
    with pytest.raises(TypeError, match=name):
        cu.linalg.inv(x)
    with pytest.raises(TypeError, match=name):
        cu.linalg.solve(x, x)


@pytest.mark.parametrize("name", F8)
def test_fft_computes_in_complex64_as_numpy(name):
    a = np.array([1, 2, 0.5, -1], npdt(name))
    got, want = cu.fft.fft(cu.asarray(a)), np.fft.fft(a)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_array_namespace_info_leaves_float8_out():
    names = cu.__array_namespace_info__().dtypes()
    assert "float8_e4m3fn" not in names and "bfloat16" not in names
