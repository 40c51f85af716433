"""NumPy fallbacks: a NumPy function (or ufunc method) that cupric cannot run computes in NumPy —
on the same memory for CPU arrays, through a host round trip for device arrays where
cu.set_fallback allows it — and hands back cupric arrays."""

import os
import threading
import warnings

from . import _cupric as _c
from ._lazy import numpy as _np
from ._printing import to_numpy as _to_numpy

_MODES = {
    "strict": "nothing runs in NumPy: every function cupric lacks raises, on every device",
    "raise": "CPU arrays run in NumPy on the same memory; device arrays raise (the default)",
    "warn": "as 'raise', but device arrays make a host round trip, with one warning per function",
    "allow": "as 'warn', without the warning",
}
_ENV = "CUPRIC_FALLBACK"
_mode = None  # read from CUPRIC_FALLBACK at the first fallback
_warned = set()
_stats = {}
_lock = threading.Lock()


class FallbackWarning(UserWarning):
    """A NumPy function ran on a host copy of device arrays (cu.set_fallback('warn'))."""


def _checked(mode, source):
    if mode not in _MODES:
        choices = "; ".join(f"{m!r}: {what}" for m, what in _MODES.items())
        raise ValueError(f"unknown fallback mode {mode!r} in {source}; choose one of {choices}")
    return mode


def get_fallback():
    """The current fallback mode (see set_fallback)."""
    global _mode
    if _mode is None:
        _mode = _checked(os.environ.get(_ENV, "raise"), f"the environment variable {_ENV}")
    return _mode


def set_fallback(mode):
    """What happens when NumPy calls a function cupric does not implement on cupric arrays;
    returns the previous mode. 'strict': raise for every array; 'raise' (default): run NumPy
    on the same memory for CPU arrays, raise for device arrays; 'warn': also copy device arrays
    to the host and back, warning once per function; 'allow': the same, silently. The start
    value comes from CUPRIC_FALLBACK."""
    global _mode
    previous = get_fallback()
    _mode = _checked(mode, "set_fallback()")
    return previous


def fallback_stats(reset=False):
    """What ran in NumPy since the start (or the last reset), per function:
    {"numpy.histogram": {"cpu": calls on CPU arrays (no copy), "device": calls that copied
    device arrays to the host and back, "bytes": bytes those copies moved}}."""
    with _lock:
        out = {name: dict(counts) for name, counts in _stats.items()}
        if reset:
            _stats.clear()
    return out


class _Crossing:
    """The arrays of one fallback call on their way into NumPy and back: which NumPy array
    stands for which cupric one (so that an argument NumPy hands back is the caller's object),
    and the host copies of device arrays."""

    def __init__(self, name, device):
        self.name = name  # the NumPy function, for errors
        self.device = device  # where results go: "cpu" or the first device array's device
        self.standing_for = {}  # id(NumPy array) -> (NumPy array, cupric array)
        self.outs = []  # (host copy, device out= array), copied back after the call
        self.bytes = 0

    def to_numpy(self, obj, writable=False):
        if isinstance(obj, _c.ndarray):
            if obj.device == "cpu":
                n = _to_numpy(obj)
            else:
                n = _to_numpy(obj.to_device("cpu"))
                self.bytes += obj.nbytes
                if writable:
                    self.outs.append((n, obj))
                else:
                    n.flags.writeable = False  # a NumPy function writing into it fails instead of losing the write
            self.standing_for[id(n)] = (n, obj)
            return n
        if type(obj) in (list, tuple):
            return type(obj)(self.to_numpy(item, writable) for item in obj)
        return obj

    def from_numpy(self, obj):
        if isinstance(obj, _np.ndarray):
            known = self.standing_for.get(id(obj))
            if known is not None and known[0] is obj:
                return known[1]
            if type(obj) is not _np.ndarray:
                return obj  # subclasses (masked arrays, matrix) stay NumPy's
            try:
                out = _c.asarray(obj, device="cpu")  # zero copy
            except TypeError as err:  # object, string, datetime, structured: no cupric dtype
                if obj.dtype.kind != "V":
                    return obj  # NumPy's own objects (broadcast_arrays(x, None) makes object arrays)
                # a structured result is refused, as CuPy refuses it: Dask's arg-reductions then keep
                # their partial results as cupric arrays instead of mixing in NumPy's without knowing
                raise TypeError(f"NumPy's {self.name} made an array of dtype {obj.dtype}, which cupric arrays "
                                f"cannot hold ({err})") from None
            if self.device != "cpu":
                out = out.to_device(self.device)
                self.bytes += out.nbytes
            return out
        if type(obj) in (list, tuple):
            return type(obj)(self.from_numpy(item) for item in obj)
        return obj

    def copy_back(self):
        for host, target in self.outs:
            target[...] = _c.asarray(host, device="cpu").to_device(target.device)
            self.bytes += target.nbytes


