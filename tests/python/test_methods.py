"""python/cupric/_methods.py: NumPy's ndarray methods on cupric arrays against NumPy's, on the CPU
and (marked gpu) on a CUDA device."""

import io
import pickle

import cupric as cu
import numpy as np
import pytest

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
RNG = np.random.default_rng(88)


def same(got, want):
    g = np.asarray(got.to_device("cpu") if isinstance(got, cu.ndarray) else got)
    assert g.dtype == want.dtype and g.shape == want.shape, (g.dtype, g.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("device", DEVICES)
def test_methods_that_return_arrays(device):
    a = RNG.integers(-9, 9, (4, 5))
    x = cu.asarray(a, device=device)
    same(x.take([3, 0, 1], axis=1), a.take([3, 0, 1], axis=1))
    same(x.take([7, 2]), a.take([7, 2]))
    same(x.repeat(2, axis=0), a.repeat(2, axis=0))
    same(x.repeat([1, 0, 2, 1, 1], axis=1), a.repeat([1, 0, 2, 1, 1], axis=1))
    same(x.compress([True, False, True], axis=0), a.compress([True, False, True], axis=0))
    idx = RNG.integers(0, 3, (4, 5))
    same(cu.asarray(idx, device=device).choose([x, x * 2, x - 1]), idx.choose([a, a * 2, a - 1]))
    for k in (0, 2, 4):
        part = np.asarray(x.argpartition(k, axis=1).to_device("cpu"))
        np.testing.assert_array_equal(np.take_along_axis(a, part, 1)[:, k], np.sort(a, axis=1)[:, k])


@pytest.mark.parametrize("device", DEVICES)
def test_methods_that_write_in_place(device):
    a = RNG.standard_normal((3, 4))
    x = cu.asarray(a, device=device)
    x.fill(2.5)
    same(x, np.full((3, 4), 2.5))
    x = cu.asarray(a, device=device)
    want = a.copy()
    x.put([0, 5, 11], [9.0, 8.0])
    want.put([0, 5, 11], [9.0, 8.0])
    same(x, want)
    x = cu.asarray(a, device=device)
    assert x.partition(2, axis=1) is None
    got = np.asarray(x.to_device("cpu"))
    np.testing.assert_array_equal(got[:, 2], np.sort(a, axis=1)[:, 2])
    assert (got[:, :2] <= got[:, 2:3]).all() and (got[:, 3:] >= got[:, 2:3]).all()


@pytest.mark.parametrize("device", DEVICES)
def test_bytes_and_pickles(device, tmp_path):
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    x = cu.asarray(a, device=device)
    assert x.tobytes() == a.tobytes() and x[:, ::2].tobytes() == a[:, ::2].tobytes()
    assert x.tobytes("F") == a.tobytes("F")
    x.tofile(tmp_path / "raw.bin")
    np.testing.assert_array_equal(np.fromfile(tmp_path / "raw.bin", dtype=np.float32).reshape(3, 4), a)
    same(pickle.loads(x.dumps()), a)
    x.dump(tmp_path / "x.pkl")
    with open(tmp_path / "x.pkl", "rb") as f:
        same(pickle.load(f), a)
    buf = io.BytesIO()
    x.dump(buf)
    same(pickle.loads(buf.getvalue()), a)


# ---- bytes: view(dtype), byteswap, resize ------------------------------------------------------------------------

VIEWS = [("float64", "int64"), ("int32", "float32"), ("float32", "uint8"), ("int16", "int8"), ("uint8", "int32"),
         ("int8", "float16"), ("complex128", "float64"), ("float64", "complex128"), ("uint16", "bfloat16")]


def random_bits(shape, dtype):
    """An array of random bytes seen as `dtype` (NaN patterns included); compare such arrays as bytes."""
    import ml_dtypes  # noqa: F401  (bfloat16's NumPy dtype)

    itemsize = np.dtype(dtype).itemsize
    return RNG.integers(0, 256, (*shape[:-1], shape[-1] * itemsize), dtype=np.uint8).view(dtype)


def same_bits(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    same(cu.ascontiguousarray(got).reshape(-1).view("uint8"), np.ascontiguousarray(want).reshape(-1).view("uint8"))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("src, dst", VIEWS)
def test_view_as_another_dtype_matches_numpy(src, dst, device):
    a = random_bits((3, 8), src)
    x = cu.asarray(a, device=device)
    for key in ((), (slice(1, None),), (slice(None, None, 2),), (Ellipsis, slice(4, 8))):
        got, want = x[key].view(dst), a[key].view(dst)
        assert got.device == device and got.dtype == want.dtype
        same_bits(got, want)
    u, b = x.view("uint8"), a.copy()
    u[0] = u[1]  # a view: writes reach x
    b.view("uint8")[0] = b.view("uint8")[1]
    same_bits(x, b)


@pytest.mark.parametrize("device", DEVICES)
def test_view_refusals_match_numpy(device):
    a = np.arange(12, dtype=np.int16).reshape(3, 4)
    x = cu.asarray(a, device=device)
    for key, dtype in [((slice(None), slice(None, None, 2)), "int32"), ((), "complex128"), ((0, 0), "int8")]:
        with pytest.raises(ValueError) as numpy_error:
            a[key].view(dtype)
        with pytest.raises(ValueError, match=str(numpy_error.value).split(" ")[0]):
            x[key].view(dtype)
    with pytest.raises(ValueError, match="multiple of 4"):  # cupric's strides count elements: 6 bytes
        cu.asarray(np.zeros((4, 3), np.int16), device=device)[:, :2].view("int32")
    same(x.view(), a)
    same(x.view(cu.ndarray), a)
    with pytest.raises(TypeError, match="subclasses"):
        x.view(type=np.ndarray)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["int16", "uint32", "float64", "complex64", "bfloat16", "bool", "int8"])
def test_byteswap_matches_numpy(dtype, device):
    a = random_bits((4, 5), dtype) if dtype != "bool" else RNG.random((4, 5)) < 0.5
    x = cu.asarray(a.copy(), device=device)  # (on the CPU, asarray would share a's memory)
    same_bits(x.byteswap(), a.byteswap())
    same_bits(x[:, ::2].byteswap(), a[:, ::2].byteswap())
    same_bits(x[1, 2].byteswap(), a[1:2, 2:3].byteswap().reshape(()))
    assert x.byteswap(inplace=True) is x
    same_bits(x, a.byteswap())
    same_bits(x.byteswap(), a)


@pytest.mark.parametrize("device", DEVICES)
def test_resize_in_place_matches_numpy(device):
    for shape, new in [((2, 3), (4, 2)), ((5,), (2, 2)), ((2, 2), (3, 3)), ((3,), ()), ((4,), (0,))]:
        a = RNG.integers(1, 9, shape)
        x = cu.asarray(a.copy(), device=device)
        a.resize(new, refcheck=False)
        assert x.resize(new) is None
        assert x.device == device
        same(x, a)
    x = cu.asarray(RNG.integers(1, 9, (2, 3)), device=device)
    x.resize(3, 3)
    assert x.shape == (3, 3) and int(x[2, 2]) == 0
    view = x[1:]
    with pytest.raises(ValueError, match="referenced by another array"):
        x.resize((2, 2))
    with pytest.raises(ValueError, match="referenced by another array"):
        view.resize((2, 2))
    before = view.to_device("cpu")
    x.resize((2, 2), refcheck=False)  # the view keeps the old memory
    same(view, np.asarray(before))
    with pytest.raises(ValueError, match="single-segment"):
        cu.asarray(np.zeros((3, 4)), device=device).T.resize(12, refcheck=False)
    with pytest.raises(ValueError, match="negative"):
        x.resize((-1, 2))
