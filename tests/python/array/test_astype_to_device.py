"""astype with NumPy's keywords (order, casting, subok, copy) and the Array API's device=,
the namespace's astype(x, dtype, /, *, copy, device), and to_device(device, /, *, stream), with
NumPy as the oracle for values, memory order and casting rules."""

import warnings

import cupric as cu
import numpy as np
import pytest
from fake_driver import run_with_fake_driver

RNG = np.random.default_rng(3)
BASE = RNG.standard_normal((4, 5, 6)) * 50


def views():
    yield "c", BASE
    yield "fortran", np.asfortranarray(BASE)
    yield "permuted", BASE.transpose(1, 2, 0)
    yield "negative", BASE[::-1, :, ::-2]
    yield "strided", BASE[::2, 1:, ::3]
    yield "2d-transposed", BASE[0].T
    yield "0d", BASE[1, 2, 3]
    yield "empty", BASE[:, :0]


@pytest.mark.parametrize("order", ["K", "A", "C", "F"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "complex64"])
def test_astype_matches_numpy_values_and_memory_order(order, dtype):
    for name, view in views():
        x = cu.asarray(view)
        got, want = x.astype(dtype, order=order), view.astype(dtype, order=order)
        assert got.dtype == want.dtype and got.shape == want.shape, name
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=name)
        if want.size > 1:
            assert got.strides == want.strides, (name, got.strides, want.strides)
        assert got._storage_id != x._storage_id  # copy=True always copies


def test_astype_copy_false_returns_the_array_itself():
    x = cu.asarray(BASE)
    assert x.astype("float64", copy=False) is x
    assert x.astype(x.dtype, copy=False, order="C") is x
    f = cu.asarray(np.asfortranarray(BASE))
    assert f.astype("float64", copy=False) is f and f.astype("float64", copy=False, order="F") is f
    c = f.astype("float64", copy=False, order="C")  # the order does not hold: a copy
    assert c is not f and c.flags["C_CONTIGUOUS"]
    assert x.astype("float32", copy=False) is not x
    assert x.astype("float64", copy=False, device="cpu") is x
    assert x.astype("float64") is not x


@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe"])
def test_astype_casting_rules_are_numpys(casting):
    dtypes = ["bool", "int8", "uint16", "int32", "int64", "float16", "float32", "float64", "complex64"]
    ref = np.arange(1, 7).reshape(2, 3)
    for src in dtypes:
        x = cu.asarray(ref.astype(src))
        for dst in dtypes:
            if np.can_cast(src, dst, casting):
                got = x.astype(dst, casting=casting)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
                    np.testing.assert_array_equal(np.asarray(got), ref.astype(src).astype(dst))
            else:
                with pytest.raises(TypeError, match=rf"Cannot cast array data from dtype\('{src}'\) to "
                                                    rf"dtype\('{dst}'\) according to the rule '{casting}'"):
                    x.astype(dst, casting=casting)


def test_astype_keywords_and_errors():
    x = cu.asarray(BASE)
    assert x.astype("float32", subok=False).dtype == cu.float32  # accepted, as NumPy
    np.testing.assert_array_equal(np.asarray(x.astype("int32", "C", "unsafe", True, False)), BASE.astype("int32"))
    with pytest.raises(ValueError, match="order must be one of 'C', 'F', 'A', 'K', got 'Q'"):
        x.astype("float32", order="Q")
    with pytest.raises(TypeError):
        x.astype("float32", "C", "unsafe", True, True, "cpu")  # device= is keyword-only
    with pytest.raises(ValueError, match="casting must be one of 'no', .* or 'unsafe', got 'sloppy'"):
        x.astype("float32", casting="sloppy")


def test_namespace_astype():
    x = cu.asarray(BASE[::-1])
    y = cu.astype(x, cu.float32)
    np.testing.assert_array_equal(np.asarray(y), BASE[::-1].astype(np.float32))
    assert cu.astype(x, "float64", copy=False) is x
    z = cu.astype(x, "float64")
    assert z is not x and z._storage_id != x._storage_id
    assert cu.astype(x, "int8", device="cpu").device == "cpu"
    with pytest.raises(TypeError):
        cu.astype(x=x, dtype="float32")  # positional-only
    with pytest.raises(TypeError):
        cu.astype(x, "float32", False)  # copy is keyword-only
    with pytest.raises(TypeError, match="astype expects a cupric array, got list"):
        cu.astype([1, 2], "float32")


def test_to_device_signature_on_the_cpu():
    x = cu.asarray(BASE)
    assert x.to_device("cpu") is x and x.to_device(cu.Device("cpu"), stream=None) is x
    with pytest.raises(ValueError, match="stream must be None for a copy between CPU arrays, got 0"):
        x.to_device("cpu", stream=0)
    with pytest.raises(TypeError):
        x.to_device(device="cpu")  # positional-only
    with pytest.raises(TypeError):
        x.to_device("cpu", None)  # stream is keyword-only


_STREAM_SCRIPT = """
import numpy as np, cupric as cu
ref = np.arange(3000, dtype=np.float32).reshape(30, 100)
x = cu.asarray(ref)
s = cu.cuda.Stream()
for stream in (None, s, s.handle, 0, cu.cuda.default_stream()):
    g = x.to_device("cuda:0", stream=stream)
    assert g.device == "cuda:0"
    h = g.to_device("cpu", stream=stream)
    np.testing.assert_array_equal(np.asarray(h), ref)
    assert g.to_device("cuda:0", stream=stream) is g
try:
    x.to_device("cuda:0", stream="fast")
    raise AssertionError("no error")
except TypeError as e:
    assert "expected a stream" in str(e), str(e)
assert cu.cuda.current_stream() == cu.cuda.default_stream()  # the stream was current for the copy only
# moves keep the memory order of dense arrays (Fortran order, permuted axes), as NumPy's 'K' copies do
for view in (ref.T, np.asfortranarray(ref), ref.reshape(3, 10, 100).transpose(2, 0, 1)):
    g = cu.asarray(view).to_device("cuda:0")
    assert g.strides == view.strides, (g.strides, view.strides)
    h = g.to_device("cpu")
    assert h.strides == view.strides
    np.testing.assert_array_equal(np.asarray(h), view)
g = cu.asarray(ref[:, ::2]).to_device("cuda:0")  # not dense: packed in C order
assert g.strides == (200, 4)
"""


def test_to_device_with_a_stream_on_the_stand_in_driver(fake_dir):
    run_with_fake_driver(fake_dir, _STREAM_SCRIPT, env={"CUPRIC_DEVICE": "cpu"})


@pytest.mark.gpu
def test_to_device_with_a_stream_on_a_gpu():
    exec(compile(_STREAM_SCRIPT, "<string>", "exec"), {})
    # a large copy on a non-blocking stream, then work on the current stream at once: the
    # current stream waits for the copy
    ref = np.random.default_rng(0).standard_normal(8_000_000).astype(np.float32)
    s = cu.cuda.Stream(non_blocking=True)
    g = cu.asarray(ref).to_device("cuda:0", stream=s)
    np.testing.assert_array_equal(np.asarray((g * 2).to_device("cpu")), ref * 2)


@pytest.mark.gpu
@pytest.mark.parametrize("order", ["K", "C", "F"])
def test_astype_order_on_a_gpu(order):
    for name, view in views():
        x = cu.asarray(view).to_device("cuda:0")
        got, want = x.astype("float32", order=order), view.astype("float32", order=order)
        assert got.device == "cuda:0"
        np.testing.assert_array_equal(np.asarray(got.to_device("cpu")), want, err_msg=name)
        if want.size > 1:
            assert got.strides == want.strides, name
