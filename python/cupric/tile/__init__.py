"""cupric.tile — kernels written in Python over tiles, compiled for the GPU and the CPU.

    import cupric as cu
    from cupric import tile as ct

    @ct.kernel
    def softmax(x, out, BLOCK: ct.Constant[int]):
        row = ct.bid(0)
        t = ct.load(x, index=(row, 0), shape=(1, BLOCK), padding=-cu.inf)
        e = ct.exp(t - ct.max(t, axis=1, keepdims=True))
        ct.store(out, index=(row, 0), tile=e / ct.sum(e, axis=1, keepdims=True))

    softmax[(x.shape[0],)](x, out, BLOCK=1024)       # runs on x's device
    softmax.interpret[(x.shape[0],)](x, out, 1024)   # eager Python, for print and pdb

See docs/tile.md for the language.
"""

import math as _math
import sys as _sys
import types as _types

from .. import _cupric as _c
from .. import _dtypes as _dt
from . import _ops
from ._autotune import AutotuneError, Config, autotune
from ._callables import Constant, TileFunction, function
from ._kernel import Kernel, kernel, launch
from ._ops import (  # noqa: F401
    arange,
    argmax,
    argmin,
    assert_,
    astype,
    atomic_add,
    atomic_max,
    atomic_min,
    bid,
    broadcast_to,
    cumprod,
    cumsum,
    expand_dims,
    full,
    gather,
    load,
    load_offset,
    matmul,
    max,
    min,
    mma,
    num_blocks,
    ones,
    permute,
    print,
    prod,
    reshape,
    scatter,
    static_range,
    store,
    store_offset,
    sum,
    transpose,
    where,
    zeros,
)
from ._source import CompileError

# dtypes and constants, as in the cupric namespace
bool_ = _dt.names.bool_
int8, int16, int32, int64 = _dt.names.int8, _dt.names.int16, _dt.names.int32, _dt.names.int64
uint8, uint16, uint32, uint64 = _dt.names.uint8, _dt.names.uint16, _dt.names.uint32, _dt.names.uint64
float16, float32, float64 = _dt.names.float16, _dt.names.float32, _dt.names.float64
inf, nan, pi, e = _math.inf, _math.nan, _math.pi, _math.e

# every elementwise function of the ufunc table, and its aliases
_UFUNCS = sorted(n for n in _c._ufunc_table if not n.startswith("_"))
for _name in _UFUNCS:
    globals()[_name] = _ops.make_ufunc(_name)
del _name


@function
def cdiv(a, b):
    """Ceiling division: how many tiles of size b cover a (works on constants and run-time values)."""
    return (a + b - 1) // b


__all__ = [
    "AutotuneError",
    "CompileError",
    "Config",
    "autotune",
    "Constant",
    "Kernel",
    "TileFunction",
    "function",
    "kernel",
    "launch",
    "cdiv",
    *[
        n
        for n in dir(_ops)
        if not n.startswith("_")
        and callable(getattr(_ops, n))
        and n not in ("LOWERINGS", "make_ufunc", "builtins_print")
    ],
    *_UFUNCS,
]


def __getattr__(name):
    # ct.bfloat16 is ml_dtypes.bfloat16 (and the float8 types ml_dtypes'), imported at first use
    if name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        return getattr(_dt.names, name)
    raise AttributeError(f"module 'cupric.tile' has no attribute {name!r}")


class _TileModule(_types.ModuleType):
    """cupric.tile is the tile language's module and, called, NumPy's tile(A, reps) (the names
    collide in the namespace: `cu.tile(x, (2, 3))` repeats x, `cu.tile.kernel` is the language)."""

    def __call__(self, A, reps, /):
        from .._shape_functions import tile_array

        return tile_array(A, reps)

    def __reduce__(self):  # pickles by reference, as NumPy's functions do
        import importlib

        return importlib.import_module, (self.__name__,)


_sys.modules[__name__].__class__ = _TileModule
