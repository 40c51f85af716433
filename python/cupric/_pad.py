"""numpy.pad on every device: each axis is padded in turn by concatenating computed edges (views,
flips, reductions), so the modes need no kernel of their own."""

from . import _cupric as _c
from . import _quantiles
from ._operands import to_host

__all__ = ["pad"]

_MODES = ("constant", "edge", "linear_ramp", "maximum", "mean", "median", "minimum", "reflect", "symmetric", "wrap",
          "empty")


def _pairs(value, ndim, name, as_int=True):
    """NumPy's broadcasting of pad_width-like arguments to one (before, after) pair per axis."""
    import numpy as np  # only the small argument array; the data never goes through NumPy

    arr = np.asarray(value.get() if isinstance(value, _c.ndarray) else value)
    if as_int:
        if arr.dtype.kind not in "iu":
            raise TypeError("`pad_width` must be of integral type.")
        if (arr < 0).any():
            raise ValueError("index can't contain negative values")
    try:
        out = np.broadcast_to(arr, (ndim, 2))
    except ValueError:
        raise ValueError(f"operands could not be broadcast together with remapped shapes [original->remapped]: "
                         f"{arr.shape} and requested shape ({ndim},2)") from None
    return [(o[0].item(), o[1].item()) for o in out]


def _take(x, ax, sl):
    index = [slice(None)] * x.ndim
    index[ax] = sl
    return x[tuple(index)]


def _fill(x, ax, count, value):
    shape = list(x.shape)
    shape[ax] = count
    return _c.full(tuple(shape), value, dtype=x.dtype, device=x.device)


def _reflected(x, ax, before, after, symmetric, odd):
    """Mirrors about the ends (reflect leaves the end value out, symmetric repeats it), chunk by
    chunk outward when the pad is wider than the array, as NumPy does: each chunk mirrors what is
    already there. reflect_type="odd" takes 2 * edge - mirrored value."""
    n0 = x.shape[ax]
    limit = n0 if symmetric else n0 - 1
    if limit == 0:  # one element: every mode of mirroring repeats it
        edge = _take(x, ax, slice(0, 1))
        return _c.concatenate([_c.broadcast_to(edge, _shape_with(x, ax, before)), x,
                               _c.broadcast_to(edge, _shape_with(x, ax, after))], axis=ax)
    skip = 0 if symmetric else 1
    while before or after:
        n = x.shape[ax]
        b, a = min(before, limit), min(after, limit)
        parts = []
        if b:
            left = _take(_take(x, ax, slice(skip, skip + b)), ax, slice(None, None, -1))
            if odd:
                left = 2 * _take(x, ax, slice(0, 1)) - left
            parts.append(left)
        parts.append(x)
        if a:
            right = _take(_take(x, ax, slice(n - skip - a, n - skip)), ax, slice(None, None, -1))
            if odd:
                right = 2 * _take(x, ax, slice(n - 1, n)) - right
            parts.append(right)
        x = _c.concatenate([p.astype(x.dtype) for p in parts], axis=ax)
        before, after = before - b, after - a
    return x


def _shape_with(x, ax, count):
    shape = list(x.shape)
    shape[ax] = count
    return tuple(shape)


def _stat_edges(x, ax, before, after, length, reduce):
    n = x.shape[ax]
    lb = n if length[0] is None else max(1, min(length[0], n))
    la = n if length[1] is None else max(1, min(length[1], n))
    left = reduce(_take(x, ax, slice(0, lb)), axis=ax, keepdims=True)
    right = reduce(_take(x, ax, slice(n - la, n)), axis=ax, keepdims=True)
    return _c.broadcast_to(left, _shape_with(x, ax, before)), _c.broadcast_to(right, _shape_with(x, ax, after))


def _round_like(v, dtype):
    """A float computation cast to the array's dtype; integers round down, as NumPy's integer linspace."""
    return _c.floor(v).astype(dtype) if str(dtype)[0] in "iub" else v.astype(dtype)


