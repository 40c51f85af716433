"""cupric.fft.advanced: stateful plans (plan, execute in both directions, reset_operand, free,
context manager) and the function forms, unnormalised as nvmath-python's, against numpy.fft;
callbacks reach cupric.fft._callbacks lazily (NotImplementedError naming it when absent)."""

import sys

import cupric as cu
import numpy as np
import pytest
from cupric.fft import advanced
from fft_helpers import check, random

DEVICES = ["cpu", pytest.param("cuda:0", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("axes", [None, (0,), (1, 2), (2, 0, 1)])
def test_c2c_plan_runs_both_directions_unnormalised(device, axes):
    a = random((6, 8, 10), np.complex64)
    with advanced.FFT(cu.asarray(a, device=device), axes=axes) as f:
        f.plan()
        forward = f.execute()
        inverse = f.execute(direction="inverse")
    np_axes = axes if axes is not None else (0, 1, 2)
    check(forward.to_device("cpu"), np.fft.fftn(a, axes=np_axes), np.complex64, a.size)
    check(inverse.to_device("cpu"), np.fft.ifftn(a, axes=np_axes, norm="forward"), np.complex64, a.size)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("parity, n", [("even", 14), ("odd", 15)])
def test_r2c_and_c2r(device, parity, n):
    a = random((4, n), np.float64)
    spectrum = advanced.rfft(cu.asarray(a, device=device), axes=(1,))
    check(spectrum.to_device("cpu"), np.fft.rfft(a), np.float64, n)
    back = advanced.irfft(spectrum, axes=(1,), options={"last_axis_parity": parity})
    check(back.to_device("cpu"), a * n, np.float64, n)


@pytest.mark.parametrize("device", DEVICES)
def test_function_forms(device):
    a = random((5, 12), np.complex128)
    x = cu.asarray(a, device=device)
    check(advanced.fft(x, axes=(1,)).to_device("cpu"), np.fft.fft(a), np.complex128, 12)
    check(advanced.ifft(x, axes=(0, 1)).to_device("cpu"), np.fft.ifft2(a, norm="forward"), np.complex128, 60)
    check(advanced.fft(x).to_device("cpu"), np.fft.fft2(a), np.complex128, 60)


def test_reset_operand_runs_the_plan_on_new_data():
    a, b = random((3, 16), np.complex64), random((3, 16), np.complex64)
    f = advanced.FFT(cu.asarray(a), axes=(1,))
    f.plan()
    check(f.execute(), np.fft.fft(a), np.complex64, 16)
    f.reset_operands(cu.asarray(b))
    check(f.execute(), np.fft.fft(b), np.complex64, 16)
    with pytest.raises(ValueError, match=r"complex64 \(3, 16\).*complex64 \(4, 16\)"):
        f.reset_operand(cu.ones((4, 16), dtype=cu.complex64))
    f.free()


def test_plan_errors():
    x = cu.ones((4, 8), dtype=cu.complex64)
    with pytest.raises(ValueError, match="1 to 3 axes"):
        advanced.FFT(cu.ones((2, 2, 2, 2), dtype=cu.complex64), axes=(0, 1, 2, 3))
    with pytest.raises(ValueError, match="distinct"):
        advanced.FFT(x, axes=(0, 0))
    with pytest.raises(IndexError, match="axis 2 is out of bounds"):
        advanced.FFT(x, axes=(2,))
    with pytest.raises(TypeError, match="R2C transform needs real input"):
        advanced.FFT(x, options={"fft_type": "R2C"})
    with pytest.raises(TypeError, match="float32, float64, complex64 or complex128"):
        advanced.FFT(cu.ones(4, dtype=cu.int32))
    with pytest.raises(ValueError, match="fft_type"):
        advanced.FFTOptions(fft_type="C2X")
    with pytest.raises(ValueError, match="forward only"):
        advanced.FFT(cu.ones(8)).execute(direction="inverse")
    with pytest.raises(ValueError, match="'forward' or 'inverse'"):
        advanced.FFT(x).execute(direction="backward")


def test_callbacks_without_their_module_name_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupric.fft._callbacks", None)  # as if the module were absent
    f = advanced.FFT(cu.ones(8, dtype=cu.complex64), epilog=lambda v, offset: v)
    with pytest.raises(NotImplementedError, match=r"cupric\.fft\._callbacks"):
        f.plan()


def test_callbacks_are_compiled_lazily_through_compile_callback(monkeypatch):
    calls = []

    class Fake:
        def __init__(self, fn, kind, element, operands):
            calls.append((kind, element, operands))

        def apply(self, x, operands=()):
            return x * 2

    fake = type(sys)("cupric.fft._callbacks")
    fake.compile_callback = Fake
    monkeypatch.setitem(sys.modules, "cupric.fft._callbacks", fake)
    a = random((2, 8), np.float32)
    f = advanced.FFT(cu.asarray(a), axes=(1,), prolog=lambda v, o: v, epilog=lambda v, o: v)
    assert calls == []  # nothing compiled before plan()
    got = f.execute()
    assert calls == [("prolog", "float32", ()), ("epilog", "complex64", ())]
    check(got, np.fft.rfft(a) * 4, np.float32, 8)
