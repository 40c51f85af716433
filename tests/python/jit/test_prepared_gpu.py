"""Prepared calls on cuda:0 (the lead's H200 run): the C++ warm path against the Python path and
the CPU backend, its fallbacks (another device, dtype, rank, strides, scalar kind), and calls
that feed each other on the stream."""

import cupric as cu
import numpy as np
import pytest
from jit_helpers import rand
from test_jit import five_op, layer_norm, softmax

pytestmark = pytest.mark.gpu


def _three(f, *args):
    """The trace, the Python path (which prepares the call), then the prepared call."""
    return f(*args), f(*args), f(*args)


@pytest.mark.parametrize("fn, shapes", [(five_op, ((1 << 20,), (1 << 20,))), (softmax, ((300, 777),)),
                                        (layer_norm, ((50, 1024), (1024,), (1024,)))],
                         ids=lambda c: getattr(c, "__name__", str(c)))
def test_prepared_calls_on_the_gpu_match_the_python_path_and_the_cpu(fn, shapes):
    host = [rand(s) for s in shapes]
    dev = [a.to_device("cuda:0") for a in host]
    f = cu.jit(fn)
    _, second, third = _three(f, *dev)
    assert len(f._prepared) == 1 and str(third.device) == "cuda:0"
    np.testing.assert_array_equal(third.get(), second.get())  # the same kernel on the same data
    np.testing.assert_allclose(third.get(), fn(*host).get(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("other", ["cpu", "dtype", "rank", "strides", "scalar kind"])
def test_a_gpu_call_unlike_the_prepared_one_takes_the_python_path(other):
    f = cu.jit(lambda x, s: x * s + 1)
    base = rand((64, 64), "int32")
    _three(f, base.to_device("cuda:0"), 3)
    args = {
        "cpu": (base, 3),
        "dtype": (rand((64, 64), "int64").to_device("cuda:0"), 3),
        "rank": (rand((4096,), "int32").to_device("cuda:0"), 3),
        "strides": (rand((64, 128), "int32").to_device("cuda:0")[:, ::2], 3),
        "scalar kind": (base.to_device("cuda:0"), 2.5),
    }[other]
    expected = f.fn(*[a.to_device("cpu") if isinstance(a, cu.ndarray) else a for a in args])
    for got in _three(f, *args):
        assert str(got.device) == str(args[0].device) and got.dtype == expected.dtype
        np.testing.assert_array_equal(got.get(), expected.get())
    assert len(f._prepared) == 2


def test_prepared_calls_that_feed_each_other_keep_the_stream_order():
    f = cu.jit(lambda y, x: y * 0.5 + x)
    x = rand((1 << 16,))
    y_host, y = x, x.to_device("cuda:0")
    xd = y
    for _ in range(200):  # each call's output is the next call's input, all queued on the stream
        y = f(y, xd)
        y_host = y_host * 0.5 + x
    assert len(f._prepared) == 1
    np.testing.assert_allclose(y.get(), y_host.get(), rtol=1e-5, atol=1e-6)
