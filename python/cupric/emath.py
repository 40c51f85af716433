"""numpy.emath on every device: the math functions whose result is complex where the real one is
not defined (sqrt(-1) is 1j). As NumPy's, an input with any element outside the real domain
becomes complex as a whole (complex64 from float32 and the small integers, else complex128)."""

from . import _cupric as _c
from ._operands import device_of, on

__all__ = ["sqrt", "log", "log2", "log10", "logn", "power", "arccos", "arcsin", "arctanh"]

_TO_COMPLEX64 = ("float32", "int8", "int16", "uint8", "uint16", "complex64")


def _complex(x):
    return x.astype("complex64" if x.dtype.name in _TO_COMPLEX64 else "complex128")


def _real_where(x, outside):
    """x, complex when any of its real elements is `outside` the domain."""
    if x.dtype.kind == "c":
        return x
    if x.size and bool(_c.any(outside(x))):
        return _complex(x)
    return x


def _arg(x, device=None):
    return on(x, device if device is not None else device_of(x))


def _below_zero(x):
    return _real_where(_arg(x), lambda v: v < 0)


def _beyond_one(x):
    return _real_where(_arg(x), lambda v: _c.abs(v) > 1)


def sqrt(x):
    """numpy.emath.sqrt: sqrt(-4) is 2j."""
    return _c.sqrt(_below_zero(x))


def log(x):
    """numpy.emath.log: log(-1) is pi j."""
    return _c.log(_below_zero(x))


def log2(x):
    """numpy.emath.log2: complex for negative inputs."""
    return _c.log2(_below_zero(x))


def log10(x):
    """numpy.emath.log10: complex for negative inputs."""
    return _c.log10(_below_zero(x))


def logn(n, x):
    """numpy.emath.logn: the base-n logarithm of x, complex where n or x is negative."""
    device = device_of(x, n)
    return _c.divide(log(_arg(x, device)), log(_arg(n, device)))


def power(x, p):
    """numpy.emath.power: x**p, complex for negative x; negative integer powers become float."""
    device = device_of(x, p)
    x = _below_zero(_arg(x, device))
    p = _arg(p, device)
    if p.dtype.kind in "iu" and p.size and bool(_c.any(p < 0)):
        p = p.astype("float64")
    return _c.power(x, p)


def arccos(x):
    """numpy.emath.arccos: complex where |x| > 1."""
    return _c.arccos(_beyond_one(x))


def arcsin(x):
    """numpy.emath.arcsin: complex where |x| > 1."""
    return _c.arcsin(_beyond_one(x))


def arctanh(x):
    """numpy.emath.arctanh: complex where |x| > 1."""
    return _c.arctanh(_beyond_one(x))
