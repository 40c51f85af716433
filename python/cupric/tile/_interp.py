"""Interpreter support: the running block, array views and tile values for `kernel.interpret`.

In interpreter mode the kernel's Python body runs eagerly, once per block, so that `print` and
`pdb` work. Tiles are small NumPy arrays (bfloat16 through ml_dtypes): the cupric namespace does
not yet have the reductions, reshapes and matrix products the tile ops need. Arithmetic follows
the compiled path: 16-bit floats compute in float32, sums of small integers widen (NumPy rules).
"""

import threading

import numpy as np

from .. import _cupric as _c

_state = threading.local()


def current_block():
    blk = getattr(_state, "block", None)
    if blk is None:
        raise RuntimeError(
            "cupric.tile ops can only run inside a kernel (kernel[grid](...)) or in interpreter mode "
            "(kernel.interpret[grid](...))"
        )
    return blk


class Block:
    """The block the interpreter is running: its index and the grid."""

    def __init__(self, bid, grid):
        self.bid = bid
        self.grid = grid

    def __enter__(self):
        self.previous = getattr(_state, "block", None)
        _state.block = self
        return self

    def __exit__(self, *exc):
        _state.block = self.previous


_BF16 = None


def np_dtype(dtype):
    """The NumPy dtype of a cupric dtype (or anything cupric.dtype accepts)."""
    global _BF16
    d = _c.dtype(dtype)
    if d == _c.bfloat16:
        if _BF16 is None:
            try:
                import ml_dtypes
            except ImportError as err:  # pragma: no cover - ml_dtypes is a test dependency
                raise TypeError("bfloat16 tiles in the interpreter need ml_dtypes (pip install ml_dtypes)") from err
            _BF16 = np.dtype(ml_dtypes.bfloat16)
        return _BF16
    return np.dtype(d.name)


def cupric_dtype(np_dt):
    return _c.dtype(np.dtype(np_dt).name) if np.dtype(np_dt).name != "bfloat16" else _c.bfloat16


def is_half(np_dt):
    return np.dtype(np_dt) == np.float16 or np.dtype(np_dt).name == "bfloat16"


class Tile(np.ndarray):
    """A tile in the interpreter: a NumPy array whose astype also takes cupric dtypes."""

    def astype(self, dtype, *args, **kwargs):
        return np.ndarray.astype(self, np_dtype(dtype), *args, **kwargs).view(Tile)


def tile(x):
    """x as a Tile (NumPy scalars and Python numbers stay scalars)."""
    if isinstance(x, np.ndarray) and x.ndim > 0:
        return x if isinstance(x, Tile) else x.view(Tile)
    return x


class _Interface:
    def __init__(self, d):
        self.__array_interface__ = d


class Array:
    """An array argument in the interpreter: a NumPy view of the cupric (or NumPy) array."""

    def __init__(self, obj):
        self.obj = obj
        if isinstance(obj, _c.ndarray):
            if obj.device != "cpu":
                raise ValueError(
                    f"the interpreter runs on the CPU; this array is on {obj.device} (move it with x.to_device('cpu'))"
                )
            if obj.dtype == _c.bfloat16:
                iface = {
                    "typestr": "<u2",
                    "shape": obj.shape,
                    "strides": obj.strides,
                    "data": (obj._data_ptr, not obj.flags["WRITEABLE"]),
                    "version": 3,
                }
                view = np.asarray(_Interface(iface)).view(np_dtype(_c.bfloat16))
            else:
                view = np.asarray(obj)
        else:
            view = np.asarray(obj)
        self.np = view
        self.shape = tuple(int(d) for d in view.shape)
        self.ndim = view.ndim
        self.dtype = cupric_dtype(view.dtype)

    def __repr__(self):
        return f"<tile array {self.dtype} {self.shape}>"


def window(shape, start, array_shape):
    """For a window of `shape` at element `start`: (array slices, tile slices) of the part that
    lies inside the array, or None when nothing does."""
    src, dst = [], []
    for n, s, size in zip(shape, start, array_shape, strict=True):
        lo, hi = max(s, 0), min(s + n, size)
        if hi <= lo:
            return None
        src.append(slice(lo, hi))
        dst.append(slice(lo - s, hi - s))
    return tuple(src), tuple(dst)
