"""cupric.tile's language: the Python subset a kernel may use (loops with run-time and constant
bounds, carried tiles, static_range, if/else on scalars, tuples, constants, @ct.function
helpers), and compile errors that point at the kernel's file and line."""

import math
import re

import cupric as cu
import numpy as np
import pytest
from cupric import tile as ct
from tile_helpers import assert_close, random, run, to_cu, to_np

SCALE = 2.5  # a global constant read by a kernel


@ct.function
def axpy(a, x, y):
    return a * x + y


@ct.function
def clamp01(t):
    lo, hi = 0.0, 1.0  # tuple assignment
    return ct.minimum(ct.maximum(t, lo), hi)


@ct.kernel
def loops(x, out, n_tiles, BLOCK: ct.Constant[int], UNROLL: ct.Constant[int]):
    acc = ct.zeros((BLOCK,), dtype=ct.float32)
    total = 0.0  # a Python number carried through the loop: becomes float32
    for i in range(n_tiles):  # run-time bound
        t = ct.load(x, index=(i,), shape=(BLOCK,))
        acc = axpy(SCALE, t, acc)
        total = total + ct.sum(t)
    for k in ct.static_range(UNROLL):  # unrolled
        acc = acc + k
    for j in range(2, 7, 2):  # constant bounds, still a loop
        acc = acc - j
    ct.store(out, index=(0,), tile=clamp01(acc / 100.0) + total * 0)


def test_loops_and_helpers(mode):
    x = random(5 * 16, "float32")
    out = cu.zeros(16, dtype=cu.float32)
    run(loops, mode, (1,), to_cu(x), out, 5, 16, 3)
    acc = SCALE * x.reshape(5, 16).sum(0) + (0 + 1 + 2) - (2 + 4 + 6)
    assert_close(to_np(out), np.clip(acc / 100.0, 0, 1), rtol=1e-5, atol=1e-6)


@ct.kernel
def branches(x, out, threshold, MODE: ct.Constant[str]):
    t = ct.load(x, index=(ct.bid(0),), shape=(8,))
    s = ct.sum(t)
    if s > threshold:  # run-time branch on a scalar
        y = t * 2
        note = 1
    elif s > 0:
        y = t + 100
        note = 2
    else:
        y = -t
        note = 3
    if MODE == "double":  # compile-time branch
        y = y * 2
    r = y if MODE != "none" else t
    ct.store(out, index=(ct.bid(0),), tile=r + note * 1000)


@pytest.mark.parametrize("mode_const", ["double", "single"])
def test_runtime_and_static_if(mode, mode_const):
    x = np.concatenate([np.full(8, 2.0), np.full(8, 0.1), np.full(8, -1.0)]).astype(np.float32)
    out = cu.zeros(24, dtype=cu.float32)
    run(branches, mode, (3,), to_cu(x), out, 5.0, mode_const)
    f = 2 if mode_const == "double" else 1
    want = np.concatenate([x[:8] * 2 * f + 1000, (x[8:16] + 100) * f + 2000, -x[16:] * f + 3000])
    assert_close(to_np(out), want)


@ct.kernel
def swap_and_tuples(x, out, n, PAIR: ct.Constant[tuple]):
    a = ct.load(x, index=(0,), shape=(4,))
    b = a * 10
    for _ in range(n):
        a, b = b, a  # carried values swap places
    lo, hi = PAIR
    first, *rest = (lo, hi, lo + hi)
    ct.store(out, index=(0,), tile=a + first + len(rest) + math.floor(2.5))


def test_swaps_tuples_and_starred(mode):
    x = np.arange(1, 5, dtype=np.float32)
    for n, base in ((3, x * 10), (4, x)):
        out = cu.zeros(4, dtype=cu.float32)
        run(swap_and_tuples, mode, (1,), to_cu(x), out, n, (7, 9))
        assert_close(to_np(out), base + 7 + 2 + 2)


@ct.kernel
def nested(x, out, R: ct.Constant[int]):
    acc = ct.zeros((4,), dtype=ct.float32)
    for i in range(R):
        for j in range(i + 1):  # bound depends on the outer loop variable
            if (i + j) % 2 == 0:
                acc = acc + ct.load(x, index=(j,), shape=(4,))
    ct.store(out, index=(0,), tile=acc)


def test_nested_loops_with_branches(mode):
    x = random(4 * 4, "float32")
    out = cu.zeros(4, dtype=cu.float32)
    run(nested, mode, (1,), to_cu(x), out, 4)
    want = sum(x.reshape(4, 4)[j] for i in range(4) for j in range(i + 1) if (i + j) % 2 == 0)
    assert_close(to_np(out), want, rtol=1e-6)


@ct.kernel
def debug_kernel(x, BLOCK: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(BLOCK,))
    ct.print("tile", t)
    ct.assert_(t < 100, "values must stay below 100")


