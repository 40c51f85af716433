"""cupric.pad against numpy.pad: every mode and its options, widths past the array's length, integer
and float dtypes; on the CPU and (marked gpu) on a CUDA device."""

import cupric as cu
import numpy as np
import pytest

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
