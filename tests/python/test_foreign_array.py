"""The one foreign-array importer (src/python/foreign_array.cpp, foreign_protocols.cpp): every protocol
it reads (NumPy arrays, __array_interface__, __cuda_array_interface__, DLPack, PyTorch tensors) gives
pointer, dtype, shape, strides, device, stream and owner; each malformed field is refused with an
error naming the protocol, the field and the value, by every consumer, and leaves the producer's
memory, dict and capsule as they were."""

import copy
import ctypes
import gc
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import cupric as cu
import numpy as np
import pytest
from cupric.tile import _cuda
from oracle_helpers import param_id

sys.path.insert(0, str(Path(__file__).resolve().parent / "array"))
from test_dlpack import FakeProducer, capsule_name  # noqa: E402  (the DLPack ABI declared in ctypes)

_c = cu._cupric
TOO_BIG = r"array is too big; `arr.size \* arr.dtype.itemsize` is larger than the maximum possible size"

# ---- the array interfaces: one table of bad fields for both dicts ---------------------------------

BUF = np.random.default_rng(3).standard_normal(16)
BASE = {"version": 3, "typestr": "<f8", "shape": (3,), "data": (BUF.ctypes.data, False)}
DROP = object()  # a field left out of the dict

# (fields changed, error, message): the message names the field and the value ({p}: the protocol)
BAD_FIELDS = [
    ({"typestr": DROP}, ValueError, "Missing {p} typestr"),
    ({"typestr": 5}, TypeError, "{p}: typestr must be a str, got 5"),
    ({"typestr": "<f3"}, TypeError, "typestr '<f3'"),
    ({"typestr": "<x8"}, TypeError, "typestr '<x8'"),
    ({"typestr": "f8"}, TypeError, "typestr 'f8'"),
    ({"typestr": ">f8"}, TypeError, "typestr '>f8'"),
    ({"typestr": "|O8"}, TypeError, r"typestr '\|O8'"),
    ({"shape": DROP}, ValueError, "Missing {p} shape"),
    ({"shape": [3]}, TypeError, r"{p}: shape must be a tuple, got \[3\]"),
    ({"shape": (3.0,)}, TypeError, "{p}: shape entry 3.0: 'float' object cannot be interpreted as an integer"),
    ({"shape": (2**70,)}, ValueError, f"{{p}}: shape entry {2**70} is out of range"),
    ({"shape": (-3,)}, ValueError, r"{p}: negative dimensions are not allowed: \(-3,\)"),
    ({"shape": (1,) * 65}, ValueError, r"{p}: number of dimensions must be within \[0, 64\], got 65"),
    ({"shape": (2**40, 2**40)}, ValueError, "{p}: " + TOO_BIG),
    ({"strides": [8]}, TypeError, r"{p}: strides must be a tuple, got \[8\]"),
    ({"strides": (8.5,)}, TypeError, "{p}: strides entry 8.5: 'float' object"),
    ({"strides": (8, 8)}, ValueError, r"{p}: mismatch in length of strides and shape: strides \(8, 8\), shape \(3,\)"),
    ({"strides": (2**62,)}, ValueError, rf"{{p}}: strides \({2**62},\) with shape \(3,\) reach outside memory"),
    ({"strides": (-(2**62),)}, ValueError, r"{p}: strides \(-\d+,\) with shape \(3,\) reach outside memory"),
    ({"data": DROP}, ValueError, "Missing {p} data"),
    ({"data": 5}, TypeError, r"{p}: data must be a \(pointer, read_only\) tuple, got 5"),
    ({"data": (1,)}, TypeError, r"{p}: data must be a \(pointer, read_only\) tuple, got \(1,\)"),
    ({"data": (0, False)}, ValueError, r"{p}: data is NULL but the array of shape \(3,\) contains data"),
    ({"data": (-8, False)}, ValueError, "{p}: data pointer -8 is out of range"),
    ({"data": (2**64, False)}, ValueError, f"{{p}}: data pointer {2**64} is out of range"),
    ({"data": (1.5, False)}, TypeError, "{p}: data pointer 1.5: 'float' object"),
    ({"data": (2**64 - 8, False)}, ValueError, "{p}: strides .* reach outside memory from data 0xfffffffffffffff8"),
]

