"""Products composed from matmul (cupric/linalg.hpp): dot, vdot, inner, outer, tensordot, vecdot,
matvec, vecmat, kron, trace, multi_dot. Each maps its contraction onto one batched
matrix product, so every dtype and device that matmul serves works here too."""

import operator as _operator

from .. import _cupric as _c


def _arr(x):
    return x if isinstance(x, _c.ndarray) else _c.asarray(x)


def _deliver(result, out):
    """NumPy's out=: the result copied into out (after every check), out returned."""
    if out is None:
        return result
    if tuple(out.shape) != tuple(result.shape):
        raise ValueError(f"output array has shape {tuple(out.shape)} but the result has shape {tuple(result.shape)}")
    out[...] = result
    return out


def dot(a, b, out=None):
    """numpy.dot: products of scalars, matrices and the last/second-to-last axes of N-d arrays."""
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        return _c.multiply(a, b, out=out) if out is not None else _c.multiply(a, b)
    if b.ndim <= 2:
        return _deliver(_c.matmul(a, b), out)
    return _deliver(tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2])), out)


def vdot(a, b):
    """numpy.vdot: the dot product of the flattened arrays, the first conjugated."""
    a, b = _arr(a), _arr(b)
    if a.size != b.size:
        raise ValueError(f"vdot: arrays of {a.size} and {b.size} elements (shapes {tuple(a.shape)} and "
                         f"{tuple(b.shape)}) have no dot product")
    return _c.matmul(_c.conj(_c.reshape(a, (-1,))), _c.reshape(b, (-1,)))


def inner(a, b):
    """numpy.inner: sums over the last axes of both."""
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        return _c.multiply(a, b)
    return tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 1]))


def outer(a, b, out=None):
    """numpy.outer: every element of a (flattened) times every element of b."""
    a, b = _arr(a), _arr(b)
    a, b = _c.reshape(a, (-1, 1)), _c.reshape(b, (1, -1))
    return _c.multiply(a, b, out=out) if out is not None else _c.multiply(a, b)


def _tensordot_axes(axes, a, b):
    if isinstance(axes, (list, tuple)):
        if len(axes) != 2:
            raise ValueError(f"tensordot: axes must be an integer or a pair of sequences, got {axes!r}")
        xa, xb = ([x] if isinstance(x, int) else list(x) for x in axes)
    else:
        n = _operator.index(axes)
        if n < 0 or n > min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: axes={n} is more than the dimensions of shapes {tuple(a.shape)} and "
                             f"{tuple(b.shape)} allow")
        xa, xb = list(range(a.ndim - n, a.ndim)), list(range(n))
    if len(xa) != len(xb):
        raise ValueError(f"tensordot: the axes lists {xa} and {xb} differ in length")
    xa = [x + a.ndim if x < 0 else x for x in xa]
    xb = [x + b.ndim if x < 0 else x for x in xb]
    for x, nd in [(x, a.ndim) for x in xa] + [(x, b.ndim) for x in xb]:
        if not 0 <= x < nd:
            raise _c.AxisError(f"tensordot: axis {x} is out of bounds for an array of dimension {nd}")
    for i, j in zip(xa, xb, strict=True):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"shape-mismatch for sum: axis {i} of shape {tuple(a.shape)} has {a.shape[i]} elements "
                             f"but axis {j} of shape {tuple(b.shape)} has {b.shape[j]}")
    return xa, xb


def _prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def tensordot(a, b, /, *, axes=2):
    """numpy.tensordot / the Array API's: sums over the given axes, as one matrix product."""
    a, b = _arr(a), _arr(b)
    xa, xb = _tensordot_axes(axes, a, b)
    free_a = [d for d in range(a.ndim) if d not in xa]
    free_b = [d for d in range(b.ndim) if d not in xb]
    ka = _prod(a.shape[d] for d in xa)
    at = _c.reshape(_c.permute_dims(a, tuple(free_a + xa)), (_prod(a.shape[d] for d in free_a), ka))
    bt = _c.reshape(_c.permute_dims(b, tuple(xb + free_b)), (ka, _prod(b.shape[d] for d in free_b)))
    shape = tuple(a.shape[d] for d in free_a) + tuple(b.shape[d] for d in free_b)
    return _c.reshape(_c.matmul(at, bt), shape)


def _move_last(x, axis, name):
    if not -x.ndim <= axis < x.ndim:
        raise _c.AxisError(f"{name}: axis {axis} is out of bounds for an array of dimension {x.ndim}")
    return _c.moveaxis(x, axis, -1)


