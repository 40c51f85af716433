"""NumPy's shape and order functions composed from cupric's primitives (views, concatenate,
indexing), so each runs on every device without a kernel of its own: atleast_*d, the stacks and
splits, flip/roll/rot90, repeat/tile, diff, append/insert/delete, diag, indices/ix_, r_/c_/s_."""

import operator as _op

from . import _cupric as _c
from ._operands import device_of, on

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack", "dstack", "column_stack", "row_stack",
           "split", "array_split", "hsplit", "vsplit", "dsplit", "unstack", "flip", "fliplr", "flipud", "rot90",
           "roll", "rollaxis", "repeat", "diff", "ediff1d", "append", "delete", "insert", "diag",
           "diagflat", "trim_zeros", "resize", "indices", "ix_", "s_", "index_exp", "ascontiguousarray",
           "asfortranarray", "require", "copyto", "block"]


def _arr(x):
    return x if isinstance(x, _c.ndarray) else _c.asarray(x)


def _axis(axis, ndim, name="axis"):
    """An axis normalised against ndim, with NumPy's AxisError text."""
    axis = _op.index(axis)
    if not -ndim <= axis < ndim:
        raise _c.AxisError(f"{name} {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _one_or_list(arrays):
    return arrays[0] if len(arrays) == 1 else list(arrays)


# ---- dimensions ---------------------------------------------------------------------------------

def _all_on_one_device(arys):
    device = device_of(arys)
    return [on(a, device) for a in arys]


def atleast_1d(*arys):
    return _one_or_list([a.reshape(1) if a.ndim == 0 else a for a in _all_on_one_device(arys)])


def atleast_2d(*arys):
    return _one_or_list([a.reshape((1,) * (2 - a.ndim) + a.shape) if a.ndim < 2 else a
                         for a in _all_on_one_device(arys)])


def atleast_3d(*arys):
    out = []
    for a in _all_on_one_device(arys):
        if a.ndim == 0:
            a = a.reshape(1, 1, 1)
        elif a.ndim == 1:
            a = a.reshape(1, a.shape[0], 1)
        elif a.ndim == 2:
            a = a.reshape(a.shape + (1,))
        out.append(a)
    return _one_or_list(out)


# ---- joining and splitting ------------------------------------------------------------------------

def _seq(tup, name):
    if isinstance(tup, _c.ndarray) or not hasattr(tup, "__iter__"):
        raise TypeError(f"{name}: arrays to stack must be passed as a sequence (a list or a tuple)")
    device = device_of(tup)
    return [on(a, device) for a in tup]


def hstack(tup, *, dtype=None, casting="same_kind"):
    arrs = atleast_1d(*_seq(tup, "hstack"))
    arrs = arrs if isinstance(arrs, list) else [arrs]
    axis = 0 if arrs and arrs[0].ndim == 1 else 1
    return _c.concatenate(arrs, axis=axis, dtype=dtype, casting=casting)


def vstack(tup, *, dtype=None, casting="same_kind"):
    arrs = atleast_2d(*_seq(tup, "vstack"))
    return _c.concatenate(arrs if isinstance(arrs, list) else [arrs], axis=0, dtype=dtype, casting=casting)


row_stack = vstack


def dstack(tup):
    arrs = atleast_3d(*_seq(tup, "dstack"))
    return _c.concatenate(arrs if isinstance(arrs, list) else [arrs], axis=2)


def column_stack(tup):
    arrs = [a.reshape(a.size, 1) if a.ndim < 2 else a for a in _seq(tup, "column_stack")]
    return _c.concatenate(arrs, axis=1)


def _split_points(n, sections, name):
    if isinstance(sections, int) or (hasattr(sections, "__index__") and not hasattr(sections, "__len__")):
        count = _op.index(sections)
        if count <= 0:
            raise ValueError("number sections must be larger than 0.")
        base, extra = divmod(n, count)
        sizes = [base + 1] * extra + [base] * (count - extra)
        points, at = [], 0
        for s in sizes[:-1]:
            at += s
            points.append(at)
        return points, True
    return [_op.index(p) for p in sections], False


def array_split(ary, indices_or_sections, axis=0):
    a = _arr(ary)
    ax = _axis(axis, a.ndim)
    n = a.shape[ax]
    points, _ = _split_points(n, indices_or_sections, "array_split")
    out, start = [], 0
    index = [slice(None)] * a.ndim
    for stop in points + [n]:
        index[ax] = slice(start, stop)
        out.append(a[tuple(index)])
        start = stop
    return out


def split(ary, indices_or_sections, axis=0):
    a = _arr(ary)
    if not hasattr(indices_or_sections, "__len__"):
        count = _op.index(indices_or_sections)
        n = a.shape[_axis(axis, a.ndim)]
        if count > 0 and n % count:
            raise ValueError("array split does not result in an equal division")
    return array_split(a, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    a = _arr(ary)
    if a.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(a, indices_or_sections, 1 if a.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    a = _arr(ary)
    if a.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(a, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    a = _arr(ary)
    if a.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(a, indices_or_sections, 2)


def unstack(x, /, *, axis=0):
    a = _arr(x)
    if a.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    ax = _axis(axis, a.ndim)
    index = [slice(None)] * a.ndim
    out = []
    for i in range(a.shape[ax]):
        index[ax] = i
        out.append(a[tuple(index)])
    return tuple(out)


def block(arrays):
    """Assembles an array from nested lists of blocks (the innermost lists join along the last axis)."""
    def depth(x):
        if isinstance(x, list):
            if not x:
                raise ValueError("Lists cannot be empty")
            ds = {depth(e) for e in x}
            if len(ds) != 1:
                raise ValueError("List depths are mismatched")
            return 1 + ds.pop()
        if isinstance(x, tuple):
            raise TypeError("arrays is a tuple. Only lists can be used to arrange blocks, and np.block does not "
                            "allow implicit conversion from tuple to ndarray.")
        return 0

    levels = depth(arrays)
    leaves = []

    def collect(x):
        if isinstance(x, list):
            for e in x:
                collect(e)
        else:
            leaves.append(x)

    collect(arrays)
    device = device_of(leaves)
    leaves = [on(a, device) for a in leaves]
    ndim = max([levels] + [a.ndim for a in leaves])

    def build(x, level):
        if not isinstance(x, list):
            a = on(x, device)
            return a.reshape((1,) * (ndim - a.ndim) + a.shape)
        parts = [build(e, level + 1) for e in x]
        return _c.concatenate(parts, axis=ndim - levels + level)

    return build(arrays, 0) if isinstance(arrays, list) else _arr(arrays).copy()


# ---- order ----------------------------------------------------------------------------------------

def flip(m, axis=None):
    a = _arr(m)
    axes = range(a.ndim) if axis is None else [_axis(x, a.ndim) for x in (axis if isinstance(axis, (tuple, list))
                                                                          else (axis,))]
    index = [slice(None)] * a.ndim
    for ax in axes:
        index[ax] = slice(None, None, -1)
    return a[tuple(index)]


def fliplr(m):
    a = _arr(m)
    if a.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(a, 1)


def flipud(m):
    a = _arr(m)
    if a.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(a, 0)


def rot90(m, k=1, axes=(0, 1)):
    a = _arr(m)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    a0, a1 = _axis(axes[0], a.ndim), _axis(axes[1], a.ndim)
    if a0 == a1:
        raise ValueError("Axes must be different.")
    k = _op.index(k) % 4
    if k == 0:
        return a[...]
    if k == 2:
        return flip(flip(a, a0), a1)
    perm = list(range(a.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    return _c.permute_dims(flip(a, a1), tuple(perm)) if k == 1 else flip(_c.permute_dims(a, tuple(perm)), a1)


def roll(a, shift, axis=None):
    x = _arr(a)
    if axis is None:
        return roll(x.reshape(-1), shift, 0).reshape(x.shape)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,) * len(axes)
    if len(shifts) != len(axes):
        if len(axes) == 1:
            axes = axes * len(shifts)
        else:
            raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    total = {}
    for s, ax in zip(shifts, axes, strict=True):
        ax = _axis(ax, x.ndim)
        total[ax] = total.get(ax, 0) + _op.index(s)
    for ax, s in total.items():
        n = x.shape[ax]
        if n == 0 or s % n == 0:
            continue
        s %= n
        head = [slice(None)] * x.ndim
        tail = [slice(None)] * x.ndim
        head[ax], tail[ax] = slice(n - s, None), slice(None, n - s)
        x = _c.concatenate([x[tuple(head)], x[tuple(tail)]], axis=ax)
    return x if total else x[...]


def rollaxis(a, axis, start=0):
    x = _arr(a)
    n = x.ndim
    axis = _axis(axis, n)
    start = _op.index(start)
    start = start + n if start < 0 else start
    if not 0 <= start < n + 1:
        raise _c.AxisError(f"'start' arg requires {-n} <= start < {n + 1}")
    if axis < start:
        start -= 1
    if axis == start:
        return x[...]
    order = [i for i in range(n) if i != axis]
    order.insert(start, axis)
    return _c.permute_dims(x, tuple(order))


# ---- repetition -----------------------------------------------------------------------------------

def repeat(a, repeats, axis=None):
    x = _arr(a)
    if axis is None:
        x, axis = x.reshape(-1), 0
    ax = _axis(axis, x.ndim)
    n = x.shape[ax]
    if isinstance(repeats, int) or (hasattr(repeats, "__index__") and not hasattr(repeats, "__len__")) or (
            isinstance(repeats, _c.ndarray) and repeats.ndim == 0):
        r = int(repeats)
        if r < 0:
            raise ValueError("negative dimensions are not allowed")
        expanded = _c.expand_dims(x, ax + 1)
        shape = list(expanded.shape)
        shape[ax + 1] = r
        out_shape = list(x.shape)
        out_shape[ax] = n * r
        return _c.broadcast_to(expanded, tuple(shape)).reshape(tuple(out_shape))
    counts = [int(c) for c in (repeats.tolist() if isinstance(repeats, _c.ndarray) else repeats)]
    if len(counts) == 1:
        return repeat(x, counts[0], ax)
    if len(counts) != n:
        raise ValueError(f"operands could not be broadcast together with shape ({n},) ({len(counts)},)")
    if any(c < 0 for c in counts):
        raise ValueError("repeats may not contain negative values.")
    picks = [i for i, c in enumerate(counts) for _ in range(c)]
    index = [slice(None)] * x.ndim
    index[ax] = _c.asarray(picks, dtype="int64", device=x.device)
    return x[tuple(index)]


def tile_array(A, reps):
    """NumPy's tile(A, reps) (cupric.tile, the tile language's module, calls this when called)."""
    x = _arr(A)
    reps = (reps,) if not hasattr(reps, "__len__") else tuple(reps)
    reps = tuple(_op.index(r) for r in reps)
    if any(r < 0 for r in reps):
        raise ValueError("negative dimensions are not allowed")
    d = max(len(reps), x.ndim)
    reps = (1,) * (d - len(reps)) + reps
    x = x.reshape((1,) * (d - x.ndim) + x.shape)
    # each axis i becomes (reps[i], shape[i]): a broadcast, then one reshape (copies once)
    expanded = x.reshape(tuple(v for s in x.shape for v in (1, s)))
    target = tuple(v for r, s in zip(reps, x.shape, strict=True) for v in (r, s))
    return _c.broadcast_to(expanded, target).reshape(tuple(r * s for r, s in zip(reps, x.shape, strict=True)))


# ---- differences ----------------------------------------------------------------------------------

def diff(a, n=1, axis=-1, prepend=None, append=None):
    x = _arr(a)
    n = _op.index(n)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if x.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = _axis(axis, x.ndim)

    def edge(extra):  # a scalar prepend/append becomes a slice of length 1 along axis
        e = on(extra, x.device)
        if e.ndim == 0:
            shape = list(x.shape)
            shape[ax] = 1
            e = _c.broadcast_to(e, tuple(shape))
        return e

    parts = ([edge(prepend)] if prepend is not None else []) + [x] + ([edge(append)] if append is not None else [])
    if len(parts) > 1:
        x = _c.concatenate(parts, axis=ax)
    if n == 0:
        return x
    lo = [slice(None)] * x.ndim
    hi = [slice(None)] * x.ndim
    lo[ax], hi[ax] = slice(None, -1), slice(1, None)
    lo, hi = tuple(lo), tuple(hi)
    op = _c.not_equal if x.dtype == bool else _c.subtract
    for _ in range(min(n, x.shape[ax])):  # past the length every further difference is the same empty array
        x = op(x[hi], x[lo])
    return x


def ediff1d(ary, to_end=None, to_begin=None):
    x = _arr(ary).reshape(-1)
    d = x[1:] - x[:-1]

    def edge(values, name):
        v = on(values, x.device).reshape(-1)
        if not _c.can_cast(v.dtype, d.dtype, "same_kind"):
            raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under the `same_kind` rule.")
        return v.astype(d.dtype)

    parts = [edge(to_begin, "to_begin")] if to_begin is not None else []
    parts.append(d)
    if to_end is not None:
        parts.append(edge(to_end, "to_end"))
    return _c.concatenate(parts) if len(parts) > 1 else d


# ---- inserting and deleting -----------------------------------------------------------------------

def append(arr, values, axis=None):
    device = device_of(arr, values)
    a, v = on(arr, device), on(values, device)
    if axis is None:
        return _c.concatenate([a.reshape(-1), v.reshape(-1)])
    return _c.concatenate([a, v], axis=axis)


def _host_list(obj):
    """obj (a slice's positions, an int, a sequence or array of them) as a Python list and whether it
    was boolean; cupric arrays are read on the host, as NumPy reads its index arrays."""
    if isinstance(obj, _c.ndarray):
        return obj.tolist() if obj.ndim else [obj.item()], obj.dtype == _c.bool_
    if hasattr(obj, "dtype") and hasattr(obj, "tolist"):  # a NumPy array or scalar
        items = obj.tolist()
        return items if isinstance(items, list) else [items], obj.dtype.kind == "b"
    items = list(obj) if isinstance(obj, (list, tuple)) else [obj]
    return items, bool(items) and all(isinstance(i, bool) for i in items)


def _positions(obj, n, ax, name):
    """The positions `obj` names along an axis of length n, as delete reads them (negative ones
    from the end; a boolean obj of the axis' length is a mask of them)."""
    if isinstance(obj, slice):
        return list(range(n))[obj]
    items, boolean = _host_list(obj)
    if boolean:
        if _np_shape(obj) != (n,):
            raise ValueError(f"boolean array argument obj to {name} must be one dimensional and match the axis "
                             f"length of {n}")
        return [i for i, keep in enumerate(items) if keep]
    out = []
    for i in items:
        i = _op.index(i)
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for axis {ax} with size {n}")
        out.append(i % n)
    return out


def _np_shape(obj):
    shape = getattr(obj, "shape", None)
    return tuple(shape) if shape is not None else (len(obj),) if isinstance(obj, (list, tuple)) else ()


def delete(arr, obj, axis=None):
    a = _arr(arr)
    if axis is None:
        a, axis = a.reshape(-1), 0
    ax = _axis(axis, a.ndim)
    n = a.shape[ax]
    gone = set(_positions(obj, n, ax, "delete"))
    keep = [i for i in range(n) if i not in gone]
    index = [slice(None)] * a.ndim
    index[ax] = _c.asarray(keep, dtype="int64", device=a.device)
    return a[tuple(index)]


def _insert_positions(obj, n, ax):
    """(positions, as_block, from_scalar): NumPy's reading of insert's obj. One position inserts
    `values` as a block; negative positions count from the end (-1 is before the last element)."""
    if isinstance(obj, slice):
        where = list(range(n))[obj]
        return where, len(where) == 1, False
    items, boolean = _host_list(obj)
    if boolean:
        raise IndexError("insert: a boolean obj is not supported (NumPy reads it as integers, with a warning); "
                         "pass the integer positions")
    if len(_np_shape(obj)) > 1:
        raise ValueError("index array argument obj to insert must be one dimensional or scalar")
    where = []
    for i in items:
        i = _op.index(i)
        if not -n <= i <= n:
            raise IndexError(f"index {i} is out of bounds for axis {ax} with size {n}")
        where.append(i + n if i < 0 else i)
    return where, len(where) == 1, _np_shape(obj) == ()


def _insert_block(a, ax, at, v, from_scalar):
    # NumPy's rule: values get at least a.ndim dimensions; a scalar obj moves their first axis to `axis`
    v = v.reshape((1,) * (a.ndim - v.ndim) + v.shape) if v.ndim < a.ndim else v
    if from_scalar:
        v = _c.moveaxis(v, 0, ax)
    shape = list(a.shape)
    shape[ax] = v.shape[ax]
    v = _c.broadcast_to(v, tuple(shape))
    lo = [slice(None)] * a.ndim
    hi = [slice(None)] * a.ndim
    lo[ax], hi[ax] = slice(None, at), slice(at, None)
    return _c.concatenate([a[tuple(lo)], v, a[tuple(hi)]], axis=ax)


def insert(arr, obj, values, axis=None):
    a = _arr(arr)
    if axis is None:
        a, axis = a.reshape(-1), 0
    ax = _axis(axis, a.ndim)
    n = a.shape[ax]
    where, as_block, from_scalar = _insert_positions(obj, n, ax)
    v = on(values, a.device)
    if v.dtype != a.dtype:
        v = v.astype(a.dtype)
    if as_block:
        return _insert_block(a, ax, where[0], v, from_scalar)
    count = len(where)
    shape = list(a.shape)
    shape[ax] = count
    vv = _c.broadcast_to(v, tuple(shape))
    # the result's order: old elements and new ones, new ones before the old one at their index
    order = sorted([(p, 0, k) for k, p in enumerate(where)] + [(i, 1, i) for i in range(n)])
    joined = _c.concatenate([vv, a], axis=ax)
    picks = [k if kind == 0 else count + k for _, kind, k in order]
    index = [slice(None)] * a.ndim
    index[ax] = _c.asarray(picks, dtype="int64", device=a.device)
    return joined[tuple(index)]


def trim_zeros(filt, trim="fb"):
    a = _arr(filt)
    if a.ndim != 1:
        raise ValueError("trim_zeros: the input must be 1-D")
    nz = _c.flatnonzero(a).tolist()
    if not nz:
        return a[0:0]
    start = nz[0] if "f" in trim.lower() else 0
    stop = nz[-1] + 1 if "b" in trim.lower() else a.shape[0]
    return a[start:stop]


def resize(a, new_shape):
    x = _arr(a).reshape(-1)
    shape = (new_shape,) if not hasattr(new_shape, "__len__") else tuple(new_shape)
    size = 1
    for s in shape:
        if _op.index(s) < 0:
            raise ValueError("all elements of `new_shape` must be non-negative")
        size *= s
    if x.size == 0 or size == 0:
        return _c.zeros(shape, dtype=x.dtype, device=x.device)
    whole = -(-size // x.size)
    return tile_array(x, whole)[:size].reshape(shape)


# ---- diagonals ------------------------------------------------------------------------------------

def diag(v, k=0):
    a = _arr(v)
    k = _op.index(k)
    if a.ndim == 1:
        n = a.shape[0] + abs(k)
        out = _c.zeros((n, n), dtype=a.dtype, device=a.device)
        rows = _c.arange(a.shape[0], device=a.device) + max(-k, 0)
        out[rows, rows + k] = a
        return out
    if a.ndim == 2:
        rows, cols = a.shape
        r0, c0 = max(-k, 0), max(k, 0)
        count = max(0, min(rows - r0, cols - c0))
        i = _c.arange(count, device=a.device)
        return a[i + r0, i + c0]
    raise ValueError("Input must be 1- or 2-d.")


def diagflat(v, k=0):
    return diag(_arr(v).reshape(-1), k)


# ---- grids and index helpers ----------------------------------------------------------------------

def indices(dimensions, dtype=int, sparse=False, *, device=None):
    dims = tuple(_op.index(d) for d in dimensions)
    out = []
    for i, n in enumerate(dims):
        shape = [1] * len(dims)
        shape[i] = n
        r = _c.arange(n, dtype=dtype, device=device).reshape(tuple(shape))
        out.append(r if sparse else _c.broadcast_to(r, dims))
    if sparse:
        return tuple(out)
    return _c.stack(out) if out else _c.empty((0,), dtype=dtype, device=device)


def ix_(*args):
    out = []
    device = device_of(args)
    for i, seq in enumerate(args):
        a = on(seq, device)
        if a.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if a.dtype == bool:
            a = _c.flatnonzero(a)
        out.append(a.reshape((1,) * i + (a.size,) + (1,) * (len(args) - i - 1)))
    return tuple(out)


class _IndexExpression:
    def __init__(self, maketuple):
        self.maketuple = maketuple

    def __getitem__(self, item):
        return (item,) if self.maketuple and not isinstance(item, tuple) else item


index_exp = _IndexExpression(True)
s_ = _IndexExpression(False)


# ---- memory layout --------------------------------------------------------------------------------

def ascontiguousarray(a, dtype=None, *, like=None):
    x = _c.asarray(a, dtype=dtype)
    x = x.reshape(1) if x.ndim == 0 else x
    return x if x.flags["C_CONTIGUOUS"] else x.copy()


def asfortranarray(a, dtype=None, *, like=None):
    x = _c.asarray(a, dtype=dtype)
    x = x.reshape(1) if x.ndim == 0 else x
    if x.flags["F_CONTIGUOUS"]:
        return x
    return _c.permute_dims(_c.permute_dims(x, tuple(reversed(range(x.ndim)))).copy(), tuple(reversed(range(x.ndim))))


def require(a, dtype=None, requirements=None, *, like=None):
    x = _c.asarray(a, dtype=dtype)
    req = {r.upper()[0] for r in (requirements or [])}
    if "C" in req and "F" in req:
        raise ValueError("Cannot specify both 'C' and 'F' order")
    if "C" in req and not x.flags["C_CONTIGUOUS"]:
        x = x.copy()
    if "F" in req and not x.flags["F_CONTIGUOUS"]:
        x = asfortranarray(x)
    if ("O" in req and not x.flags["OWNDATA"]) or ("W" in req and not x.flags["WRITEABLE"]):
        x = x.copy()
    return x


def copyto(dst, src, casting="same_kind", where=True):
    if not isinstance(dst, _c.ndarray):
        raise TypeError(f"copyto() argument 1 must be a cupric array, not {type(dst).__name__}")
    s = _c.asarray(src, device=dst.device) if not isinstance(src, _c.ndarray) else src
    if not _c.can_cast(s.dtype, dst.dtype, casting):
        raise TypeError(f"Cannot cast array data from {s.dtype!r} to {dst.dtype!r} according to the rule "
                        f"{casting!r}")
    if where is True:
        dst[...] = s
    else:
        dst[...] = _c.where(_c.asarray(where, device=dst.device), s, dst)
