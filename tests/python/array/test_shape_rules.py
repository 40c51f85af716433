"""The rules every array's shape obeys (src/array/shape_rules.cpp), against NumPy: sizes and byte
counts that fit int64 ("array is too big"), 64 dimensions at most (creation, reshape, None
indices, broadcasting, nested lists), MemoryError messages, sizes checked before any work, and
foreign buffers (__array_interface__, __cuda_array_interface__) validated before they are viewed.
Random shapes near the int64 limits must give an error or NumPy's answer, never a crash."""

import os
import re

import cupric as cu
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

TOO_BIG = "array is too big"
HUGE_SHAPES = [(2**40, 2**40), (2**32, 2**32), (2**62, 2**62), (2**63 - 1,), (2**61, 2), (2**40, 2**40, 0)]


# ---- sizes and byte counts ---------------------------------------------------------------------


@pytest.mark.parametrize("shape", HUGE_SHAPES)
@pytest.mark.parametrize("make", ["empty", "zeros", "ones", "full"])
def test_creation_of_too_big_arrays_raises_numpys_error(make, shape):
    args = (shape, 7) if make == "full" else (shape,)
    with pytest.raises(ValueError, match=TOO_BIG):
        getattr(np, make)(*args)
    with pytest.raises(ValueError, match=TOO_BIG):
        getattr(cu, make)(*args, device="cpu")


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.eye(2**32),
        lambda m: m.eye(2, 2**62),
        lambda m: m.identity(2**32),
        lambda m: m.broadcast_to(m.zeros(1), (2**62, 2**62)),
        lambda m: m.broadcast_to(m.zeros(1), (2**31, 2**31)),
        lambda m: m.broadcast_to(m.zeros(1), (2**31, 2**31)).sum(),
        lambda m: m.broadcast_to(m.zeros(1), (2**40, 1)) + m.broadcast_to(m.zeros(1), (1, 2**40)),
        lambda m: m.empty_like(m.zeros(3), shape=(2**40, 2**40)),
    ],
)
def test_every_path_to_a_too_big_array_raises(make):
    with pytest.raises(ValueError):
        make(np)
    with pytest.raises(ValueError, match=TOO_BIG):
        make(cu)


def test_sizes_near_the_limit_are_exact():
    v = cu.broadcast_to(cu.zeros((), cu.int8, device="cpu"), (2**31, 2**31))  # 2^62 bytes: a legal view
    assert (v.size, v.nbytes, v.strides) == (2**62, 2**62, (0, 0))
    w = cu.broadcast_to(cu.zeros((), cu.int8, device="cpu"), (2**63 - 1,))
    assert w.nbytes == 2**63 - 1
    with pytest.raises(ValueError, match=TOO_BIG):
        cu.broadcast_to(cu.zeros((), cu.int16, device="cpu"), (2**62,))


def test_shape_arguments_are_read_like_numpy():
    with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
        cu.empty((2.0,), device="cpu")
    with pytest.raises(ValueError, match="Maximum allowed dimension exceeded"):
        cu.empty((2**63,), device="cpu")
    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        cu.zeros((3, -2), device="cpu")
    assert cu.empty(np.int64(3), device="cpu").shape == (3,)


def test_reshape_never_wraps_around_to_the_same_size():
    for shape in [(2**32, 2**32), (2**62, 2**62, 0), (-1, 2**62)]:
        with pytest.raises(ValueError):  # NumPy: "cannot reshape" or "array is too big"
            np.zeros(0).reshape(shape)
        with pytest.raises(ValueError, match="cannot reshape array of size 0|array is too big"):
            cu.zeros(0, device="cpu").reshape(shape)


def test_concatenated_extents_are_checked():
    v = cu.broadcast_to(cu.zeros((), cu.int8, device="cpu"), (2**62,))
    with pytest.raises(ValueError, match=TOO_BIG):
        cu.concatenate([v, v])


# ---- memory: errors name size, shape and dtype; sizes are checked before work ------------------


def test_memory_errors_read_like_numpys():
    shape = (2**47,)  # 1 PiB: no machine has it
    with pytest.raises(MemoryError) as np_err:
        np.empty(shape, np.float64)
    with pytest.raises(MemoryError) as cu_err:
        cu.empty(shape, cu.float64, device="cpu")
    assert str(cu_err.value) == str(np_err.value)
    want = r"Unable to allocate 2\.00 EiB for an array with shape \(2147483648, 1073741824\) and data type bool"
    with pytest.raises(MemoryError, match=want):
        cu.tri(2**31, 2**30, dtype=cu.bool, device="cpu")  # allocated first: no 16 GiB of aranges before