def vecdot(x1, x2, /, *, axis=-1):
    """The Array API's vecdot: sum(conj(x1) * x2) over `axis`, the other axes broadcast."""
    x1, x2 = _arr(x1), _arr(x2)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("vecdot: Input operands must have at least one dimension")
    a, b = _move_last(x1, axis, "vecdot"), _move_last(x2, axis, "vecdot")
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"vecdot: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                         f"(n),(n)->() (size {b.shape[-1]} is different from {a.shape[-1]})")
    if a.dtype.kind == "c":
        a = _c.conj(a)
    return _c.matmul(_c.expand_dims(a, -2), _c.expand_dims(b, -1))[..., 0, 0]


def matvec(x1, x2, /):
    """numpy.matvec: matrix (..., m, n) times vector (..., n), batches broadcast."""
    x1, x2 = _arr(x1), _arr(x2)
    if x1.ndim < 2 or x2.ndim < 1:
        raise ValueError(f"matvec: operands of shapes {tuple(x1.shape)} and {tuple(x2.shape)} are not a stack of "
                         "matrices and a stack of vectors")
    return _c.matmul(x1, _c.expand_dims(x2, -1))[..., 0]


def vecmat(x1, x2, /):
    """numpy.vecmat: conj(vector (..., m)) times matrix (..., m, n), batches broadcast."""
    x1, x2 = _arr(x1), _arr(x2)
    if x1.ndim < 1 or x2.ndim < 2:
        raise ValueError(f"vecmat: operands of shapes {tuple(x1.shape)} and {tuple(x2.shape)} are not a stack of "
                         "vectors and a stack of matrices")
    if x1.dtype.kind == "c":
        x1 = _c.conj(x1)
    return _c.matmul(_c.expand_dims(x1, -2), x2)[..., 0, :]


def kron(a, b):
    """numpy.kron: the Kronecker product (blocks of b scaled by the elements of a)."""
    a, b = _arr(a), _arr(b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + tuple(a.shape)
    sb = (1,) * (nd - b.ndim) + tuple(b.shape)
    ia = _c.reshape(a, tuple(x for s in sa for x in (s, 1)))
    ib = _c.reshape(b, tuple(x for s in sb for x in (1, s)))
    return _c.reshape(_c.multiply(ia, ib), tuple(p * q for p, q in zip(sa, sb, strict=True)))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """numpy.trace: sums of the diagonals of the (axis1, axis2) planes."""
    d = _c.diagonal(_arr(a), offset, axis1, axis2)
    return _c.sum(d, axis=-1, dtype=dtype, out=out)


def multi_dot(arrays, *, out=None):
    """numpy.linalg.multi_dot: a chain of products in the order of fewest multiplications."""
    arrays = [_arr(x) for x in arrays]
    if len(arrays) < 2:
        raise ValueError("multi_dot: expecting at least two arrays")
    first_vector, last_vector = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first_vector:
        arrays[0] = _c.reshape(arrays[0], (1, -1))
    if last_vector:
        arrays[-1] = _c.reshape(arrays[-1], (-1, 1))
    for x in arrays:
        if x.ndim != 2:
            raise ValueError(f"multi_dot: {x.ndim}-dimensional array given; the arrays must be two-dimensional "
                             "(the first and last may be one-dimensional)")
    result = _chain(arrays, _chain_order(arrays), 0, len(arrays) - 1)
    if first_vector:
        result = result[0]
    if last_vector:
        result = result[..., 0]
    return _deliver(result, out)


def _chain_order(arrays):
    """The split points of the cheapest parenthesisation (matrix-chain dynamic programming)."""
    dims = [arrays[0].shape[0]] + [x.shape[1] for x in arrays]
    n = len(arrays)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(arrays, split, i, j):
    if i == j:
        return arrays[i]
    k = split[i][j]
    return _c.matmul(_chain(arrays, split, i, k), _chain(arrays, split, k + 1, j))


def _ndarray_dot(self, b, out=None):
    """a.dot(b): numpy.dot(a, b)."""
    return dot(self, b, out=out)


def _ndarray_diagonal(self, offset=0, axis1=0, axis2=1):
    """a.diagonal(offset, axis1, axis2): a read-only view of the diagonals."""
    return _c.diagonal(self, offset, axis1, axis2)


def _ndarray_trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """a.trace(offset, axis1, axis2, dtype, out): sums of the diagonals."""
    return trace(self, offset, axis1, axis2, dtype, out)


def install(cls):
    """NumPy's ndarray methods of the products, on cupric's ndarray."""
    cls.dot, cls.diagonal, cls.trace = _ndarray_dot, _ndarray_diagonal, _ndarray_trace
