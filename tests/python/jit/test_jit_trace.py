"""The tracer: which ops become which nodes, what runs eagerly, and the errors a function that
cannot be traced gets (mutation, out=, values the trace cannot know)."""

import cupric as cu
import numpy as np
import pytest
from cupric.jit import JitError
from cupric.jit._trace import Trace, Untraceable, reduce_call, ufunc_call
from jit_helpers import rand


def kinds(f, *args):
    f(*args)
    (program,) = [e for e in f.entries.values() if hasattr(e, "graph")]
    return [n.kind for n in program.graph.nodes]


def test_operators_ufuncs_and_methods_become_nodes():
    f = cu.jit(lambda x, y: cu.where(x > 0, (x + y).astype(cu.float64), -y).clip(-1, 1))
    assert kinds(f, rand((5,)), rand((5,))) == ["input", "input", "const", "ufunc", "ufunc", "astype", "ufunc",
                                                "where", "const", "const", "ufunc"]


def test_python_scalar_arithmetic_stays_python():
    trace = Trace()
    a, b = trace.argument(2.0, "a"), trace.argument(3, "b")
    c = ufunc_call("multiply", a, b)
    assert c._node.kind == "pyop" and c._value == 6.0 and type(c._value) is float
    x = trace.argument(rand((4,), "float16"), "x")
    y = ufunc_call("multiply", x, c)
    assert y._value.dtype == np.float16  # the weak scalar keeps x's dtype (NEP 50)


def test_var_and_std_are_mean_nodes():
    trace = Trace()
    x = trace.argument(rand((6, 5)), "x")
    s = reduce_call("std", x, axis=1, ddof=1)
    ops = [n.label() for n in trace.graph.nodes[1:]]
    assert ops == ["mean(axis=(1,), keepdims=True)", "subtract", "multiply", "mean(axis=(1,), keepdims=False, ddof=1)",
                   "sqrt"]
    np.testing.assert_allclose(s._value.get(), np.std(x._value.get(), axis=1, ddof=1), rtol=1e-5)


def test_what_is_not_fused_is_recorded_as_eager_with_a_reason():
    trace = Trace()
    x = trace.argument(rand((6, 5)), "x")
    y = ufunc_call("multiply", x, 1j)  # complex: tiles have none
    assert y._node.why is not None and "complex" in y._node.why
    z = reduce_call("sum", x, axis=0, where=x._value > 0)
    assert z._node.kind == "eager" and "where=" in z._node.why


def test_mutating_an_argument_raises_and_names_it():
    trace = Trace()
    x = trace.argument(rand((3,)), "weights")
    with pytest.raises(JitError, match="'weights'.*x \\*= "):
        x *= 2
    with pytest.raises(JitError, match="item assignment"):
        x[1] = 0.0


@pytest.mark.parametrize("use", [bool, float, int, lambda t: t.item(), lambda t: list(t), np.asarray])
def test_values_the_trace_cannot_know_are_untraceable(use):
    trace = Trace()
    x = trace.argument(rand(()), "x")
    with pytest.raises(Untraceable, match="test_jit_trace.py"):
        use(x)


def test_cupric_calls_without_traced_values_run_as_they_are():
    f = cu.jit(lambda x: x + cu.arange(4, dtype=cu.float32) * cu.pi)
    assert kinds(f, rand((4,))) == ["input", "captured", "ufunc"]


@pytest.mark.nvrtc
def test_numpy_scalar_arguments_follow_the_arrays_onto_the_gpu(fake_dir):
    """The GPU failure of test_views_scalars_and_mixed_dtypes_on_the_gpu ("operands are on different
    devices (cuda:0 and cpu)"): a NumPy scalar argument met a cuda:0 array in the traced ufunc. Against
    the stand-in driver (default device the CPU, as in the GPU test runs; kernels do not run): tracing and running
    place every operand on cuda:0."""
    from fake_driver import run_with_fake_driver

    run_with_fake_driver(fake_dir, """
import numpy as np
import cupric as cu
x = cu.asarray(np.ones((20, 30), np.float32), device="cuda:0")
i = cu.asarray(np.ones(30, np.int8), device="cuda:0")
f = cu.jit(lambda a, b, s: cu.where(a > 0, a * s, b) + 1)
for s in [np.float32(3), np.float64(2.5), np.int16(2), 2.5]:
    assert f(x, i, s).device == "cuda:0"
    assert f(x, i, s).device == "cuda:0"
assert f.trace_count == 4
""", env={"CUPRIC_DEVICE": "cpu"})  # cuda:0 is not the default device
