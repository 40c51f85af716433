"""cu.jit on cuda:0 (the lead's H200 run): every pattern of the CPU tests against the same
function run eagerly on the GPU and on the CPU backend, rows at the whole-row kernels' edges,
compile counting on the device, and the kernels each pattern makes."""

import cupric as cu
import numpy as np
import pytest
from cupric.jit._run import compiled_count
from jit_helpers import rand, rows_kinds
from test_jit import ROW_TOLERANCE, centre, dot, five_op, layer_norm, logsumexp, saxpy, softmax, variance

pytestmark = pytest.mark.gpu

CASES = [
    (five_op, ((1 << 20,), (1 << 20,))),
    (five_op, ((333, 1000), (1000,))),
    (saxpy, ((123457,), (123457,))),
    (softmax, ((64, 8192),)),
    (softmax, ((300, 777),)),
    (softmax, ((16, 20000),)),  # past the whole-row bound: chunked
    (variance, ((64, 5000),)),
    (variance, ((16, 30000),)),
    (dot, ((1 << 22,), (1 << 22,))),
    (layer_norm, ((50, 1024), (1024,), (1024,))),
    (logsumexp, ((40, 3000),)),
]


def _to(args, device):
    return [a.to_device(device) if isinstance(a, cu.ndarray) else a for a in args]


@pytest.mark.parametrize("fn, shapes", CASES, ids=lambda c: getattr(c, "__name__", str(c)))
def test_jit_on_the_gpu_matches_eager_on_both_devices(fn, shapes):
    host = [rand(s) for s in shapes]
    dev = _to(host, "cuda:0")
    f = cu.jit(fn)
    f(*dev)
    got = f(*dev)
    assert str(got.device) == "cuda:0"
    # reductions of millions of float32 values in another order: a looser tolerance
    tol = 1e-3 if fn in (dot, variance) else 1e-4
    np.testing.assert_allclose(got.get(), fn(*dev).get(), rtol=tol, atol=tol)
    np.testing.assert_allclose(got.get(), fn(*host).get(), rtol=tol, atol=tol)


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "prod", "var", "std", "any", "all", "argmax", "argmin"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
def test_reductions_on_the_gpu(op, axis):
    if op.startswith("arg") and isinstance(axis, tuple):
        return  # one axis or all
    x = rand((6, 7, 3000)) * 0.01 + 1
    f = cu.jit(lambda x: getattr(x * 1.0, op)(axis=axis, keepdims=True))
    d = x.to_device("cuda:0")
    f(d)
    np.testing.assert_allclose(f(d).get(), getattr(x, op)(axis=axis, keepdims=True).get(), rtol=1e-4, atol=1e-5)


def test_views_scalars_and_mixed_dtypes_on_the_gpu():
    x = rand((200, 300), "float32").to_device("cuda:0")
    i = rand((300,), "int8").to_device("cuda:0")
    f = cu.jit(lambda a, b, s: cu.where(a > 0, a * s, b) + 1)
    for args in [(x[::2, ::3], i[::3], 2.5), (x.T, x[0][:, None], -1.0), (x, i, np.float32(3))]:
        f(*args)
        np.testing.assert_allclose(f(*args).get(), f.fn(*args).get(), rtol=1e-6, atol=1e-6)
    assert f.trace_count == 3  # three signatures


def test_a_new_length_compiles_nothing_on_the_gpu():
    # maps and chunked rows take any length, whole rows any of their power-of-two bucket
    f, g = cu.jit(five_op), cu.jit(softmax)
    for n in (5000, 40000):
        x = rand((n,)).to_device("cuda:0")
        f(x, x)
        g(rand((8, n)).to_device("cuda:0"))
    before = compiled_count()
    for n in (7000, 1 << 20):
        x = rand((n,)).to_device("cuda:0")
        f(x, x)
        g(rand((8, n)).to_device("cuda:0"))
    assert compiled_count() == before
    assert rows_kinds(g) == ["chunked"]


def test_whole_rows_compile_once_per_bucket_on_the_gpu():
    @cu.jit
    def g(x):  # a function of its own: kernels are shared by source
        return cu.exp(x - x.mean(1, keepdims=True)) * 0.75

    g(rand((4, 1100)).to_device("cuda:0"))
    before = compiled_count()
    for n, count in ((1100, 1), (2048, 1), (1500, 1), (2049, 2), (4000, 2)):
        x = rand((4, n)).to_device("cuda:0")
        np.testing.assert_allclose(g(x).get(), g.fn(x).get(), rtol=1e-5, atol=1e-6)
        assert compiled_count() == before + count


# (function, dtype, row lengths): the GPU's whole-row edges (the smallest tile, the largest of
# 4-byte and 8-byte elements) and one past the largest (chunked)
GPU_EDGES = [(fn, "float32", (255, 16384, 16385)) for fn in (softmax, variance, logsumexp, centre, layer_norm)]
GPU_EDGES += [(softmax, "float16", (16384, 16385)), (layer_norm, "float16", (16384, 16385)),
              (variance, "float64", (8192, 8193)), (centre, "float64", (8192, 8193))]


@pytest.mark.parametrize("fn, dtype, lengths", GPU_EDGES, ids=lambda c: getattr(c, "__name__", str(c)))
def test_rows_at_the_whole_row_edges_on_the_gpu(fn, dtype, lengths):
    tol = ROW_TOLERANCE[dtype] * 10  # the GPU's exp and sums round otherwise than the CPU's
    for n in lengths:
        host = [rand((5, n), dtype)] + ([rand((n,), dtype), rand((n,), dtype)] if fn is layer_norm else [])
        dev = _to(host, "cuda:0")
        dev[0] = dev[0][:, ::-1]  # a view: the row read backwards
        f = cu.jit(fn)
        f(*dev)
        got = f(*dev).get()
        assert rows_kinds(f) == ["chunked" if n == lengths[-1] else "whole"]
        np.testing.assert_allclose(got, fn(host[0][:, ::-1], *host[1:]).get(), rtol=tol, atol=tol)


def test_unsupported_ops_run_eagerly_on_the_gpu():
    f = cu.jit(lambda x: cu.exp(cu.sort(x * 2)) + 1)
    x = rand((10, 50)).to_device("cuda:0")
    f(x)
    np.testing.assert_allclose(f(x).get(), f.fn(x).get(), rtol=1e-6)
    assert [s["kind"] for s in f.explain(x).steps] == ["map", "eager", "map"]
