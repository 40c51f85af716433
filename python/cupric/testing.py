"""numpy.testing's assertions for cupric arrays: arrays (GPU ones too) are compared on the host
with NumPy's own checks, so messages and tolerances are NumPy's.

    import cupric as cu
    cu.testing.assert_allclose(cu.sin(x), expected, rtol=1e-6)
"""

import importlib as _importlib

from ._operands import to_host

__all__ = ["assert_allclose", "assert_array_equal", "assert_array_almost_equal", "assert_array_less",
           "assert_equal", "assert_almost_equal", "assert_approx_equal", "assert_array_max_ulp",
           "assert_array_almost_equal_nulp", "assert_string_equal", "assert_raises", "assert_raises_regex",
           "assert_warns", "assert_no_warnings"]


def _forward(name):
    """numpy.testing.<name> with cupric arrays brought to the host first (numpy.testing is
    imported at the first call, so `import cupric.testing` stays cheap)."""

    def check(*args, **kwargs):
        target = getattr(_importlib.import_module("numpy.testing"), name)
        return target(*[to_host(a) for a in args], **{k: to_host(v) for k, v in kwargs.items()})

    check.__name__ = check.__qualname__ = name
    check.__doc__ = f"numpy.testing.{name} for cupric arrays (compared on the host)."
    return check


assert_allclose = _forward("assert_allclose")
assert_array_equal = _forward("assert_array_equal")
assert_array_almost_equal = _forward("assert_array_almost_equal")
assert_array_less = _forward("assert_array_less")
assert_equal = _forward("assert_equal")
assert_almost_equal = _forward("assert_almost_equal")
assert_approx_equal = _forward("assert_approx_equal")
assert_array_max_ulp = _forward("assert_array_max_ulp")
assert_array_almost_equal_nulp = _forward("assert_array_almost_equal_nulp")
assert_string_equal = _forward("assert_string_equal")
assert_raises = _forward("assert_raises")
assert_raises_regex = _forward("assert_raises_regex")
assert_warns = _forward("assert_warns")
assert_no_warnings = _forward("assert_no_warnings")
