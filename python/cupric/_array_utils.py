"""NumPy's small array utilities: conversions (asanyarray, asarray_chkfinite, copy), questions about
arrays and types (ndim/shape/size, isscalar, iterable, isfortran, issubdtype, common_type, ...),
memory overlap, bit packing, the Kaiser window with i0 and numpy.broadcast."""

import importlib

from . import _cupric as _c
from . import _dtypes as _dt

__all__ = ["asanyarray", "asarray_chkfinite", "copy", "ndim", "shape", "size", "isscalar", "iterable", "isfortran",
           "issubdtype", "typename", "mintypecode", "common_type", "min_scalar_type", "may_share_memory",
           "shares_memory", "packbits", "unpackbits", "bitwise_count", "i0", "kaiser", "broadcast",
           "little_endian", "typecodes", "ScalarType"]


def _np():
    return importlib.import_module("numpy")


def _arr(x):
    return x if isinstance(x, _c.ndarray) else _c.asarray(x)


little_endian = True  # every platform cupric builds for
typecodes = {"Character": "c", "Integer": "bhilqnp", "UnsignedInteger": "BHILQNP", "Float": "efdg",
             "Complex": "FDG", "AllInteger": "bBhHiIlLqQnNpP", "AllFloat": "efdgFDG", "Datetime": "Mm",
             "All": "?bhilqnpBHILQNPefdgFDGSUVOMm"}
ScalarType = (int, float, complex, bool, bytes, str, memoryview)


def asanyarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    return _c.asarray(a, dtype=dtype, device=device, copy=copy)


def asarray_chkfinite(a, dtype=None, order=None):
    x = _c.asarray(a, dtype=dtype)
    if _dt.kind(x.dtype) in "fc" and not bool(_c.all(_c.isfinite(x))):
        raise ValueError("array must not contain infs or NaNs")
    return x


def copy(a, order="K", subok=False):
    return _c.asarray(a, copy=True)


def ndim(a):
    return a.ndim if isinstance(a, _c.ndarray) else _np().ndim(a)


def shape(a):
    return a.shape if isinstance(a, _c.ndarray) else _np().shape(a)


def size(a, axis=None):
    if not isinstance(a, _c.ndarray):
        return _np().size(a, axis)
    return a.size if axis is None else a.shape[axis]


def isscalar(element):
    return _np().isscalar(element)


def iterable(y):
    try:
        iter(y)
    except TypeError:
        return False
    return True


def isfortran(a):
    x = _arr(a)
    return bool(x.flags["F_CONTIGUOUS"] and not x.flags["C_CONTIGUOUS"])


def issubdtype(arg1, arg2):
    return _np().issubdtype(arg1, arg2)


def typename(char):
    return _np().typename(char)


def mintypecode(typechars, typeset="GDFgdf", default="d"):
    return _np().mintypecode(typechars, typeset, default)


def common_type(*arrays):
    return _np().common_type(*[_np().empty(0, dtype=_arr(a).dtype) for a in arrays])


def min_scalar_type(a):
    return _np().min_scalar_type(a.get() if isinstance(a, _c.ndarray) else a)


def _extent(x):
    """[first byte, last byte + 1) a view can touch, and its device."""
    start = x._data_ptr  # element 0 (bfloat16 arrays have no interface typestr)
    lo = hi = 0
    for n, s in zip(x.shape, x.strides, strict=True):
        if n == 0:
            return start, start, str(x.device)
        if s < 0:
            lo += s * (n - 1)
        else:
            hi += s * (n - 1)
    return start + lo, start + hi + x.itemsize, str(x.device)


def may_share_memory(a, b, max_work=None):
    if not (isinstance(a, _c.ndarray) and isinstance(b, _c.ndarray)):
        return False
    lo1, hi1, d1 = _extent(a)
    lo2, hi2, d2 = _extent(b)
    return d1 == d2 and lo1 < hi2 and lo2 < hi1


class _AddressOnly:
    """A NumPy view of a cupric array's addresses (GPU ones too) for NumPy's overlap solver, which
    reads shapes, strides and pointers, never the memory."""

    def __init__(self, x):
        self.__array_interface__ = {"shape": x.shape, "typestr": f"|V{x.itemsize}", "data": (x._data_ptr, True),
                                    "strides": x.strides, "version": 3}


def shares_memory(a, b, max_work=None):
    """Whether a and b share an element's bytes (NumPy's exact solver over the two views' addresses)."""
    if not may_share_memory(a, b):
        return False
    host = _np()
    return bool(host.shares_memory(host.asarray(_AddressOnly(a)), host.asarray(_AddressOnly(b)), max_work=max_work))


