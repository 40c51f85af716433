"""The six comparison operators and ufuncs against NumPy 2 where the other operand is not an
array of numbers: None, strings, bytes, arbitrary objects, lists holding them, Python ints of
any size (exact, NEP 50) — and arrays are unhashable, as NumPy's."""

import operator

import cupric as cu
import numpy as np
import pytest
from oracle_helpers import param_id

OPERATORS = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]
UFUNC_OF = {operator.eq: "equal", operator.ne: "not_equal", operator.lt: "less", operator.le: "less_equal",
            operator.gt: "greater", operator.ge: "greater_equal"}
DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
          "float32", "float64", "complex64", "complex128"]


class Thing:
    pass


OPAQUE = [None, "x", "", b"x", Thing(), object(), ["a", "b", "c"], [None, None, None], ("a",), [["x"]]]
BIG_INTS = [2**63 - 1, 2**63, 2**64 - 1, 2**64, 2**70, 10**30, -(2**63), -(2**63) - 1, -(2**70), -(10**30), 10**400]


def values(dtype):
    rng = np.random.default_rng(7)
    if dtype == "bool":
        return rng.random(3) < 0.5
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return np.array([info.min, rng.integers(info.min, info.max, dtype=dtype), info.max], dtype=dtype)
    return (rng.standard_normal(3) * 10).astype(dtype)


def outcome(fn):
    """('ok', value as a NumPy array or Python object) or ('error', the builtin class)."""
    try:
        r = fn()
    except Exception as err:  # noqa: BLE001 - compared by kind
        for kind in (OverflowError, TypeError, ValueError):
            if isinstance(err, kind):
                return "error", kind
        return "error", type(err)
    return "ok", r


def assert_same_outcome(np_fn, cu_fn, context):
    want, got = outcome(np_fn), outcome(cu_fn)
    assert got[0] == want[0], f"{context}: NumPy {want}, cupric {got}"
    if want[0] == "error":
        assert got[1] is want[1], f"{context}: NumPy raised {want[1].__name__}, cupric {got[1].__name__}"
        return
    w, g = want[1], got[1]
    assert isinstance(g, cu.ndarray), f"{context}: cupric returned {type(g).__name__}, NumPy an array"
    g = np.asarray(g)
    w = np.asarray(w)
    assert g.dtype == w.dtype and g.shape == w.shape, f"{context}: {g.dtype}{g.shape} vs NumPy {w.dtype}{w.shape}"
    np.testing.assert_array_equal(g, w, err_msg=context)


@pytest.mark.parametrize("op", OPERATORS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("other", OPAQUE, ids=param_id)
def test_operators_with_objects_that_have_no_dtype(op, other):
    # NumPy 2: == and != answer elementwise (nothing is equal to a string or None), the
    # orderings raise TypeError; a list of the wrong length cannot broadcast either way
    for shape in [(3,), (2, 3), ()]:
        ref = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
        x = cu.asarray(ref)
        assert_same_outcome(lambda r=ref: op(r, other), lambda x=x: op(x, other), f"{op.__name__}({shape}, {other!r})")
        assert_same_outcome(lambda r=ref: op(other, r), lambda x=x: op(other, x), f"{op.__name__}({other!r}, {shape})")


def test_opaque_operands_that_do_not_broadcast():
    x = cu.arange(3)
    with pytest.raises(ValueError):
        np.arange(3) == ["a", "b"]  # noqa: B015
    with pytest.raises(ValueError, match="cannot broadcast"):
        x == ["a", "b"]  # noqa: B015


@pytest.mark.parametrize("name", ["equal", "not_equal", "less", "greater_equal"])
@pytest.mark.parametrize("other", [None, Thing(), "x", b"x", ["a", "b", "c"]], ids=param_id)
def test_comparison_ufuncs_with_objects_that_have_no_dtype(name, other):
    # the ufuncs: None and other objects compare as 0-d object arrays (== finds nothing equal,
    # the orderings raise TypeError); strings have no loop at all (TypeError)
    ref = np.arange(6.0).reshape(2, 3)
    x = cu.asarray(ref)
    assert_same_outcome(lambda: getattr(np, name)(ref, other), lambda: getattr(cu, name)(x, other),
                        f"{name}(x, {other!r})")
    assert_same_outcome(lambda: getattr(np, name)(other, ref), lambda: getattr(cu, name)(other, x),
                        f"{name}({other!r}, x)")


def test_equality_ufuncs_with_none_take_out_and_where():
    x = cu.asarray([1.0, np.nan, 3.0])
    out = cu.asarray([True, True, True])
    assert cu.equal(x, None, out=out) is out and out.tolist() == [False, False, False]
    out2 = cu.asarray([False, False, False])
    cu.not_equal(None, x, out=out2, where=cu.asarray([True, False, True]))
    assert out2.tolist() == [True, False, True]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPERATORS, ids=lambda f: f.__name__)
def test_comparisons_with_python_ints_of_any_size(op, dtype):
    # NEP 50: an integer array against an int out of its range has one answer for every element
    # (exact, whatever the int's size); float arrays convert the int (OverflowError past float's
    # range); bool arrays promote to int64, where big ints overflow
    ref = values(dtype)
    x = cu.asarray(ref)
    name = UFUNC_OF[op]
    np_ufunc, cu_ufunc = getattr(np, name), getattr(cu, name)
    for v in BIG_INTS:
        with np.errstate(all="ignore"):
            assert_same_outcome(lambda v=v: op(ref, v), lambda v=v: op(x, v), f"{op.__name__}({dtype}, {v})")
            assert_same_outcome(lambda v=v: op(v, ref), lambda v=v: op(v, x), f"{op.__name__}({v}, {dtype})")
            assert_same_outcome(lambda v=v: np_ufunc(ref, v), lambda v=v: cu_ufunc(x, v), f"{name}({dtype}, {v})")


def test_huge_ints_still_overflow_in_arithmetic():
    x = cu.arange(3)
    for fn in (lambda a: a + 2**70, lambda a: a * -(2**64), lambda a: cu.add(a, 10**30)):
        with pytest.raises(OverflowError):
            fn(np.arange(3))
        with pytest.raises(OverflowError):
            fn(x)


def test_arrays_are_unhashable():
    for a in (cu.arange(3), cu.asarray(5.0), cu.zeros((0,))):
        with pytest.raises(TypeError, match="unhashable"):
            hash(a)
        with pytest.raises(TypeError):
            {a: 1}  # noqa: B018
    with pytest.raises(TypeError, match="unhashable"):
        hash(np.arange(3))


def test_array_ufunc_none_defers():
    # NumPy's binary operators step aside for a type that sets __array_ufunc__ = None
    class Opt:
        __array_ufunc__ = None

        def __eq__(self, other):
            return "Opt.__eq__"

        def __radd__(self, other):
            return "Opt.__radd__"

    assert (np.arange(3) == Opt()) == "Opt.__eq__"
    assert (cu.arange(3) == Opt()) == "Opt.__eq__"
    assert cu.arange(3) + Opt() == "Opt.__radd__"
