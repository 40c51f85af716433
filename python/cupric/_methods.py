"""ndarray methods NumPy has that are cupric functions of the array (x.take, x.repeat, x.compress,
x.choose, x.put, x.fill, x.partition, x.argpartition) and its byte and pickle exports (x.tobytes,
x.tofile, x.dump, x.dumps), installed on the class at import."""

import pickle as _pickle

from . import _index_extras as _ix
from . import _shape_functions as _sf
from . import _sorting as _so


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


_METHODS = (take, repeat, compress, choose, put, fill, partition, argpartition, tobytes, tofile, dumps, dump)


def install(cls):
    for fn in _METHODS:
        setattr(cls, fn.__name__, fn)
