"""Python-level parts of the namespace: constants, finfo/iinfo objects, and functions whose
semantics are composed from C++ primitives."""

import math as _math

from . import _cupric as _c
from . import _dtypes as _dt

__all__ = ["e", "pi", "inf", "nan", "newaxis", "finfo", "iinfo", "array", "isdtype", "device", "unravel_index",
           "ravel_multi_index"]

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


def _int_indices(obj):
    """`obj` as an int64 cupric array (on its own device); NumPy's TypeError for anything else."""
    a = _c.asarray(obj)
    if _dt.kind(a.dtype) not in "iu":
        raise TypeError("only int indices permitted")
    return a.astype("int64", copy=False)


def _check_order(order):
    if order not in ("C", "F"):
        raise ValueError(f"only 'C' or 'F' order is permitted, got {order!r}")


def unravel_index(indices, shape, order="C"):
    """numpy.unravel_index: the coordinates, in an array of `shape`, of flat `indices` (a tuple of
    int64 arrays on the indices' device; Dask's argmax over whole arrays calls it on chunks)."""
    _check_order(order)
    shape = (shape,) if isinstance(shape, int) else tuple(int(n) for n in shape)
    flat = _int_indices(indices)
    size = _math.prod(shape)
    bad = _c.logical_or(flat < 0, flat >= size)
    if flat.size and bool(_c.any(bad)):
        first = int(flat.ravel()[_c.nonzero(bad.ravel())[0][0]])
        raise ValueError(f"index {first} is out of bounds for array with size {size}")
    coords = []
    for dim in reversed(shape) if order == "C" else shape:
        coords.append(_c.remainder(flat, dim))
        flat = _c.floor_divide(flat, dim)
    return tuple(reversed(coords)) if order == "C" else tuple(coords)


_CLIP_MODES = ("clip", "raise", "wrap")


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """numpy.ravel_multi_index: flat indices (int64, on the coordinates' device) of coordinate
    arrays in an array of shape `dims`; out-of-range coordinates raise, wrap or clip by `mode`
    (one mode, or one per dimension)."""
    _check_order(order)
    dims = (dims,) if isinstance(dims, int) else tuple(int(n) for n in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    for m in modes:
        if m not in _CLIP_MODES:
            raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {m!r})")
    strides, step = [], 1
    for dim in reversed(dims) if order == "C" else dims:
        strides.append(step)
        step *= dim
    if order == "C":
        strides.reverse()
    flat = None
    for coord, dim, m, stride in zip(multi_index, dims, modes, strides, strict=True):
        c = _int_indices(coord)
        if m == "wrap":
            c = _c.remainder(c, dim)
        elif m == "clip":
            c = _c.clip(c, 0, dim - 1)
        elif c.size and bool(_c.any(_c.logical_or(c < 0, c >= dim))):
            raise ValueError("invalid entry in coordinates array")
        flat = c * stride if flat is None else flat + c * stride
    return flat
