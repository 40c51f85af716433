"""Interpreter support: the running block, array arguments and tile values for `kernel.interpret`.

In interpreter mode the kernel's Python body runs eagerly, once per block, so that `print` and
`pdb` work. A tile is a `Tile`: a small cupric CPU array with the tile language's operators and
methods, so every operation runs in cupric's own array engine (bfloat16 included) with the
compiled path's semantics: 16-bit floats compute in float32, NEP 50 promotion (Python numbers are
weak), and the conversions of cupric's casts, which the generated code shares.
"""

import builtins
import os
import sys
import threading

import numpy as np

from .. import _cupric as _c
from .. import _dtypes as _dt

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
    """The block the interpreter is running: its index, the grid, and whether the kernel is a
    debug build (its loads and stores are bounds-checked, as compiled debug builds are)."""

    def __init__(self, bid, grid, debug=False):
        self.bid = bid
        self.grid = grid
        self.debug = debug

    def __enter__(self):
        self.previous = getattr(_state, "block", None)
        _state.block = self
        return self

    def __exit__(self, *exc):
        _state.block = self.previous


HALF = ("float16", "bfloat16", "float8_e4m3fn", "float8_e5m2")  # storage floats: arithmetic in float32
ML_DTYPES = {"bfloat16": "uint16", "float8_e4m3fn": "uint8", "float8_e5m2": "uint8"}  # their bits' types


def host_view(obj):
    """A cupric CPU array over `obj`'s memory (no copy): cupric arrays as they are, NumPy arrays
    and array-interface objects through cu.asarray, NumPy bfloat16 and float8 (ml_dtypes)
    reinterpreted from their bit patterns."""
    if isinstance(obj, _c.ndarray):
        return obj
    if isinstance(obj, np.ndarray) and obj.dtype.name in ML_DTYPES:
        return _c.asarray(obj.view(ML_DTYPES[obj.dtype.name]))._view_as(getattr(_dt.names, obj.dtype.name))
    return _c.asarray(obj)


class Array:
    """An array argument in the interpreter: a cupric CPU view of the argument (`.array`), with the
    shape, strides (in elements), ndim and dtype a kernel reads."""

    def __init__(self, obj):
        a = host_view(obj)
        if a.device != "cpu":
            raise ValueError(
                f"the interpreter runs on the CPU; this array is on {a.device} (move it with x.to_device('cpu'))"
            )
        self.array = a
        self.shape = tuple(int(d) for d in a.shape)
        self.strides = tuple(int(s) for s in a._element_strides)
        self.ndim = a.ndim
        self.dtype = a.dtype

    def __repr__(self):
        return f"<tile array {self.dtype} {self.shape}>"


def value(x):
    """The cupric array (or Python number) behind a tile, an argument or a NumPy value."""
    if isinstance(x, Tile):
        return x.array
    if isinstance(x, (_c.ndarray, bool, int, float)):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        return host_view(np.asarray(x))  # keeps its dtype (a strong scalar, as in compiled code)
    if isinstance(x, (tuple, list)):
        return type(x)(value(v) for v in x)
    return x


def array(x, dtype=None):
    """x as a cupric array (Python numbers become 0-d arrays), converted to `dtype` if given."""
    a = value(x)
    if not isinstance(a, _c.ndarray):
        a = _c.asarray(a)
    return a if dtype is None or a.dtype == dtype else a.astype(dtype)


def wrap(a):
    return a if isinstance(a, Tile) else Tile(a)


def _binary(ufunc, reflected=False):
    fn = getattr(_c, ufunc)
    if reflected:
        return lambda self, other: Tile(fn(value(other), self.array))
    return lambda self, other: Tile(fn(self.array, value(other)))


