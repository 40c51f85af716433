"""NumPy protocols (__array__, __array_namespace__, __array_ufunc__, __array_function__), repr/str
exactly as NumPy prints, and the Python scalar conversions (item, tolist, bool, int, float, complex,
len), all with NumPy as the oracle."""

import cupric as cu
import numpy as np
import pytest

NUMPY_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                "float16", "float32", "float64", "complex64", "complex128"]


def sample(dtype, shape=(2, 3), seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    kind = np.dtype(dtype).kind
    if kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape, endpoint=True).astype(dtype)
    a = rng.standard_normal(shape) * 10
    if kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


# ---- __array__ ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_asarray_is_zero_copy(dtype):
    ref = sample(dtype)
    x = cu.asarray(ref.copy())
    n = np.asarray(x)
    assert n.dtype == ref.dtype
    np.testing.assert_array_equal(n, ref)
    assert n.ctypes.data == x._data_ptr
    assert np.asarray(x, copy=False).ctypes.data == x._data_ptr
    c = np.array(x)  # np.array copies
    assert c.ctypes.data != x._data_ptr
    np.testing.assert_array_equal(c, ref)


def test_array_dtype_and_copy_arguments():
    x = cu.asarray([1, 2, 3], dtype=cu.int32)
    f = np.asarray(x, dtype=np.float64)
    assert f.dtype == np.float64 and f.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="copy"):
        np.asarray(x, dtype=np.float64, copy=False)
    assert x.__array__().ctypes.data == x._data_ptr
    assert x.__array__(copy=True).ctypes.data != x._data_ptr


def test_bfloat16_to_numpy_zero_copy():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = cu.asarray([1.5, -2.0, 0.25], dtype=cu.bfloat16)
    n = np.asarray(x)
    assert n.dtype == ml_dtypes.bfloat16
    assert n.astype(np.float32).tolist() == [1.5, -2.0, 0.25]
    assert n.ctypes.data == x._data_ptr


def test_array_namespace():
    x = cu.zeros(3)
    assert x.__array_namespace__() is cu
    assert x.__array_namespace__(api_version="2024.12") is cu
    with pytest.raises(ValueError, match="2099.01"):
        x.__array_namespace__(api_version="2099.01")


# ---- __array_ufunc__ -------------------------------------------------------------------------------


def test_numpy_ufuncs_return_cupric():
    ref = np.array([0.5, 1.5, -2.0], dtype=np.float32)
    x = cu.asarray(ref)
    for result, expected in [
        (np.add(x, 1), ref + 1),
        (np.sin(x), np.sin(ref)),
        (np.multiply(2.5, x), 2.5 * ref),
        (np.maximum(x, ref[::-1]), np.maximum(ref, ref[::-1])),
        (np.array([1, 2, 3], dtype=np.float32) + x, np.array([1, 2, 3], dtype=np.float32) + ref),
        (x + np.array([1, 2, 3], dtype=np.float64), ref + np.array([1, 2, 3], dtype=np.float64)),
        (np.float64(2.0) * x, np.float64(2.0) * ref),   # a NumPy scalar is strong, as in NumPy 2
        (np.less(x, 1.0), np.less(ref, 1.0)),
        (np.absolute(x), np.abs(ref)),
    ]:
        assert isinstance(result, cu.ndarray)
        assert result.dtype == expected.dtype
        np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-6)


def test_numpy_ufunc_out_and_where():
    ref = np.array([1.0, 2.0, 3.0])
    x = cu.asarray(ref)
    out = np.zeros(3)
    assert np.add(x, 1, out=out) is out  # a NumPy out= is written through a zero-copy view
    np.testing.assert_array_equal(out, ref + 1)
    cu_out = cu.zeros(3)
    assert np.multiply(x, 2, out=cu_out) is cu_out
    assert cu_out.tolist() == [2.0, 4.0, 6.0]
    where = np.array([True, False, True])
    w = cu.full(3, -1.0)
    np.add(x, 10, out=w, where=where)
    assert w.tolist() == [11.0, -1.0, 13.0]
    acc = np.ones(3)
    acc += x  # NumPy's in-place operator with a cupric operand
    np.testing.assert_array_equal(acc, ref + 1)
    assert isinstance(acc, np.ndarray)
    with pytest.raises(ValueError, match="read-only"):
        ro = np.zeros(3)
        ro.flags.writeable = False
        np.add(x, 1, out=ro)


