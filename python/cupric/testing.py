"""numpy.testing's assertions for cupric arrays: arrays (GPU ones too) are compared on the host
with NumPy's own checks, so messages and tolerances are NumPy's.

    import cupric as cu
    cu.testing.assert_allclose(cu.sin(x), expected, rtol=1e-6)
"""

import functools as _functools
import importlib as _importlib

__all__ = ["assert_allclose", "assert_array_equal", "assert_array_almost_equal", "assert_array_less",
           "assert_equal", "assert_almost_equal", "assert_approx_equal", "assert_array_max_ulp",
           "assert_array_almost_equal_nulp", "assert_string_equal", "assert_raises", "assert_raises_regex",
           "assert_warns", "assert_no_warnings"]


def _host(value):
    from . import _cupric

    if isinstance(value, _cupric.ndarray):
        return value.get()
    if isinstance(value, (list, tuple)) and any(isinstance(v, _cupric.ndarray) for v in value):
        return type(value)(_host(v) for v in value)
    return value


def _forward(name):
    target = getattr(_importlib.import_module("numpy.testing"), name)

    @_functools.wraps(target)
    def check(*args, **kwargs):
        return target(*[_host(a) for a in args], **{k: _host(v) for k, v in kwargs.items()})

    return check


def __getattr__(name):
    if name in __all__:
        fn = _forward(name)
        globals()[name] = fn
        return fn
    raise AttributeError(f"module 'cupric.testing' has no attribute {name!r}")
