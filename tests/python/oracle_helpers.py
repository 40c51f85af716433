"""NumPy as the oracle for property tests: the same call on NumPy and on cupric ends the same way,
the same values or the same kind of error; and the suite's hypothesis settings for such tests
(few examples, derandomized, so that a run is fast and repeatable; CUPRIC_PROPERTY_EXAMPLES=2000
searches longer)."""

import os
import re

import cupric as cu
import numpy as np
from hypothesis import HealthCheck, settings

PROPERTIES = settings(max_examples=int(os.environ.get("CUPRIC_PROPERTY_EXAMPLES", "50")), deadline=None,
                      derandomize=os.environ.get("CUPRIC_PROPERTY_EXAMPLES") is None,
                      suppress_health_check=[HealthCheck.too_slow])
ERRORS = (ValueError, TypeError, IndexError)


def param_id(value, width=None):
    """A test id from repr(value) without memory addresses ("<object object at 0x7f...>"), so that
    every process (pytest-xdist's workers) collects the same ids; cut to `width` characters."""
    text = re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))
    return text[:width] if width else text


def outcome(fn):
    """('ok', result) or ('error', the kind of error among ERRORS)."""
    try:
        return "ok", fn()
    except ERRORS as e:
        return "error", next(k for k in ERRORS if isinstance(e, k))


def assert_same(got, want):
    """cupric's result equals NumPy's: arrays (lists and tuples of them) of the same dtype and shape."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want, strict=True):
            assert_same(g, w)
        return
    assert isinstance(got, cu.ndarray), type(got)
    g, w = np.asarray(got.to_device("cpu")), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
    if w.dtype.kind in "fc":  # a few ulp: cupric's vector math and a GPU's differ from NumPy's libm there
        tol = max(1e-12, 16 * float(np.finfo(w.dtype).eps))
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(g, w)


def assert_same_outcome(cupric_call, numpy_call, same_error=True):
    """Both calls return equal arrays, or both raise the same kind of error (any of ERRORS when
    not same_error)."""
    want = outcome(numpy_call)
    got = outcome(cupric_call)
    assert got[0] == want[0], (got, want)
    if want[0] == "ok":
        assert_same(got[1], want[1])
    elif same_error:
        assert got[1] is want[1], (got, want)
