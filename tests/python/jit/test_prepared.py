"""Prepared calls (the C++ warm path): the same results as the Python path, taken only for
arguments exactly like those they were made for, and left for the Python path otherwise."""

import cupric as cu
import numpy as np
import pytest
from jit_helpers import check, rand


def warm(f, *args):
    """f(*args) once it runs through its prepared call: the trace, then the run that prepares it."""
    f(*args)
    f(*args)
    return f(*args)


def test_a_warm_call_runs_its_prepared_call_with_the_eager_result():
    f = cu.jit(lambda x, y: cu.sqrt(x * x + y * y) * 0.5 + cu.sin(x))
    x, y = rand((1000,)), rand((1000,))
    check(f, x, y)
    assert len(f._prepared) == 1
    a, b = f(x, y), f(x, y)
    assert a is not b  # new outputs for each call
    a[:] = 0
    np.testing.assert_allclose(b.get(), f.fn(x, y).get(), rtol=2e-6, atol=1e-6)


def test_prepared_results_are_the_python_paths_bit_for_bit():
    f = cu.jit(lambda x, y, s: (x * s + y, cu.exp(x - x.max(1, keepdims=True)), (x * y).sum(1)))
    x, y = rand((64, 300)), rand((64, 300))
    first = f(x, y, 1.5)
    second = f(x, y, 1.5)  # the Python path, which prepares the call
    third = f(x, y, 1.5)
    assert len(f._prepared) == 1 and type(third) is tuple
    for p, q in zip(second, third, strict=True):
        assert p.shape == q.shape and p.dtype == q.dtype
        np.testing.assert_array_equal(p.get(), q.get())
    for p, q in zip(first, third, strict=True):
        np.testing.assert_allclose(p.get(), q.get(), rtol=1e-5, atol=1e-4)  # eager: another order of the sum


@pytest.mark.parametrize("other", ["dtype", "rank", "shape", "strides", "scalar kind", "bool scalar"])
def test_a_call_unlike_the_prepared_one_takes_the_python_path_correctly(other):
    f = cu.jit(lambda x, s: x * s + 1)
    base = rand((16, 16), "int32")
    warm(f, base, 3)
    assert len(f._prepared) == 1
    args = {
        "dtype": (rand((16, 16), "int64"), 3),
        "rank": (rand((256,), "int32"), 3),
        "shape": (rand((16, 15), "int32"), 3),
        "strides": (rand((16, 32), "int32")[:, ::2], 3),  # the same shape, not contiguous
        "scalar kind": (base, 2.5),  # int32 * float -> float64 (NEP 50)
        "bool scalar": (base, True),
    }[other]
    expected = f.fn(*args)
    for _ in range(3):  # trace or Python path, then the prepared call of the new arguments
        got = f(*args)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got.get(), expected.get())
    assert len(f._prepared) == 2
    np.testing.assert_array_equal(f(base, 3).get(), f.fn(base, 3).get())  # the first still holds


def test_non_contiguous_inputs_of_a_prepared_shape_are_read_through_their_strides():
    f = cu.jit(lambda x, y: 2 * x + y)
    x = rand((40, 80))
    warm(f, x[:, :40].copy(), x[:, 40:].copy())  # contiguous: a flat kernel
    got = f(x[:, ::2], x[:, 1::2])  # the same shapes and dtype, other strides
    np.testing.assert_allclose(got.get(), (2 * x[:, ::2] + x[:, 1::2]).get(), rtol=1e-5, atol=1e-6)


def test_broadcast_leaves_and_captured_arrays_take_their_views():
    w = rand((1, 30))
    f = cu.jit(lambda x, b: (x - b) * w)
    check(f, rand((20, 30)), rand((20, 1)))
    assert len(f._prepared) == 1
    x, b = rand((20, 30)), rand((20, 1))
    np.testing.assert_allclose(f(x, b).get(), ((x - b) * w).get(), rtol=1e-5, atol=1e-6)


def test_several_kernels_chain_through_their_results():
    def normalise(x):
        c = x - x.mean(1, keepdims=True)
        return c / cu.sqrt((c * c).mean(1, keepdims=True) + 1e-5)

    f = cu.jit(normalise)
    check(f, rand((33, 257)), rtol=1e-5, atol=1e-5)
    assert len(f._prepared) == 1
    x = rand((33, 257))
    np.testing.assert_allclose(f(x).get(), normalise(x).get(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["split reduction", "eager op", "input returned", "dict output"])
def test_calls_the_prepared_path_does_not_take_run_through_python(case):
    f, args = {
        "split reduction": (cu.jit(lambda x: (x * x).sum()), (rand((1 << 18,)),)),
        "eager op": (cu.jit(lambda x: cu.sort(x * 2) + 1), (rand((50,)),)),
        "input returned": (cu.jit(lambda x: (x, x + 1)), (rand((50,)),)),
        "dict output": (cu.jit(lambda x: {"y": x + 1}), (rand((50,)),)),
    }[case]
    for _ in range(3):
        check(f, *args, rtol=1e-5, atol=1e-4)
    assert len(f._prepared) == 0


def test_static_arguments_are_taken_by_type_and_value():
    f = cu.jit(lambda x, n, k: x * n + k, static_argnames="n")
    x = rand((50,), "int32")
    check(f, x, 3, 1)
    assert len(f._prepared) == 1
    for n, k in [(3, 7), (4, 1), (3.0, 1), (True, 1), (3, 1)]:  # 3.0 and True equal 3 but trace apart
        got, expected = f(x, n, k), f.fn(x, n, k)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got.get(), expected.get())
        np.testing.assert_array_equal(f(x, n, k).get(), expected.get())  # (its prepared call from the 3rd on)
    assert f.trace_count == 4


def test_a_dropped_launch_plan_sends_the_call_back_through_python():
    f = cu.jit(lambda x: x * 3 - 1)
    x = rand((100,))
    warm(f, x)
    runner = next(r for r in next(iter(f._fast.values())).runners if r is not None)
    runner.used[0].kernel._forget_plans()  # as a changed global or a new specialisation does
    np.testing.assert_allclose(f(x).get(), (x * 3 - 1).get(), rtol=1e-5, atol=1e-6)  # the plan missed: Python ran it
    assert len(f._prepared) == 1  # and prepared it again
    np.testing.assert_allclose(f(x).get(), (x * 3 - 1).get(), rtol=1e-5, atol=1e-6)


def test_a_profiled_call_takes_the_python_path_and_records_its_launch():
    f = cu.jit(lambda x: x * 3 - 1)
    x = rand((100,))
    warm(f, x)
    with cu.profiler.profile() as prof:
        got = f(x)
    assert [e for e in prof.events if e.kind == "tile_launch"]
    np.testing.assert_allclose(got.get(), (x * 3 - 1).get(), rtol=1e-5, atol=1e-6)


def test_a_numpy_scalar_is_not_taken_for_a_prepared_python_float():
    f = cu.jit(lambda x, s: x + s)
    x = rand((8,), "float32")
    warm(f, x, 1.0)
    got = f(x, np.float64(1.0))  # a NumPy scalar is strong: float64, not the prepared float32 call
    assert got.dtype == f.fn(x, np.float64(1.0)).dtype
    np.testing.assert_allclose(got.get(), f.fn(x, np.float64(1.0)).get(), rtol=1e-12)
