"""Bad calls across the whole namespace (functions, ufuncs, ndarray methods, operators, indexing,
cupric.random): every error is a Python exception of the kind NumPy raises (TypeError,
ValueError, IndexError, OverflowError, ...; never RuntimeError or SystemError), its message says
nothing of C++ ("std::bad_cast", "vector::_M_range_check"), and the arrays passed in are left as
they were."""

import itertools
import operator
import re

import cupric as cu
import numpy as np
import pytest

NUMPY_KINDS = (TypeError, ValueError, IndexError, KeyError, OverflowError, ZeroDivisionError, NotImplementedError,
               MemoryError, AttributeError, BufferError, FileNotFoundError)  # fromfile('3'), as NumPy's
CPP_TEXT = re.compile(r"\w::\w|bad_cast|bad_alloc|bad_function_call|bad (optional|variant) access|_M_|"
                      r"basic_string|\bstoi\b|\bstol\b|__cxx")


class Opaque:
    pass


BAD_VALUES = [None, "3", "", b"x", Opaque(), 2**70, -(2**70), 10**400, -1, 1.5, float("nan"), 1j, [[1], [1, 2]],
              [1, "a"], {}, {"a": 1}, (2**63,), (-1, 2), (1.5, 2), ("a",), slice(None), Ellipsis, np.float64(2.5),
              np.array(["x"])]
BAD_KWARGS = [{"dtype": "nope"}, {"dtype": object}, {"dtype": 3}, {"axis": 99}, {"axis": 2**70}, {"axis": "x"},
              {"axis": 1.5}, {"out": 3}, {"out": "x"}, {"keepdims": "x"}, {"device": "tpu:0"}, {"device": "cuda:x"}, {"device": 3},
              {"casting": "nope"}, {"order": "Q"}, {"k": 2**70}, {"ddof": "x"}, {"where": 3}, {"where": "x"},
              {"copy": "x"}, {"endpoint": "x"}, {"num": -1}, {"num": 2**70}, {"nonsense": 1}]


def fresh_arrays():
    return [cu.asarray(np.arange(6, dtype=np.float64).reshape(2, 3) - 2.5),
            cu.asarray(np.array([3, -1, 7], dtype=np.int32)),
            cu.asarray(np.array([True, False]))]


# Calls that would change process-wide state or take long with a valid-looking argument.
SKIP = {"set_num_threads", "from_dlpack",
        # files (they would read or write files named after the bad values; tests/python/test_io.py)
        "save", "savez", "savez_compressed", "savetxt", "load", "loadtxt", "genfromtxt", "fromfile", "fromregex",
        # NumPy's global print and floating-point state (a bad value would leak into later tests)
        "set_printoptions", "printoptions", "seterr", "seterrcall", "errstate", "setbufsize", "show_runtime"}


def namespace_functions():
    out = []
    for name in sorted(dir(cu)):
        obj = getattr(cu, name)
        if name.startswith("_") or name in SKIP or isinstance(obj, type) or not callable(obj):
            continue
        out.append((f"cu.{name}", obj))
    for name in sorted(dir(cu.random)):
        obj = getattr(cu.random, name)
        if not name.startswith("_") and callable(obj) and not isinstance(obj, type):
            out.append((f"cu.random.{name}", obj))
    g = cu.random.default_rng(0)
    for name in sorted(dir(g)):
        if not name.startswith("_") and callable(getattr(g, name)):
            out.append((f"Generator.{name}", getattr(g, name)))
    return out


def method_calls(arrays):
    a = arrays[0]
    return [(f"ndarray.{n}", getattr(a, n)) for n in sorted(dir(a))
            if not n.startswith("_") and callable(getattr(a, n))]


