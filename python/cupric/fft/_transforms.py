"""cupric.fft's transforms: NumPy 2's fft functions (n/s, axis/axes, norm, out=) with their
arguments, dtypes and errors read here once; the transforms run in _engine (pocketfft through
NumPy on the CPU, cuFFT on GPUs)."""

import operator
import warnings

from .. import _cupric as _c
from .. import _dtypes as _dt
from .._shape_functions import copyto as _copyto
from . import _engine

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2",
           "rfft2", "irfft2"]

_SWAP = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _norm(norm):
    if norm is None:
        return "backward"
    if not isinstance(norm, str) or norm not in _SWAP:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    return norm


def _array(a):
    return a if isinstance(a, _c.ndarray) else _c.asarray(a)


def _axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise _c.AxisError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _points(n):
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    return n


def _dtypes(x, kind, name, passes=1):
    """(compute dtype of the input, dtype of the result) as NumPy 2 has them: complex results
    result_type(x, 1j), real ones result_type(real(x), 1.0), or of the complex passes before the
    last (irfftn's float16 gives float32); float16/bfloat16 compute in float32."""
    dt = x.dtype
    if kind == "r2c":
        if dt.kind == "c":
            raise TypeError(f"{name}: the input must be real, got {dt.name} (use fft for complex input)")
        result = _c.result_type(dt, 1j)
        return (_dt.names.float32 if result == _dt.names.complex64 else _dt.names.float64), result
    real = {"c": {8: _dt.names.float32, 16: _dt.names.float64}.get(dt.itemsize)}.get(dt.kind, dt)
    if kind == "c2r":
        result = _c.result_type(real, 1.0)
        compute = _dt.names.complex64 if result.itemsize <= 4 else _dt.names.complex128
        if passes > 1:
            result = _dt.names.float32 if result.itemsize <= 4 else _dt.names.float64
        return compute, result
    result = _c.result_type(dt, 1j)
    return result, result


def _run(x, kind, axes, lengths, forward, norm, out, name):
    compute, result = _dtypes(x, kind, name, len(axes))
    y = _engine.execute(x.astype(compute, copy=False), kind, axes, lengths, forward, norm)
    if y.dtype != result:
        y = y.astype(result)
    return _deliver(y, out, name)


def _deliver(y, out, name):
    """The result, or out= filled with it (NumPy's shape rule, same_kind casting)."""
    if out is None:
        return y
    if not isinstance(out, _c.ndarray):
        out = _c.asarray(out, copy=False)
    if tuple(out.shape) != tuple(y.shape):
        raise ValueError(f"output array has wrong shape: {name} gives {tuple(y.shape)}, out has {tuple(out.shape)}")
    if not _c.can_cast(y.dtype, out.dtype, casting="same_kind"):
        raise TypeError(f"Cannot cast {name}'s output from {y.dtype} to out's {out.dtype} with casting rule "
                        "'same_kind'")
    if out.device != y.device:
        raise ValueError(f"{name}: out= is on {out.device}, the result on {y.device}")
    _copyto(out, y, casting="same_kind")
    return out


def _one_axis(a, n, axis, norm, out, kind, forward, name):
    x = _array(a)
    if x.ndim == 0:
        raise _c.AxisError(f"axis {axis} is out of bounds for array of dimension 0")
    axis = _axis(axis, x.ndim)
    if n is None:
        n = 2 * (x.shape[axis] - 1) if kind == "c2r" else x.shape[axis]
    return _run(x, kind, [axis], [_points(n)], forward, _norm(norm), out, name)


def fft(a, n=None, axis=-1, norm=None, out=None):
    """The 1-D discrete Fourier transform (numpy.fft.fft)."""
    return _one_axis(a, n, axis, norm, out, "c2c", True, "fft")


def ifft(a, n=None, axis=-1, norm=None, out=None):
    """The 1-D inverse discrete Fourier transform (numpy.fft.ifft)."""
    return _one_axis(a, n, axis, norm, out, "c2c", False, "ifft")


def rfft(a, n=None, axis=-1, norm=None, out=None):
    """The 1-D transform of real input, n // 2 + 1 terms (numpy.fft.rfft)."""
    return _one_axis(a, n, axis, norm, out, "r2c", True, "rfft")