class Tile:
    """A tile in the interpreter: a cupric CPU array (`.array`) with the tile language's operators
    and methods (`t.astype`, `t.reshape`, `t.sum`, `a @ b` with mma's accumulator types, ...; _ops
    attaches the methods that are ct.* functions)."""

    __slots__ = ("array",)
    __array_ufunc__ = None  # NumPy scalars defer to the tile's reflected operators
    __hash__ = None

    def __init__(self, a):
        self.array = a

    shape = property(lambda self: tuple(self.array.shape))
    dtype = property(lambda self: self.array.dtype)
    ndim = property(lambda self: self.array.ndim)
    size = property(lambda self: self.array.size)
    T = property(lambda self: Tile(self.array.T))

    def __repr__(self):
        return f"tile({self.array!r})"

    def __str__(self):
        return str(self.array)

    def __format__(self, spec):
        return format(self.array.item(), spec) if spec and self.ndim == 0 else str(self)

    def __array__(self, dtype=None, copy=None):
        out = np.asarray(self.array)
        return out if dtype is None else out.astype(dtype)

    def __len__(self):
        return len(self.array)

    def __bool__(self):
        return bool(self.array)

    def __int__(self):
        return int(self.array)

    def __float__(self):
        return float(self.array)

    def __index__(self):
        return self.array.__index__()

    def item(self):
        return self.array.item()

    def tolist(self):
        return self.array.tolist()

    def __getitem__(self, key):
        return Tile(self.array[value(key)])

    def __neg__(self):
        return Tile(_c.negative(self.array))

    def __pos__(self):
        return Tile(_c.positive(self.array))

    def __invert__(self):
        return Tile(_c.invert(self.array))

    def __abs__(self):
        return Tile(_c.absolute(self.array))

    # the tile methods: the ct.* functions of the same names (reshape, sum, a @ b, ...: attached by
    # _ops, which defines them on top of this module)
    def astype(self, dtype):
        return Tile(self.array.astype(_dt.as_dtype(dtype)))

    def __getattr__(self, name):
        raise AttributeError(f"tiles have no attribute '{name}'")


for _dunder, _ufunc in (
    ("add", "add"),
    ("sub", "subtract"),
    ("mul", "multiply"),
    ("truediv", "divide"),
    ("floordiv", "floor_divide"),
    ("mod", "remainder"),
    ("pow", "power"),
    ("lshift", "left_shift"),
    ("rshift", "right_shift"),
    ("and", "bitwise_and"),
    ("or", "bitwise_or"),
    ("xor", "bitwise_xor"),
):
    setattr(Tile, f"__{_dunder}__", _binary(_ufunc))
    setattr(Tile, f"__r{_dunder}__", _binary(_ufunc, reflected=True))
for _dunder, _ufunc in (("eq", "equal"), ("ne", "not_equal"), ("lt", "less"), ("le", "less_equal")):
    setattr(Tile, f"__{_dunder}__", _binary(_ufunc))
for _dunder, _ufunc in (("gt", "greater"), ("ge", "greater_equal")):
    setattr(Tile, f"__{_dunder}__", _binary(_ufunc))
del _dunder, _ufunc


def checking_bounds():
    block = getattr(_state, "block", None)
    return block is not None and block.debug


def bounds_error(what, text):
    """IndexError: 'file.py:12: ct.load: <text> (block 4, 0, 0)', the line of the kernel's body
    that made the access (the innermost frame outside this package)."""
    frame = sys._getframe(1)
    here = os.path.dirname(__file__)
    while frame is not None and os.path.dirname(frame.f_code.co_filename) == here:
        frame = frame.f_back
    where = f"{frame.f_code.co_filename}:{frame.f_lineno}: " if frame is not None else ""
    bid = ", ".join(str(b) for b in _state.block.bid)
    return IndexError(f"{where}ct.{what}: {text} (block {bid})")


def _tuple_text(v):
    return "(" + ", ".join(str(x) for x in v) + ("," if len(v) == 1 else "") + ")"


def check_window(what, given_as, given, shape, start, array_shape):
    """Debug builds: a window that holds no element of its array fails (docs/tile.md)."""
    if checking_bounds() and window(shape, start, array_shape) is None:
        raise bounds_error(what, f"the window at {given_as} {_tuple_text(given)} of shape {_tuple_text(shape)} "
                                 f"lies wholly outside the array of shape {_tuple_text(array_shape)}")


def window(shape, start, array_shape):
    """For a window of `shape` at element `start`: (array slices, tile slices) of the part that
    lies inside the array, or None when nothing does."""
    src, dst = [], []
    for n, s, size in zip(shape, start, array_shape, strict=True):
        lo, hi = builtins.max(s, 0), builtins.min(s + n, size)
        if hi <= lo:
            return None
        src.append(slice(lo, hi))
        dst.append(slice(lo - s, hi - s))
    return tuple(src), tuple(dst)