# only __cuda_array_interface__: its version and the stream rules of version 3
CAI_BAD_FIELDS = [
    ({"version": DROP}, ValueError, "Missing __cuda_array_interface__ version"),
    ({"version": "3"}, TypeError, "__cuda_array_interface__: version must be an int, got '3'"),
    ({"version": True}, TypeError, "__cuda_array_interface__: version must be an int, got True"),
    ({"version": 4}, ValueError, r"__cuda_array_interface__: version 4 is not one cupric reads \(0 to 3\)"),
    ({"version": -1}, ValueError, "__cuda_array_interface__: version -1 is not one"),
    ({"version": 2, "stream": 5}, ValueError, "stream is a field of version 3, but this dict is version 2"),
    ({"stream": 0}, ValueError, "__cuda_array_interface__: stream 0 is ambiguous"),
    ({"stream": -5}, ValueError, "__cuda_array_interface__: a stream must be a positive handle, 1 or 2, got -5"),
    ({"stream": True}, TypeError, "__cuda_array_interface__: stream must be an int or None, got True"),
    ({"stream": 1.5}, TypeError, "__cuda_array_interface__: stream 1.5: 'float' object"),
    ({"stream": 2**64}, ValueError, f"__cuda_array_interface__: stream {2**64} is out of range"),
    ({"mask": (1, False)}, ValueError, "__cuda_array_interface__ with a mask is not supported"),
    ({"strides": (12,)}, ValueError, r"strides \(12,\) are not multiples of the item size 8"),
]


def interface(fields):
    d = dict(BASE)
    for k, v in fields.items():
        if v is DROP:
            del d[k]
        else:
            d[k] = v
    return d


class Holder:
    """An object exposing one interface dict (as a property, so that each read sees the same dict)."""

    def __init__(self, attribute, iface):
        self.attribute, self.iface = attribute, iface

    def __getattr__(self, name):
        if name == self.__dict__["attribute"]:
            return self.__dict__["iface"]
        raise AttributeError(name)


# every consumer of host arrays: asarray, kernel arguments (the importer's argument order), the
# reader of that kind alone
HOST_CONSUMERS = {
    "asarray": lambda o: cu.asarray(o, device="cpu"),
    "argument": lambda o: _c._import_array(o),
    "reader": lambda o: _c._import_array(o, "array_interface"),
}
# every consumer of device arrays: asarray, kernel arguments, the tile launch path's reader (device
# memory only), the reader alone
DEVICE_CONSUMERS = {
    "asarray": lambda o: cu.asarray(o),
    "argument": lambda o: _c._import_array(o),
    "tile launch": lambda o: _cuda.device_array(o),
    "reader": lambda o: _c._import_array(o, "cuda_array_interface"),
}


def expect_refused(consumer, obj, error, message):
    with pytest.raises(error, match=message) as info:
        consumer(obj)
    assert "std::" not in str(info.value)


@pytest.mark.parametrize("consumer", sorted(HOST_CONSUMERS))
@pytest.mark.parametrize("fields, error, message", BAD_FIELDS, ids=[param_id(f[0], 40) for f in BAD_FIELDS])
def test_array_interface_fields_are_refused_by_every_consumer(consumer, fields, error, message):
    iface = interface(fields)
    kept, before = copy.deepcopy(iface), BUF.copy()
    expect_refused(HOST_CONSUMERS[consumer], Holder("__array_interface__", iface), error,
                   message.format(p="__array_interface__"))
    assert iface == kept and np.array_equal(BUF, before)  # the producer's dict and memory as they were


CAI_TABLE = BAD_FIELDS + CAI_BAD_FIELDS


