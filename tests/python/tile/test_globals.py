"""Globals and closure variables in kernels: their values are compiled in, so a new value makes
the next launch compile again (compiled and interpreted runs agree after every change), helpers'
globals count too, and a global that could change in place (a list, an array, an object) is
refused with an error that names it."""

import cupric as cu
import cupric.tile as ct
import numpy as np
import pytest
from tile_helpers import run

SCALE = 2.0
OFFSET = 1
NAMES = ("a", "b")
_MUTABLE = [1.0]


@ct.function
def _shifted(t):
    return t + OFFSET


@ct.kernel
def scale_kernel(x, y, B: ct.Constant[int]):
    i = ct.bid(0)
    t = ct.load(x, index=(i,), shape=(B,))
    ct.store(y, index=(i,), tile=_shifted(t * SCALE))


@ct.kernel
def reads_a_list(x, B: ct.Constant[int]):
    t = ct.load(x, index=(0,), shape=(B,))
    ct.store(x, index=(0,), tile=t * _MUTABLE[0])


def launch(mode, x):
    y = cu.zeros(x.shape, dtype=x.dtype)
    run(scale_kernel, mode, (x.shape[0] // 4,), x, y, 4)
    return np.asarray(y)


@pytest.fixture
def restore_globals():
    yield
    g = globals()
    g["SCALE"], g["OFFSET"] = 2.0, 1


@pytest.mark.parametrize("mode", ["compiled", "interpret"])
def test_a_changed_global_recompiles(mode, restore_globals):
    g = globals()
    ref = np.random.default_rng(3).uniform(-4, 4, 16).astype(np.float32)
    x = cu.asarray(ref)
    for scale, offset in [(2.0, 1), (3.0, 1), (3.0, -5), (2.0, 1), (0.5, 7)]:
        g["SCALE"], g["OFFSET"] = scale, offset
        for _ in range(3):  # the later launches take the fast path (launch plans)
            np.testing.assert_allclose(launch(mode, x), ref * scale + offset, rtol=1e-6)


def test_compiled_and_interpreted_agree_after_each_change(restore_globals):
    g = globals()
    ref = np.random.default_rng(4).uniform(-4, 4, 8).astype(np.float32)
    x = cu.asarray(ref)
    for scale in (2.0, -1.5, 2.0, 9.0):
        g["SCALE"] = scale
        # (the compiled body may fuse t * SCALE + OFFSET: one rounding instead of two)
        np.testing.assert_allclose(launch("compiled", x), launch("interpret", x), rtol=1e-6)
        np.testing.assert_allclose(launch("compiled", x), ref * scale + 1, rtol=1e-6)


def test_rebinding_to_an_equal_value_reuses_the_kernel(restore_globals):
    g = globals()
    x = cu.asarray(np.arange(8, dtype=np.float32))
    g["SCALE"] = 2.0
    launch("compiled", x)
    n = len(scale_kernel.cache)
    g["SCALE"] = float("2.0")  # another object, the same value: the same specialisation
    np.testing.assert_array_equal(launch("compiled", x), np.arange(8) * 2.0 + 1)
    assert len(scale_kernel.cache) == n
    g["SCALE"] = 0.0
    launch("compiled", x)
    g["SCALE"] = -0.0  # equal to 0.0 but another constant
    launch("compiled", x)
    g["SCALE"] = float("-0.0")
    np.testing.assert_array_equal(launch("compiled", x), np.ones(8))
    assert len(scale_kernel.cache) == n + 2


def test_closure_variables_are_captured_by_value():
    def make():
        factor = 2.0

        @ct.kernel
        def k(x, B: ct.Constant[int]):
            ct.store(x, index=(0,), tile=ct.load(x, index=(0,), shape=(B,)) * factor)

        def set_factor(v):
            nonlocal factor
            factor = v

        return k, set_factor

    k, set_factor = make()
    for mode in ("compiled", "interpret"):
        for f in (2.0, 5.0, 2.0):
            set_factor(f)
            x = cu.asarray(np.ones(4, np.float32))
            run(k, mode, (1,), x, 4)
            assert np.asarray(x).tolist() == [f] * 4, (mode, f)


def test_a_global_that_changes_in_place_is_refused():
    x = cu.asarray(np.ones(4, np.float32))
    with pytest.raises(ct.CompileError, match=r"reads the global '_MUTABLE', a list.*pass '_MUTABLE' as an argument"):
        reads_a_list[(1,)](x, 4)
    assert np.asarray(x).tolist() == [1.0] * 4
    reads_a_list.interpret[(1,)](x, 4)  # the interpreter reads the list as Python does
    assert np.asarray(x).tolist() == [1.0] * 4


def test_tuples_of_constants_are_constants(restore_globals):
    @ct.kernel
    def k(x, B: ct.Constant[int]):
        ct.store(x, index=(0,), tile=ct.load(x, index=(0,), shape=(B,)) + len(NAMES))

    x = cu.asarray(np.zeros(4, np.float32))
    k[(1,)](x, 4)
    assert np.asarray(x).tolist() == [2.0] * 4


def test_global_names_are_read_from_the_bytecode_as_dis_reads_them():
    """The globals a kernel reads come from a scan of its bytecode (no dis.Instruction per unit:
    part of a new process' first launch); it finds what dis finds, also past EXTENDED_ARG (more
    than 256 names) and in nested code (comprehensions, lambdas)."""
    import dis
    import types

    from cupric.tile import _globals

    many = "\n".join(f"    v{i} = g{i}" for i in range(300))
    namespace = {}
    exec(f"def wide():\n{many}\n    return [OFFSET for _ in SCALE]\n", namespace)  # noqa: S102
    codes = [scale_kernel.fn.__code__, _shifted.fn.__code__, namespace["wide"].__code__, dis.get_instructions.__code__]
    seen = 0
    while codes:
        code = codes.pop()
        want = {i.argval for i in dis.get_instructions(code) if i.opname == "LOAD_GLOBAL"}
        assert _globals._load_global_names(code) == want
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
        seen += 1
    assert seen >= 5 and "g299" in _globals._global_names(namespace["wide"].__code__)
