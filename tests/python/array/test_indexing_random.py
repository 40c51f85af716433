"""Random index expressions, get and set, over random shapes and dtypes against NumPy: integers
(in range, out of range, near int64's ends), slices with any bounds and steps, None, Ellipsis,
integer and boolean arrays. Either both raise the same kind of error (and a failed assignment
leaves the array as it was) or both give the same values."""

import cupric as cu
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.uint64, np.float16, np.float32, np.float64,
          np.complex64]
BIG = [2**31, 2**62, 2**63 - 1, -(2**63), -(2**62)]


def bound(n):
    return st.none() | st.integers(-n - 3, n + 3) | st.sampled_from(BIG)


@st.composite
def index_item(draw, shape, axis):
    n = shape[axis] if axis < len(shape) else 1
    kind = draw(st.sampled_from(["int", "slice", "slice", "none", "ellipsis", "ints", "bools", "huge"]))
    if kind == "int":
        return draw(st.integers(-n - 1, n))
    if kind == "huge":
        return draw(st.sampled_from(BIG))
    if kind == "slice":
        step = draw(st.none() | st.integers(-3, 3).filter(bool) | st.sampled_from([2**62, -(2**63) + 1]))
        return slice(draw(bound(n)), draw(bound(n)), step)
    if kind == "none":
        return None
    if kind == "ellipsis":
        return Ellipsis
    if kind == "ints":
        size = draw(st.integers(0, 4))
        return np.array(draw(st.lists(st.integers(-n - 1, n), min_size=size, max_size=size)), np.int64)
    rest = shape[axis:axis + draw(st.integers(0, 2))]
    return np.array(draw(st.lists(st.booleans(), min_size=int(np.prod(rest)), max_size=int(np.prod(rest)))),
                    bool).reshape(rest)


@st.composite
def case(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=0, max_size=3)))
    dtype = draw(st.sampled_from(DTYPES))
    items = [draw(index_item(shape, axis)) for axis in range(draw(st.integers(0, 4)))]
    key = items[0] if len(items) == 1 and draw(st.booleans()) else tuple(items)
    return shape, dtype, key


def values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    return rng.integers(-50, 50, size=shape).astype(dtype) if shape else np.asarray(7, dtype)


KINDS = (IndexError, ValueError, TypeError, OverflowError)  # AxisError is both of the first two: IndexError


def outcome(fn):
    """('ok', value) or ('error', the kind of error)."""
    try:
        return "ok", fn()
    except KINDS as e:
        return "error", next(k for k in KINDS if isinstance(e, k))


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(c=case(), seed=st.integers(0, 2**16))
def test_random_gets_match_numpy(c, seed):
    shape, dtype, key = c
    n = values(shape, dtype, seed)
    x = cu.asarray(n, device="cpu")
    with np.errstate(all="ignore"):
        want = outcome(lambda: n[key])
    got = outcome(lambda: x[key])
    assert got[0] == want[0], (shape, key, got, want)
    if want[0] == "ok":
        np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(want[1]))
        assert np.asarray(got[1]).dtype == np.asarray(want[1]).dtype
    else:
        assert got[1] is want[1], (shape, key, got, want)


@SETTINGS
@given(c=case(), seed=st.integers(0, 2**16), scalar=st.booleans())
def test_random_sets_match_numpy_and_failures_write_nothing(c, seed, scalar):
    shape, dtype, key = c
    n = values(shape, dtype, seed)
    x = cu.asarray(n.copy(), device="cpu")
    try:
        target = n[key]
    except (IndexError, ValueError, TypeError):
        target = None
    if scalar or target is None:
        value = 3
    else:  # an array of the target's shape, or one that broadcasts to it
        vshape = np.shape(target)[-1:] if np.ndim(target) and seed % 2 else np.shape(target)
        value = values(vshape, dtype, seed + 1)
    before = n.copy()
    want = outcome(lambda: n.__setitem__(key, value))
    cu_value = cu.asarray(value, device="cpu") if isinstance(value, np.ndarray) else value
    got = outcome(lambda: x.__setitem__(key, cu_value))
    assert got[0] == want[0], (shape, key, got, want)
    if want[0] == "error":
        assert got[1] is want[1], (shape, key, got, want)
        np.testing.assert_array_equal(np.asarray(x), before)  # nothing written
    else:
        np.testing.assert_array_equal(np.asarray(x), n)


@pytest.mark.parametrize("key", [np.int64(-(2**63)), [2**63 - 1], slice(2**70, None),
                                 slice(None, None, -(2**63)), (None,) * 70, (Ellipsis, None) * 40])
def test_extreme_keys_raise_like_numpy(key):
    n = np.arange(24.0).reshape(2, 3, 4)
    x = cu.asarray(n, device="cpu")
    want = outcome(lambda: n[key])
    got = outcome(lambda: x[key])
    assert got[0] == want[0] and (got[0] == "ok" or got[1] is want[1]), (key, got, want)


def test_index_past_int64_raises():
    x = cu.zeros(3, device="cpu")
    for key in (np.uint64(2**64 - 1), 2**64, -(2**63) - 1):  # NumPy: OverflowError or IndexError
        with pytest.raises((IndexError, OverflowError)):
            x[key]