@pytest.mark.parametrize("consumer", sorted(DEVICE_CONSUMERS))
@pytest.mark.parametrize("fields, error, message", CAI_TABLE, ids=[param_id(f[0], 40) for f in CAI_TABLE])
def test_cuda_array_interface_fields_are_refused_by_every_consumer(consumer, fields, error, message):
    iface = interface(fields)
    kept, before = copy.deepcopy(iface), BUF.copy()
    expect_refused(DEVICE_CONSUMERS[consumer], Holder("__cuda_array_interface__", iface), error,
                   message.format(p="__cuda_array_interface__"))
    assert iface == kept and np.array_equal(BUF, before)


@pytest.mark.parametrize("attribute", ["__array_interface__", "__cuda_array_interface__"])
def test_an_interface_that_is_not_a_dict_is_refused(attribute):
    with pytest.raises(TypeError, match=f"{attribute} must be a dict, got 'list'"):
        _c._import_array(Holder(attribute, [BASE]))


@pytest.mark.parametrize(
    "fields, want",
    [
        ({}, None),
        ({"stream": None}, None),
        ({"stream": 1}, 0),  # the legacy default stream: the driver's handle 0
        ({"stream": 2}, 2),  # the per-thread default stream
        ({"stream": 0x4321}, 0x4321),
        ({"version": 2}, None),
        ({"version": 0}, None),
    ],
)
def test_cuda_array_interface_reads_what_the_producer_said(fields, want):
    strided = {"shape": (2, 3), "strides": (48, -8), "data": (BUF.ctypes.data + 16, True), "typestr": "<f8"}
    holder = Holder("__cuda_array_interface__", interface({**strided, **fields}))
    for f in (_c._import_array(holder), _cuda.device_array(holder)):
        assert (f.kind, f.ptr, f.dtype, f.shape, f.strides) == (
            "cuda_array_interface", BUF.ctypes.data + 16, np.float64, (2, 3), (6, -1))
        assert f.device == "cuda:0" and f.readonly and f.stream == want and f.owner is holder


def test_array_interface_reads_what_the_producer_said():
    a = BUF[1:13].reshape(3, 4)[::-1, ::2]
    holder = Holder("__array_interface__", dict(a.__array_interface__))
    f = _c._import_array(holder)
    assert (f.kind, f.ptr, f.dtype) == ("array_interface", a.ctypes.data, np.float64)
    assert (f.shape, f.strides) == ((3, 2), (-4, 2))
    assert f.device == "cpu" and f.stream is None and f.owner is holder and not f.readonly
    np.testing.assert_array_equal(np.asarray(cu.asarray(holder, device="cpu")), a)


# ---- NumPy arrays ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, error, message",
    [
        (lambda: np.lib.stride_tricks.as_strided(BUF, (3,), (4,)), ValueError,
         r"numpy.ndarray: strides \(4,\) are not multiples of the item size 8"),
        (lambda: np.arange(3, dtype=">f8"), TypeError, "typestr '>f8'"),
        (lambda: np.array(["a", "b"]), TypeError, "typestr '<U1'"),
        (lambda: np.array([object()]), TypeError, r"typestr '\|O'"),
    ],
)
def test_numpy_arrays_cupric_cannot_take_are_refused(make, error, message):
    a = make()
    before = a.copy()
    expect_refused(lambda o: _c._import_array(o), a, error, message)
    np.testing.assert_array_equal(a, before)


def test_numpy_arrays_are_read_without_a_copy():
    a = BUF.reshape(4, 4)[1:, ::-2]
    f = _c._import_array(a)
    assert (f.kind, f.ptr, f.shape, f.strides) == ("numpy", a.ctypes.data, (3, 2), (4, -2))
    assert f.device == "cpu" and f.stream is None and f.owner is a
    odd = np.lib.stride_tricks.as_strided(BUF, (3,), (4,))  # asarray takes a contiguous copy instead
    np.testing.assert_array_equal(np.asarray(cu.asarray(odd, device="cpu")), odd)


# ---- DLPack -----------------------------------------------------------------------------------------


class Producer(FakeProducer):
    """A DLPack producer whose __dlpack_device__ may say anything; it counts the capsules it made."""

    def __init__(self, host, said=(1, 0), **kwargs):
        super().__init__(host, **kwargs)
        self.said, self.capsules = said, []

    def __dlpack__(self, **kwargs):
        self.capsules.append(super().__dlpack__(**kwargs))
        return self.capsules[-1]

    def __dlpack_device__(self):
        return self.said