@pytest.mark.parametrize(
    "make",
    [
        lambda: cu.tri(2**31, 2**31, device="cpu"),
        lambda: cu.linspace(0, 1, 2**62, device="cpu"),
        lambda: cu.linspace(cu.zeros(2**31, cu.int8, device="cpu"), 1, 2**32, device="cpu"),
        lambda: cu.eye(2**31, device="cpu"),
        lambda: cu.full((2**40, 2**40), 1, device="cpu"),
    ],
)
def test_sizes_are_checked_before_any_work(make):
    with pytest.raises(ValueError, match=TOO_BIG):
        make()


# ---- 64 dimensions -----------------------------------------------------------------------------


def nest(depth, leaf=1):
    for _ in range(depth):
        leaf = [leaf]
    return leaf


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.empty([1] * 65),
        lambda m: m.zeros(1).reshape([1] * 65),
        lambda m: m.expand_dims(m.zeros([1] * 64), 0),
        lambda m: m.broadcast_to(m.zeros(1), [1] * 65),
        lambda m: m.broadcast_shapes((1,) * 65),
        lambda m: m.zeros(2) + m.zeros([1] * 64)[None],
        lambda m: m.zeros([1] * 64)[None],
        lambda m: m.zeros([1] * 60)[(None,) * 5],
        lambda m: m.asarray(nest(65)),
        lambda m: m.asarray([np.zeros([1] * 64)]),
    ],
)
def test_at_most_64_dimensions_everywhere(make):
    with pytest.raises((ValueError, IndexError)) as np_err:
        make(np)
    with pytest.raises(type(np_err.value)) as cu_err:
        make(cu)
    assert "64" in str(cu_err.value)


def test_64_dimensions_work():
    assert cu.empty([1] * 64, device="cpu").ndim == 64
    assert cu.asarray(nest(64, 5), device="cpu").ndim == 64
    assert cu.zeros([1] * 63, device="cpu")[None].ndim == 64


def test_deep_and_self_referential_lists_end_with_numpys_error():
    deep = nest(30000)  # a recursion over it would overflow the C stack
    loop = []
    loop.append(loop)  # NumPy stops at 64 levels; walking it to the end would never stop
    for obj in (deep, loop, [loop, loop], (loop,)):
        with pytest.raises(ValueError, match="maximum number of dimension of 64"):
            cu.asarray(obj, device="cpu")
        with pytest.raises(ValueError):
            np.asarray(obj)
    with pytest.raises(ValueError, match="inhomogeneous"):
        cu.asarray([1, loop], device="cpu")
    x = cu.zeros(3, device="cpu")
    with pytest.raises(ValueError):
        x[0] = loop
    with pytest.raises(ValueError, match="inhomogeneous"):
        cu.asarray([[1, 2], [3]], device="cpu")


# ---- random shapes near the int64 limits -------------------------------------------------------

NEAR_LIMITS = st.one_of(
    st.sampled_from([0, 1, 2, 3, 7]),
    st.sampled_from([2**k + d for k in (20, 31, 32, 40, 61, 62) for d in (-1, 0, 1)] + [2**63 - 1]),
    st.integers(2**20, 2**63 - 1),
    st.integers(-3, -1),
)
DTYPES = ["int8", "int16", "float32", "float64", "complex128"]


def expected_problem(shape, itemsize):
    """What NumPy's rules say of a shape: None (fine), 'negative', 'ndim' or 'too big'."""
    if len(shape) > 64:
        return "ndim"
    if any(d < 0 for d in shape):
        return "negative"
    nbytes = itemsize
    for d in shape:
        nbytes *= d or 1
    return "too big" if nbytes > 2**63 - 1 else None


@settings(max_examples=150, deadline=None)
@given(shape=st.lists(NEAR_LIMITS, min_size=0, max_size=4).map(tuple), dtype=st.sampled_from(DTYPES))
def test_random_shapes_near_the_limits_give_an_error_or_numpys_answer(shape, dtype):
    itemsize = np.dtype(dtype).itemsize
    problem = expected_problem(shape, itemsize)
    scalar = cu.zeros((), cu.dtype(dtype), device="cpu")
    size = int(np.prod(shape, dtype=object)) if shape else 1
    # broadcast views allocate nothing: NumPy is the oracle for which shapes are allowed
    if problem is None:
        v = cu.broadcast_to(scalar, shape)
        n = np.broadcast_to(np.zeros((), dtype), shape)
        assert (v.shape, v.size, v.nbytes, v.strides) == (n.shape, n.size, n.nbytes, n.strides) == (
            shape, size, size * itemsize, (0,) * len(shape))
    else:
        with pytest.raises(ValueError):
            cu.broadcast_to(scalar, shape)
        with pytest.raises(ValueError):
            np.broadcast_to(np.zeros((), dtype), shape)
    # creation: only what cannot take memory (an error, or a few bytes)
    if problem is not None or size * itemsize <= 2**16:
        try:
            a = cu.empty(shape, cu.dtype(dtype), device="cpu")
        except ValueError as e:
            assert problem is not None, e
            assert {"too big": TOO_BIG, "negative": "negative", "ndim": "dimension"}[problem] in str(e)
        else:
            assert problem is None and a.shape == shape and a.nbytes == size * itemsize
    # reshape of an empty array: NumPy never allocates for it either
    try:
        want = np.zeros(0, dtype).reshape(shape)
    except ValueError:
        with pytest.raises(ValueError):
            cu.zeros(0, cu.dtype(dtype), device="cpu").reshape(shape)
    else:
        got = cu.zeros(0, cu.dtype(dtype), device="cpu").reshape(shape)
        assert got.shape == want.shape