def test_print_and_assert_in_debug_mode(capfd):
    k = ct.kernel(debug_kernel.fn, debug=True)
    k[(1,)](to_cu(np.arange(4, dtype=np.float32)), 4)
    assert "tile [ 0, 1, 2, 3 ]" in capfd.readouterr().out
    with pytest.raises(AssertionError, match="values must stay below 100"):
        k[(2,)](to_cu(np.array([1, 2, 3, 4, 5, 6, 700, 8], np.float32)), 4)
    with pytest.raises(AssertionError, match="below 100"):
        k.interpret[(2,)](to_cu(np.array([1, 2, 3, 4, 5, 6, 700, 8], np.float32)), 4)
    # without debug=True both are compiled out
    debug_kernel[(2,)](to_cu(np.array([1, 2, 3, 4, 5, 6, 700, 8], np.float32)), 4)


# ---- compile errors ---------------------------------------------------------------------------


def _line_of(fn, text):
    import inspect

    lines, start = inspect.getsourcelines(fn)
    for i, ln in enumerate(lines):
        if text in ln:
            return start + i
    raise AssertionError(text)


def _bad_while(x):
    n = 0
    while n < 3:
        n = n + 1


def _bad_shapes(x, BLOCK: ct.Constant[int]):
    a = ct.load(x, index=(0,), shape=(BLOCK,))
    b = ct.load(x, index=(0,), shape=(BLOCK + 1,))
    ct.store(x, index=(0,), tile=a + b)


def _bad_mma(x):
    a = ct.load(x, index=(0, 0), shape=(4, 4))
    ct.mma(a, a.astype(ct.float16), ct.zeros((4, 4)))


def _runtime_shape(x, n):
    ct.load(x, index=(0,), shape=(n,))


def _undefined(x):
    ct.store(x, index=(0,), tile=undefined_name)  # noqa: F821


def _index_assign(x):
    t = ct.load(x, index=(0,), shape=(4,))
    t[0] = 1


def _loop_changes_shape(x):
    t = ct.zeros((4,))
    for i in range(3):  # noqa: B007
        t = ct.reshape(t, (2, 2))


def _break(x):
    for i in range(3):  # noqa: B007
        break


def _array_math(x):
    y = x + 1  # noqa: F841


@pytest.mark.parametrize(
    "fn,marker,pattern",
    [
        (_bad_while, "while n < 3", r"`while` loops are not supported.*supported in tile kernels"),
        (_bad_shapes, "tile=a + b", r"cannot broadcast shapes \(16,\) and \(17,\)"),
        (_bad_mma, "ct.mma(", r"mma: a and b must have the same dtype, got float32 and float16"),
        (_runtime_shape, "shape=(n,)", r"compile-time integers"),
        (_undefined, "undefined_name", r"name 'undefined_name' is not defined"),
        (_index_assign, "t[0] = 1", r"assigning to an element"),
        (_loop_changes_shape, "for i in range(3)", r"shape \(4,\) before and \(2, 2\) after the loop"),
        (_break, "        break", r"`break` is not supported"),
        (_array_math, "y = x + 1", r"arithmetic on arrays is not supported"),
    ],
)
def test_compile_errors_point_at_the_line(fn, marker, pattern):
    k = ct.kernel(fn)
    args = [to_cu(np.zeros((4, 4) if fn is _bad_mma else 16, np.float32))]
    if fn is _bad_shapes:
        args.append(16)
    if fn is _runtime_shape:
        args.append(4)
    with pytest.raises(ct.CompileError) as info:
        k[(1,)](*args)
    err = info.value
    assert err.filename == __file__
    assert err.lineno == _line_of(fn, marker), str(err)
    assert re.search(pattern, str(err)), str(err)
    text = str(err).splitlines()
    assert text[0].startswith(f"{__file__}:{err.lineno}:")
    assert text[2].strip() == "^"  # the caret line under the source line


def test_error_inside_a_helper_names_the_call_site():
    @ct.function
    def bad_helper(t):
        return t + ct.zeros((3,))

    def kern(x):
        bad_helper(ct.load(x, index=(0,), shape=(4,)))

    with pytest.raises(
        ct.CompileError, match=r"cannot broadcast shapes .*\n.*\n.*\^\n.*in a @ct.function called at"
    ) as info:
        ct.kernel(kern)[(1,)](to_cu(np.zeros(4, np.float32)))
    assert info.value.lineno == _line_of(bad_helper.fn, "return t + ct.zeros")


def test_error_in_a_returned_expression_points_at_the_return():
    """Errors the frontend raises itself (not the builder) in a `return` pointed at the statement
    before it (the `return` is handled outside the statement loop that records the node)."""

    @ct.function
    def helper(t):
        u = t * 2
        return u + (1, 2)

    def kern(x):
        helper(ct.load(x, index=(0,), shape=(4,)))

    with pytest.raises(ct.CompileError, match="expected a tile, a scalar or a number, got tuple") as info:
        ct.kernel(kern)[(1,)](to_cu(np.zeros(4, np.float32)))
    assert info.value.lineno == _line_of(helper.fn, "return u + (1, 2)")