DLPACK_CONSUMERS = {
    "from_dlpack": lambda o: cu.from_dlpack(o),
    "asarray": lambda o: cu.asarray(o),
    "argument": lambda o: _c._import_array(o),
}


@pytest.mark.parametrize("consumer", sorted(DLPACK_CONSUMERS))
@pytest.mark.parametrize(
    "said, kwargs, error, message, asked",
    [
        ("cuda", {}, TypeError,
         r"__dlpack_device__\(\) must return a \(device_type, device_id\) pair of ints, got 'cuda'", 0),
        ((1,), {}, TypeError, r"pair of ints, got \(1,\)", 0),
        ((1.5, 0), {}, TypeError, r"__dlpack_device__\(\): device type 1.5: 'float' object", 0),
        ((1, -1), {}, ValueError, r"__dlpack_device__\(\): device id -1 is negative", 0),
        ((4, 0), {}, BufferError, "cupric cannot use DLPack device type 4", 0),  # OpenCL: no capsule asked for
        ((1, 0), {"device": (2, 0)}, BufferError,
         r"the DLPack tensor is on cuda:0, but its producer's __dlpack_device__\(\) said cpu", 1),
        ((1, 0), {"device": (1, -2)}, BufferError, "DLPack device id -2 is negative", 1),
        ((1, 0), {"version": (0, 9)}, BufferError, "version 0.9", 1),
        ((1, 0), {"code": 2, "bits": 24}, BufferError, r"code 2, bits 24", 1),
    ],
)
def test_dlpack_producers_are_refused_and_keep_their_tensors(consumer, said, kwargs, error, message, asked):
    host = np.random.default_rng(5).standard_normal(4)
    before = host.copy()
    producer = Producer(host, said=said, **{"device": (1, 0), **kwargs})
    expect_refused(DLPACK_CONSUMERS[consumer], producer, error, message)
    assert len(producer.capsules) == asked
    assert all(capsule_name(c) == "dltensor_versioned" for c in producer.capsules)  # not taken
    producer.capsules.clear()
    gc.collect()
    assert producer.deleted == 0 and np.array_equal(host, before)  # freeing stays the producer's job


def test_dlpack_tensors_are_read_without_a_copy():
    host = np.random.default_rng(6).standard_normal((3, 4))[:, ::2]
    producer = Producer(host, device=(1, 0))
    f = _c._import_array(producer)
    assert (f.kind, f.ptr, f.dtype, f.shape, f.strides) == ("dlpack", host.ctypes.data, np.float64, (3, 2), (4, 2))
    assert f.device == "cpu" and f.stream is None and capsule_name(producer.capsules[0]) == "used_dltensor_versioned"
    del f
    gc.collect()
    assert producer.deleted == 1


# ---- PyTorch tensors (a stand-in module where PyTorch is not installed) --------------------------

