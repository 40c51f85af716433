"""Python-level parts of the namespace: constants, finfo/iinfo objects, and functions whose
semantics are composed from C++ primitives."""

import math as _math

from . import _cupric as _c
from . import _dtypes as _dt

__all__ = ["e", "pi", "inf", "nan", "newaxis", "finfo", "iinfo", "array", "isdtype", "device"]

e = _math.e
pi = _math.pi
inf = float("inf")
nan = float("nan")
newaxis = None


class device:
    """`with cu.device("cuda:0"):` makes new arrays default to that device inside the block
    (outside it: CUPRIC_DEVICE, else the first GPU when there is one, else the CPU)."""

    def __init__(self, dev):
        self._device = dev
        self._saved = []

    def __enter__(self):
        self._saved.append(_c._get_default_device())
        _c._set_default_device(self._device)
        return _c._get_default_device()

    def __exit__(self, *exc):
        _c._set_default_device(self._saved.pop())
        return False


class finfo:
    """Machine limits of a floating type, as numpy.finfo."""

    def __init__(self, dtype):
        for k, v in _c._finfo(dtype).items():
            setattr(self, k, v)

    def __repr__(self):
        return f"finfo(resolution={self.resolution}, min={self.min:.6e}, max={self.max:.6e}, dtype={self.dtype})"


class iinfo:
    """Machine limits of an integer type, as numpy.iinfo."""

    def __init__(self, dtype):
        for k, v in _c._iinfo(dtype).items():
            setattr(self, k, v)

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


def array(obj, dtype=None, *, copy=True, device=None, ndmin=0):
    """numpy.array: a new array (copy=True by default, unlike asarray)."""
    out = _c.asarray(obj, dtype=dtype, device=device, copy=True if copy else None)
    while out.ndim < ndmin:
        out = out[None]
    return out


_KINDS = {
    "bool": ("b",),
    "signed integer": ("i",),
    "unsigned integer": ("u",),
    "integral": ("i", "u"),
    "real floating": ("f",),
    "complex floating": ("c",),
    "numeric": ("i", "u", "f", "c"),
}


def isdtype(dtype, kind):
    """Array API isdtype: is `dtype` of `kind` (a dtype, a kind name, or a tuple of them)?"""
    dtype = _dt.as_dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"unknown dtype kind {kind!r}; expected one of {sorted(_KINDS)}")
        return _dt.kind(dtype) in _KINDS[kind]
    return dtype == _dt.as_dtype(kind)
