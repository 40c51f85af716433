"""Files, buffers and text through NumPy's readers and writers (the formats are NumPy's: .npy, .npz,
text): arrays go to the host to be written and come back on `device` (default: the default device)
when read; and NumPy's printing functions, whose options cupric's repr shares."""

import importlib

from . import _cupric as _c
from ._operands import to_host

__all__ = ["save", "load", "savez", "savez_compressed", "savetxt", "loadtxt", "genfromtxt", "fromfile", "frombuffer",
           "fromstring", "fromiter", "fromfunction", "fromregex", "array2string", "array_repr", "array_str",
           "set_printoptions", "get_printoptions", "printoptions", "format_float_positional", "format_float_scientific",
           "base_repr", "binary_repr"]


def _np():
    return importlib.import_module("numpy")


def _device_array(a, device):
    return _c.asarray(a, device=device)


# ---- files ----------------------------------------------------------------------------------------

def save(file, arr, allow_pickle=True):
    _np().save(file, to_host(_c.asarray(arr)), allow_pickle=allow_pickle)


def savez(file, *args, **kwds):
    _np().savez(file, *[to_host(a) for a in args], **{k: to_host(v) for k, v in kwds.items()})


def savez_compressed(file, *args, **kwds):
    _np().savez_compressed(file, *[to_host(a) for a in args], **{k: to_host(v) for k, v in kwds.items()})


class NpzFile:
    """The arrays of an .npz file, each read (and put on `device`) when it is looked up."""

    def __init__(self, npz, device):
        self._npz, self._device = npz, device
        self.files = list(npz.files)

    def __getitem__(self, key):
        return _device_array(self._npz[key], self._device)

    def __contains__(self, key):
        return key in self._npz

    def __iter__(self):
        return iter(self.files)

    def __len__(self):
        return len(self.files)

    def keys(self):
        return self.files

    def items(self):
        return [(k, self[k]) for k in self.files]

    def close(self):
        self._npz.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def load(file, mmap_mode=None, allow_pickle=False, fix_imports=True, encoding="ASCII", *, device=None):
    """Reads .npy (an array on `device`) and .npz (an NpzFile of such arrays) with NumPy's reader;
    allow_pickle is off by default, as NumPy's."""
    out = _np().load(file, mmap_mode=mmap_mode, allow_pickle=allow_pickle, fix_imports=fix_imports,
                     encoding=encoding)
    if hasattr(out, "files"):
        return NpzFile(out, device)
    if getattr(out, "dtype", None) is not None and out.dtype.kind == "O":
        return out  # pickled Python objects: NumPy's object array, which cupric does not hold
    return _device_array(out, device)


def savetxt(fname, X, *args, **kwargs):
    _np().savetxt(fname, to_host(_c.asarray(X)), *args, **kwargs)


def _reader(name):
    def read(*args, device=None, **kwargs):
        return _device_array(getattr(_np(), name)(*args, **kwargs), device)

    read.__name__ = read.__qualname__ = name
    read.__doc__ = f"numpy.{name}, its result on `device` (default: the default device)."
    return read


loadtxt = _reader("loadtxt")
genfromtxt = _reader("genfromtxt")
fromfile = _reader("fromfile")
frombuffer = _reader("frombuffer")
fromstring = _reader("fromstring")
fromiter = _reader("fromiter")


def fromregex(file, regexp, dtype, encoding=None, *, device=None):
    """numpy.fromregex returns a structured array, which cupric does not hold (out of scope): this
    says so before reading anything."""
    raise TypeError("fromregex returns a structured array, and cupric has no structured dtypes: read the "
                    "file with numpy.fromregex and pass each field to cu.asarray (arr['name'])")


def fromfunction(function, shape, *, dtype=float, device=None, **kwargs):
    """function called once with index arrays (one per axis) of `shape`, on `device`."""
    from ._shape_functions import indices

    return function(*indices(shape, dtype=dtype, device=device), **kwargs)


# ---- printing (NumPy's options: cupric's repr uses them) ---------------------------------------

def array2string(a, *args, **kwargs):
    return _np().array2string(to_host(_c.asarray(a)), *args, **kwargs)


def _print_opts(max_line_width, precision, suppress_small):
    """array_repr/array_str's options as NumPy's print options, checked first (a bad value must not
    reach NumPy's global print state)."""
    import operator

    opts = {}
    for key, value in (("linewidth", max_line_width), ("precision", precision)):
        if value is not None:
            try:
                opts[key] = operator.index(value)
            except TypeError:
                raise TypeError(f"{key} must be an integer or None, got {type(value).__name__}") from None
    if suppress_small is not None:
        if not isinstance(suppress_small, (bool, int)):
            raise TypeError(f"suppress_small must be a bool or None, got {type(suppress_small).__name__}")
        opts["suppress"] = bool(suppress_small)
    return opts


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    with printoptions(**_print_opts(max_line_width, precision, suppress_small)):
        return repr(_c.asarray(arr))


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    with printoptions(**_print_opts(max_line_width, precision, suppress_small)):
        return str(_c.asarray(a))


def set_printoptions(*args, **kwargs):
    _np().set_printoptions(*args, **kwargs)


def get_printoptions():
    return _np().get_printoptions()


def printoptions(*args, **kwargs):
    return _np().printoptions(*args, **kwargs)


def format_float_positional(x, *args, **kwargs):
    return _np().format_float_positional(to_host(x), *args, **kwargs)


def format_float_scientific(x, *args, **kwargs):
    return _np().format_float_scientific(to_host(x), *args, **kwargs)


def base_repr(number, base=2, padding=0):
    return _np().base_repr(number, base, padding)


def binary_repr(num, width=None):
    return _np().binary_repr(num, width)
