"""sliding_window_view on every device. cupric has no arbitrary-stride views, so the windows are
gathered into a new array (NumPy returns a read-only view; the values are the same)."""

import operator as _op

from .. import _cupric as _c

__all__ = ["sliding_window_view"]


def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    a = x if isinstance(x, _c.ndarray) else _c.asarray(x)
    shapes = tuple(window_shape) if hasattr(window_shape, "__len__") else (window_shape,)
    shapes = tuple(_op.index(w) for w in shapes)
    if any(w < 0 for w in shapes):
        raise ValueError("`window_shape` cannot contain negative values")
    if axis is None:
        if len(shapes) != a.ndim:
            raise ValueError(f"Since axis is `None`, must provide window_shape for all dimensions of `x`; got "
                             f"{len(shapes)} window_shape elements and `x.ndim` is {a.ndim}.")
        axes = tuple(range(a.ndim))
    else:
        axes = tuple(axis) if hasattr(axis, "__len__") else (axis,)
        if len(axes) != len(shapes):
            raise ValueError(f"Must provide matching length window_shape and axis; got {len(shapes)} window_shape "
                             f"elements and {len(axes)} axes elements.")
        for ax in axes:
            if not -a.ndim <= ax < a.ndim:
                raise _c.AxisError(f"axis {ax} is out of bounds for array of dimension {a.ndim}")
        axes = tuple(ax % a.ndim for ax in axes)
    out = a
    for ax, w in zip(axes, shapes, strict=True):
        n = out.shape[ax]
        if n < w:
            raise ValueError("window shape cannot be larger than input array shape")
        # the windows of axis ax: (n - w + 1, w) positions gathered along ax, the window axis last
        idx = (_c.arange(n - w + 1, device=a.device).reshape(-1, 1) + _c.arange(w, device=a.device).reshape(1, -1))
        index = [slice(None)] * out.ndim
        index[ax] = idx
        out = _c.moveaxis(out[tuple(index)], ax + 1, -1)
    return out