@pytest.fixture
def strict_fallback():
    """cu.set_fallback('strict'): nothing runs in NumPy, so cupric's errors show (test_fallback.py
    tests what the default runs in NumPy)."""
    old = cu.set_fallback("strict")
    yield
    cu.set_fallback(old)


def test_numpy_ufunc_without_cupric_equivalent(strict_fallback):
    # NumPy would raise TypeError after NotImplemented too; cupric says which function is missing
    x = cu.asarray([1.0, 2.0])
    with pytest.raises(TypeError, match=r"cupric does not implement numpy\.isnat \(cu\.set_fallback\('strict'\)"):
        np.isnat(x)  # datetimes only: no cupric ufunc
    with pytest.raises(TypeError, match=r"numpy\.add\.at"):
        np.add.at(x, [0], 1)
    # NumPy 2.4 leaks a reference to the operand whenever __array_ufunc__ fails for reduce-like
    # methods, so those error paths are called directly
    with pytest.raises(TypeError, match=r"numpy\.add\.reduceat"):
        x.__array_ufunc__(np.add, "reduceat", x, [0])
    with pytest.raises(TypeError, match=r"numpy\.maximum\.accumulate"):
        x.__array_ufunc__(np.maximum, "accumulate", x)


def test_numpy_ufunc_defers_to_other_overrides():
    class Other:
        def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
            return "other"

    assert np.add(cu.zeros(2), Other()) == "other"


@pytest.mark.parametrize("ufunc, method, function", [
    (np.add, "reduce", "sum"), (np.multiply, "reduce", "prod"), (np.maximum, "reduce", "max"),
    (np.minimum, "reduce", "min"), (np.logical_or, "reduce", "any"), (np.logical_and, "reduce", "all"),
    (np.add, "accumulate", "cumsum"), (np.multiply, "accumulate", "cumprod"),
])
def test_ufunc_methods_dispatch_to_cupric_reductions(ufunc, method, function):
    ref = sample("int16", (3, 4))
    x = cu.asarray(ref)
    if not hasattr(cu, function):
        with pytest.raises(TypeError, match=f"numpy.{ufunc.__name__}.{method}"):
            x.__array_ufunc__(ufunc, method, x)  # (directly: see test_numpy_ufunc_without_cupric_equivalent)
        pytest.skip(f"cupric.{function} does not exist in this branch yet")
    for kwargs in ({}, {"axis": 1}, {"axis": None} if method == "reduce" else {"axis": -1}):
        result = getattr(ufunc, method)(x, **kwargs)
        expected = getattr(ufunc, method)(ref, **kwargs)
        assert isinstance(result, cu.ndarray)
        assert result.dtype == expected.dtype
        np.testing.assert_array_equal(np.asarray(result), expected)


def test_ufunc_outer():
    if not hasattr(cu, "reshape"):
        pytest.skip("cupric.reshape does not exist in this branch yet")
    a, b = np.arange(3.0), np.arange(4.0)
    result = np.multiply.outer(cu.asarray(a), cu.asarray(b))
    assert isinstance(result, cu.ndarray)
    np.testing.assert_array_equal(np.asarray(result), np.multiply.outer(a, b))


# ---- __array_function__ -----------------------------------------------------------------------------


