"""DLPack: ndarray.__dlpack__ / __dlpack_device__ and cupric.from_dlpack, checked against NumPy
(both directions, zero-copy, lifetimes) and against DLPack tensors built here with ctypes (ABI
layout, capsule renaming, flags, devices other than the CPU)."""

import ctypes
import gc
import weakref

import cupric as cu
import numpy as np
import pytest

NUMPY_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                "float16", "float32", "float64", "complex64", "complex128"]

# ---- the DLPack ABI, declared again here so that the tests check cupric's layout ----------------


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


LEGACY_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", LEGACY_DELETER)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


VERSIONED_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                                     ("deleter", VERSIONED_DELETER), ("flags", ctypes.c_uint64),
                                     ("dl_tensor", DLTensor)]

READ_ONLY, IS_COPIED = 1, 2

_api = ctypes.pythonapi
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.py_object]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def capsule_name(capsule):
    return _api.PyCapsule_GetName(capsule).decode()


def versioned_tensor(capsule):
    return ctypes.cast(_api.PyCapsule_GetPointer(capsule, b"dltensor_versioned"),
                       ctypes.POINTER(DLManagedTensorVersioned)).contents


class FakeProducer:
    """A DLPack producer over a NumPy buffer that claims any device, dtype code, version and flags."""

    def __init__(self, host, device=(2, 0), code=None, bits=None, version=(1, 1), flags=0, versioned=True):
        self.host = host
        self.device = device
        self.deleted = 0
        self.versioned = versioned
        n = host.ndim
        self.shape = (ctypes.c_int64 * max(n, 1))(*host.shape)
        self.strides = (ctypes.c_int64 * max(n, 1))(*(s // host.itemsize for s in host.strides))
        np_code = {"b": 6, "i": 0, "u": 1, "f": 2, "c": 5}[host.dtype.kind]
        tensor = DLTensor(host.ctypes.data, DLDevice(*device), n,
                          DLDataType(np_code if code is None else code, bits or host.itemsize * 8, 1),
                          self.shape, self.strides, 0)
        if versioned:
            self.deleter = VERSIONED_DELETER(self._delete)
            self.managed = DLManagedTensorVersioned(DLPackVersion(*version), None, self.deleter, flags, tensor)
        else:
            self.deleter = LEGACY_DELETER(self._delete)
            self.managed = DLManagedTensor(tensor, None, self.deleter)

    def _delete(self, _):
        self.deleted += 1

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        name = b"dltensor_versioned" if self.versioned else b"dltensor"
        return _api.PyCapsule_New(ctypes.addressof(self.managed), name, None)

    def __dlpack_device__(self):
        return self.device


def test_abi_layout():
    assert ctypes.sizeof(DLTensor) == 48
    assert ctypes.sizeof(DLManagedTensor) == 64
    assert ctypes.sizeof(DLManagedTensorVersioned) == 80


def sample(dtype, shape=(3, 4)):
    rng = np.random.default_rng(0)
    a = rng.integers(-50, 50, size=shape)
    if dtype == "bool":
        return a > 0
    if np.dtype(dtype).kind == "u":
        a = np.abs(a)
    if np.dtype(dtype).kind == "c":
        return (a + 1j * a[::-1]).astype(dtype)
    return a.astype(dtype)


# ---- round trips with NumPy ------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_numpy_reads_cupric_zero_copy(dtype):
    ref = sample(dtype)
    x = cu.asarray(ref.copy())
    n = np.from_dlpack(x)
    assert n.dtype == ref.dtype and n.shape == ref.shape
    np.testing.assert_array_equal(n, ref)
    assert n.ctypes.data == x._data_ptr
    n[1, 2] = ref[0, 0]  # write through NumPy, see it in cupric
    assert np.asarray(x)[1, 2] == ref[0, 0]


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_cupric_reads_numpy_zero_copy(dtype):
    ref = sample(dtype)
    x = cu.from_dlpack(ref)
    assert x.dtype == ref.dtype and x.shape == ref.shape
    np.testing.assert_array_equal(np.asarray(x), ref)
    assert x._data_ptr == ref.ctypes.data
    ref[2, 3] = ref[0, 1]
    assert np.asarray(x)[2, 3] == ref[0, 1]


@pytest.mark.parametrize("view", [
    lambda a: a[:, ::-1], lambda a: a[::2, 1::2], lambda a: a.T, lambda a: a[1], lambda a: a[1, 2, ...],
    lambda a: a[:0], lambda a: a[::-1, ::-1],
])
def test_views_both_ways(view):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    ref = view(base)
    x = cu.from_dlpack(ref)
    assert x.shape == ref.shape and x.strides == ref.strides
    np.testing.assert_array_equal(np.asarray(x), ref)
    back = np.from_dlpack(x)
    assert back.strides == ref.strides
    np.testing.assert_array_equal(back, ref)
    if ref.size:
        assert back.ctypes.data == ref.ctypes.data


def test_zero_dim_and_empty():
    x = cu.from_dlpack(np.array(3.5))
    assert x.shape == () and float(x) == 3.5
    assert np.from_dlpack(x).shape == ()
    e = cu.from_dlpack(np.zeros((0, 5), np.int16))
    assert e.shape == (0, 5) and e.dtype == cu.int16
    assert np.from_dlpack(e).shape == (0, 5)


def test_bfloat16_round_trip():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = cu.asarray([1.5, -2.25, 3.0], dtype=cu.bfloat16)
    y = cu.from_dlpack(x)
    assert y.dtype == cu.bfloat16 and y._data_ptr == x._data_ptr
    assert y.tolist() == [1.5, -2.25, 3.0]
    t = versioned_tensor(x.__dlpack__(max_version=(1, 0))).dl_tensor
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (4, 16, 1)  # kDLBfloat
    # ml_dtypes' bfloat16 arrays come in through NumPy's DLPack export? NumPy refuses that dtype,
    # so cupric takes them through __array_interface__ instead
    z = cu.asarray(np.array([0.5, 8.0], dtype=ml_dtypes.bfloat16))
    assert z.dtype == cu.bfloat16 and z.tolist() == [0.5, 8.0]


# ---- the capsule protocol -------------------------------------------------------------------------


def test_capsule_kinds_and_fields():
    x = cu.asarray(np.arange(12, dtype=np.int32).reshape(3, 4))
    assert capsule_name(x.__dlpack__()) == "dltensor"
    assert capsule_name(x.__dlpack__(max_version=(0, 8))) == "dltensor"
    cap = x.__dlpack__(max_version=(1, 3))
    assert capsule_name(cap) == "dltensor_versioned"
    m = versioned_tensor(cap)
    assert (m.version.major, m.version.minor) == (1, 1)
    assert m.flags == 0
    t = m.dl_tensor
    assert (t.device.device_type, t.device.device_id) == (1, 0)
    assert t.ndim == 2 and [t.shape[i] for i in range(2)] == [3, 4] and [t.strides[i] for i in range(2)] == [4, 1]
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (0, 32, 1)
    assert t.data + t.byte_offset == x._data_ptr
    assert x.__dlpack_device__() == (1, 0)


def test_capsule_is_renamed_once_consumed():
    x = cu.asarray([1.0, 2.0])
    cap = x.__dlpack__(max_version=(1, 0))
    y = cu.from_dlpack(cap)  # a bare capsule is accepted too
    assert capsule_name(cap) == "used_dltensor_versioned"
    assert y.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="already consumed"):
        cu.from_dlpack(cap)
    legacy = x.__dlpack__()
    np.from_dlpack  # noqa: B018  (NumPy consumes legacy capsules only through objects)
    cu.from_dlpack(legacy)
    assert capsule_name(legacy) == "used_dltensor"


def test_copy_flag_and_copy_argument():
    ref = np.arange(5.0)
    x = cu.asarray(ref)
    cap = x.__dlpack__(max_version=(1, 0), copy=True)
    m = versioned_tensor(cap)
    assert m.flags & IS_COPIED and m.dl_tensor.data != x._data_ptr
    y = cu.from_dlpack(ref, copy=True)
    assert y._data_ptr != ref.ctypes.data
    ref[0] = 42
    assert float(np.asarray(y)[0]) == 0.0
    z = cu.from_dlpack(ref, copy=False)
    assert z._data_ptr == ref.ctypes.data


def test_dl_device_and_stream_arguments():
    x = cu.asarray([1, 2, 3])
    assert capsule_name(x.__dlpack__(dl_device=(1, 0))) == "dltensor"
    with pytest.raises(BufferError, match="copy=False"):
        x.__dlpack__(dl_device=(2, 0), copy=False)
    with pytest.raises(BufferError, match="device type 4"):
        x.__dlpack__(dl_device=(4, 0))
    with pytest.raises(ValueError, match="stream must be None"):
        x.__dlpack__(stream=1)
    with pytest.raises(TypeError):
        x.__dlpack__(None)  # keyword-only, as the standard says


def test_read_only_arrays():
    ref = np.arange(4.0)
    ref.flags.writeable = False
    x = cu.asarray(ref)
    assert not x.flags["WRITEABLE"]
    with pytest.raises(BufferError, match="read-only"):
        x.__dlpack__()  # legacy capsules cannot say read-only
    m = versioned_tensor(x.__dlpack__(max_version=(1, 0)))
    assert m.flags & READ_ONLY
    n = np.from_dlpack(x)  # NumPy asks for a versioned capsule and honours the flag
    assert not n.flags.writeable
    y = cu.from_dlpack(ref)  # NumPy marks its read-only export; cupric honours it
    assert not y.flags["WRITEABLE"]
    with pytest.raises(ValueError, match="read-only"):
        y += 1
    np.testing.assert_array_equal(ref, np.arange(4.0))


# ---- lifetimes ----------------------------------------------------------------------------------------


def test_numpy_consumer_outlives_cupric_producer():
    x = cu.asarray([1.0, 2.0, 3.0]) * 2
    n = np.from_dlpack(x)
    del x
    gc.collect()
    np.testing.assert_array_equal(n, [2.0, 4.0, 6.0])


def test_cupric_consumer_keeps_numpy_producer_alive():
    ref = np.arange(10.0)
    alive = weakref.ref(ref)
    y = cu.from_dlpack(ref)
    del ref
    gc.collect()
    assert alive() is not None
    assert y.tolist() == list(range(10))
    del y
    gc.collect()
    assert alive() is None


def test_unconsumed_capsule_frees_its_tensor():
    ref = np.arange(3.0)
    alive = weakref.ref(ref)
    x = cu.asarray(ref)  # zero-copy: x holds ref
    del ref
    for kwargs in ({}, {"max_version": (1, 0)}):
        cap = x.__dlpack__(**kwargs)
        del cap
    del x
    gc.collect()
    assert alive() is None


def test_chain_cupric_numpy_cupric():
    ref = np.arange(6, dtype=np.int64)
    alive = weakref.ref(ref)
    z = cu.from_dlpack(np.from_dlpack(cu.from_dlpack(ref)))
    del ref
    gc.collect()
    assert alive() is not None and z.tolist() == list(range(6))
    del z
    gc.collect()
    assert alive() is None


# ---- other producers ------------------------------------------------------------------------------------


def test_device_fields_are_general():
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    producer = FakeProducer(host, device=(2, 1))
    x = cu.from_dlpack(producer)
    assert x.device == "cuda:1"
    assert x.__dlpack_device__() == (2, 1)
    assert x.shape == (2, 3) and x.dtype == cu.float32
    with pytest.raises(BufferError, match="cuda:1"):
        memoryview(x)
    with pytest.raises(ValueError, match="copy"):
        np.asarray(x, copy=False)
    assert producer.deleted == 0
    del x
    gc.collect()
    assert producer.deleted == 1


def test_pinned_host_memory_is_cpu():
    host = np.arange(4.0)
    producer = FakeProducer(host, device=(3, 0))  # kDLCUDAHost
    x = cu.from_dlpack(producer)
    assert x.device == "cpu" and x.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_legacy_producer_and_flags():
    host = np.arange(4, dtype=np.int16)
    producer = FakeProducer(host, device=(1, 0), versioned=False)
    x = cu.from_dlpack(producer)
    assert x.tolist() == [0, 1, 2, 3] and x.flags["WRITEABLE"]
    ro = FakeProducer(host, device=(1, 0), flags=READ_ONLY)
    assert not cu.from_dlpack(ro).flags["WRITEABLE"]
    del x
    gc.collect()
    assert producer.deleted == 1


def test_producer_without_max_version_keyword():
    ref = np.arange(3.0)

    class Old:
        def __dlpack__(self, stream=None):
            return ref.__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

    x = cu.from_dlpack(Old())
    assert x._data_ptr == ref.ctypes.data
    assert cu.asarray(Old()).tolist() == [0.0, 1.0, 2.0]  # asarray goes through DLPack too


@pytest.mark.parametrize("kwargs, match", [
    ({"code": 7, "bits": 8}, r"code 7, bits 8"),          # a float8 type
    ({"device": (4, 0)}, "device type 4"),                # OpenCL
    ({"version": (2, 0)}, "version 2.0"),
])
def test_unsupported_tensors_are_not_taken(kwargs, match):
    producer = FakeProducer(np.zeros(4, np.uint8), **{"device": (1, 0), **kwargs})
    cap = producer.__dlpack__()
    with pytest.raises(BufferError, match=match):
        cu.from_dlpack(cap)
    assert capsule_name(cap) == "dltensor_versioned"  # still the producer's
    assert producer.deleted == 0


def test_from_dlpack_bad_input():
    with pytest.raises(TypeError, match="__dlpack__"):
        cu.from_dlpack([1, 2, 3])
    with pytest.raises(BufferError, match="copy=False"):
        cu.from_dlpack(np.arange(3.0), device="cuda:0", copy=False)


@pytest.mark.parametrize("edit, match", [
    (lambda t, p: setattr(t, "ndim", 65), "ndim 65"),
    (lambda t, p: setattr(t, "ndim", -1), "ndim -1"),
    (lambda t, p: setattr(t, "shape", None), "no shape"),
    (lambda t, p: p.shape.__setitem__(0, -4), "negative dimension"),
    (lambda t, p: setattr(t, "data", None), "data is NULL"),
    (lambda t, p: p.shape.__setitem__(0, 2**62), "array is too big"),
    (lambda t, p: p.strides.__setitem__(0, 2**62), "out of range"),
    (lambda t, p: p.strides.__setitem__(0, 2**59), "reach outside memory"),
    (lambda t, p: p.strides.__setitem__(0, -(2**55)), "reach outside memory"),  # below address 0
])
def test_malformed_tensors_are_refused_and_stay_the_producers(edit, match):
    producer = FakeProducer(np.zeros(4, np.float64), device=(1, 0))
    edit(producer.managed.dl_tensor, producer)
    cap = producer.__dlpack__()
    with pytest.raises(BufferError, match=match):
        cu.from_dlpack(cap)
    assert capsule_name(cap) == "dltensor_versioned"  # not taken: freeing it stays the producer's job
    assert producer.deleted == 0
