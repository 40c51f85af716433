"""python/cupric/_namespace.py against NumPy: unravel_index and ravel_multi_index on random shapes,
orders and modes (properties, hypothesis), on the CPU and (marked gpu) on a CUDA device."""

import cupric as cu
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracle_helpers import PROPERTIES, assert_same, assert_same_outcome

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
RNG = np.random.default_rng(17)
SHAPES = st.lists(st.integers(1, 6), min_size=1, max_size=4).map(tuple)


@PROPERTIES
@given(shape=SHAPES, count=st.integers(0, 12), order=st.sampled_from(["C", "F"]), past=st.integers(-3, 3))
def test_unravel_index_properties_match_numpy(shape, count, order, past):
    size = int(np.prod(shape))
    flat = RNG.integers(0, size, count)
    if count and past:  # an index out of bounds: both refuse
        flat[RNG.integers(count)] = size - 1 + past if past > 0 else past
    assert_same_outcome(lambda: cu.unravel_index(cu.asarray(flat), shape, order=order),
                        lambda: np.unravel_index(flat, shape, order=order))


@PROPERTIES
@given(shape=SHAPES, count=st.integers(0, 12), order=st.sampled_from(["C", "F"]), data=st.data())
def test_ravel_multi_index_properties_match_numpy(shape, count, order, data):
    modes = data.draw(st.one_of(st.sampled_from(["raise", "wrap", "clip"]),
                                st.lists(st.sampled_from(["raise", "wrap", "clip"]), min_size=len(shape),
                                         max_size=len(shape)).map(tuple)))
    spread = data.draw(st.sampled_from([0, 3]))  # 3: coordinates past each side
    coords = tuple(RNG.integers(-spread, n + spread, count) for n in shape)
    assert_same_outcome(lambda: cu.ravel_multi_index(tuple(cu.asarray(c) for c in coords), shape, modes, order),
                        lambda: np.ravel_multi_index(coords, shape, modes, order))
    if spread == 0:  # the round trip
        flat = np.ravel_multi_index(coords, shape, order=order)
        assert_same(cu.unravel_index(cu.asarray(flat), shape, order=order), np.unravel_index(flat, shape, order=order))


@pytest.mark.parametrize("device", DEVICES)
def test_index_round_trip_on_device(device):
    shape = (3, 5, 2)
    flat = RNG.integers(0, 30, (4, 3))
    coords = cu.unravel_index(cu.asarray(flat, device=device), shape, order="F")
    assert all(c.device == device for c in coords)
    assert_same(coords, np.unravel_index(flat, shape, order="F"))
    back = cu.ravel_multi_index(coords, shape, order="F")
    assert back.device == device
    assert_same(back, flat)
