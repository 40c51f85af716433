"""Norms (vector_norm, matrix_norm, NumPy's norm), the condition number and the cross product,
from cupric's reductions and the singular values."""

from .. import _cupric as _c
from .. import _dtypes as _dt
from ._decompositions import _square, inv, svdvals
from ._products import _arr


def _real_float(x):
    """x as the floating type its norm has (integers and bool: float64)."""
    if x.dtype.kind in "fc":
        return x
    return _c.astype(x, _dt.lookup("float64"))


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        return (axis,)
    return tuple(axis)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The Array API's vector_norm: the p-norm over `axis` (all axes flattened when None)."""
    x = _real_float(_arr(x))
    a = _c.abs(x)
    axes = _axes(axis, x.ndim)
    if ord == float("inf"):
        return _c.max(a, axis=axes, keepdims=keepdims) if a.size else _c.sum(a, axis=axes, keepdims=keepdims)
    if ord == -float("inf"):
        return _c.min(a, axis=axes, keepdims=keepdims)
    if ord == 0:
        return _c.sum(a != 0, axis=axes, keepdims=keepdims).astype(a.dtype)
    if ord == 1:
        return _c.sum(a, axis=axes, keepdims=keepdims)
    if ord == 2:
        return _c.sqrt(_c.sum(a * a, axis=axes, keepdims=keepdims))
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    p = float(ord)
    return _c.sum(a**p, axis=axes, keepdims=keepdims) ** (1.0 / p)


def _svd_norm(x, keepdims, pick):
    s = svdvals(x)
    r = pick(s, axis=-1)
    return _c.expand_dims(_c.expand_dims(r, -1), -1) if keepdims else r


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The Array API's matrix_norm over the last two axes: 'fro', 'nuc', 1, -1, 2, -2, inf, -inf."""
    x = _real_float(_arr(x))
    if x.ndim < 2:
        raise ValueError(f"matrix_norm: the array of shape {tuple(x.shape)} has no matrices (it needs two dimensions)")
    return _matrix_norm(x, ord, -2, -1, keepdims)


def _matrix_norm(x, ord, row, col, keepdims):
    a = _c.abs(x)
    if ord in ("fro", "f"):
        return _c.sqrt(_c.sum(a * a, axis=(row, col), keepdims=keepdims))
    if ord in (2, -2, "nuc"):
        moved = _c.moveaxis(x, (row % x.ndim, col % x.ndim), (-2, -1))
        pick = {2: _c.max, -2: _c.min, "nuc": _c.sum}[ord]
        r = _svd_norm(moved, False, pick)
        if keepdims:
            for ax in sorted((row % x.ndim, col % x.ndim)):
                r = _c.expand_dims(r, ax)
        return r
    if ord in (1, -1, float("inf"), -float("inf")):
        inner, outer = (row, col) if ord in (1, -1) else (col, row)
        sums = _c.sum(a, axis=inner, keepdims=True)
        pick = _c.max if ord in (1, float("inf")) else _c.min
        r = pick(sums, axis=outer, keepdims=True)
        return r if keepdims else _c.squeeze(r, axis=(row % x.ndim, col % x.ndim))
    raise ValueError(f"Invalid norm order {ord!r} for matrices")


def norm(x, ord=None, axis=None, keepdims=False):
    """numpy.linalg.norm: a vector norm over one axis, a matrix norm over two (Frobenius or the
    2-norm of the flattened array when ord and axis are both None)."""
    x = _real_float(_arr(x))
    if axis is None and ord is None:
        r = _c.sqrt(_c.sum(_c.abs(x) ** 2))
        return _c.reshape(r, (1,) * x.ndim) if keepdims else r
    if axis is None:
        axis = tuple(range(x.ndim))
    axes = _axes(axis, x.ndim)
    if len(axes) == 1:
        return vector_norm(x, axis=axes, keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axes) == 2:
        row, col = (ax % x.ndim for ax in axes)
        if row == col:
            raise ValueError("Duplicate axes given.")
        return _matrix_norm(x, "fro" if ord is None else ord, row, col, keepdims)
    raise ValueError("Improper number of dimensions to norm.")


def cross(x1, x2, /, *, axis=-1):
    """The Array API's cross product of 3-element vectors along `axis` (batches broadcast)."""
    a, b = _arr(x1), _arr(x2)
    for x in (a, b):
        if not -x.ndim <= axis < x.ndim:
            raise _c.AxisError(f"cross: axis {axis} is out of bounds for an array of dimension {x.ndim}")
    if a.shape[axis] != 3 or b.shape[axis] != 3:
        raise ValueError(f"cross: both vectors need 3 elements along axis {axis}, got shapes {tuple(a.shape)} and "
                         f"{tuple(b.shape)}")
    a, b = _c.moveaxis(a, axis, -1), _c.moveaxis(b, axis, -1)
    a0, a1, a2 = (a[..., i] for i in range(3))
    b0, b1, b2 = (b[..., i] for i in range(3))
    r = _c.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return _c.moveaxis(r, -1, axis)



def numpy_cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """numpy.cross: vectors of 2 or 3 elements (a 2-element one has a zero third component; two
    2-element vectors give the z component alone)."""
    a, b = _arr(a), _arr(b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _c.moveaxis(a, axisa, -1), _c.moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    pad = [x if x.shape[-1] == 3 else _c.concatenate([x, _c.zeros_like(x[..., :1])], axis=-1) for x in (a, b)]
    return _c.moveaxis(cross(pad[0], pad[1]), -1, axisc)


def cond(x, p=None):
    """The condition number in norm p (None/2/-2 from the singular values)."""
    a = _arr(x)
    if p is None or p == 2 or p == -2:
        s = svdvals(a)
        return s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    _square(a, "cond")
    return norm(a, p, axis=(-2, -1)) * norm(inv(a), p, axis=(-2, -1))
