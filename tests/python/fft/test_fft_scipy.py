"""cupric.fft as SciPy's FFT backend: scipy.fft's functions on cupric arrays run in cupric (and
match SciPy's own results); NumPy input and what cupric lacks (dct, hfft2, plan=) stay SciPy's."""

import cupric as cu
import numpy as np
import pytest
from fft_helpers import check, random

scipy_fft = pytest.importorskip("scipy.fft")

DEVICES = ["cpu", pytest.param("cuda:0", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name, kwargs", [
    ("fft", {}), ("ifft", {"n": 12, "norm": "ortho"}), ("rfft", {"axis": 0}), ("irfft", {}), ("hfft", {}),
    ("ihfft", {}), ("fft2", {}), ("ifftn", {"axes": (0,)}), ("rfftn", {"s": (4, 6), "axes": (0, 1)}),
    ("irfft2", {"workers": 2, "overwrite_x": True}),
])
def test_scipy_calls_on_cupric_arrays_run_in_cupric(device, name, kwargs):
    a = random((5, 8), np.float64 if name in ("rfft", "ihfft", "rfftn") else np.complex128)
    with scipy_fft.set_backend(cu.fft):
        got = getattr(scipy_fft, name)(cu.asarray(a, device=device), **kwargs)
    assert isinstance(got, cu.ndarray) and got.device == device
    check(got.to_device("cpu"), getattr(scipy_fft, name)(a, **kwargs), a.dtype, a.size)


def test_positional_arguments_are_scipys():
    a = random((6, 7), np.complex128)
    with scipy_fft.set_backend(cu.fft):
        got = scipy_fft.fft(cu.asarray(a), 9, 0, "forward")
    check(got, scipy_fft.fft(a, 9, 0, "forward"), a.dtype, 9)


def test_what_cupric_lacks_stays_with_scipy():
    a = random((4, 6), np.float64)
    with scipy_fft.set_backend(cu.fft):
        np.testing.assert_allclose(scipy_fft.fft(a), np.fft.fft(a))  # NumPy input: SciPy's backend
        assert isinstance(scipy_fft.fft(a), np.ndarray)
    assert cu.fft.__ua_function__(scipy_fft.dct, (cu.asarray(a),), {}) is NotImplemented
    assert cu.fft.__ua_function__(scipy_fft.hfft2, (cu.asarray(a),), {}) is NotImplemented
    assert cu.fft.__ua_function__(scipy_fft.fft, (cu.asarray(a),), {"plan": object()}) is NotImplemented
    assert cu.fft.__ua_domain__ == "numpy.scipy.fft"


def test_scipy_frequencies_with_cupric_as_xp():
    f = scipy_fft.fftfreq(7, 0.5, xp=cu)
    assert isinstance(f, cu.ndarray)
    np.testing.assert_allclose(f.get(), np.fft.fftfreq(7, 0.5))
    assert isinstance(scipy_fft.rfftfreq(8, xp=cu), cu.ndarray)