def _devices(obj, found):
    if isinstance(obj, _c.ndarray):
        found.append(str(obj.device))
    elif type(obj) in (list, tuple):
        for item in obj:
            _devices(item, found)
    elif type(obj) is dict:
        for item in obj.values():
            _devices(item, found)
    return found


def _refuse(name, device, mode, refused):
    if refused is not None and (mode == "strict" or device == "cpu"):
        return refused  # cupric's own error names the argument it cannot take
    if refused is not None:
        return type(refused)(f"{refused} (NumPy's {name} would take these arguments through a host round trip: "
                             f"cu.set_fallback('warn') or {_ENV}=warn allows it)")
    if mode == "strict":
        return TypeError(f"cupric does not implement {name} (cu.set_fallback('strict') keeps NumPy from running "
                         f"it; 'raise', the default, runs NumPy on CPU arrays)")
    return TypeError(
        f"cupric does not implement {name}, and NumPy cannot run it on {device} memory: move the data with "
        f"x.to_device('cpu'), or allow host round trips with cu.set_fallback('warn') or {_ENV}=warn")


def run_in_numpy(name, call, args, kwargs, refused=None):
    """call(*args, **kwargs) with every cupric array replaced by NumPy's view of it (a host copy
    for device arrays, when the mode allows), results converted back to cupric arrays.
    `refused`: cupric's own error, raised as it is when the mode does not allow the fallback."""
    devices = _devices(kwargs, _devices(args, []))
    device = next((d for d in devices if d != "cpu"), "cpu")
    mode = get_fallback()
    if mode == "strict" or (device != "cpu" and mode == "raise"):
        raise _refuse(name, device, mode, refused)
    if device != "cpu" and mode == "warn" and name not in _warned:
        _warned.add(name)
        warnings.warn(f"cupric does not implement {name}: its {device} arguments are copied to the host, NumPy "
                      f"runs it, and the results go back (cu.set_fallback('raise') forbids this; this warning "
                      f"shows once per function)", FallbackWarning, stacklevel=3)
    crossing = _Crossing(name, device)
    np_args = crossing.to_numpy(args)
    np_kwargs = {k: crossing.to_numpy(v, writable=(k == "out")) for k, v in kwargs.items()}
    try:
        result = call(*np_args, **np_kwargs)
    except ValueError as err:
        if device != "cpu" and "read-only" in str(err):
            raise TypeError(f"{name} writes into an argument that lives on {device}; cupric cannot run it through "
                            f"the host: call it on x.to_device('cpu') and copy the result back") from err
        raise
    crossing.copy_back()
    out = crossing.from_numpy(result)
    _count(name, "cpu" if device == "cpu" else "device", crossing.bytes)
    return out


def _count(name, where, nbytes):
    with _lock:
        counts = _stats.setdefault(name, {"cpu": 0, "device": 0, "bytes": 0})
        counts[where] += 1
        counts["bytes"] += nbytes
