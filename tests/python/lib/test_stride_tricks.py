"""cupric.lib.stride_tricks.sliding_window_view against NumPy's (values and shapes; cupric gathers
the windows into a new array), on the CPU and (marked gpu) on a CUDA device."""

import cupric as cu
import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view as numpy_windows

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("window, axis", [((2, 3), None), (3, 1), ((2, 2), (1, 1)), (4, 0), ((1, 1), (0, -1)),
                                          (6, -1)])
def test_windows_match_numpy(window, axis, device):
    a = np.random.default_rng(3).standard_normal((4, 6))
    got = cu.lib.stride_tricks.sliding_window_view(cu.asarray(a, device=device)[:, ::-1], window, axis)
    want = numpy_windows(a[:, ::-1], window, axis)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(np.lib.stride_tricks.sliding_window_view(
        cu.asarray(a, device=device), window, axis)), numpy_windows(a, window, axis))  # through NumPy's name


def test_bad_windows():
    x = cu.zeros((3, 4))
    with pytest.raises(ValueError, match="larger than input"):
        cu.lib.stride_tricks.sliding_window_view(x, 5, axis=1)
    with pytest.raises(ValueError, match="negative"):
        cu.lib.stride_tricks.sliding_window_view(x, -1, axis=0)
    with pytest.raises(ValueError, match="all dimensions"):
        cu.lib.stride_tricks.sliding_window_view(x, 2)
    with pytest.raises(cu.AxisError):
        cu.lib.stride_tricks.sliding_window_view(x, 2, axis=2)
