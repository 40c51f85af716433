"""NumPy's index helpers and selection functions composed from cupric's indexing, where and
concatenate, so each runs on every device: diag/tril/triu indices, fill_diagonal, compress,
extract, place, putmask, choose, select, piecewise, mgrid/ogrid, r_/c_, apply_along_axis,
apply_over_axes, ndindex/ndenumerate."""

import itertools as _it
import operator as _op

from . import _cupric as _c
from ._operands import device_of, on

__all__ = ["diag_indices", "diag_indices_from", "tril_indices", "tril_indices_from", "triu_indices",
           "triu_indices_from", "mask_indices", "fill_diagonal", "compress", "extract", "place", "putmask", "choose",
           "select", "piecewise", "mgrid", "ogrid", "r_", "c_", "apply_along_axis", "apply_over_axes", "ndindex",
           "ndenumerate"]


def _arr(x):
    return x if isinstance(x, _c.ndarray) else _c.asarray(x)


# ---- index arrays of matrix parts ---------------------------------------------------------------

def diag_indices(n, ndim=2, *, device=None):
    i = _c.arange(_op.index(n), device=device)
    return (i,) * ndim


def diag_indices_from(arr):
    a = _arr(arr)
    if a.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(a.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(a.shape[0], a.ndim, device=a.device)


def _tri_indices(n, k, m, lower, device):
    m = n if m is None else m
    mask = _c.tri(n, m, k=k, dtype="bool", device=device) if lower else _c.logical_not(
        _c.tri(n, m, k=k - 1, dtype="bool", device=device))
    return _c.nonzero(mask)


def tril_indices(n, k=0, m=None, *, device=None):
    return _tri_indices(_op.index(n), _op.index(k), m, True, device)


def triu_indices(n, k=0, m=None, *, device=None):
    return _tri_indices(_op.index(n), _op.index(k), m, False, device)


def tril_indices_from(arr, k=0):
    a = _arr(arr)
    if a.ndim != 2:
        raise ValueError("input array must be 2-d")
    return tril_indices(a.shape[-2], k=k, m=a.shape[-1], device=a.device)


def triu_indices_from(arr, k=0):
    a = _arr(arr)
    if a.ndim != 2:
        raise ValueError("input array must be 2-d")
    return triu_indices(a.shape[-2], k=k, m=a.shape[-1], device=a.device)


def mask_indices(n, mask_func, k=0):
    m = mask_func(_c.ones((n, n), dtype="int64"), k)
    return _c.nonzero(m != 0)


def fill_diagonal(a, val, wrap=False):
    if not isinstance(a, _c.ndarray):
        raise TypeError(f"fill_diagonal needs a cupric array to write into, not {type(a).__name__}")
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    if a.ndim == 2:  # NumPy's flat walk: every (cols + 1)-th element, up to cols * cols without wrap
        rows, cols = a.shape
        end = rows * cols if wrap else min(rows * cols, cols * cols)
        flat = _c.arange(0, end, cols + 1, device=a.device)
        index = (flat // cols, flat % cols)
    else:
        index = diag_indices(a.shape[0], a.ndim, device=a.device)
    v = on(val, a.device).reshape(-1)
    n = index[0].shape[0]
    if v.shape[0] not in (1, n):
        v = _c.concatenate([v] * (n // max(v.shape[0], 1) + 1))[:n] if v.shape[0] else v
    a[index] = v if v.shape[0] == n else v[0]


# ---- selection ------------------------------------------------------------------------------------

def compress(condition, a, axis=None, out=None):
    device = device_of(a, condition)
    x = on(a, device)
    cond = on(condition, device)
    if cond.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    if axis is None:
        x, axis = x.reshape(-1), 0
    ax = axis % x.ndim
    n = x.shape[ax]
    if cond.shape[0] > n:
        raise IndexError(f"index {cond.shape[0] - 1} is out of bounds for axis {ax} with size {n}")
    picks = _c.flatnonzero(cond.astype("bool"))
    index = [slice(None)] * x.ndim
    index[ax] = picks
    result = x[tuple(index)]
    if out is not None:
        out[...] = result
        return out
    return result


def extract(condition, arr):
    device = device_of(arr, condition)
    return on(arr, device).reshape(-1)[_c.flatnonzero(on(condition, device).reshape(-1))]


def place(arr, mask, vals):
    if not isinstance(arr, _c.ndarray):
        raise TypeError(f"place needs a cupric array to write into, not {type(arr).__name__}")
    m = on(mask, arr.device).reshape(-1).astype("bool")
    picks = _c.flatnonzero(m)
    n = picks.shape[0]
    if n == 0:
        return
    v = on(vals, arr.device).reshape(-1)
    if v.shape[0] == 0:
        raise ValueError("Cannot insert from an empty array!")
    v = _c.concatenate([v] * (n // v.shape[0] + 1))[:n] if v.shape[0] < n else v[:n]
    flat = arr.reshape(-1).copy()  # written whole, so views and strided arrays take it too
    flat[picks] = v
    arr[...] = flat.reshape(arr.shape)


def putmask(a, mask, values):
    if not isinstance(a, _c.ndarray):
        raise TypeError(f"putmask needs a cupric array to write into, not {type(a).__name__}")
    m = _c.broadcast_to(on(mask, a.device).astype("bool"), a.shape)
    v = on(values, a.device).reshape(-1)
    if v.shape[0] == 0:
        return
    # values repeat over the flat positions of a (not over the masked ones only)
    reps = -(-a.size // v.shape[0])
    full = _c.concatenate([v] * reps)[:a.size].reshape(a.shape) if v.shape[0] != a.size else v.reshape(a.shape)
    a[...] = _c.where(m, full.astype(a.dtype), a)


def choose(a, choices, out=None, mode="raise"):
    device = device_of(a, choices)
    idx = on(a, device)
    opts = [on(c, device) for c in choices]
    n = len(opts)
    if mode == "raise":
        if idx.size and (bool(_c.any(idx < 0)) or bool(_c.any(idx >= n))):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        idx = _c.remainder(idx, n)
    elif mode == "clip":
        idx = _c.clip(idx, 0, n - 1)
    else:
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    shape = _c.broadcast_shapes(idx.shape, *[o.shape for o in opts])
    dtype = _c.result_type(*opts)
    result = _c.zeros(shape, dtype=dtype, device=idx.device)
    for k, o in enumerate(opts):
        result = _c.where(idx == k, o.astype(dtype), result)
    if out is not None:
        out[...] = result
        return out
    return result


def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("select with an empty condition list is not possible")
    device = device_of(condlist, choicelist, default)
    conds = [on(c, device) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != bool:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    choices = [on(c, device) for c in choicelist]
    dflt = on(default, device)
    dtype = _c.result_type(*choices, dflt)
    shape = _c.broadcast_shapes(*[c.shape for c in conds], *[c.shape for c in choices], dflt.shape)
    result = _c.broadcast_to(dflt.astype(dtype), shape)
    for c, v in zip(reversed(conds), reversed(choices), strict=True):
        result = _c.where(c, v.astype(dtype), result)
    return result


def piecewise(x, condlist, funclist, *args, **kw):
    v = _arr(x)
    if isinstance(condlist, _c.ndarray) and condlist.ndim == v.ndim or not isinstance(condlist, (list, tuple)):
        condlist = [condlist]
    conds = [on(c, v.device).astype("bool") for c in condlist]
    if len(funclist) == len(conds) + 1:
        rest = _c.logical_not(_c.any(_c.stack(conds), axis=0)) if conds else _c.ones(v.shape, dtype="bool")
        conds.append(rest)
    elif len(funclist) != len(conds):
        raise ValueError(f"with {len(conds)} condition(s), either {len(conds)} or {len(conds) + 1} functions are "
                         f"expected")
    out = _c.zeros(v.shape, dtype=v.dtype, device=v.device)
    for cond, fn in zip(conds, funclist, strict=True):
        if callable(fn):
            if bool(_c.any(cond)):  # NumPy calls a function only where its condition selects values
                out[cond] = on(fn(v[cond], *args, **kw), v.device).astype(v.dtype)
        else:
            out[cond] = fn
    return out


# ---- grids and concatenation by index ------------------------------------------------------------

class _Grid:
    """mgrid (dense) and ogrid (open): a slice's step of `5j` means 5 points, ends included."""

    def __init__(self, sparse):
        self.sparse = sparse

    def __getitem__(self, key):
        keys = key if isinstance(key, tuple) else (key,)
        axes = []
        for k in keys:
            if not isinstance(k, slice):
                raise TypeError("grid indices must be slices")
            start = 0 if k.start is None else k.start
            step = 1 if k.step is None else k.step
            if isinstance(step, complex):
                n = int(abs(step))
                axes.append(_c.linspace(start, k.stop, n))
            else:
                axes.append(_c.arange(start, k.stop, step))
        if not isinstance(key, tuple):
            return axes[0]
        dtype = _c.result_type(*axes)
        grids = []
        for i, a in enumerate(axes):
            shape = [1] * len(axes)
            shape[i] = a.shape[0]
            grids.append(a.astype(dtype).reshape(tuple(shape)))
        if self.sparse:
            return tuple(grids)
        full = tuple(a.shape[0] for a in axes)
        return _c.stack([_c.broadcast_to(g, full) for g in grids])


mgrid = _Grid(False)
ogrid = _Grid(True)


class _Concatenator:
    """r_ (along the first axis) and c_ (columns): slices become ranges, arrays and scalars join."""

    def __init__(self, axis, ndmin):
        self.axis, self.ndmin = axis, ndmin

    def __getitem__(self, key):
        keys = key if isinstance(key, tuple) else (key,)
        device = device_of(keys)
        parts = []
        for k in keys:
            if isinstance(k, str):
                raise NotImplementedError("cupric's r_/c_ take no string directives; use concatenate")
            if isinstance(k, slice):
                part = on(_Grid(False)[k], None).to_device(device) if device is not None else _Grid(False)[k]
            else:
                part = on(k, device)
            if part.ndim < self.ndmin:
                ones = (1,) * (self.ndmin - part.ndim)
                # a 1-d part becomes a column when ndmin is 2 (c_); otherwise it gains leading axes
                part = part.reshape(part.shape + ones if self.ndmin == 2 and part.ndim == 1 else ones + part.shape)
            parts.append(part.reshape(1) if part.ndim == 0 else part)
        return _c.concatenate(parts, axis=self.axis)


r_ = _Concatenator(0, 1)
c_ = _Concatenator(-1, 2)


# ---- applying functions ---------------------------------------------------------------------------

def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    a = _arr(arr)
    ax = axis % a.ndim
    moved = _c.moveaxis(a, ax, -1)
    outer = moved.shape[:-1]
    results = [on(func1d(moved[idx], *args, **kwargs), a.device) for idx in _it.product(*map(range, outer))]
    if not results:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    stacked = _c.stack(results).reshape(outer + results[0].shape)
    # the function's result axes take the place of `axis`
    nres = results[0].ndim
    order = list(range(len(outer)))
    order = order[:ax] + [len(outer) + i for i in range(nres)] + order[ax:]
    return _c.permute_dims(stacked, tuple(order)) if nres else stacked


def apply_over_axes(func, a, axes):
    val = _arr(a)
    for ax in (axes if hasattr(axes, "__len__") else [axes]):
        ax = ax % val.ndim if ax < 0 else ax
        res = on(func(val, ax), val.device)
        if res.ndim == val.ndim:
            val = res
        elif res.ndim == val.ndim - 1:
            val = _c.expand_dims(res, ax)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return val


class ndindex:
    """Every index of an array of `shape`, in C order (as numpy.ndindex)."""

    def __init__(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], tuple):
            shape = shape[0]
        self._it = _it.product(*[range(_op.index(n)) for n in shape])

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._it)


def ndenumerate(arr):
    """(index, value) pairs of an array in C order; the values come from one copy to the host."""
    a = _arr(arr)
    host = a.tolist() if a.ndim else a.item()
    for idx in ndindex(a.shape):
        v = host
        for i in idx:
            v = v[i]
        yield idx, a.dtype.type(v)