# ---- foreign buffers ---------------------------------------------------------------------------

BUF = np.arange(16.0)


class ArrayInterface:
    def __init__(self, **fields):
        self.__array_interface__ = {"version": 3, "typestr": "<f8", "shape": (3,), "data": (BUF.ctypes.data, False),
                                    **fields}


@pytest.mark.parametrize(
    "fields, error, message",
    [
        ({"data": (0, False)}, ValueError, "data is NULL"),
        ({"shape": (-3,)}, ValueError, "negative dimensions"),
        ({"shape": (2**40, 2**40)}, ValueError, TOO_BIG),
        ({"shape": (1,) * 65}, ValueError, r"number of dimensions must be within \[0, 64\]"),
        ({"shape": [3]}, TypeError, "must be a tuple"),
        ({"shape": (3.0,)}, TypeError, "cannot be interpreted as an integer"),
        ({"strides": (8, 8)}, ValueError, "mismatch in length of strides and shape"),
        ({"strides": (8.0,)}, TypeError, "cannot be interpreted as an integer"),
        ({"shape": None}, TypeError, "must be a tuple"),
        ({"data": 5}, TypeError, "data must be a"),
    ],
)
def test_array_interface_is_checked_like_numpy(fields, error, message):
    with pytest.raises(error):
        np.asarray(ArrayInterface(**fields))
    with pytest.raises(error, match=message):
        cu.asarray(ArrayInterface(**fields), device="cpu")


@pytest.mark.parametrize(
    "fields",
    [
        {"strides": (2**62,)},                       # past the end of the address space
        {"data": (8, False), "strides": (-16,)},     # below address 0
        {"data": (2**64 - 8, False)},                # the last element past 2^64
        {"data": (2**64, False)},
        {"data": (-8, False)},
        {"strides": (-(2**63),)},
    ],
)
def test_array_interface_strides_and_pointers_that_leave_memory_are_refused(fields):
    with pytest.raises(ValueError, match="__array_interface__"):
        cu.asarray(ArrayInterface(**fields), device="cpu")


def test_valid_array_interfaces_still_view_the_memory():
    assert np.asarray(cu.asarray(ArrayInterface(data=(0, False), shape=(0,)), device="cpu")).shape == (0,)
    back = cu.asarray(ArrayInterface(data=(BUF.ctypes.data + 16, False), strides=(-8,)), device="cpu")
    np.testing.assert_array_equal(np.asarray(back), [2.0, 1.0, 0.0])
    odd = cu.asarray(ArrayInterface(strides=(4,)), device="cpu")  # not element-aligned: a copy, as before
    np.testing.assert_array_equal(np.asarray(odd), np.lib.stride_tricks.as_strided(BUF, (3,), (4,)))


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"data": (0, False)}, "data is NULL"),
        ({"shape": (-3,)}, "negative dimensions"),
        ({"strides": (6,)}, "not multiples of the item size 4"),
        ({"strides": (4, 4)}, "mismatch in length"),
        ({"shape": (2**40, 2**40)}, TOO_BIG),
        ({"data": (-1, False)}, "out of range"),
    ],
)
def test_cuda_array_interface_is_checked_by_the_same_function(fields, message):
    cai = {"version": 3, "typestr": "<f4", "shape": (3,), "data": (0x10000, False), **fields}
    from cupric.tile import _cuda

    holder = type("CAI", (), {"__cuda_array_interface__": cai})()
    with pytest.raises(ValueError, match=message):
        cu._cupric._import_array(holder)  # the importer every consumer reads foreign arrays with
    with pytest.raises(ValueError, match=message):
        _cuda.device_array(holder)  # the tile launch path's reader


# ---- threads -----------------------------------------------------------------------------------


def threads_of_process():
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads through /proc")
def test_thread_count_is_bounded_and_the_pool_shrinks():
    old = cu.get_num_threads()
    try:
        with pytest.raises(ValueError, match=r"set_num_threads\(100000\): at most \d+ threads"):
            cu.set_num_threads(100000)
        assert cu.get_num_threads() == old
        cu.set_num_threads(10)
        cu.arange(2**20, dtype=cu.float64, device="cpu").sum()  # wakes the workers
        many = threads_of_process()
        cu.set_num_threads(2)
        assert threads_of_process() <= many - 8
        assert re.search("at most", cu.set_num_threads.__doc__)
    finally:
        cu.set_num_threads(old)
