"""Sorting's compositions on every device: partition, argpartition, lexsort, sort_complex, and
the index functions take, take_along_axis, put, put_along_axis (sort, argsort and searchsorted
are the C++ core's, src/ops/sorting.cpp)."""

import operator as _operator

from . import _cupric as _c
from . import _dtypes as _dt
from . import _namespace

__all__ = ["take", "take_along_axis", "put", "put_along_axis", "partition", "argpartition", "lexsort",
           "sort_complex"]


def _axis(axis, ndim):
    """axis in [-ndim, ndim) as a non-negative int, NumPy's AxisError otherwise."""
    return _c._normalize_axis(_operator.index(axis), ndim)


def _indices(obj, device):
    a = _c.asarray(obj, device=device)
    if a.size == 0 and _dt.kind(a.dtype) not in "iu":
        a = a.astype("int64")
    if _dt.kind(a.dtype) not in "iu":
        raise IndexError("arrays used as indices must be of integer type")
    return a


def _moded(ind, size, mode):
    """Indices after NumPy's mode: 'raise' leaves them (indexing checks), 'wrap', 'clip'."""
    if mode == "raise":
        return ind
    if mode == "wrap":
        return _c.remainder(ind, size) if size else ind
    if mode == "clip":
        return _c.clip(ind, 0, max(size - 1, 0))
    raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")


def take(a, indices, axis=None, out=None, mode="raise"):
    """numpy.take (and the Array API's): elements of `a` at `indices` along `axis` (None: the
    flattened array)."""
    a = _c.asarray(a)
    if axis is None:
        a, axis = a.ravel(), 0
    axis = _axis(axis, a.ndim)
    ind = _moded(_indices(indices, a.device), a.shape[axis], mode)
    if ind.size and a.shape[axis] == 0:
        raise IndexError("cannot do a non-empty take from an empty axes.")
    result = a[(slice(None),) * axis + (ind,)]
    if out is None:
        return result
    out[...] = result
    return out


def _fancy_along(shape, indices, axis):
    """The index tuple that picks indices[..., i, ...] along `axis` of each 1-d slice."""
    if indices.ndim != len(shape):
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    index = []
    for d in range(len(shape)):
        if d == axis:
            index.append(indices)
        else:
            shp = [1] * len(shape)
            shp[d] = indices.shape[d] if indices.shape[d] != 1 else shape[d]
            index.append(_c.arange(shp[d], device=indices.device).reshape(shp))
    return tuple(index)


def take_along_axis(arr, indices, axis=-1):
    """numpy.take_along_axis / the Array API's: arr[..., indices[..., i, ...], ...] per slice
    (axis None: the flattened array)."""
    arr = _c.asarray(arr)
    indices = _indices(indices, arr.device)
    if axis is None:
        if indices.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        arr, axis = arr.ravel(), 0
    axis = _axis(axis, arr.ndim)
    return arr[_fancy_along(arr.shape, indices, axis)]


def put_along_axis(arr, indices, values, axis):
    """numpy.put_along_axis: arr[..., indices[..., i, ...], ...] = values, in place."""
    indices = _indices(indices, arr.device)
    if axis is None:
        if indices.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        flat = arr.reshape(-1)  # a view for contiguous arrays; others raise below
        flat[indices] = values
        return
    axis = _axis(axis, arr.ndim)
    arr[_fancy_along(arr.shape, indices, axis)] = values


def put(a, ind, v, mode="raise"):
    """numpy.put: a.flat[ind] = v, v repeated when shorter than ind, in place."""
    ind = _moded(_indices(ind, a.device).ravel(), a.size, mode)
    v = _c.asarray(v, device=a.device).ravel()
    if ind.size == 0:
        return
    if v.size == 0:
        return
    if v.size < ind.size:
        v = v[_c.remainder(_c.arange(ind.size, device=a.device), v.size)]
    elif v.size > ind.size:
        v = v[: ind.size]
    if mode == "raise":
        bad = _c.logical_or(ind < -a.size, ind >= a.size)
        if bool(_c.any(bad)):
            first = int(ind[_c.nonzero(bad)[0][0]])
            raise IndexError(f"index {first} is out of bounds for axis 0 with size {a.size}")
        ind = _c.remainder(ind, a.size)
    coords = _namespace.unravel_index(ind, a.shape) if a.ndim else ()
    a[coords] = v


def _check_kth(kth, n):
    kth = _c.asarray(kth)
    if _dt.kind(kth.dtype) not in "iu":
        raise TypeError("Partition index must be integer")
    for k in kth.ravel().tolist():
        if not -n <= k < n:
            raise ValueError(f"kth(={k}) out of bounds ({n})")


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """numpy.partition: every kth element where a full sort puts it, smaller ones before it and
    larger ones after (a sort satisfies this; NaN last)."""
    a = _c.asarray(a)
    if axis is None:
        a, axis = a.ravel(), 0
    axis = _axis(axis, a.ndim)
    _check_kth(kth, a.shape[axis])
    return _c.sort(a, axis=axis, order=order)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """numpy.argpartition: indices that partition `a` (see partition)."""
    a = _c.asarray(a)
    if axis is None:
        a, axis = a.ravel(), 0
    axis = _axis(axis, a.ndim)
    _check_kth(kth, a.shape[axis])
    return _c.argsort(a, axis=axis, order=order)


def lexsort(keys, axis=-1):
    """numpy.lexsort: indices sorting by the last key, then the one before, ... (stable)."""
    if isinstance(keys, _c.ndarray):
        if keys.ndim == 0:
            raise TypeError("need sequence of keys with len > 0 in lexsort")
        keys = [keys[i] for i in range(keys.shape[0])]
    else:
        keys = [_c.asarray(k) for k in keys]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shape = keys[0].shape
    for k in keys:
        if k.shape != shape:
            raise ValueError("all keys need to be the same shape")
    axis = _axis(axis, len(shape))
    perm = _c.argsort(keys[0], axis=axis)
    for k in keys[1:]:
        perm = take_along_axis(perm, _c.argsort(take_along_axis(k, perm, axis), axis=axis), axis)
    return perm


def sort_complex(a):
    """numpy.sort_complex: the sorted array as complex (complex64 for 8- and 16-bit integers,
    complex128 otherwise)."""
    b = _c.sort(_c.asarray(a))
    if _dt.kind(b.dtype) == "c":
        return b
    small = str(b.dtype) in ("int8", "uint8", "int16", "uint16")
    return b.astype("complex64" if small else "complex128")