TORCH_STAND_IN = textwrap.dedent(
    """
    import sys, types
    import numpy as np
    torch = types.ModuleType("torch")

    class Dtype:
        def __init__(self, name):
            self.name = name
        def __str__(self):
            return "torch." + self.name

    class Tensor:
        def __init__(self, host, **fields):
            self.host = host
            self.fields = {"shape": tuple(host.shape), "stride": tuple(s // host.itemsize for s in host.strides),
                           "data_ptr": host.ctypes.data, "dtype": Dtype(str(host.dtype)), "is_cuda": False,
                           "get_device": -1, **fields}
            self.shape, self.dtype, self.is_cuda = self.fields["shape"], self.fields["dtype"], self.fields["is_cuda"]
        def stride(self):
            return self.fields["stride"]
        def data_ptr(self):
            return self.fields["data_ptr"]
        def get_device(self):
            return self.fields["get_device"]

    torch.Tensor = Tensor
    sys.modules["torch"] = torch
    import cupric as cu
    from cupric.tile import _cuda
    host = np.random.default_rng(8).standard_normal((3, 4))
    before = host.copy()
    f = cu._cupric._import_array(Tensor(host[:, ::2]))
    assert (f.kind, f.ptr, f.shape, f.strides, f.device) == ("torch", host.ctypes.data, (3, 2), (4, 2), "cpu")
    g = _cuda.device_array(Tensor(host, is_cuda=True, get_device=0))
    assert g.kind == "torch" and g.device == "cuda:0" and g.stream is None
    BAD = [
        ({"shape": [3, 4]}, TypeError, "torch.Tensor: shape must be a tuple, got [3, 4]"),
        ({"shape": (3, -4)}, ValueError, "torch.Tensor: negative dimensions are not allowed: (3, -4)"),
        ({"shape": (1,) * 65, "stride": (1,) * 65}, ValueError,
         "torch.Tensor: number of dimensions must be within [0, 64], got 65"),
        ({"stride": (4, 1.5)}, TypeError, "torch.Tensor: strides entry 1.5: 'float' object"),
        ({"stride": (4,)}, ValueError, "torch.Tensor: mismatch in length of strides and shape"),
        ({"stride": (2**62, 1)}, ValueError, "torch.Tensor: strides (4611686018427387904, 1) are out of range"),
        ({"data_ptr": 0}, ValueError, "torch.Tensor: data is NULL but the array of shape (3, 4) contains data"),
        ({"data_ptr": -1}, ValueError, "torch.Tensor: data pointer -1 is out of range"),
        ({"dtype": Dtype("complex32")}, TypeError, "a PyTorch tensor of dtype torch.complex32 has no cupric dtype"),
        ({"is_cuda": True, "get_device": -1}, ValueError, "torch.Tensor: get_device() gave -1 for a CUDA tensor"),
        ({"is_cuda": True, "get_device": 2**40}, ValueError, f"get_device() gave {2**40} for a CUDA tensor"),
    ]
    for fields, error, message in BAD:
        for consumer in (cu._cupric._import_array, _cuda.device_array):
            t = Tensor(host, **{"is_cuda": consumer is _cuda.device_array, "get_device": 0, **fields})
            try:
                consumer(t)
            except error as e:
                assert message in str(e), (fields, str(e))
            else:
                raise AssertionError(f"{fields} was accepted")
    assert np.array_equal(host, before)
    print("ok", len(BAD))
    """
)


