"""numpy.fft's helpers (and the Array API's): the sample frequencies of a transform and the
shifts that put the zero frequency in the middle, composed from arange and roll on any device."""

import numbers

from .. import _cupric as _c
from .._shape_functions import roll

__all__ = ["fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _count(n):
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise ValueError(f"n should be an integer, got {type(n).__name__}")
    return int(n)


def _frequencies(k, n, d, dtype):
    f = k * (1.0 / (n * d))
    return f if dtype is None else f.astype(dtype)


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an n-point fft with sample spacing d: [0, 1, ..., -2, -1] / (d n)."""
    n = _count(n)
    k = _c.arange(n, device=device)
    return _frequencies(_c.where(k < (n - 1) // 2 + 1, k, k - n), n, d, dtype)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an n-point rfft: [0, 1, ..., n // 2] / (d n)."""
    n = _count(n)
    return _frequencies(_c.arange(n // 2 + 1, device=device), n, d, dtype)


def _shift(x, axes, sign):
    x = x if isinstance(x, _c.ndarray) else _c.asarray(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif not isinstance(axes, (tuple, list)):
        return roll(x, sign * (x.shape[axes] // 2), axes)
    return roll(x, [sign * (x.shape[a] // 2) for a in axes], tuple(axes))


def fftshift(x, axes=None):
    """x rolled so that the zero frequency is in the middle of each axis in `axes` (all by default)."""
    return _shift(x, axes, 1)


def ifftshift(x, axes=None):
    """The inverse of fftshift (they differ for odd lengths)."""
    return _shift(x, axes, -1)
