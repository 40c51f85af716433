"""cupric's dtypes are NumPy's: `cu.float32 is numpy.float32`, `cu.dtype is numpy.dtype`,
`x.dtype` is a `numpy.dtype`, and `cu.bfloat16 is ml_dtypes.bfloat16` (so are the float8s). The
names are bound at their first use (module __getattr__), so `import cupric` imports neither NumPy nor ml_dtypes."""

import importlib

from . import _cupric as _c

# cupric name -> (module, attribute)
_NAMES = {
    "dtype": ("numpy", "dtype"),
    "bool": ("numpy", "bool"),
    "bool_": ("numpy", "bool_"),
    "bfloat16": ("ml_dtypes", "bfloat16"),
    "float8_e4m3fn": ("ml_dtypes", "float8_e4m3fn"),
    "float8_e5m2": ("ml_dtypes", "float8_e5m2"),
    **{n: ("numpy", n) for n in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")},
    **{n: ("numpy", n) for n in ("float16", "float32", "float64", "complex64", "complex128")},
    # NumPy's C-named aliases of the same types, and its abstract types (for isinstance/issubdtype)
    **{n: ("numpy", n) for n in ("byte", "ubyte", "short", "ushort", "intc", "uintc", "int_", "uint", "intp",
                                 "uintp", "long", "ulong", "longlong", "ulonglong", "half", "single", "double",
                                 "csingle", "cdouble", "True_", "False_")},
    **{n: ("numpy", n) for n in ("generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact",
                                 "floating", "complexfloating")},
}

__all__ = sorted(_NAMES)


def lookup(name):
    """The NumPy object a cupric dtype name stands for, or raise AttributeError."""
    module, attr = _NAMES[name]
    try:
        return getattr(importlib.import_module(module), attr)
    except ImportError as err:
        raise AttributeError(f"cupric.{name} needs {module}: pip install {module.replace('_', '-')}") from err


def is_dtype_like(obj):
    """A dtype object or a scalar type (numpy.float32, ml_dtypes.bfloat16), as opposed to a value."""
    np = importlib.import_module("numpy")
    return isinstance(obj, np.dtype) or (isinstance(obj, type) and issubclass(obj, np.generic))


as_dtype = _c._as_dtype  # the canonical numpy.dtype of any dtype-like cupric accepts
kind = _c._dtype_kind  # NumPy's kind letter, with 'f' for bfloat16 (whose NumPy kind is 'V')


class _Names:
    """`names.float32` etc. for cupric's own modules: the same lazy binding as `cupric.float32`."""

    def __getattr__(self, name):
        if name not in _NAMES:
            raise AttributeError(name)
        value = lookup(name)
        setattr(self, name, value)
        return value


names = _Names()
