"""NumPy protocols on ndarray: __array__, __repr__/__str__, tolist, iteration."""

import numpy as _np

from . import _cupric as _c


def _to_numpy(x):
    """A NumPy view of a CPU array (a copy for device arrays; the host waits)."""
    h = x._host_contiguous() if not x.device == "cpu" else x
    if h.dtype == _c.bfloat16:
        try:
            import ml_dtypes
        except ImportError as err:
            raise TypeError("converting bfloat16 to NumPy needs ml_dtypes (pip install ml_dtypes); "
                            "or convert first with x.astype(cupric.float32)") from err
        return _np.asarray(h.view_bits()).view(ml_dtypes.bfloat16) if hasattr(h, "view_bits") else \
            _np.asarray(h.astype(_c.float32)).astype(ml_dtypes.bfloat16)
    return _np.asarray(h)


def _array(self, dtype=None, copy=None):
    out = _to_numpy(self)
    if dtype is not None:
        out = out.astype(dtype, copy=False)
    if copy:
        out = out.copy()
    return out


def _repr(self):
    a = _to_numpy(self)
    if self.dtype == _c.bfloat16:
        a = a.astype(_np.float32)
    body = _np.array2string(a, separator=", ", prefix="array(")
    dflt = self.dtype in (_c.float64, _c.int64, _c.bool_) or (self.dtype == _c.complex128)
    suffix = "" if dflt and self.size > 0 else f", dtype={self.dtype.name}"
    dev = "" if self.device == "cpu" else f", device='{self.device}'"
    return f"array({body}{suffix}{dev})"


def _str(self):
    a = _to_numpy(self)
    if self.dtype == _c.bfloat16:
        a = a.astype(_np.float32)
    return _np.array2string(a)


def _tolist(self):
    a = _to_numpy(self)
    if self.dtype == _c.bfloat16:
        a = a.astype(_np.float32)
    return a.tolist()


def install():
    cls = _c.ndarray
    cls.__array__ = _array
    cls.__repr__ = _repr
    cls.__str__ = _str
    cls.tolist = _tolist
    cls.__array_priority__ = 100
