"""cupric.pad against numpy.pad: every mode and its options, widths past the array's length, integer
and float dtypes; on the CPU and (marked gpu) on a CUDA device."""

import cupric as cu
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracle_helpers import PROPERTIES, assert_same, assert_same_outcome, outcome

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
RNG = np.random.default_rng(55)

OPTIONS = {
    "constant": [{}, {"constant_values": (4, -2)}, {"constant_values": ((1, 2), (3, 4))}],
    "edge": [{}], "wrap": [{}], "empty": [],
    "reflect": [{}, {"reflect_type": "odd"}], "symmetric": [{}, {"reflect_type": "odd"}],
    "linear_ramp": [{}, {"end_values": (5, -3)}],
    "maximum": [{}, {"stat_length": 2}], "minimum": [{}, {"stat_length": (1, 3)}], "mean": [{}, {"stat_length": 2}],
    "median": [{}, {"stat_length": (2, 3)}],
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float64", "int32"])
@pytest.mark.parametrize("mode", sorted(OPTIONS))
def test_pad_matches_numpy(mode, dtype, device):
    for shape in ((5,), (3, 4), (1, 3)):
        a = RNG.integers(-9, 9, shape).astype(dtype)
        widths = [1, (2, 3), 7, ((0, 1), (3, 9))[:len(shape)] if len(shape) == 2 else (9, 4)]
        for width in widths:
            for kwargs in OPTIONS[mode]:
                if np.ndim(kwargs.get("constant_values", 0)) == 2 and len(shape) != 2:
                    continue
                want = np.pad(a, width, mode, **kwargs)
                got = cu.pad(cu.asarray(a, device=device), width, mode, **kwargs)
                assert np.asarray(got).dtype == want.dtype
                np.testing.assert_allclose(np.asarray(got), want, err_msg=f"{mode} {width} {kwargs} {shape}")
    if mode == "empty":
        got = cu.pad(cu.asarray(RNG.standard_normal((2, 3)), device=device), 2, "empty")
        assert got.shape == (6, 7)


@pytest.mark.parametrize("device", DEVICES)
def test_pad_errors(device):
    a = cu.asarray(RNG.standard_normal((2, 3)), device=device)
    with pytest.raises(ValueError, match="negative"):
        cu.pad(a, -1)
    with pytest.raises(TypeError, match="integral"):
        cu.pad(a, 1.5)
    with pytest.raises(ValueError, match="not supported"):
        cu.pad(a, 1, "bogus")
    with pytest.raises(ValueError, match="unsupported keyword"):
        cu.pad(a, 1, "edge", constant_values=3)
    with pytest.raises(ValueError, match="empty axis"):
        cu.pad(cu.zeros((0, 2), device=device), 1, "edge")
    with pytest.raises(ValueError, match="broadcast"):
        cu.pad(a, ((1, 2, 3),))


# ---- properties (hypothesis): random shapes, widths, modes and options against numpy.pad ------------------

WIDTH = st.integers(0, 6)


@st.composite
def pad_cases(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=3)))
    mode = draw(st.sampled_from(sorted(OPTIONS)))
    width = draw(st.one_of(WIDTH, st.tuples(WIDTH, WIDTH),
                           st.lists(st.tuples(WIDTH, WIDTH), min_size=len(shape), max_size=len(shape)).map(tuple)))
    pair = st.tuples(st.integers(-9, 9), st.integers(-9, 9))
    kwargs = {}
    if mode == "constant" and draw(st.booleans()):
        kwargs["constant_values"] = draw(st.one_of(st.integers(-9, 9), pair))
    elif mode == "linear_ramp" and draw(st.booleans()):
        kwargs["end_values"] = draw(st.one_of(st.integers(-9, 9), pair))
    elif mode in ("maximum", "minimum", "mean", "median") and draw(st.booleans()):
        kwargs["stat_length"] = draw(st.one_of(st.integers(1, 5), st.tuples(st.integers(1, 5), st.integers(1, 5))))
    elif mode in ("reflect", "symmetric"):
        kwargs["reflect_type"] = draw(st.sampled_from(["even", "odd"]))
    return shape, draw(st.sampled_from(["float64", "int32"])), mode, width, kwargs


@PROPERTIES
@given(case=pad_cases())
def test_pad_properties_match_numpy(case):
    shape, dtype, mode, width, kwargs = case
    a = RNG.integers(-9, 9, shape).astype(dtype)
    x = cu.asarray(a)
    if mode == "empty":  # undefined padding: the shape and the original values only
        want, got = outcome(lambda: np.pad(a, width, mode)), outcome(lambda: cu.pad(x, width, mode))
        assert got[0] == want[0]
        if want[0] == "ok":
            assert got[1].shape == want[1].shape and got[1].dtype == want[1].dtype
            befores = np.broadcast_to(width, (len(shape), 2))[:, 0]
            inner = tuple(slice(b, b + n) for b, n in zip(befores, shape, strict=True))
            np.testing.assert_array_equal(np.asarray(got[1])[inner], a)
        return
    assert_same_outcome(lambda: cu.pad(x, width, mode, **kwargs), lambda: np.pad(a, width, mode, **kwargs))


@pytest.mark.parametrize("device", DEVICES)
def test_pad_with_a_function_runs_it_per_slice_on_the_host(device):
    def ten_and_twenty(vector, width, axis, kwargs):
        vector[: width[0]] = kwargs.get("low", 10)
        if width[1]:
            vector[-width[1]:] = 20 + axis

    a = RNG.standard_normal((3, 4))
    got = cu.pad(cu.asarray(a, device=device), ((1, 2), (2, 1)), ten_and_twenty, low=-1)
    assert got.device == device
    assert_same(got, np.pad(a, ((1, 2), (2, 1)), ten_and_twenty, low=-1))
