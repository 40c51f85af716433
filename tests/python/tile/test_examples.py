"""Every example kernel of examples/tile on the compiled CPU path and in the interpreter, against
its NumPy reference: shapes that are not multiples of the tiles, float32 and bfloat16."""

import sys
from pathlib import Path

import cupric as cu
import numpy as np
import pytest
from tile_helpers import BF16, assert_close, random, to_cu, to_np

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "tile"))

import attention  # noqa: E402
import layernorm  # noqa: E402
import matmul  # noqa: E402
import saxpy  # noqa: E402
import softmax  # noqa: E402
import stencil  # noqa: E402

INTERP = [False, True]


@pytest.mark.parametrize("interpret", INTERP)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_saxpy_and_add(interpret, dtype):
    n = 1000 if interpret else 10_007
    x, y = random(n, dtype), random(n, dtype, np.random.default_rng(2))
    got = to_np(saxpy.saxpy(1.5, to_cu(x), to_cu(y), block=256, interpret=interpret))
    assert_close(got.astype(np.float32), saxpy.reference(1.5, x, y).astype(np.float32), dtype)
    got = to_np(saxpy.add(to_cu(x), to_cu(y), block=300, interpret=interpret))
    assert_close(got.astype(np.float32), (x.astype(np.float32) + y).astype(x.dtype).astype(np.float32), dtype)


@pytest.mark.parametrize("interpret", INTERP)
@pytest.mark.parametrize("dtype,shape", [("float32", (37, 1000)), ("bfloat16", (9, 333)), ("float16", (5, 64))])
def test_softmax(interpret, dtype, shape):
    x = random(shape, dtype)
    got = to_np(softmax.softmax(to_cu(x), interpret=interpret))
    assert_close(got.astype(np.float32), softmax.reference(x).astype(x.dtype).astype(np.float32), dtype)


@pytest.mark.parametrize("interpret", INTERP)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_layernorm(interpret, dtype):
    rng = np.random.default_rng(3)
    x, w, b = random((23, 301), dtype, rng), random(301, dtype, rng), random(301, dtype, rng)
    y, mean, rstd = layernorm.layernorm(to_cu(x), to_cu(w), to_cu(b), interpret=interpret)
    ry, rm, rr = layernorm.reference(x, w, b)
    assert_close(
        to_np(y).astype(np.float32),
        ry.astype(x.dtype).astype(np.float32),
        dtype,
        **({"rtol": 3e-2, "atol": 6e-2} if dtype == "bfloat16" else {"rtol": 1e-4, "atol": 1e-4}),
    )
    assert_close(to_np(mean), rm, rtol=1e-5, atol=1e-5)
    assert_close(to_np(rstd), rr, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("interpret", INTERP)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_matmul_bias_relu(interpret, dtype):
    rng = np.random.default_rng(4)
    m, k, n = (70, 45, 50) if interpret else (130, 100, 90)
    a, b, bias = random((m, k), dtype, rng), random((k, n), dtype, rng), random(n, dtype, rng)
    got = to_np(matmul.matmul_bias_relu(to_cu(a), to_cu(b), to_cu(bias), bm=32, bn=48, bk=16, interpret=interpret))
    want = matmul.reference(a, b, bias)
    tol = {
        "float32": dict(rtol=1e-4, atol=1e-3),
        "bfloat16": dict(rtol=2e-2, atol=0.25),
        "float16": dict(rtol=2e-3, atol=2e-2),
    }[dtype]
    assert_close(got.astype(np.float32), want.astype(np.float32), **tol)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_matmul_autotuned(dtype):
    rng = np.random.default_rng(6)
    a, b, bias = random((130, 100), dtype, rng), random((100, 90), dtype, rng), random(90, dtype, rng)
    got = to_np(matmul.matmul_bias_relu_tuned(to_cu(a), to_cu(b), to_cu(bias)))
    tol = dict(rtol=1e-4, atol=1e-3) if dtype == "float32" else dict(rtol=2e-2, atol=0.25)
    assert_close(got.astype(np.float32), matmul.reference(a, b, bias).astype(np.float32), **tol)
    assert matmul.matmul_tuned.best_config in matmul.matmul_tuned.configs


@pytest.mark.parametrize("interpret", INTERP)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_attention(interpret, causal, dtype):
    rng = np.random.default_rng(5)
    bh, seq, d = (2, 45, 16) if interpret else (3, 100, 32)
    q, k, v = (random((bh, seq, d), dtype, rng) for _ in range(3))
    got = to_np(attention.attention(to_cu(q), to_cu(k), to_cu(v), causal, bm=16, bn=24, interpret=interpret))
    want = attention.reference(q, k, v, causal)
    tol = dict(rtol=3e-2, atol=3e-2) if dtype == "bfloat16" else dict(rtol=1e-4, atol=1e-4)
    assert_close(got.astype(np.float32), want.astype(np.float32), **tol)


@pytest.mark.parametrize("interpret", INTERP)
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_stencil(interpret, dtype):
    x = random((45, 77) if interpret else (101, 203), dtype)
    got = to_np(stencil.stencil(to_cu(x), bm=16, bn=24, interpret=interpret))
    assert_close(got.astype(np.float32), stencil.reference(x).astype(np.float32), dtype)


def test_benchmark_functions_run():
    for mod, kw in (
        (saxpy, {"n": 4096}),
        (softmax, {"rows": 8, "cols": 100}),
        (layernorm, {"rows": 8, "cols": 100}),
        (matmul, {"m": 64, "n": 64, "k": 64}),
        (attention, {"bh": 1, "seq": 64, "d": 16}),
        (stencil, {"n": 64, "m": 64}),
    ):
        r = mod.benchmark(repeat=1, **kw)
        assert r["seconds"] > 0 and r["numpy_seconds"] > 0
    assert BF16 is not None and cu.bfloat16 is not None
