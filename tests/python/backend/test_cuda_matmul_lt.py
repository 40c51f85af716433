"""The CUDA backend's cuBLASLt plans (src/backend/cuda/matmul_lt.cpp) against the CPU reference:
every fused epilogue of cupric.linalg.advanced.Matmul in float32/bfloat16/float64, batches,
transposed views, alpha/beta/c, autotune, reset_operands, and plain products routed through
cuBLASLt. GPU only (marked gpu)."""

import math

import cupric as cu
import numpy as np
import pytest
from cupric.linalg.advanced import Matmul, MatmulEpilog, matmul

pytestmark = pytest.mark.gpu
RNG = np.random.default_rng(17)
TOL = {"float32": 2e-4, "bfloat16": 3e-2, "float16": 5e-3, "float64": 1e-11}


def host(x):
    return np.asarray(x.to_device("cpu")).astype(np.float64)


def agree(gpu, cpu, dtype, tol=None):
    g, c = host(gpu), host(cpu)
    assert g.shape == c.shape, (g.shape, c.shape)
    scale = max(1.0, float(np.max(np.abs(c)))) if c.size else 1.0
    assert np.max(np.abs(g - c)) <= (tol or TOL[dtype]) * scale * 4, np.max(np.abs(g - c))


def operands(dtype, batch=(), m=40, k=72, n=24):
    import ml_dtypes  # noqa: F401  (bfloat16)

    x = lambda *s: RNG.standard_normal(s).astype(dtype)  # noqa: E731
    pre = x(*batch, m, n)
    return {"a": x(*batch, m, k), "b": x(k, n), "bias": x(m), "relu_aux": RNG.random((*batch, m, n)) < 0.5,
            "gelu_aux": pre}


# cuBLASLt's forward epilogues serve every layout; whether the gradient ones (DGELU, BGRADA/B) have
# kernels for a layout and dtype is the heuristic's answer: those are compared, not required fused
ALWAYS_FUSED = {"DEFAULT", "RELU", "GELU", "BIAS", "RELU_BIAS", "GELU_BIAS", "RELU_AUX", "RELU_AUX_BIAS"}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64"])
@pytest.mark.parametrize("name", [e.name for e in MatmulEpilog])
def test_fused_epilogues_match_the_cpu(dtype, name):
    batch = () if "BGRAD" in name else (3,)
    ops = operands(dtype, batch)
    results = []
    for device in ("cpu", "cuda:0"):
        a, b = cu.asarray(ops["a"], device=device), cu.asarray(ops["b"], device=device)
        inputs = {k: cu.asarray(ops[k], device=device) for k in ("bias", "relu_aux", "gelu_aux")}
        with Matmul(a, b, epilogue=MatmulEpilog[name], epilogue_inputs=inputs) as mm:
            algorithms = mm.plan()
            if device != "cpu" and name in ALWAYS_FUSED and dtype != "float64":
                assert algorithms and algorithms[0].startswith("cuBLASLt"), algorithms
            out = mm.execute()
        results.append(out if isinstance(out, tuple) else (out, {}))
    (dc, auxc), (dg, auxg) = results
    # cuBLASLt's float64 GELU gradients agree with the reference to 3e-10 relative on an H200
    # (its tanh is not correctly rounded), not to float64's 1e-11
    tol = 1e-9 if dtype == "float64" and name.startswith("DGELU") else None
    agree(dg, dc, dtype, tol)
    assert set(auxg) == set(auxc)
    for k in auxc:
        if auxc[k].dtype == cu.dtype(bool):
            # the mask may differ where the product rounds to zero differently: compare where it does not
            assert np.mean(host(auxg[k]) != host(auxc[k])) < 0.01
        else:
            agree(auxg[k], auxc[k], dtype, tol)


def test_views_alpha_beta_c_autotune_and_reset():
    a = RNG.standard_normal((96, 64)).astype(np.float32)
    b = RNG.standard_normal((80, 96)).astype(np.float32)
    c = RNG.standard_normal((64, 80)).astype(np.float32)
    bias = RNG.standard_normal(64).astype(np.float32)
    want = np.maximum(1.5 * (a.T @ b.T) + 0.25 * c + bias[:, None], 0)
    g = lambda x: cu.asarray(x, device="cuda:0")  # noqa: E731
    with Matmul(g(a).T, g(b).T, g(c), alpha=1.5, beta=0.25, epilogue="relu_bias",
                epilogue_inputs={"bias": g(bias)}) as mm:
        assert mm.plan()[0].startswith("cuBLASLt")
        times = mm.autotune(iterations=2)
        assert len(times) >= 1 and all(t > 0 for t in times)
        np.testing.assert_allclose(host(mm.execute()), want, rtol=1e-4, atol=1e-3)
        a2 = RNG.standard_normal((96, 64)).astype(np.float32)
        mm.reset_operands(a=g(a2).T, beta=0.0)
        np.testing.assert_allclose(host(mm.execute()), np.maximum(1.5 * (a2.T @ b.T) + bias[:, None], 0),
                                   rtol=1e-4, atol=1e-3)
    x = matmul(g(a[:8]), g(b[:8, :64]).T, epilogue="gelu")  # the function form
    w = a[:8] @ b[:8, :64].T
    np.testing.assert_allclose(host(x), 0.5 * w * (1 + np.tanh(math.sqrt(2 / math.pi) * (w + 0.044715 * w**3))),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("sa,sb", [((64, 64, 64), (64, 64, 64)), ((33, 70), (70, 17)), ((3, 1, 8, 9), (5, 9, 4))])
def test_plain_products_through_cublaslt(dtype, sa, sb):
    import ml_dtypes  # noqa: F401

    a, b = RNG.standard_normal(sa).astype(dtype), RNG.standard_normal(sb).astype(dtype)
    want = cu.asarray(a) @ cu.asarray(b)
    cu._cupric._set_gemm_library("cublaslt")
    try:
        got = cu.asarray(a, device="cuda:0") @ cu.asarray(b, device="cuda:0")
        got_t = cu.asarray(a, device="cuda:0") @ cu.asarray(np.swapaxes(b, -1, -2).copy(), device="cuda:0").mT
    finally:
        cu._cupric._set_gemm_library("cublas")
    agree(got, want, dtype)
    agree(got_t, want, dtype)
