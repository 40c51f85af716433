"""The buffer protocol on ndarray: memoryview, np.frombuffer, np.asarray(memoryview(x)) and ctypes
see CPU arrays without a copy, with NumPy's formats and byte strides."""

import ctypes
import gc
import sys
import weakref

import cupric as cu
import numpy as np
import pytest

NUMPY_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                "float16", "float32", "float64", "complex64", "complex128"]


def sample(dtype, shape=(3, 5)):
    a = np.arange(np.prod(shape)).reshape(shape) * 3 % 7
    return (a > 2) if dtype == "bool" else (a + 1j * a if dtype.startswith("complex") else a).astype(dtype)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_memoryview_matches_numpy(dtype):
    ref = sample(dtype)
    x = cu.asarray(ref.copy())
    m, e = memoryview(x), memoryview(ref)
    assert m.format == e.format  # NumPy's format characters, so NumPy reads back the same dtype
    assert (m.itemsize, m.ndim, m.shape, m.strides, m.readonly) == (e.itemsize, e.ndim, e.shape, e.strides, False)
    assert m.nbytes == ref.nbytes and m.c_contiguous
    assert bytes(m) == ref.tobytes()
    back = np.asarray(m)
    assert back.dtype == ref.dtype
    np.testing.assert_array_equal(back, ref)
    assert back.ctypes.data == x._data_ptr


def test_formats():
    expected = {"bool": "?", "int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i", "uint32": "I",
                "float16": "e", "float32": "f", "float64": "d", "complex64": "Zf", "complex128": "Zd"}
    for name, fmt in expected.items():
        assert memoryview(cu.zeros(2, dtype=name)).format == fmt
    # int64 is 'l' where C long has 64 bits (as NumPy), else 'q'
    assert memoryview(cu.zeros(2, dtype="int64")).format in ("l", "q")
    assert ctypes.sizeof(ctypes.c_long) != 8 or memoryview(cu.zeros(1, dtype="uint64")).format == "L"


@pytest.mark.parametrize("view", [lambda a: a[:, ::-1], lambda a: a[::2, 1::2], lambda a: a.T, lambda a: a[1, 2, ...],
                                  lambda a: a[:0], lambda a: a[::-1]])
def test_strided_views(view):
    ref = view(np.arange(30, dtype=np.float64).reshape(5, 6))
    x = cu.asarray(ref)
    m = memoryview(x)
    assert m.shape == ref.shape and m.strides == ref.strides  # strides in bytes
    back = np.asarray(m)
    np.testing.assert_array_equal(back, ref)
    if ref.size:
        assert back.ctypes.data == ref.ctypes.data


def test_writes_go_through():
    x = cu.zeros(4, dtype=cu.int32)
    m = memoryview(x)
    m[2] = 7
    np.asarray(m)[0] = -1
    assert x.tolist() == [-1, 0, 7, 0]


def test_frombuffer_and_contiguity():
    x = cu.asarray(np.arange(6, dtype=np.int16))
    np.testing.assert_array_equal(np.frombuffer(x, dtype=np.int16), np.arange(6))
    ref = np.arange(12, dtype=np.int16)[::2]
    strided = cu.asarray(ref)
    for obj in (ref, strided):  # refused as for NumPy's own strided arrays (NumPy's exception type
        # depends on whether it goes through a memoryview first)
        with pytest.raises((ValueError, BufferError), match="not C-contiguous"):
            np.frombuffer(obj, dtype=np.int16)
    fortran = cu.asarray(np.asfortranarray(np.ones((2, 3))))
    assert memoryview(fortran).f_contiguous and not memoryview(fortran).c_contiguous


def test_read_only_arrays_refuse_writable_requests():
    ref = np.arange(4, dtype=np.float32)
    ref.flags.writeable = False
    x = cu.asarray(ref)
    m = memoryview(x)
    assert m.readonly
    with pytest.raises(TypeError):
        m[0] = 1.0
    for obj in (ref, x):  # ctypes asks for a writable buffer: refused as for NumPy's own arrays
        with pytest.raises(TypeError, match="not writable"):
            (ctypes.c_char * 16).from_buffer(obj)
    assert not np.asarray(m).flags.writeable


def test_bfloat16_has_no_format():
    with pytest.raises(BufferError, match="bfloat16"):
        memoryview(cu.zeros(3, dtype=cu.bfloat16))


def test_zero_dim():
    x = cu.asarray(np.float32(2.5))
    m = memoryview(x)
    assert m.ndim == 0 and m.shape == () and m.tobytes() == np.float32(2.5).tobytes()
    assert np.asarray(m).shape == ()


def test_memoryview_keeps_array_alive():
    ref = np.arange(3.0)
    alive = weakref.ref(ref)
    m = memoryview(cu.asarray(ref))
    del ref
    gc.collect()
    assert alive() is not None and m.tolist() == [0.0, 1.0, 2.0]
    m.release()
    gc.collect()
    assert alive() is None


def test_refcount_balanced():
    x = cu.ones(3)
    before = sys.getrefcount(x)
    for _ in range(10):
        with memoryview(x) as m:
            assert m.obj is x
    assert sys.getrefcount(x) == before


class Py_buffer(ctypes.Structure):
    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.py_object), ("len", ctypes.c_ssize_t),
                ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                ("format", ctypes.c_char_p), ("shape", ctypes.POINTER(ctypes.c_ssize_t)),
                ("strides", ctypes.POINTER(ctypes.c_ssize_t)), ("suboffsets", ctypes.c_void_p),
                ("internal", ctypes.c_void_p)]


PyBUF_SIMPLE, PyBUF_WRITABLE, PyBUF_FORMAT, PyBUF_ND, PyBUF_STRIDES = 0, 0x1, 0x4, 0x8, 0x18
PyBUF_C_CONTIGUOUS, PyBUF_F_CONTIGUOUS, PyBUF_ANY_CONTIGUOUS = 0x38, 0x58, 0x98
_get = ctypes.pythonapi.PyObject_GetBuffer
_get.argtypes = [ctypes.py_object, ctypes.POINTER(Py_buffer), ctypes.c_int]
_release = ctypes.pythonapi.PyBuffer_Release
_release.argtypes = [ctypes.POINTER(Py_buffer)]


def request(obj, flags):
    view = Py_buffer()
    _get(obj, ctypes.byref(view), flags)  # ctypes raises the exporter's Python exception
    result = (view.ndim, view.format, bool(view.shape), bool(view.strides), view.len)
    _release(ctypes.byref(view))
    return result


@pytest.mark.parametrize("flags", [PyBUF_SIMPLE, PyBUF_ND, PyBUF_STRIDES, PyBUF_C_CONTIGUOUS, PyBUF_F_CONTIGUOUS,
                                   PyBUF_ANY_CONTIGUOUS, PyBUF_STRIDES | PyBUF_FORMAT, PyBUF_WRITABLE])
@pytest.mark.parametrize("layout", ["c", "f", "strided"])
def test_buffer_requests_match_numpy(flags, layout):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    ref = {"c": base, "f": np.asfortranarray(base), "strided": base[:, ::2]}[layout]
    x = cu.asarray(ref)
    try:
        expected = request(ref, flags)
    except Exception as err:  # noqa: BLE001
        with pytest.raises(type(err)):
            request(x, flags)
        return
    assert request(x, flags) == expected
