"""repr/str/tolist of ndarray, exactly as NumPy prints (NumPy's own array2string does the layout);
bfloat16 prints its values as float32 with dtype=bfloat16, the float8s as NumPy prints ml_dtypes'
arrays; device arrays add device='cuda:N'."""

import sys

from . import _dtypes as _dt
from ._lazy import numpy as _np

# numpy.set_printoptions(legacy=...) values as NumPy numbers them internally
_LEGACY = {"1.13": 113, "1.21": 121, "1.25": 125, "2.1": 201, "2.2": 202}
_implied_cache = {}


def _ml_dtypes():
    try:
        import ml_dtypes
    except ImportError as err:
        raise TypeError(
            "converting bfloat16 or float8 to NumPy needs ml_dtypes (pip install ml_dtypes); "
            "or convert first with x.astype(cupric.float32)"
        ) from err
    return ml_dtypes


def to_numpy(x):
    """NumPy's zero-copy view of a CPU array (bfloat16 and the float8s as ml_dtypes' types)."""
    name = x.dtype.name
    if name == "bfloat16":
        return _np.asarray(x._view_as(_dt.names.uint16)).view(_ml_dtypes().bfloat16)
    if name.startswith("float8_"):
        return _np.asarray(x._view_as(_dt.names.uint8)).view(getattr(_ml_dtypes(), name))
    return _np.asarray(memoryview(x))


def _printable(x):
    """A NumPy array with x's values for printing: host copy of device arrays (printing waits
    for the device), float32 for bfloat16, ml_dtypes' own array for the float8s (whose values
    NumPy prints with their own precision)."""
    h = x if x.device == "cpu" else x.to_device("cpu")
    if h.dtype.name == "bfloat16":
        h = h.astype(_dt.names.float32)
    if h.dtype.name.startswith("float8_"):
        return to_numpy(h._host_contiguous())
    return _np.asarray(memoryview(h))


def _dtype_is_implied(dtype):
    """Whether NumPy's repr leaves out this dtype (float64, int64, bool, complex128; the
    answer depends on the legacy print mode, so ask NumPy)."""
    if dtype.name == "bfloat16" or dtype.name.startswith("float8_"):
        return False
    key = (dtype.name, _np.get_printoptions()["legacy"])
    if key not in _implied_cache:
        _implied_cache[key] = "dtype=" not in repr(_np.ones(1, dtype=dtype.name))
    return _implied_cache[key]


def _repr(self):
    a = _printable(self)
    opts = _np.get_printoptions()
    legacy = _LEGACY.get(opts["legacy"], sys.maxsize)
    prefix = "array("
    if legacy <= 113 and a.shape == ():
        body = repr(a.item())
    else:
        body = _np.array2string(a, opts["linewidth"], separator=", ", prefix=prefix, suffix=")")
    extras = []
    if (a.size == 0 and a.shape != (0,)) or (legacy > 210 and a.size > opts["threshold"]):
        extras.append(f"shape={a.shape}")
    if not _dtype_is_implied(self.dtype) or a.size == 0:
        extras.append(f"dtype={self.dtype.name}")
    if self.device != "cpu":
        extras.append(f"device='{self.device}'")
    if not extras:
        return prefix + body + ")"
    head = prefix + body + ","
    tail = ", ".join(extras) + ")"
    last_line = len(head) - (head.rfind("\n") + 1)
    spacer = " "
    if legacy > 113 and last_line + len(tail) + 1 > opts["linewidth"]:
        spacer = "\n" + " " * len(prefix)
    return head + spacer + tail


def _str(self):
    return str(_printable(self))


def _tolist(self):
    return _printable(self).tolist()


def install(cls):
    cls.__repr__ = _repr
    cls.__str__ = _str
    cls.tolist = _tolist
