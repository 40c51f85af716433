"""cupric.fft's helpers against numpy.fft's: fftfreq, rfftfreq, fftshift, ifftshift."""

import cupric as cu
import numpy as np
import pytest


@pytest.mark.parametrize("n", [1, 2, 5, 8, 11])
@pytest.mark.parametrize("d", [1.0, 0.1, 3])
def test_frequencies(n, d):
    np.testing.assert_allclose(cu.fft.fftfreq(n, d).get(), np.fft.fftfreq(n, d), rtol=1e-15)
    np.testing.assert_allclose(cu.fft.rfftfreq(n, d).get(), np.fft.rfftfreq(n, d), rtol=1e-15)
    assert cu.fft.fftfreq(n, d).dtype == np.float64


def test_frequencies_dtype_and_device():
    f = cu.fft.fftfreq(6, 0.5, dtype=cu.float32, device="cpu")
    assert f.dtype == np.float32 and f.device == "cpu"
    np.testing.assert_allclose(f.get(), np.fft.fftfreq(6, 0.5).astype(np.float32))


@pytest.mark.parametrize("n", [2.0, "4", None, True])
def test_frequencies_need_an_integer(n):
    with pytest.raises(ValueError, match="n should be an integer"):
        cu.fft.fftfreq(n)
    with pytest.raises(ValueError, match="n should be an integer"):
        cu.fft.rfftfreq(n)


@pytest.mark.parametrize("shape", [(7,), (4, 5), (3, 4, 6), ()])
@pytest.mark.parametrize("axes", [None, 0, -1, (0,), [0, -1]])
def test_shifts(shape, axes):
    a = np.arange(int(np.prod(shape))).reshape(shape)
    x = cu.asarray(a)
    if len(shape) == 0:  # nothing to roll (NumPy's roll fails on 0-d arrays)
        if axes is None:
            assert cu.fft.fftshift(x).get() == a and cu.fft.ifftshift(x).get() == a
        return
    np.testing.assert_array_equal(cu.fft.fftshift(x, axes=axes).get(), np.fft.fftshift(a, axes=axes))
    np.testing.assert_array_equal(cu.fft.ifftshift(x, axes=axes).get(), np.fft.ifftshift(a, axes=axes))
    np.testing.assert_array_equal(cu.fft.ifftshift(cu.fft.fftshift(x, axes), axes).get(), a)