def irfft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of rfft: n real values, n = 2 * (m - 1) by default (numpy.fft.irfft)."""
    return _one_axis(a, n, axis, norm, out, "c2r", False, "irfft")


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """The transform of a Hermitian-symmetric signal given by its first half: real output
    (numpy.fft.hfft; irfft of the conjugate, norm swapped)."""
    x = _array(a)
    return _one_axis(_c.conjugate(x), n, axis, _SWAP[_norm(norm)], out, "c2r", False, "hfft")


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of hfft (numpy.fft.ihfft; the conjugate of rfft, norm swapped)."""
    y = _one_axis(a, n, axis, _SWAP[_norm(norm)], None, "r2c", True, "ihfft")
    return _deliver(_c.conjugate(y, out=y), out, "ihfft")


def _nd_args(x, s, axes, kind):
    """NumPy's (s, axes) rules: the lengths and the normalised axes of an n-D transform."""
    shapeless = s is None
    if axes is None:
        if not shapeless:
            warnings.warn("`axes` should not be `None` if `s` is not `None` (Deprecated in NumPy 2.0): pass the "
                          "axes that `s` describes", DeprecationWarning, stacklevel=4)
            s = list(s)
        axes = list(range(-(x.ndim if shapeless else len(s)), 0))
    else:
        axes = [operator.index(a) for a in axes]
    axes = [_axis(a, x.ndim) for a in axes]
    s = [x.shape[a] for a in axes] if shapeless else list(s)
    if len(s) != len(axes):
        raise ValueError(f"Shape and axes have different lengths: s has {len(s)}, axes {len(axes)}.")
    if kind == "c2r" and shapeless and axes:
        s[-1] = 2 * (x.shape[axes[-1]] - 1)
    if any(v is None for v in s):
        warnings.warn("Passing an array containing `None` values to `s` is deprecated in NumPy 2.0: pass the "
                      "lengths (-1 for the input's)", DeprecationWarning, stacklevel=4)
    lengths = []
    for i, (v, a) in enumerate(zip(s, axes, strict=True)):
        if v is None:
            v = 2 * (x.shape[a] - 1) if kind == "c2r" and i == len(axes) - 1 else x.shape[a]
        v = operator.index(v)
        lengths.append(_points(x.shape[a] if v == -1 else v))
    return lengths, axes


def _n_axes(a, s, axes, norm, out, kind, forward, name):
    x = _array(a)
    lengths, axes = _nd_args(x, s, axes, kind)
    if not axes:
        if kind != "c2c":
            raise IndexError(f"{name}: at least one axis is needed (axes=())")
        return _deliver(x.astype(_dtypes(x, kind, name)[1]), out, name)
    return _run(x, kind, axes, lengths, forward, _norm(norm), out, name)


def fftn(a, s=None, axes=None, norm=None, out=None):
    """The n-D discrete Fourier transform (numpy.fft.fftn)."""
    return _n_axes(a, s, axes, norm, out, "c2c", True, "fftn")


def ifftn(a, s=None, axes=None, norm=None, out=None):
    """The n-D inverse discrete Fourier transform (numpy.fft.ifftn)."""
    return _n_axes(a, s, axes, norm, out, "c2c", False, "ifftn")


def rfftn(a, s=None, axes=None, norm=None, out=None):
    """The n-D transform of real input, halved along the last axis (numpy.fft.rfftn)."""
    return _n_axes(a, s, axes, norm, out, "r2c", True, "rfftn")


def irfftn(a, s=None, axes=None, norm=None, out=None):
    """The inverse of rfftn (numpy.fft.irfftn)."""
    return _n_axes(a, s, axes, norm, out, "c2r", False, "irfftn")


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """The 2-D discrete Fourier transform (numpy.fft.fft2)."""
    return _n_axes(a, s, axes, norm, out, "c2c", True, "fft2")


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """The 2-D inverse discrete Fourier transform (numpy.fft.ifft2)."""
    return _n_axes(a, s, axes, norm, out, "c2c", False, "ifft2")


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """The 2-D transform of real input (numpy.fft.rfft2)."""
    return _n_axes(a, s, axes, norm, out, "r2c", True, "rfft2")


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """The inverse of rfft2 (numpy.fft.irfft2)."""
    return _n_axes(a, s, axes, norm, out, "c2r", False, "irfft2")
