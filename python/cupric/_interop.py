"""NumPy protocols on ndarray: __array__, __array_namespace__, __array_ufunc__ and
__array_function__ (NumPy calls on cupric arrays run in cupric; what cupric lacks runs in NumPy on
the same memory for CPU arrays, see _fallback.py), plus repr/str/tolist (see _printing.py)."""

import sys

from . import _cupric as _c
from . import _fallback, _operands
from ._lazy import numpy as _np
from ._printing import install as _install_printing
from ._printing import to_numpy as _to_numpy

_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")

# NumPy ufunc methods -> cupric functions (the axis default of ufunc methods is 0, not None)
_REDUCE = {
    "add": "sum",
    "multiply": "prod",
    "maximum": "max",
    "minimum": "min",
    "fmax": "nanmax",
    "fmin": "nanmin",
    "logical_and": "all",
    "logical_or": "any",
}
_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod"}

# NumPy functions that only look at array attributes: answered without a cupric function
_INTROSPECTION = {
    "shape": lambda a: _c.asarray(a).shape,
    "ndim": lambda a: _c.asarray(a).ndim,
    "size": lambda a, axis=None: _c.asarray(a).size if axis is None else _c.asarray(a).shape[axis],
    "iscomplexobj": lambda x: _c.asarray(x).dtype.kind == "c",
    "isrealobj": lambda x: _c.asarray(x).dtype.kind != "c",
}


def _cupric():
    return sys.modules["cupric"]


# ---- __array__ -----------------------------------------------------------------------------------


def _array(self, dtype=None, copy=None):
    """NumPy's view of a CPU array (no copy); a device array is copied to the host (the host
    waits for the work queued on it), except with copy=False, which raises."""
    copied = False
    if self.device != "cpu":
        if copy is False:
            raise ValueError(f"Unable to avoid copy: this array is on {self.device} and NumPy needs host memory")
        out = _to_numpy(self.to_device("cpu"))
        copied = True
    else:
        out = _to_numpy(self)
    if dtype is not None and _np.dtype(dtype) != out.dtype:
        if copy is False:
            raise ValueError(f"Unable to avoid copy while converting {self.dtype} to {_np.dtype(dtype)}")
        out = out.astype(dtype)
        copied = True
    if copy and not copied:
        out = out.copy()
    return out


def _array_namespace(self, /, *, api_version=None):
    if api_version is not None and api_version not in _API_VERSIONS:
        raise ValueError(f"cupric does not support array API version {api_version!r}; supported: {_API_VERSIONS}")
    return _cupric()


# ---- __array_ufunc__ -----------------------------------------------------------------------------


def _is_foreign(obj):
    """Objects whose own __array_ufunc__ / __array_function__ should get the call (NEP 13/18)."""
    t = type(obj)
    if issubclass(t, _c.ndarray):
        return False
    override = getattr(t, "__array_ufunc__", None)
    return override is not None and override is not _np.ndarray.__array_ufunc__


def _operand(x, device):
    """NumPy arrays and scalars become cupric arrays on `device` (the cupric arrays' of the call, as
    the ufuncs place them; no copy on the CPU; NumPy scalars are strong, as in NumPy 2); Python
    scalars stay as they are (weak, NEP 50)."""
    if isinstance(x, (_np.ndarray, _np.generic)):
        return _c.asarray(x) if device is None else _c.asarray(x, device=device)
    return x


def _out_operand(o):
    if isinstance(o, _c.ndarray):
        return o
    if isinstance(o, _np.ndarray):
        return _c.asarray(o, copy=False)  # a writeable NumPy out= is written through a zero-copy view
    raise TypeError(f"out= must be a cupric or NumPy array, got {type(o).__name__}")


class _NoEquivalent(Exception):
    """cupric has no function for this ufunc call: NumPy runs it (see _fallback)."""


def _ufunc_name(ufunc, method):
    return f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    outs = kwargs.get("out") or ()
    if any(_is_foreign(x) for x in inputs + tuple(outs)):
        return NotImplemented
    try:
        return _ufunc_in_cupric(ufunc, method, inputs, dict(kwargs))
    except _NoEquivalent:
        pass  # outside the handler, so that the fallback's own errors do not chain to this one
    call = ufunc if method == "__call__" else getattr(ufunc, method)
    return _fallback.run_in_numpy(_ufunc_name(ufunc, method), call, inputs, kwargs)


