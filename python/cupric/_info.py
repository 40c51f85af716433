"""The Array API inspection namespace: `cu.__array_namespace_info__()` says what cupric can do
(capabilities), which devices it sees, and its default and supported dtypes per device."""

from . import _cupric as _c
from . import _dtypes

__all__ = ["__array_namespace_info__", "__array_api_version__", "default_device"]

__array_api_version__ = "2024.12"

_KINDS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "integral": ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
}
_KINDS["numeric"] = _KINDS["integral"] + _KINDS["real floating"] + _KINDS["complex floating"]
_ALL = _KINDS["bool"] + _KINDS["numeric"]


def default_device():
    """The device new arrays go to: CUPRIC_DEVICE or `with cu.device(...)`, else the first GPU
    when there is one, else the CPU."""
    return _c._get_default_device()


def _gpu_count():
    try:
        return _c._cuda.device_count() if _c._cuda.is_available() else 0
    except Exception:  # no driver, or a driver without GPUs: the CPU alone
        return 0


class ArrayNamespaceInfo:
    """What `cu.__array_namespace_info__()` returns (the Array API 2024.12 inspection object)."""

    __module__ = "cupric"

    def capabilities(self):
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        return default_device()

    def devices(self):
        return [_c.Device("cpu")] + [_c.Device(f"cuda:{i}") for i in range(_gpu_count())]

    def _check_device(self, device):
        if device is not None and device not in self.devices():
            raise ValueError(f"device {device!r} is not one of this machine's devices {self.devices()}")

    def default_dtypes(self, *, device=None):
        self._check_device(device)  # the defaults are the same on every device
        dt = _dtypes.lookup("dtype")
        return {
            "real floating": dt("float64"),
            "complex floating": dt("complex128"),
            "integral": dt("int64"),
            "indexing": dt("int64"),
        }

    def dtypes(self, *, device=None, kind=None):
        """The Array API dtypes of `kind` (a kind name, a tuple of them, or None for all) on
        `device` (every cupric device has all of them). bfloat16 and the float8s are cupric's too,
        but not the standard's, so they are not listed."""
        self._check_device(device)
        if kind is None:
            names = _ALL
        else:
            kinds = kind if isinstance(kind, tuple) else (kind,)
            names = []
            for k in kinds:
                if k not in _KINDS:
                    raise ValueError(f"unknown dtype kind {k!r}; expected one of {sorted(_KINDS)}")
                names += [n for n in _KINDS[k] if n not in names]
        dt = _dtypes.lookup("dtype")
        return {n: dt(n) for n in names}


def __array_namespace_info__():
    return ArrayNamespaceInfo()
