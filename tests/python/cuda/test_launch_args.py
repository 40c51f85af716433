"""cupric.cuda.launch argument packing, checked without a GPU through _pack_arguments (the same
C++ path launch() uses): widths, alignment, NumPy scalars of every dtype, device pointers, errors;
and LaunchConfig."""

import ctypes

import cupric as cu
import numpy as np
import pytest

pack = cu.cuda._pack_arguments

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, np.float32, np.float64, np.complex64, np.complex128]


def slot(data, offsets, i, size):
    return data[offsets[i]:offsets[i] + size]


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_scalars_pack_their_bytes(dtype):
    rng = np.random.default_rng(7)
    value = np.array(rng.integers(1, 100) * 1.25 if np.dtype(dtype).kind in "fc" else rng.integers(0, 100),
                     dtype=dtype)[()]
    size = np.dtype(dtype).itemsize
    data, offsets = pack(None, np.int8(1), value)
    assert offsets[1] % min(size, 16) == 0  # natural alignment
    assert slot(data, offsets, 1, size) == np.array(value).tobytes()
    data, offsets = pack([1, size], np.int8(1), value)  # also with a known parameter size
    assert slot(data, offsets, 1, size) == np.array(value).tobytes()


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.float32, np.float64, np.complex64])
def test_typed_scalars_must_match_the_parameter_size(dtype):
    size = np.dtype(dtype).itemsize
    wrong = 2 if size != 2 else 4
    with pytest.raises(TypeError, match=rf"argument 0 of kernel 'test_kernel': the parameter is {wrong} bytes but "
                                        rf"numpy\.\w+ is {size} bytes"):
        pack([wrong], dtype(1))


def test_python_scalars_without_parameter_sizes():
    data, offsets = pack(None, 3, -2.5, True, 2**63 + 5)
    assert offsets == [0, 8, 16, 24]
    assert np.frombuffer(slot(data, offsets, 0, 8), np.int64)[0] == 3
    assert np.frombuffer(slot(data, offsets, 1, 8), np.float64)[0] == -2.5
    assert slot(data, offsets, 2, 1) == b"\x01"
    assert np.frombuffer(slot(data, offsets, 3, 8), np.uint64)[0] == 2**63 + 5


@pytest.mark.parametrize(("size", "dtype"), [(1, np.int8), (2, np.int16), (4, np.int32), (8, np.int64)])
def test_python_ints_take_the_parameter_width(size, dtype):
    rng = np.random.default_rng(size)
    info = np.iinfo(dtype)
    for v in [int(info.min), int(info.max), -1, 0, int(rng.integers(info.min, info.max))]:
        data, offsets = pack([size], v)
        assert len(data) == size and np.frombuffer(data, dtype)[0] == v
    unsigned = np.iinfo(np.dtype(f"u{size}"))
    data, _ = pack([size], int(unsigned.max))  # the unsigned range fits too
    assert np.frombuffer(data, np.dtype(f"u{size}"))[0] == unsigned.max
    if size < 8:
        for bad in (int(unsigned.max) + 1, int(info.min) - 1):
            with pytest.raises(OverflowError, match=rf"{bad} does not fit the {size}-byte parameter"):
                pack([size], bad)
    with pytest.raises(OverflowError):
        pack([8], 2**64)
    with pytest.raises(OverflowError):
        pack(None, -(2**63) - 1)


def test_python_floats_take_the_parameter_width():
    data, _ = pack([4], 0.1)
    assert np.frombuffer(data, np.float32)[0] == np.float32(0.1)
    data, _ = pack([8], 0.1)
    assert np.frombuffer(data, np.float64)[0] == 0.1
    data, _ = pack([4], float("inf"))
    assert np.isinf(np.frombuffer(data, np.float32)[0])
    with pytest.raises(TypeError, match="ambiguous"):
        pack([2], 1.0)
    with pytest.raises(TypeError, match="parameter is 16 bytes"):
        pack([16], 1.0)


def test_bools_follow_the_parameter():
    assert pack([1], True)[0] == b"\x01"
    assert np.frombuffer(pack([4], True)[0], np.int32)[0] == 1
    assert pack(None, False)[0] == b"\x00"


def test_ctypes_values_are_typed_scalars():
    data, offsets = pack(None, ctypes.c_int16(-3), ctypes.c_double(1.5))
    assert np.frombuffer(slot(data, offsets, 0, 2), np.int16)[0] == -3
    assert np.frombuffer(slot(data, offsets, 1, 8), np.float64)[0] == 1.5


class FakeDeviceArray:
    """A device array from another library, seen only through __cuda_array_interface__."""

    def __init__(self, ptr):
        self.__cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (ptr, False), "version": 3}


def test_device_arrays_pack_their_pointer():
    data, offsets = pack([8, 4], FakeDeviceArray(0x7F0012345600), 5)
    assert np.frombuffer(slot(data, offsets, 0, 8), np.uint64)[0] == 0x7F0012345600
    with pytest.raises(TypeError, match="FakeDeviceArray is 8 bytes"):
        pack([4], FakeDeviceArray(16))


def test_argument_count_is_checked():
    with pytest.raises(TypeError, match=r"takes 2 arguments \(of 4, 8 bytes\), got 1"):
        pack([4, 8], 1)
    with pytest.raises(TypeError, match="takes 1 argument, got more"):
        pack([4], 1, 2)
    assert pack([], )[0] == b""


def test_unsupported_arguments_are_explained():
    with pytest.raises(TypeError, match="host buffer"):
        pack(None, np.zeros(3, np.float32))
    with pytest.raises(TypeError, match="host buffer"):
        pack(None, b"abc")
    with pytest.raises(TypeError, match="argument 1 has type str"):
        pack(None, 1, "text")
    with pytest.raises(TypeError, match="argument 0 has type object"):
        pack(None, object())


def test_many_arguments_grow_the_buffers():
    values = list(range(200))
    data, offsets = pack(None, *values)
    assert np.array_equal(np.frombuffer(data, np.int64), values)
    assert offsets == [8 * i for i in range(200)]


def test_launch_config():
    c = cu.cuda.LaunchConfig(grid=(4, 2), block=256, shared_memory=1024)
    assert c.grid == (4, 2, 1) and c.block == (256, 1, 1) and c.shared_memory == 1024
    assert c.cluster is None and c.cooperative is False
    c = cu.cuda.LaunchConfig(grid=8, block=(32, 4, 2), cluster=2, cooperative=True)
    assert c.cluster == (2, 1, 1) and c.cooperative
    assert "grid=(8, 1, 1)" in repr(c)
    for bad in ((0,), (1, 2, 3, 4), -1, ()):
        with pytest.raises(ValueError):
            cu.cuda.LaunchConfig(grid=bad)
