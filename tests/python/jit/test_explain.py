"""explain(): the kernels and the eager ops of a call, as text and as data."""

import cupric as cu
from jit_helpers import rand


def test_explain_names_kernels_ops_and_eager_reasons():
    @cu.jit
    def f(x):
        y = cu.exp(x - x.max(1, keepdims=True))
        z = cu.sort(y, axis=1)
        return z * 2

    report = f.explain(rand((4, 50)))
    assert [s["kind"] for s in report.steps] == ["rows", "eager", "map"]
    assert "max(axis=(1,), keepdims=True)" in report.steps[0]["ops"] and "exp" in report.steps[0]["ops"]
    text = str(report)
    assert "2 kernel(s), 1 eager op(s)" in text and "cu.sort" in text and "not fused" in text


def test_explain_of_a_function_that_runs_eagerly():
    f = cu.jit(lambda x: x * 2 if float(x.sum()) > 0 else x)
    report = f.explain(rand((5,)))
    assert report.eager_reason is not None and "float()" in str(report)
