"""numpy.flatiter for cupric arrays (x.flat): the array seen as 1-d in C order, read through a
flattened copy or view and written in place through the positions' coordinates, on its device."""

from . import _cupric as _c
from ._operands import on

__all__ = ["flatiter"]


class flatiter:
    """x.flat: iterate, index (ints, slices, integer or boolean arrays) and assign (values repeat
    to fill the positions, as NumPy's) over the elements of `x` in C order."""

    __hash__ = None

    def __init__(self, base):
        if not isinstance(base, _c.ndarray):
            raise TypeError(f"flatiter needs a cupric array, got {type(base).__name__}")
        self._base = base
        self._index = 0

    @property
    def base(self):
        return self._base

    @property
    def index(self):
        """The position the next iteration reads."""
        return self._index

    @property
    def coords(self):
        """The coordinates of `index` in the base array."""
        out, rest = [], self._index
        for n in reversed(self._base.shape):
            out.append(rest % n if n else 0)
            rest //= n if n else 1
        return tuple(reversed(out))

    def __len__(self):
        return self._base.size

    def __iter__(self):
        return self

    def __next__(self):
        if self._index >= self._base.size:
            raise StopIteration
        value = self._base[self.coords] if self._base.ndim else self._base[()]
        self._index += 1
        return value

    def _flat(self):
        return self._base.reshape(-1)  # a view when the base is C-contiguous, else a copy

    def __getitem__(self, key):
        return self._flat()[key]

    def __setitem__(self, key, value):
        base = self._base
        positions = _c.arange(base.size, device=base.device)[key]
        values = on(value, base.device)
        values = values.astype(base.dtype) if values.dtype != base.dtype else values
        values = values.reshape(-1)
        if positions.size == 0:
            return
        if values.size == 0:
            raise ValueError(f"cannot assign an empty array to {positions.size} positions of a flatiter")
        if values.size != positions.size:  # NumPy repeats the values over the positions
            reps = -(-positions.size // values.size)
            values = _c.concatenate([values] * reps)[: positions.size]
        positions = positions.reshape(-1)
        if base.flags["C_CONTIGUOUS"]:
            base.reshape(-1)[positions] = values
            return
        coords, rest = [], positions
        for n in reversed(base.shape):
            coords.append(_c.remainder(rest, n))
            rest = _c.floor_divide(rest, n)
        base[tuple(reversed(coords))] = values

    def __array__(self, dtype=None, copy=None):
        import numpy

        return numpy.asarray(self._base.get(), dtype=dtype).reshape(-1)

    def copy(self):
        """The elements as a new 1-d array (ndarray.flatten)."""
        return self._flat().copy() if self._base.flags["C_CONTIGUOUS"] else self._flat()


class flat_attribute:
    """ndarray.flat: reading it gives the array's flatiter; `x.flat = v` fills the array with v (a
    descriptor of its own rather than a property, which the stub generator cannot write)."""

    def __get__(self, obj, owner=None):
        return self if obj is None else flatiter(obj)

    def __set__(self, obj, value):
        flatiter(obj)[...] = value
