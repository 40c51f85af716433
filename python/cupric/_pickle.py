"""Pickling and copying: arrays travel as compact bytes (protocol 5 hands host data out of band
without a copy), Generators as their state, ufuncs and module functions by reference."""

import copyreg
import importlib
import math
import pickle
import sys
import warnings

from . import _cupric as _c
from ._lazy import numpy as _np

# Written into every array and Generator pickle; _check_version refuses any other.
FORMAT_VERSION = 1

# Where functions pickled by reference may be looked up (the first that has the object wins).
_FUNCTION_MODULES = ("cupric", "cupric.random", "cupric.cuda")


def _check_version(version, what):
    if version != FORMAT_VERSION:
        raise pickle.UnpicklingError(
            f"this {what} was pickled in cupric pickle format {version!r}; this cupric reads format "
            f"{FORMAT_VERSION} (was it written by another cupric version?)")


# ---- arrays -------------------------------------------------------------------------------------


# ml_dtypes' types have no PEP 3118 format: they travel as the unsigned integers of their size
_AS_BITS = {"bfloat16": "uint16", "float8_e4m3fn": "uint8", "float8_e5m2": "uint8"}


def _raw(host):
    """A C-contiguous CPU array's bytes as a buffer-protocol object."""
    bits = _AS_BITS.get(str(host.dtype))
    return host._view_as(bits) if bits else host


def _reduce_array(self, protocol=2):
    # Fortran-ordered arrays travel as their C-ordered transpose and come back Fortran-ordered;
    # any other view (strided, negative strides, offset into a larger buffer) as a compact copy
    fortran = self.ndim > 1 and not self.flags["C_CONTIGUOUS"] and self.flags["F_CONTIGUOUS"]
    host = (self.T if fortran else self)._host_contiguous()  # no copy for C-contiguous CPU arrays
    raw = _raw(host)
    data = pickle.PickleBuffer(raw) if protocol >= 5 else memoryview(raw).tobytes()
    header = (FORMAT_VERSION, str(self.dtype), self.shape, "F" if fortran else "C", str(self.device))
    return _rebuild_array, header + (data,)


def _numpy_dtype(dtype):
    try:
        itemsize = _c.empty((0,), dtype=dtype, device="cpu").itemsize
    except (TypeError, ValueError) as err:
        raise pickle.UnpicklingError(f"cupric array pickle names an unknown dtype {dtype!r}") from err
    return _np.dtype(_AS_BITS.get(dtype, dtype)), itemsize


def _check_shape(shape):
    if not isinstance(shape, tuple) or not all(type(n) is int and n >= 0 for n in shape):
        raise pickle.UnpicklingError(f"cupric array pickle has an invalid shape {shape!r}")
    return shape


def _rebuild_array(version, dtype, shape, order, device, data):
    """Unpickles an array: zero-copy over a writable buffer (protocol 5), a copy of bytes."""
    _check_version(version, "array")
    shape = _check_shape(shape)
    np_dtype, itemsize = _numpy_dtype(dtype)
    if order not in ("C", "F"):
        raise pickle.UnpicklingError(f"cupric array pickle has an invalid order {order!r}")
    view = memoryview(data)
    expected = math.prod(shape) * itemsize
    if view.nbytes != expected:
        raise pickle.UnpicklingError(
            f"truncated or foreign cupric array pickle: shape {shape} of {dtype} needs {expected} bytes, "
            f"got {view.nbytes}")
    stored = shape[::-1] if order == "F" else shape
    host = _c.asarray(_np.frombuffer(view, dtype=np_dtype).reshape(stored), device="cpu",
                      copy=True if isinstance(data, bytes) else None)
    if dtype in _AS_BITS:
        host = host._view_as(dtype)
    if order == "F":
        host = host.T
    return host if device == "cpu" else _to_pickled_device(host, device)


def _to_pickled_device(host, device):
    """The array on the GPU it was pickled from, or on the CPU (with a warning) without one."""
    kind, _, index = device.partition(":")
    if kind != "cuda" or not index.isdigit():
        raise pickle.UnpicklingError(f"cupric array pickle names an invalid device {device!r}")
    cuda = sys.modules["cupric"].cuda
    count = cuda.device_count() if cuda.is_available() else 0
    if int(index) < count:
        return host.to_device(device)
    warnings.warn(f"this array was pickled on {device}, which this process does not have ({count} CUDA "
                  f"device{'s' if count != 1 else ''}): it is unpickled on the CPU", UserWarning, stacklevel=2)
    return host


def _copy(self):
    """copy.copy(x): a copy in the same memory order (NumPy's order='K')."""
    return self.astype(self.dtype, order="K")


def _deepcopy(self, memo):
    return _copy(self)


# ---- Generators -------------------------------------------------------------------------------------


def _reduce_generator(self):
    return _rebuild_generator, (FORMAT_VERSION, self.seed, self.counter)


def _rebuild_generator(version, seed, counter):
    """A Generator at the pickled state: it continues the pickled one's stream."""
    _check_version(version, "Generator")
    for what, value in (("seed", seed), ("counter", counter)):
        if type(value) is not int or not 0 <= value < 2**64:
            raise pickle.UnpicklingError(f"cupric Generator pickle has an invalid {what} {value!r}")
    g = _c.Generator(seed)  # an int below 2**64 is its own Philox key
    g.counter = counter
    return g


# ---- functions and ufuncs, by reference -----------------------------------------------------


def _find(module_name, qualname):
    module = sys.modules.get(module_name) or importlib.import_module(module_name)
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _by_reference(module_name, qualname):
    """The cupric object named `qualname` in `module_name` (what a function pickle holds)."""
    if not (module_name == "cupric" or module_name.startswith("cupric.")):
        raise pickle.UnpicklingError(f"cupric function pickle names a foreign module {module_name!r}")
    return _find(module_name, qualname)


def _reduce_by_reference(obj):
    qualname = getattr(obj, "__qualname__", None)
    own = getattr(obj, "__module__", None) or ""
    if qualname and own.startswith("cupric"):
        for module_name in _FUNCTION_MODULES + (own,):
            try:
                if _find(module_name, qualname) is obj:
                    return _by_reference, (module_name, qualname)
            except (ImportError, AttributeError):
                pass
    raise TypeError(f"cannot pickle {type(obj).__module__}.{type(obj).__name__} object {obj!r}: "
                    "it is not reachable by its name from a cupric module")


def _reduce_ufunc(self):
    return _ufunc_by_name, (self.name,)


def _ufunc_by_name(name):
    """The ufunc of that table row: cupric's table, since the namespace may put a richer
    function under a ufunc's name (cu.clip)."""
    try:
        return _c._ufunc_table[name]
    except KeyError:
        raise pickle.UnpicklingError(f"cupric ufunc pickle names an unknown ufunc {name!r}") from None


def install():
    cls = _c.ndarray
    cls.__reduce_ex__ = _reduce_array
    cls.__reduce__ = _reduce_array
    cls.__copy__ = _copy
    cls.__deepcopy__ = _deepcopy
    _c.Generator.__reduce__ = _reduce_generator
    _c.ufunc.__reduce__ = _reduce_ufunc
    # nanobind's function types are shared by every nanobind extension: copyreg reaches them
    # without touching the types, and the reducer refuses what is not cupric's
    for fn_type in {type(_c.sum), type(_c.ndarray.sum)}:
        copyreg.pickle(fn_type, _reduce_by_reference)
