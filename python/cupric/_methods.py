"""ndarray methods NumPy has that are cupric functions of the array (x.take, x.repeat, x.compress,
x.choose, x.put, x.fill, x.partition, x.argpartition), its bytes (x.view(dtype), x.byteswap,
x.resize in place, x.flat) and its byte and pickle exports (x.tobytes, x.tofile, x.dump, x.dumps),
installed on the class at import."""

import builtins as _builtins
import operator as _op
import pickle as _pickle

from . import _cupric as _c
from . import _index_extras as _ix
from . import _shape_functions as _sf
from . import _sorting as _so
from ._flatiter import flat_attribute


def take(self, indices, axis=None, out=None, mode="raise"):
    return _so.take(self, indices, axis=axis, out=out, mode=mode)


def repeat(self, repeats, axis=None):
    return _sf.repeat(self, repeats, axis=axis)


def compress(self, condition, axis=None, out=None):
    return _ix.compress(condition, self, axis=axis, out=out)


def choose(self, choices, out=None, mode="raise"):
    return _ix.choose(self, choices, out=out, mode=mode)


def put(self, indices, values, mode="raise"):
    _so.put(self, indices, values, mode=mode)


def fill(self, value):
    """Sets every element to `value` (cast to the array's dtype), in place."""
    self[...] = value


def partition(self, kth, axis=-1, kind="introselect", order=None):
    """Partitions in place: the kth element where a sort would put it, smaller ones before it."""
    self[...] = _so.partition(self, kth, axis=axis, kind=kind, order=order)


def argpartition(self, kth, axis=-1, kind="introselect", order=None):
    return _so.argpartition(self, kth, axis=axis, kind=kind, order=order)


def tobytes(self, order="C"):
    return self.get().tobytes(order)


def tofile(self, fid, sep="", format="%s"):
    self.get().tofile(fid, sep=sep, format=format)


def dumps(self):
    return _pickle.dumps(self, protocol=5)


def dump(self, file):
    """Pickles the array to `file` (a path or a binary file object), as ndarray.dump."""
    if hasattr(file, "write"):
        _pickle.dump(self, file, protocol=5)
        return
    with open(file, "wb") as f:
        _pickle.dump(self, f, protocol=5)


def view(self, dtype=None, type=None):
    """The same memory as another dtype (or as it is): of another item size, the last axis must be
    contiguous and grows or shrinks by the ratio of the sizes, as NumPy's."""
    if isinstance(dtype, _builtins.type) and issubclass(dtype, _c.ndarray):  # x.view(cu.ndarray)
        dtype, type = None, dtype
    if type is not None and type is not _c.ndarray:
        raise TypeError(f"view: cupric arrays have no subclasses, got type={type!r}")
    return self[...] if dtype is None else self._view_as(dtype)


def byteswap(self, inplace=False):
    """Each element's bytes reversed (a complex number's two parts each): a new array, or this one
    changed in place."""
    part = self.itemsize // 2 if self.dtype.kind == "c" else self.itemsize
    if part == 1:
        return self if inplace else self.copy()
    flat = _sf.ascontiguousarray(self).reshape(-1)
    swapped = _sf.ascontiguousarray(flat._view_as("uint8").reshape(-1, part)[:, ::-1])
    swapped = swapped.reshape(-1)._view_as(self.dtype).reshape(self.shape)
    if not inplace:
        return swapped
    self[...] = swapped
    return self


def _shape_argument(new_shape):
    if len(new_shape) == 1 and not isinstance(new_shape[0], int):
        new_shape = new_shape[0]
    if new_shape is None:
        return None
    shape = tuple(_op.index(n) for n in (new_shape if hasattr(new_shape, "__len__") else (new_shape,)))
    if any(n < 0 for n in shape):
        raise ValueError(f"negative dimensions not allowed, got {shape}")
    return shape


def resize(self, *new_shape, refcheck=True):
    """Changes this array's shape and size in place (C order; new elements are zeros). Simplified
    from NumPy's rules: the array must be C-contiguous, and with refcheck no other array may share
    its memory (views of it, or it a view); with refcheck=False those keep the old memory."""
    shape = _shape_argument(new_shape)
    if shape is None:
        return
    if not self.flags["C_CONTIGUOUS"]:
        raise ValueError("resize only works on single-segment arrays (this one is not C-contiguous)")
    if refcheck and self._storage_users > 1:
        raise ValueError("cannot resize an array that references or is referenced by another array (a view "
                         "shares its memory); use cu.resize for a new array, or refcheck=False")
    new = _c.zeros(shape, dtype=self.dtype, device=self.device)
    kept = min(self.size, new.size)
    if kept:
        new.reshape(-1)[:kept] = self.reshape(-1)[:kept]
    self._become(new)


_METHODS = (take, repeat, compress, choose, put, fill, partition, argpartition, tobytes, tofile, dumps, dump, view,
            byteswap, resize)


def install(cls):
    for fn in _METHODS:
        setattr(cls, fn.__name__, fn)
    cls.flat = flat_attribute()