def packbits(a, axis=None, bitorder="big"):
    x = _arr(a)
    if _dt.kind(x.dtype) not in "biu":
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    bits = (x != 0).astype("uint8")
    if axis is None:
        bits, axis = bits.reshape(-1), 0
    ax = axis % bits.ndim
    n = bits.shape[ax]
    pad = (-n) % 8
    if pad:
        shape = list(bits.shape)
        shape[ax] = pad
        bits = _c.concatenate([bits, _c.zeros(tuple(shape), dtype="uint8", device=bits.device)], axis=ax)
    moved = _c.moveaxis(bits, ax, -1)
    groups = moved.reshape(moved.shape[:-1] + ((n + pad) // 8, 8))
    weights = _c.asarray([128, 64, 32, 16, 8, 4, 2, 1] if bitorder == "big" else [1, 2, 4, 8, 16, 32, 64, 128],
                         dtype="uint8", device=bits.device)
    packed = _c.sum(groups * weights, axis=-1, dtype="uint8")
    return _c.moveaxis(packed, -1, ax)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    x = _arr(a)
    if x.dtype != _dt.as_dtype("uint8"):
        raise TypeError("Expected an input array of unsigned byte data type")
    if axis is None:
        x, axis = x.reshape(-1), 0
    ax = axis % x.ndim
    shifts = _c.asarray([7, 6, 5, 4, 3, 2, 1, 0] if bitorder == "big" else [0, 1, 2, 3, 4, 5, 6, 7], dtype="uint8",
                        device=x.device)
    moved = _c.moveaxis(x, ax, -1)
    bits = _c.bitwise_and(_c.right_shift(_c.expand_dims(moved, -1), shifts), 1).astype("uint8")
    bits = bits.reshape(moved.shape[:-1] + (moved.shape[-1] * 8,))
    if count is not None:
        total = bits.shape[-1]
        keep = count if count >= 0 else max(total + count, 0)
        if keep <= total:
            bits = bits[..., :keep]
        else:
            zeros = _c.zeros(bits.shape[:-1] + (keep - total,), dtype="uint8", device=x.device)
            bits = _c.concatenate([bits, zeros], axis=-1)
    return _c.moveaxis(bits, -1, ax)


def bitwise_count(x):
    """The number of 1 bits in |x| (NumPy's popcount ufunc), as uint8."""
    v = _arr(x)
    if _dt.kind(v.dtype) not in "biu":
        raise TypeError("ufunc 'bitwise_count' not supported for the input types")
    bits = 8 * v.itemsize
    u = _c.abs(v).astype(f"uint{max(bits, 8)}") if _dt.kind(v.dtype) == "i" else v.astype(f"uint{max(bits, 8)}")
    count = _c.zeros(v.shape, dtype="uint8", device=v.device)
    for shift in range(bits):
        count = count + _c.bitwise_and(_c.right_shift(u, shift), 1).astype("uint8")
    return count


def i0(x):
    """The modified Bessel function of the first kind, order 0: its power series
    sum_k ((x/2)^k / k!)^2 up to |x| = 30 (positive terms, so no cancellation), beyond it the
    asymptotic series e^x / sqrt(2 pi x) * sum_k prod_{j<=k} (2j-1)^2 / (k! (8x)^k)."""
    v = _arr(x)
    if _dt.kind(v.dtype) == "c":
        raise TypeError("i0 not supported for complex values")
    v = _c.abs(v.astype("float64"))
    near = _c.minimum(v, _c.full_like(v, 30.0))
    quarter = near * near / 4.0
    term = _c.ones_like(v)
    total = _c.ones_like(v)
    for k in range(1, 90):
        term = term * quarter / float(k * k)
        total = total + term
    far = _c.maximum(v, _c.full_like(v, 30.0))
    term = _c.ones_like(v)
    series = _c.ones_like(v)
    for k in range(1, 20):
        term = term * float((2 * k - 1) ** 2) / (8.0 * k * far)
        series = series + term
    asymptotic = _c.exp(far) / _c.sqrt(2 * 3.141592653589793 * far) * series
    return _c.where(v <= 30.0, total, asymptotic)


def kaiser(M, beta):
    M = int(M)
    if M < 1:
        return _c.zeros((0,), dtype="float64")
    if M == 1:
        return _c.ones((1,), dtype="float64")
    n = _c.arange(0, M, dtype="float64")
    alpha = (M - 1) / 2.0
    return i0(beta * _c.sqrt(1 - ((n - alpha) / alpha) ** 2.0)) / i0(_c.asarray(float(beta)))


class broadcast:
    """The broadcast shape of its arguments (numpy.broadcast): shape, ndim, size, nd, numiter, and
    iteration over the broadcast elements as tuples (read from the host)."""

    def __init__(self, *args):
        self._arrays = [_arr(a) for a in args]
        self.shape = _c.broadcast_shapes(*[a.shape for a in self._arrays])
        self.ndim = self.nd = len(self.shape)
        self.numiter = len(self._arrays)
        self.size = 1
        for n in self.shape:
            self.size *= n
        self.index = 0

    def __iter__(self):
        host = [_c.broadcast_to(a, self.shape).reshape(-1).tolist() for a in self._arrays]
        for i in range(self.size):
            self.index = i + 1
            yield tuple(h[i] for h in host)

    def reset(self):
        self.index = 0


# ---- NumPy's floating-point error state: cupric's kernels raise no floating-point warnings, so
# these only govern NumPy's own computations (the NumPy fallbacks); accepted so that code written
# for NumPy (`with xp.errstate(divide="ignore"):`) runs unchanged

def errstate(**kwargs):
    return _np().errstate(**kwargs)


def seterr(**kwargs):
    return _np().seterr(**kwargs)


def geterr():
    return _np().geterr()


def seterrcall(func):
    return _np().seterrcall(func)


def geterrcall():
    return _np().geterrcall()


def getbufsize():
    return _np().getbufsize()


def setbufsize(size):
    return _np().setbufsize(size)


def show_runtime():
    """What cupric runs on here (cupric.show_config), then NumPy's own runtime report."""
    from ._config import show_config

    show_config()
    _np().show_runtime()


__all__ += ["errstate", "seterr", "geterr", "seterrcall", "geterrcall", "getbufsize", "setbufsize", "show_runtime"]