def test_numpy_functions_dispatch_by_name():
    ref = np.array([1.0, np.nan, np.inf, -2.5])
    x = cu.asarray(ref)
    cases = [
        (np.isclose(x, ref), np.isclose(ref, ref)),
        (np.round(x, 1), np.round(ref, 1)),
        (np.clip(x, -1, 1), np.clip(ref, -1, 1)),
        (np.nan_to_num(x), np.nan_to_num(ref)),
        (np.real(x), np.real(ref)),
        (np.angle(x, deg=True), np.angle(ref, deg=True)),
        (np.zeros(3, like=x), np.zeros(3)),
        (np.full(2, 7, like=x), np.full(2, 7)),
        (np.asarray([1, 2], like=x), np.asarray([1, 2])),
    ]
    for result, expected in cases:
        assert isinstance(result, cu.ndarray)
        assert result.dtype == expected.dtype
        np.testing.assert_array_equal(np.asarray(result), expected)
    assert np.allclose(x, ref, equal_nan=True) is True
    assert np.array_equal(x, ref) is False and np.array_equal(x, ref, equal_nan=True) is True
    assert np.result_type(x, 1.0) == cu.float64
    assert np.shape(x) == (4,) and np.ndim(x) == 1 and np.size(x) == 4
    assert np.iscomplexobj(x) is False


def test_missing_functions_raise_clear_errors(strict_fallback):
    x = cu.asarray([3.0, 1.0, 2.0])
    for func, args, name in [(np.linalg.svd, (cu.ones((2, 2)),), "numpy.linalg.svd"),
                             (np.sort, (x,), "numpy.sort"), (np.fft.fft, (x,), "numpy.fft.fft")]:
        target = cu
        for part in name.split(".")[1:]:
            target = getattr(target, part, None)
        if target is not None:
            continue  # implemented meanwhile
        with pytest.raises(TypeError, match=f"cupric does not implement {name} "):
            func(*args)


@pytest.mark.parametrize("name, args, kwargs", [
    ("sum", (), {}), ("sum", (), {"axis": 0}), ("mean", (), {}), ("max", (), {}), ("std", (), {}),
    ("concatenate", None, {}), ("reshape", ((3, 2),), {}), ("transpose", (), {}), ("where", None, {}),
])
def test_numpy_functions_dispatch_once_cupric_has_them(name, args, kwargs):
    ref = sample("float32", (2, 3))
    x = cu.asarray(ref)
    if name == "concatenate":
        call_cu, call_np = (lambda: np.concatenate([x, x])), (lambda: np.concatenate([ref, ref]))
    elif name == "where":
        call_cu, call_np = (lambda: np.where(x > 0, x, 0)), (lambda: np.where(ref > 0, ref, 0))
    else:
        call_cu = lambda: getattr(np, name)(x, *args, **kwargs)  # noqa: E731
        call_np = lambda: getattr(np, name)(ref, *args, **kwargs)  # noqa: E731
    if not hasattr(cu, name):
        pytest.skip(f"cupric.{name} does not exist in this branch yet (test_fallback.py: NumPy runs it)")
    result, expected = call_cu(), call_np()
    assert isinstance(result, cu.ndarray)
    assert result.dtype == expected.dtype
    np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-6)


def test_array_function_with_mixed_numpy_inputs():
    class Foreign:
        def __array_function__(self, func, types, args, kwargs):
            return NotImplemented

    with pytest.raises(TypeError):
        np.concatenate([cu.zeros(2), Foreign()])


# ---- repr / str ---------------------------------------------------------------------------------------


def repr_cases(dtype):
    a = sample(dtype, (3, 4))
    yield a
    yield a[0, 0, ...]          # 0-d
    yield a[0]                 # 1-d
    yield a[:0]                # empty (0, 4)
    yield a[0, :0]             # empty (0,)
    yield np.zeros((2, 0, 3), dtype=dtype)
    big = np.resize(a, (40, 40))
    yield big                  # summarised with ...
    yield big.ravel()
    if np.dtype(dtype).kind in "fc":
        with np.errstate(over="ignore"):  # 1e30 is inf in float16
            special = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-30, 1e30]).astype(dtype)
            mixed = np.array([1e-5, 123456.789, 0.1]).astype(dtype)
        yield special
        yield mixed
    if np.dtype(dtype).kind in "iu":
        yield np.full(12, np.iinfo(dtype).max, dtype=dtype)  # long rows: dtype= goes to a new line


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_repr_and_str_match_numpy(dtype):
    for ref in repr_cases(dtype):
        x = cu.asarray(ref)
        assert repr(x) == repr(ref)
        assert str(x) == str(ref)