def _ramp(edge, end, width, ax, ndim, dtype):
    """linspace(end, edge, width, endpoint=False) along ax: from the end value toward the edge."""
    t = (_c.arange(width, dtype="float64", device=edge.device) / width).reshape(
        tuple(width if i == ax else 1 for i in range(ndim)))
    return _round_like(end + (edge.astype("float64") - end) * t, dtype)


def _linear_ramp(x, ax, before, after, ends):
    n = x.shape[ax]
    first, last = _take(x, ax, slice(0, 1)), _take(x, ax, slice(n - 1, n))
    parts = [_ramp(first, ends[0], before, ax, x.ndim, x.dtype)] if before else []
    parts.append(x)
    if after:
        parts.append(_take(_ramp(last, ends[1], after, ax, x.ndim, x.dtype), ax, slice(None, None, -1)))
    return _c.concatenate(parts, axis=ax)


def pad(array, pad_width, mode="constant", **kwargs):
    x = array if isinstance(array, _c.ndarray) else _c.asarray(array)
    if callable(mode):
        # NumPy calls the function on each 1-d slice, in Python: it runs there, on a host copy
        import numpy

        return _c.asarray(numpy.pad(to_host(x), pad_width, mode, **kwargs), device=x.device)
    if mode not in _MODES:
        raise ValueError(f"mode '{mode}' is not supported")
    allowed = {"constant": {"constant_values"}, "linear_ramp": {"end_values"}, "maximum": {"stat_length"},
               "mean": {"stat_length"}, "median": {"stat_length"}, "minimum": {"stat_length"},
               "reflect": {"reflect_type"}, "symmetric": {"reflect_type"}}.get(mode, set())
    unsupported = set(kwargs) - allowed
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    widths = _pairs(pad_width, x.ndim, "pad_width")
    for ax, (before, after) in enumerate(widths):
        if before == 0 and after == 0:
            continue
        n = x.shape[ax]
        if n == 0 and mode not in ("constant", "empty"):
            raise ValueError(f"can't extend empty axis {ax} using modes other than 'constant' or 'empty'")
        if mode in ("constant", "empty"):
            values = _pairs(kwargs.get("constant_values", 0), x.ndim, "constant_values", as_int=False)[ax]
            parts = [_fill(x, ax, before, values[0]), x, _fill(x, ax, after, values[1])]
            x = _c.concatenate(parts, axis=ax)
        elif mode == "edge":
            parts = [_c.broadcast_to(_take(x, ax, slice(0, 1)), _shape_with(x, ax, before)), x,
                     _c.broadcast_to(_take(x, ax, slice(n - 1, n)), _shape_with(x, ax, after))]
            x = _c.concatenate(parts, axis=ax)
        elif mode == "wrap":
            reps = -(-(before + after) // n) + 2
            tiled = _c.concatenate([x] * reps, axis=ax)
            start = (-before) % n
            x = _take(tiled, ax, slice(start, start + before + n + after))
        elif mode in ("reflect", "symmetric"):
            odd = kwargs.get("reflect_type", "even") == "odd"
            x = _reflected(x, ax, before, after, mode == "symmetric", odd)
        elif mode == "linear_ramp":
            ends = _pairs(kwargs.get("end_values", 0), x.ndim, "end_values", as_int=False)[ax]
            x = _linear_ramp(x, ax, before, after, ends)
        else:  # maximum, minimum, mean, median
            lengths = kwargs.get("stat_length")
            length = (None, None) if lengths is None else _pairs(lengths, x.ndim, "stat_length")[ax]
            reduce = {"maximum": _c.max, "minimum": _c.min, "mean": _c.mean, "median": _quantiles.median}[mode]
            left, right = _stat_edges(x, ax, before, after, length, reduce)
            if mode in ("mean", "median") and str(x.dtype)[0] in "iub":  # NumPy rounds these half to even
                left, right = _c.round(left), _c.round(right)
            x = _c.concatenate([left.astype(x.dtype), x, right.astype(x.dtype)], axis=ax)
    return x if any(b or a for b, a in widths) else x.copy()
