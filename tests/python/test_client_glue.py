"""Small pieces of the namespace that third-party libraries reach on cupric arrays: unravel_index /
ravel_multi_index (Dask's argmax over a whole array) and asarray of objects that only have
__array__ (pandas, xarray), with NumPy as the oracle."""

import re

import cupric as cu
import numpy as np
import pytest

RNG = np.random.default_rng(7)
SHAPES = [(7,), (3, 4), (2, 3, 5), (4, 1, 3)]


def same_tuple(got, want):
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert isinstance(g, cu.ndarray)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(np.asarray(g), w)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_unravel_and_ravel_are_numpys_and_inverse(device, shape, order):
    size = int(np.prod(shape))
    flat = RNG.integers(0, size, size=(3, 4))
    coords = cu.unravel_index(cu.asarray(flat, device=device), shape, order=order)
    same_tuple(coords, np.unravel_index(flat, shape, order=order))
    assert all(str(c.device).startswith(device) for c in coords)
    back = cu.ravel_multi_index(coords, shape, order=order)
    np.testing.assert_array_equal(np.asarray(back), np.ravel_multi_index(np.unravel_index(flat, shape, order=order),
                                                                         shape, order=order))


def test_numpy_functions_reach_them_through_array_function():
    """np.unravel_index(0-d cupric array) is what Dask's arg_chunk calls."""
    got = np.unravel_index(cu.asarray(7), (3, 4))
    same_tuple(got, tuple(np.asarray(v) for v in np.unravel_index(7, (3, 4))))
    flat = np.ravel_multi_index((cu.asarray([2, 0]), cu.asarray([3, 1])), (3, 4))
    assert isinstance(flat, cu.ndarray)
    np.testing.assert_array_equal(np.asarray(flat), [11, 1])


@pytest.mark.parametrize("mode", ["wrap", "clip", ("clip", "wrap")])
def test_ravel_multi_index_modes(mode):
    coords = ([5, 1, -4], [-1, 2, 9])
    got = cu.ravel_multi_index(tuple(cu.asarray(c) for c in coords), (3, 4), mode=mode)
    np.testing.assert_array_equal(np.asarray(got), np.ravel_multi_index(coords, (3, 4), mode=mode))


BAD_CALLS = [
    lambda m: m.unravel_index(12, (3, 4)),
    lambda m: m.unravel_index([[1, 2], [-1, 3]], (3, 4)),
    lambda m: m.unravel_index(1.0, (3, 4)),
    lambda m: m.unravel_index(0, (3, 0)),
    lambda m: m.ravel_multi_index(([0, 3], [0, 0]), (3, 4)),
    lambda m: m.ravel_multi_index((1,), (3, 4)),
    lambda m: m.ravel_multi_index((1.0, 2), (3, 4)),
    lambda m: m.ravel_multi_index((5, -1), (3, 4), mode="x"),
]


@pytest.mark.parametrize("call", BAD_CALLS)
def test_errors_are_numpys(call):
    with pytest.raises(Exception) as want:
        call(np)
    with pytest.raises(type(want.value)) as got:
        call(cu)
    assert str(got.value) == str(want.value)


class OnlyArrayProtocol:
    """Stands for pandas / xarray objects: __array__ and nothing else NumPy-like."""

    def __init__(self, data):
        self.data = data

    def __array__(self, dtype=None, copy=None):
        return self.data if dtype is None else self.data.astype(dtype)

    def __len__(self):  # a sequence too, as pandas objects are: __array__ must win
        return len(self.data)

    def __getitem__(self, i):
        return self.data[i]


@pytest.mark.parametrize("dtype", ["float64", "int32", "bool", "float16"])
def test_asarray_reads_objects_with_only_array_protocol(dtype):
    n = (RNG.standard_normal((3, 5)) * 5).astype(dtype)
    x = cu.asarray(OnlyArrayProtocol(n))
    assert isinstance(x, cu.ndarray) and x.dtype == n.dtype and x.shape == n.shape
    np.testing.assert_array_equal(np.asarray(x), n)
    c = cu.asarray(OnlyArrayProtocol(n), dtype="float32", copy=True)
    np.testing.assert_array_equal(np.asarray(c), n.astype("float32"))


def test_asarray_names_what_array_protocol_gave_it():
    with pytest.raises(TypeError, match=re.escape("typestr '|O'")):
        cu.asarray(OnlyArrayProtocol(np.array(["a", "b"], dtype=object)))