def _ufunc_in_cupric(ufunc, method, inputs, kwargs):
    outs = kwargs.pop("out", None) or ()
    if len(outs) > 1:
        raise _NoEquivalent  # cupric's ufuncs have one output
    cu = _cupric()
    device = _operands.device_of(*inputs)
    args = [_operand(x, device) for x in inputs]
    if outs:
        kwargs["out"] = _out_operand(outs[0])
    name = ufunc.__name__
    if method == "__call__":
        fn = getattr(cu, name, None)
        if not callable(fn):
            raise _NoEquivalent
        result = fn(*args, **kwargs)
    elif method in ("reduce", "accumulate"):
        target = (_REDUCE if method == "reduce" else _ACCUMULATE).get(name)
        fn = getattr(cu, target, None) if target else None
        if fn is None or len(args) != 1:
            raise _NoEquivalent
        axis = kwargs.pop("axis", 0)
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        result = fn(args[0], axis=axis, **kwargs)
    elif method == "outer":
        fn = getattr(cu, name, None)
        reshape = getattr(cu, "reshape", None)
        if not callable(fn) or reshape is None or len(args) != 2:
            raise _NoEquivalent
        a, b = (_c.asarray(x) for x in args)
        result = fn(reshape(a, a.shape + (1,) * b.ndim), b, **kwargs)
    else:  # reduceat, at: no cupric equivalent yet
        raise _NoEquivalent
    return outs[0] if outs else result


# ---- __array_function__ --------------------------------------------------------------------------


def _lookup(func):
    """The cupric function standing for a NumPy one: same name, same submodule (numpy.linalg ->
    cupric.linalg), or None."""
    name = getattr(func, "__name__", None)
    module = getattr(func, "__module__", None) or "numpy"
    if name is None or not (module == "numpy" or module.startswith("numpy.")):
        return None
    target = _cupric()
    for part in module.split(".")[1:]:
        target = getattr(target, part, None)
        if target is None:
            return None
    fn = getattr(target, name, None)
    if fn is None and target is _cupric():
        fn = _INTROSPECTION.get(name)
    return fn if callable(fn) and fn is not func else None


def _array_function(self, func, types, args, kwargs):
    if not all(issubclass(t, (_c.ndarray, _np.ndarray)) for t in types):
        return NotImplemented
    impl = _lookup(func)
    if impl is None:
        return _fallback.run_in_numpy(_function_name(func), func, args, kwargs)
    try:
        return impl(*args, **_without_numpy_defaults(kwargs))
    except (TypeError, NotImplementedError) as err:
        # arguments cupric's function refuses (None, lists of mixed objects, keywords it lacks):
        # NumPy's answer where NumPy can give it, else cupric's error
        return _fallback.run_in_numpy(_function_name(func), func, args, kwargs, refused=err)


def _function_name(func):
    return f"{getattr(func, '__module__', None) or 'numpy'}.{func.__name__}"


def _without_numpy_defaults(kwargs):
    """Drops keywords NumPy fills in with its defaults (like=, order='C', subok) that cupric
    functions do not take; non-default values stay, so that cupric refuses them by name."""
    kwargs = dict(kwargs)
    kwargs.pop("like", None)
    if kwargs.get("order", "K") in ("K", "C", "A", None):
        kwargs.pop("order", None)
    if kwargs.get("subok", True) in (True, False):
        kwargs.pop("subok", None)
    return kwargs


def _get(self, stream=None):
    """A NumPy copy on the host (CuPy's ndarray.get); waits for the work queued on the array."""
    return _to_numpy(self.to_device("cpu")).copy() if self.device == "cpu" else _to_numpy(self.to_device("cpu"))


class _UfuncDoc:
    """ufunc.__doc__: each ufunc's own (its call, the ufunc table's doc column, its loops), the
    class's text on the class itself (help() and the stubs read that)."""

    def __init__(self, class_doc):
        self.class_doc = class_doc

    def __get__(self, uf, cls=None):
        return self.class_doc if uf is None else uf._doc


def install():
    if not isinstance(_c.ufunc.__dict__.get("__doc__"), _UfuncDoc):
        _c.ufunc.__doc__ = _UfuncDoc(_c.ufunc.__doc__)
    cls = _c.ndarray
    cls.get = _get
    cls.__array__ = _array
    cls.__array_namespace__ = _array_namespace
    cls.__array_ufunc__ = _array_ufunc
    cls.__array_function__ = _array_function
    cls.__array_priority__ = 100
    _install_printing(cls)