@pytest.mark.parametrize("options", [{"linewidth": 30}, {"precision": 3}, {"threshold": 5},
                                     {"legacy": "1.13"}, {"legacy": "2.1"}, {"edgeitems": 1}])
def test_repr_follows_numpy_print_options(options):
    with np.printoptions(**options):
        for dtype in ("float32", "int64", "bool", "complex128"):
            for ref in repr_cases(dtype):
                x = cu.asarray(ref)
                assert repr(x) == repr(ref)
                assert str(x) == str(ref)


def test_bfloat16_repr_shows_float32_values():
    values = np.array([0.1, 1.0, -3.5, np.inf], dtype=np.float32)
    x = cu.asarray(values).astype(cu.bfloat16)
    as_f32 = np.asarray(x.astype(cu.float32))
    assert repr(x) == repr(as_f32).replace("dtype=float32", "dtype=bfloat16")
    assert str(x) == str(as_f32)
    assert repr(cu.zeros((), dtype=cu.bfloat16)) == "array(0., dtype=bfloat16)"
    assert repr(cu.zeros(0, dtype=cu.bfloat16)) == "array([], dtype=bfloat16)"
    assert x.tolist() == as_f32.tolist() and isinstance(x.tolist()[0], float)
    assert x.tolist()[0] == 0.10009765625  # the bfloat16 value, exactly


# ---- Python scalars ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_scalar_conversions_match_numpy(dtype):
    for ref in (np.asarray(sample(dtype, ())), sample(dtype, (1,)), sample(dtype, (1, 1)), sample(dtype, (2, 3))):
        x = cu.asarray(ref)
        assert x.tolist() == ref.tolist()
        assert type(x.tolist()) is type(ref.tolist())
        for convert in (lambda a: a.item(), bool, int, float, complex, len):
            try:
                expected = convert(ref)
            except Exception as err:  # noqa: BLE001 — cupric must raise the same type
                with pytest.raises(type(err)):
                    convert(x)
                continue
            got = convert(x)
            assert got == expected or (got != got and expected != expected)
            assert type(got) is type(expected)


def test_scalar_conversion_errors():
    with pytest.raises(ValueError, match="empty"):
        bool(cu.zeros(0))
    with pytest.raises(ValueError, match="more than one element"):
        bool(cu.zeros(2))
    with pytest.raises(TypeError, match="unsized"):
        len(cu.asarray(1.0))
    with pytest.raises(ValueError):
        int(cu.asarray(float("nan")))
    with pytest.raises(OverflowError):
        int(cu.asarray(float("inf")))
    with pytest.raises(TypeError):
        float(cu.asarray(1 + 2j))
    with pytest.raises(ValueError, match="size 1"):
        cu.zeros(3).item()


def test_repr_of_device_arrays_adds_the_device():
    # no CUDA backend in this build: a stand-in with the ndarray attributes repr uses
    from cupric import _printing

    class OnDevice:
        def __init__(self, host):
            self.host, self.dtype, self.device = host, host.dtype, "cuda:0"

        def to_device(self, device):
            assert device == "cpu"
            return self.host

    assert _printing._repr(OnDevice(cu.asarray([1.0, 2.0]))) == "array([1., 2.], device='cuda:0')"
    assert _printing._repr(OnDevice(cu.asarray([1, 2], dtype=cu.int8))) == \
        "array([1, 2], dtype=int8, device='cuda:0')"
    with np.printoptions(linewidth=30):  # NumPy's wrapping rule: extras move to a new line when too long
        assert _printing._repr(OnDevice(cu.asarray(np.arange(6.0)))) == \
            "array([0., 1., 2., 3., 4.,\n       5.], device='cuda:0')"
        assert _printing._repr(OnDevice(cu.asarray(np.arange(5.0), dtype=cu.float32))) == \
            "array([0., 1., 2., 3., 4.],\n      dtype=float32, device='cuda:0')"