class Tally:
    def __init__(self):
        self.raised = 0
        self.calls = 0

    def call(self, what, fn, *args, **kwargs):
        """Calls fn; an error must be a NumPy kind without C++ text, and leave the arrays passed in
        as they were."""
        self.calls += 1
        given = [a for a in list(args) + list(kwargs.values()) if isinstance(a, cu.ndarray)]
        before = [np.asarray(a).copy() for a in given]
        context = f"{what}{args!r:.100}{kwargs}"
        try:
            fn(*args, **kwargs)
        except NUMPY_KINDS as err:
            self.raised += 1
            message = str(err)
            assert not CPP_TEXT.search(message), f"{context}: {type(err).__name__}: {message}"
            assert message, f"{context}: {type(err).__name__} without a message"
            for a, b in zip(given, before, strict=True):
                np.testing.assert_array_equal(np.asarray(a), b, err_msg=f"{context} raised and changed an argument")
        except Exception as err:  # noqa: BLE001
            raise AssertionError(f"{context}: {type(err).__name__}: {err}") from err


@pytest.fixture(autouse=True)
def in_a_scratch_directory(tmp_path, monkeypatch):
    """Methods such as x.tofile and x.dump write files named after the bad values: in a scratch
    directory, not the checkout (they once left files named 3 and x in the repository)."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="module")
def tally():
    t = Tally()
    yield t
    print(f"\nbad calls: {t.calls} made, {t.raised} raised")


def test_namespace_functions_with_bad_arguments(tally):
    for what, fn in namespace_functions() + method_calls(fresh_arrays()):
        for bad in BAD_VALUES:
            arrays = fresh_arrays()
            tally.call(what, fn, bad)
            tally.call(what, fn, arrays[0], bad)
            tally.call(what, fn, arrays[1], arrays[0], bad)
            tally.call(what, fn, bad, arrays[2])
        for kwargs in BAD_KWARGS:
            arrays = fresh_arrays()
            tally.call(what, fn, arrays[0], **kwargs)
            tally.call(what, fn, 3, **kwargs)
    assert tally.raised > 2000


def test_ufuncs_with_bad_arguments(tally):
    ufuncs = [getattr(cu, n) for n in sorted(dir(cu)) if isinstance(getattr(cu, n), cu.ufunc)]
    for uf in ufuncs:
        for bad in BAD_VALUES:
            arrays = fresh_arrays()
            tally.call(uf.name, uf, bad)
            tally.call(uf.name, uf, *([arrays[0]] * uf.nin), bad)  # a bad positional out
            tally.call(uf.name, uf, *([bad] + [arrays[1]] * (uf.nin - 1)))
            tally.call(uf.name, uf, *([arrays[0]] * uf.nin), out=arrays[1])  # float into int32: casting
        for kwargs in BAD_KWARGS:
            tally.call(uf.name, uf, *([fresh_arrays()[0]] * uf.nin), **kwargs)


OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod, operator.pow,
             operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift, operator.matmul,
             operator.lt, operator.le, operator.eq, operator.ne, operator.gt, operator.ge]
INPLACE = [operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ifloordiv, operator.imod,
           operator.ipow, operator.iand, operator.ior, operator.ixor, operator.ilshift, operator.irshift]


def test_operators_indexing_and_conversions_with_bad_arguments(tally):
    for bad in BAD_VALUES:
        for op in OPERATORS + INPLACE:
            for a in fresh_arrays():
                tally.call(op.__name__, op, a, bad)
                if op in OPERATORS:
                    tally.call(op.__name__, op, bad, a)
        for a in fresh_arrays():
            tally.call("getitem", operator.getitem, a, bad)
            tally.call("getitem", operator.getitem, a, (0, bad))
            tally.call("setitem", operator.setitem, a, bad, 1)
            tally.call("setitem", operator.setitem, a, 0, bad)
            tally.call("setitem", operator.setitem, a, (slice(None), bad), 0)
    for a, fn in itertools.product(fresh_arrays(), [int, float, complex, len, operator.index, bool]):
        tally.call(fn.__name__, fn, a)