def test_torch_tensors_are_read_and_checked_as_the_other_protocols():
    """In a fresh interpreter: the importer keeps the torch.Tensor type it finds for the process."""
    r = subprocess.run([sys.executable, "-c", TORCH_STAND_IN], capture_output=True, text=True,
                       cwd=Path(__file__).parent, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split() == ["ok", "11"]


# ---- one importer ------------------------------------------------------------------------------


def test_every_consumer_reads_the_same_view():
    """asarray, kernel arguments and the tile launch path agree on one CAI object (the same reader)."""
    holder = Holder("__cuda_array_interface__", interface({"shape": (2, 2), "strides": (8, 16)}))
    views = [_c._import_array(holder), _cuda.device_array(holder), _c._import_array(holder, "cuda_array_interface")]
    assert {(v.ptr, v.shape, v.strides, str(v.dtype), str(v.device)) for v in views} == {
        (BUF.ctypes.data, (2, 2), (1, 2), "float64", "cuda:0")}
    assert ctypes.sizeof(ctypes.c_void_p) == 8  # (the pointers above are 64-bit addresses)


class DLPackOnly:
    """A producer with only DLPack over a cupric CUDA array; it keeps the streams it was handed."""

    def __init__(self, a):
        self.a, self.streams = a, []

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.streams.append(stream)
        return self.a.__dlpack__(stream=stream, max_version=max_version)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


@pytest.mark.gpu
def test_device_arrays_of_every_protocol_read_the_same_memory_on_a_gpu():
    host = np.random.default_rng(9).standard_normal((4, 6))
    x = cu.asarray(host, device="cuda:0")[:, ::2]
    cai = x.__cuda_array_interface__
    producer = DLPackOnly(x)
    s = cu.cuda.Stream()
    with s:
        views = {"cupric": _c._import_array(x),
                 "cuda_array_interface": _c._import_array(Holder("__cuda_array_interface__", cai)),
                 "dlpack": _c._import_array(producer)}
        tile_view = _cuda.device_array(producer)
    for kind, f in views.items():
        assert (f.kind, f.ptr, f.shape, f.strides, f.device) == (kind, x._data_ptr, (4, 3), (6, 2), "cuda:0")
    assert producer.streams[0] == (s.handle or 1)  # handed the consumer's stream (1: the legacy default)
    assert views["dlpack"].stream == s.handle and tile_view.stream == s.handle
    assert views["cuda_array_interface"].stream == (None if cai.get("stream") is None else
                                                    0 if cai["stream"] == 1 else cai["stream"])
    for obj in (Holder("__cuda_array_interface__", cai), DLPackOnly(x)):
        y = cu.asarray(obj)
        assert y.device == "cuda:0" and y._data_ptr == x._data_ptr
        np.testing.assert_array_equal(np.asarray(y.to_device("cpu")), host[:, ::2])


# reading a protocol: a dict's typestr or data pointer (not assigning one), the interface
# attributes subscripted or fetched by name, __dlpack__ / __dlpack_device__ called, dict lookups
# of the protocols' fields in C++
PROTOCOL_READ = re.compile(
    r"""\[["']typestr["']\](?!\s*=[^=])|\[["']data["']\]\[0\]|__(cuda_)?array_interface__\[|"""
    r"""\.__dlpack(_device)?__\(|attr\("__(cuda_array_interface|array_interface|dlpack|dlpack_device)__"\)|"""
    r"""PyDict_GetItem\w*\([^;]*(typestr|strides|stream)"""
)


def test_parsing_of_the_protocols_lives_in_one_place():
    """Only the importer reads the interface dicts and DLPack producers: elsewhere they are produced."""
    root = Path(__file__).resolve().parents[2]
    readers = set()
    for path in [*root.glob("src/**/*.[ch]pp"), *root.glob("python/cupric/**/*.py")]:
        if any(PROTOCOL_READ.search(line) for line in path.read_text().splitlines()):
            readers.add(str(path.relative_to(root)))
    assert readers == {"src/python/foreign_protocols.cpp"}
    assert PROTOCOL_READ.search('start = x.__cuda_array_interface__["data"][0]')
    assert PROTOCOL_READ.search('PyObject* s = PyDict_GetItemString(d.ptr(), "stream");')
    assert not PROTOCOL_READ.search('d["typestr"] = "|u1";')


@pytest.mark.nvrtc
def test_host_data_goes_to_the_default_device_and_device_arrays_stay(fake_dir):
    """NumPy arrays, lists and NumPy scalars are host data: asarray puts them on the default device
    (here the stand-in cuda:0, by `with cu.device` and by CUPRIC_DEVICE), as CuPy puts them on the
    current device; cupric's own arrays and an explicit device= stay as they are."""
    from fake_driver import run_with_fake_driver

    run_with_fake_driver(fake_dir, """
import numpy as np
import cupric as cu
host = [np.ones((2, 3), np.float32), np.arange(4)[::2], [1.0, 2.0], np.float64(3.0), memoryview(b"abcd")]
with cu.device("cuda:0"):
    for h in host:
        assert cu.asarray(h).device == "cuda:0", type(h)
        assert cu.asarray(h, device="cpu").device == "cpu", type(h)
    c = cu.asarray(np.ones(3), device="cpu")
    assert cu.asarray(c).device == "cpu"          # a cupric array stays on its device
for h in host:
    assert cu.asarray(h).device == "cpu", type(h)  # the default device outside the block
""", env={"CUPRIC_DEVICE": "cpu"})
    run_with_fake_driver(fake_dir, """
import numpy as np
import cupric as cu
assert cu.asarray(np.ones(3)).device == "cuda:0"
""", env={"CUPRIC_DEVICE": "cuda:0"})
